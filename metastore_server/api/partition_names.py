"""The partition-name calls: a name ``k1=v1/k2=v2`` taken apart, and values checked against the
connection's partition-name whitelist. No store is read. See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.catalog import names
from metastore_server.planner import java_regex
from metastore_server.thrift_api import hms

_WHITELIST_KEY = "hive.metastore.partition.name.whitelist.pattern"


class PartitionNameCalls(Area):
    """Partition names. Raises MetaException (a value the whitelist refuses, when asked to, or
    a whitelist pattern that is no regex)."""

    @thrift(rule=auth.OPEN)
    def partition_name_has_valid_characters(
        self, part_vals: list[str], throw_exception: bool
    ) -> bool:
        """Whether every value matches the connection's partition-name whitelist pattern
        (``hive.metastore.partition.name.whitelist.pattern``; empty: anything goes)."""
        pattern = self.settings.meta_conf.get(_WHITELIST_KEY)
        if not pattern:
            return True
        try:
            allowed = java_regex.full_matcher(pattern)
        except java_regex.RegexError as err:
            message = f"Invalid {_WHITELIST_KEY} {pattern!r}: {err}"
            raise hms.MetaException(message=message) from None
        for value in part_vals or []:
            if not allowed(value or ""):
                if throw_exception:
                    raise hms.MetaException(
                        message=f"Partition value '{value}' contains a character not matched "
                        f"by whitelist pattern '{pattern}'.  (configure with {_WHITELIST_KEY})"
                    )
                return False
        return True

    @thrift(rule=auth.OPEN)
    def partition_name_to_vals(self, part_name: str) -> list[str]:
        """The values of a partition name, unescaped, in order."""
        return [value for _, value in names.parse_partition_name(part_name)]

    @thrift(rule=auth.OPEN)
    def partition_name_to_spec(self, part_name: str) -> dict[str, str]:
        """The keys and values of a partition name, unescaped."""
        return dict(names.parse_partition_name(part_name))
