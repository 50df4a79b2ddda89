"""What a privilege call names (``hms.HiveObjectRef``) resolved to the object its grants are
kept on (``grants.Target``): the metastore, a database, a table, a partition (with its creation
time) or a column, with HMS's errors for objects that are not there, as a grant, a revoke or a
read (``GRANT``, ``REVOKE``, ``READ``) each treat them. See ``docs/security.md``.
"""

from __future__ import annotations

from dataclasses import replace

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.java_text import java_items
from metastore_server.catalog.objects.databases import Databases
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.reads.partition_reads import PartitionReads
from metastore_server.catalog.security.grants import (
    COLUMN,
    DATABASE,
    GLOBAL,
    GRANT,
    PARTITION,
    READ,
    REVOKE,
    TABLE,
    Target,
)
from metastore_server.thrift_api import hms


class GrantTargets:
    """Finds the objects privilege calls name."""

    def __init__(
        self, databases: Databases, tables: Tables, partition_reads: PartitionReads
    ) -> None:
        self._databases = databases
        self._tables = tables
        self._partition_reads = partition_reads

    def resolve(self, obj: hms.HiveObjectRef | None, mode: str) -> Target | None:
        """The object ``obj`` names; None when there is nothing to grant on or read (a grant
        on a missing table or partition does nothing; HMS's errors otherwise)."""
        if obj is None or obj.objectType is None:
            if mode == READ:
                return None
            raise hms.MetaException(message="The object of a privilege cannot be null")
        kind = obj.objectType
        if kind == GLOBAL:
            return Target(GLOBAL)
        db = names.split_catalog(obj.dbName)[1]
        if not db:
            if mode == READ:
                return None
            raise hms.MetaException(message="Database name cannot be null or empty")
        if kind == DATABASE:
            if self._databases.find(db) is not None:
                return Target(DATABASE, db=db)
            if mode == READ:
                return None
            raise hms.MetaException(message=f"There is no database named {db}")
        if kind not in (TABLE, PARTITION, COLUMN):
            return None
        table = names.normalize(obj.objectName)
        column = obj.columnName.lower() if obj.columnName is not None else None
        if kind == COLUMN and column is None:
            if mode == READ:
                return None
            raise hms.MetaException(message="Column name cannot be null")
        ref = self._tables.find(db, table)
        values = obj.partValues
        if kind == TABLE or (kind == COLUMN and (not values if mode == READ else values is None)):
            if ref is None:
                missing = Target(kind, db=db, table=table, column=column, exists=False)
                return missing if mode == REVOKE else None
            return Target(kind, db=ref.db, table=ref.name, table_id=ref.table_id, column=column)
        if ref is None:
            if mode == GRANT:
                return None
            raise hms.MetaException(message=f"{db}.{table} table not found")
        return self._partition_target(ref, kind, list(values or []), column, mode)

    def _partition_target(
        self, ref: TableRef, kind: int, values: list[str], column: str | None, mode: str
    ) -> Target | None:
        keys = ref.key_names
        if not keys or len(values) != len(keys):
            raise hms.MetaException(
                message="Invalid partition key & values; "
                f"keys [{java_items(keys)}], values [{java_items(values)}]"
            )
        base = Target(kind, db=ref.db, table=ref.name, table_id=ref.table_id, column=column)
        try:
            partition = self._partition_reads.get(ref.db, ref.name, values)
        except hms.NoSuchObjectException:
            if mode != REVOKE:
                return None
            return replace(base, part_name=names.make_partition_name(keys, values),
                           part_values=tuple(values), exists=False)  # fmt: skip
        stored = list(partition.values or values)
        return replace(base, part_name=names.make_partition_name(keys, stored),
                       part_values=tuple(stored), part_time=partition.createTime or 0)  # fmt: skip


    def partition_alive(self, target: Target, seen: dict[tuple[int, str], bool]) -> bool:
        """Whether the partition a grant was made on is still there (cached per call)."""
        key = (target.table_id or 0, target.part_name or "")
        if key not in seen:
            try:
                partition = self._partition_reads.get(target.db or "", target.table or "",
                                                 list(target.part_values or []))  # fmt: skip
                seen[key] = (partition.createTime or 0) == target.part_time
            except (hms.NoSuchObjectException, hms.MetaException):
                seen[key] = False
        return seen[key]

