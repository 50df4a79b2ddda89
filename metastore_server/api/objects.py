"""HMS 2.3's calls on the smaller kinds of object, mixed into the handler: indexes, types,
partition specs, partition event marks, a transaction's dynamic partitions, and table names by
filter. The catalog keeps each kind (``catalog/indexes.py``, ``type_registry.py``,
``partition_specs.py``, ``partition_events.py``, ``table_filter.py``, ``transactions.py``);
these methods add HMS's argument handling and route writes through the handler's own calls
(``create_table``, ``add_partitions``) so that what those calls do applies here too.
"""

from __future__ import annotations

from typing import Any

from thriftpy2.thrift import TApplicationException

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.encoded import EncodedPartitions
from metastore_server.catalog.basics.java_text import java_text, thrift_struct_text
from metastore_server.catalog.events import messages as event_messages
from metastore_server.catalog.objects.partition_marks import expiry_seconds
from metastore_server.catalog.objects.table_filter import table_names_by_filter
from metastore_server.catalog.partitions import specs as partition_specs
from metastore_server.thrift_api import hms


def _internal_error(method: str) -> TApplicationException:
    """What HMS 2.3 answers where it fails on an argument (a NullPointerException or an
    assertion that escapes the handler)."""
    return TApplicationException(
        TApplicationException.INTERNAL_ERROR, f"Internal error processing {method}"
    )


def _db(name: str | None) -> str:
    """The database of a possibly catalog-prefixed name."""
    return names.split_catalog(name)[1]


def _found(indexes: Any, db: str, table: str, name: str) -> hms.Index | None:
    """The index, or None (the call that follows gives HMS's error)."""
    try:
        return indexes.get(db, table, name)
    except hms.NoSuchObjectException:
        return None


def _decoded(parts: Any) -> list[hms.Partition]:
    """Partitions as objects, whichever form the partition calls answer in."""
    return parts.decode() if isinstance(parts, EncodedPartitions) else list(parts or [])


