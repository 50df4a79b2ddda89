"""HMS's per-connection settable configuration (``setMetaConf``/``getMetaConf``).

HMS lets a client change a few metastore settings for its own connection only; every other key
is refused. The values are kept per connection (each connection is served by its own thread)
and read back as set. Only ``hive.metastore.disallow.incompatible.col.type.changes`` changes
what a call does (``alter_table`` reads it); this server has no JDO or direct-SQL path.
"""

from __future__ import annotations

import re
import threading

from metastore_server.planner import java_regex
from metastore_server.thrift_api import hms

#: Whether ``alter_table`` refuses column type changes Hive cannot convert.
DISALLOW_INCOMPATIBLE_TYPES = "hive.metastore.disallow.incompatible.col.type.changes"
#: The keys HMS 2.3 lets a client set, with their defaults.
DEFAULTS = {
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    "hive.metastore.client.socket.timeout": "600s",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.capability.check": "true",
    DISALLOW_INCOMPATIBLE_TYPES: "true",
}
_BOOLEAN = frozenset(k for k, v in DEFAULTS.items() if v in ("true", "false"))
_TIME = re.compile(r"^\s*\d+\s*(ms|msec|s|sec|m|min|h|hour|d|day)?\s*$", re.IGNORECASE)


class MetaConf:
    """The settable configuration of each connection."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _values(self) -> dict[str, str]:
        values = getattr(self._local, "values", None)
        if values is None:
            values = self._local.values = dict(DEFAULTS)
        return values

    def set(self, key: str | None, value: str | None) -> None:
        """Set a key for this connection; MetaException (HMS's words) when it is not settable
        or the value is not of its kind."""
        name = _known(key)
        text = value or ""
        if name in _BOOLEAN and text.lower() not in ("true", "false"):
            raise hms.MetaException(
                message=f"Invalid configuration value {text} for key {name} by Invalid value, "
                "expected true or false"
            )
        if name == "hive.metastore.client.socket.timeout" and not _TIME.match(text):
            raise hms.MetaException(
                message=f"Invalid configuration value {text} for key {name} by Invalid time "
                "unit"
            )
        if name == "hive.metastore.partition.name.whitelist.pattern":
            try:
                java_regex.compile_java(text)
            except java_regex.RegexError as exc:
                raise hms.MetaException(
                    message=f"Invalid configuration value {text} for key {name} by {exc}"
                ) from None
        self._values()[name] = text.lower() if name in _BOOLEAN else text

    def get(self, key: str | None) -> str:
        """This connection's value of a settable key."""
        return self._values()[_known(key)]


def _known(key: str | None) -> str:
    if key not in DEFAULTS:
        raise hms.MetaException(message=f"Invalid configuration key {key}")
    return key
