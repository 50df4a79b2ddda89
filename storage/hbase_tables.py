"""The HBase store's tables: each port table's HBase name and column families.

A port table ``t`` is the HBase table ``[namespace:]prefix + t`` (the namespace must exist).
``ensure`` creates the missing ones, each family with one version, block cache and a row bloom
filter; the Thrift gateway cannot add a family to an existing table, so a table lacking one is
an error naming the HBase shell command that adds it.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog
from metastore_server.storage.hbase_connection import THRIFT, HBaseConnection, HBaseError
from metastore_server.storage.port import TableSpec

log = structlog.get_logger(__name__)


class HBaseTables:
    """The HBase tables of a store's port tables, their families looked up once."""

    def __init__(self, connection: HBaseConnection) -> None:
        self._connection = connection
        self._families: dict[str, frozenset[bytes]] = {}
        #: (HBase name, families) of each port table looked up (``lookup``, once a row).
        self._found: dict[str, tuple[bytes, frozenset[bytes]]] = {}

    def ensure(self, specs: Iterable[TableSpec]) -> None:
        """Create missing tables with their families (idempotent). A table that exists but
        lacks a family is an error: the Thrift gateway cannot add one (see the message)."""
        specs = list(specs)
        for spec in specs:
            for family in spec.families:
                if not family or ":" in family:
                    raise ValueError(f"bad column family {family!r} for table {spec.name}")
        call = self._connection.call
        existing = set(call("getTableNames", lambda c: c.getTableNames(), idempotent=True))
        for spec in specs:
            name = self._connection.settings.table_name(spec.name)
            if name not in existing:
                self._create(name, spec)
            families = self._load_families(spec.name)
            missing = sorted(set(spec.families) - {f.decode() for f in families})
            if missing:
                adds = ", ".join(f"{{NAME => '{f}', VERSIONS => 1}}" for f in missing)
                raise HBaseError(
                    f"HBase table {name.decode()} lacks column families {missing}, and the Thrift "
                    f"gateway cannot add them; in the HBase shell run: alter '{name.decode()}', "
                    f"{adds}"
                )

    def _create(self, name: bytes, spec: TableSpec) -> None:
        """Create one table (created meanwhile, by us or another process: fine)."""
        descriptors = [
            THRIFT.ColumnDescriptor(
                name=f.encode() + b":",
                maxVersions=1,
                bloomFilterType="ROW",
                blockCacheEnabled=True,
            )
            for f in spec.families
        ]
        try:
            self._connection.call(
                "createTable", lambda c: c.createTable(name, descriptors), idempotent=True
            )
            log.info(
                "storage.hbase_table_created", table=name.decode(), families=list(spec.families)
            )
        except HBaseError as error:
            if not isinstance(error.__cause__, THRIFT.AlreadyExists):
                raise

    def _load_families(self, table: str) -> frozenset[bytes]:
        name = self._connection.settings.table_name(table)
        try:
            descriptors = self._connection.call(
                "getColumnDescriptors", lambda c: c.getColumnDescriptors(name), idempotent=True
            )
        except HBaseError as error:
            if "TableNotFound" in str(error) or "does not exist" in str(error):
                raise KeyError(
                    f"no table {table!r} ({name.decode()}); create it with ensure_tables"
                ) from error
            raise
        families = frozenset(bytes(d).rstrip(b":") for d in descriptors)
        self._families[table] = families
        return families

    def lookup(self, table: str) -> tuple[bytes, frozenset[bytes]]:
        """(HBase name, families) of a port table; KeyError when it does not exist."""
        found = self._found.get(table)
        if found is not None and self._families.get(table) is found[1]:
            return found
        families = self._families.get(table)
        if families is None:
            families = self._load_families(table)
        found = (self._connection.settings.table_name(table), families)
        self._found[table] = found
        return found


def check_column(column: bytes, families: frozenset[bytes], table: str) -> None:
    """TypeError or ValueError unless ``column`` is ``family:qualifier`` of the table's."""
    if not isinstance(column, bytes):
        raise TypeError(f"column names are bytes, not {type(column).__name__}")
    family, colon, _ = column.partition(b":")
    if not colon or family not in families:
        raise ValueError(
            f"column {column!r} is not family:qualifier of families "
            f"{sorted(families)} of table {table}"
        )