class ObjectCalls:
    """Mixed into MetastoreHandler (which provides ``catalog``, ``_config_values`` and the
    table and partition calls used here)."""

    catalog: Any
    _config_values: dict[str, str]

    # -- indexes -----------------------------------------------------------------------------

    def add_index(self, new_index: hms.Index, index_table: hms.Table) -> hms.Index:
        """Create the index table (through ``create_table``), then record the index; the
        index table is dropped again when the index cannot be recorded."""
        if new_index is None or index_table is None:
            raise _internal_error("add_index")  # HMS 2.3 logs both arguments' toString first
        self.catalog.indexes.check_new(new_index)
        self.create_table(index_table)  # type: ignore[attr-defined]
        now = self.catalog.ctx.now()
        try:
            added = self.catalog.indexes.record(new_index, now)
        except Exception:
            db, name = names.normalize(index_table.dbName), names.normalize(index_table.tableName)
            self.catalog.drop_table(db, name, True, index_drop=True)
            raise
        self.catalog.ctx.events.record([event_messages.create_index(added, now)])
        return added

    def alter_index(
        self, dbname: str, base_tbl_name: str, idx_name: str, new_idx: hms.Index
    ) -> None:
        """Change an index's parameters (the only change HMS 2.3 keeps), with a new DDL time."""
        if new_idx is None:
            raise _internal_error("alter_index")
        new_idx.parameters = dict(new_idx.parameters or {})
        now = self.catalog.ctx.now()
        new_idx.parameters["transient_lastDdlTime"] = str(now)
        before = _found(self.catalog.indexes, dbname, base_tbl_name, idx_name)
        self.catalog.indexes.alter(dbname, base_tbl_name, idx_name, new_idx)
        if before is not None:
            self.catalog.ctx.events.record([event_messages.alter_index(before, new_idx, now)])

    def drop_index_by_name(
        self,
        db_name: str,
        tbl_name: str,
        index_name: str,
        deleteData: bool,  # noqa: N803 (IDL name)
    ) -> bool:
        """Drop an index and its index table (its data too with ``deleteData``)."""
        index = self.catalog.indexes.get(db_name, tbl_name, index_name)
        index_db, index_table = self.catalog.indexes.index_table_of(db_name, tbl_name, index_name)
        if self.catalog.tables.find(index_db, index_table) is not None:
            self.catalog.drop_table(index_db, index_table, bool(deleteData), index_drop=True)
        self.catalog.indexes.remove(db_name, tbl_name, index_name)
        self.catalog.ctx.events.record([event_messages.drop_index(index, self.catalog.ctx.now())])
        return True

    def get_index_by_name(self, db_name: str, tbl_name: str, index_name: str) -> hms.Index:
        return self.catalog.indexes.get(db_name, tbl_name, index_name)

    def get_indexes(self, db_name: str, tbl_name: str, max_indexes: int) -> list[hms.Index]:
        """Every index on the table (HMS 2.3 does not apply ``max_indexes``)."""
        return self.catalog.indexes.all(db_name, tbl_name)

    def get_index_names(self, db_name: str, tbl_name: str, max_indexes: int) -> list[str]:
        """Names of the indexes on the table, sorted (HMS 2.3 does not apply ``max_indexes``)."""
        return [index.indexName for index in self.catalog.indexes.all(db_name, tbl_name)]

    # -- types -------------------------------------------------------------------------------

    def create_type(self, type: hms.Type) -> bool:  # noqa: A002 (IDL name)
        return self.catalog.types.create(type)

    def get_type(self, name: str) -> hms.Type:
        return self.catalog.types.get(name)

    def drop_type(self, type: str) -> bool:  # noqa: A002 (IDL name)
        return self.catalog.types.drop(type)

    def get_type_all(self, name: str) -> dict[str, hms.Type]:
        return self.catalog.types.all(name)

    # -- partition specs ---------------------------------------------------------------------

    def add_partitions_pspec(self, new_parts: list[hms.PartitionSpec]) -> int:
        """Add the partitions the specs hold, through ``add_partitions``; how many were
        added. The first spec names the table; every partition must belong to it."""
        if not new_parts:
            return 0
        db, table = new_parts[0].dbName, new_parts[0].tableName
        try:
            parts = partition_specs.partitions_of(new_parts)
        except partition_specs.UnusableSpec:
            raise _internal_error("add_partitions_pspec") from None
        target = f"{java_text(db)}.{java_text(table)}"
        if self.catalog.tables.find(names.normalize(db), names.normalize(table)) is None:
            raise hms.InvalidObjectException(
                message=f"Unable to add partitions because database or table {target} "
                "does not exist"
            )
        for part in parts:
            if part is not None and (part.dbName, part.tableName) != (db, table):
                raise hms.MetaException(
                    message=f"Partition does not belong to target table {target}: "
                    f"{thrift_struct_text(part)}"
                )
        return self.add_partitions(parts) if parts else 0  # type: ignore[attr-defined]

    def get_partitions_pspec(
        self, db_name: str, tbl_name: str, max_parts: int
    ) -> list[hms.PartitionSpec]:
        """The table's partitions as specs (grouped when the table asks for it)."""
        db, table = (db_name or "").lower(), (tbl_name or "").lower()
        ref = self.catalog.tables.get(_db(db_name), names.normalize(tbl_name))
        limit = partition_specs.java_short(max_parts)
        parts = _decoded(self.get_partitions(db_name, tbl_name, limit))  # type: ignore[attr-defined]
        return partition_specs.specs_of(ref.table, parts, db, table)

    def get_part_specs_by_filter(
        self,
        db_name: str,
        tbl_name: str,
        filter: str,  # noqa: A002 (IDL name)
        max_parts: int,
    ) -> list[hms.PartitionSpec]:
        """The partitions matching a filter as specs (the list spec names the table as sent)."""
        ref = self.catalog.tables.find(_db(db_name), names.normalize(tbl_name))
        if ref is None:  # named as sent (get_partitions_pspec lower-cases them first)
            raise hms.NoSuchObjectException(message=f"{db_name}.{tbl_name} table not found")
        limit = partition_specs.java_short(max_parts)
        found = self.get_partitions_by_filter(db_name, tbl_name, filter, limit)  # type: ignore[attr-defined]
        return partition_specs.specs_of(ref.table, _decoded(found), db_name, tbl_name)

    # -- partition event marks ---------------------------------------------------------------

    def markPartitionForEvent(  # noqa: N802 (IDL name)
        self,
        db_name: str,
        tbl_name: str,
        part_vals: dict[str, str],
        eventType: int,  # noqa: N803
    ) -> None:
        self.catalog.partition_events.mark(db_name, tbl_name, part_vals, eventType)

    def isPartitionMarkedForEvent(  # noqa: N802 (IDL name)
        self,
        db_name: str,
        tbl_name: str,
        part_vals: dict[str, str],
        eventType: int,  # noqa: N803
    ) -> bool:
        expiry = expiry_seconds(self._config_values)
        return self.catalog.partition_events.is_marked(db_name, tbl_name, part_vals, eventType,
                                                       expiry)  # fmt: skip

    # -- transactions --------------------------------------------------------------------------

    def add_dynamic_partitions(self, rqst: hms.AddDynamicPartitions) -> None:
        if rqst is None:
            raise _internal_error("add_dynamic_partitions")
        self.catalog.transactions.add_dynamic_partitions(rqst)

    # -- tables by filter ------------------------------------------------------------------------

    def get_table_names_by_filter(
        self,
        dbname: str,
        filter: str,  # noqa: A002 (IDL name)
        max_tables: int,
    ) -> list[str]:
        """Names of the tables whose owner, last access time or parameters match a filter."""
        if not dbname:
            raise hms.UnknownDBException(message="DB name is null or empty")
        if filter is None:
            raise hms.InvalidOperationException(message="null cannot apply null filter")
        return table_names_by_filter(self.catalog.ctx.store, _db(dbname), filter, max_tables)

