"""Indexes on tables, as HMS 2.3 still stores them (Hive 3 removed them): an index names its base
table and an index table holding the index data; HMS only records them.

A table's indexes are one ``meta`` row keyed by the table's stable id (``layout.indexes_key``),
one column per index name holding the Index (Thrift binary, its index table written
``db.name``), so a rename of the base carries them and a drop removes them. Adding one is a put
on the column's absence and altering one a compare-and-set on its value, so server processes
sharing the store never lose one another's changes.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import ALTER, CREATE, DROP, INDEX, Change
from metastore_server.catalog.basics.java_text import thrift_struct_text
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import (
    DDL_TIME,
    INDEX_TABLE,
    TableRef,
    Tables,
    fill_storage_defaults,
)
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Condition, Delete, Put, StoragePort
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes


def forget_table(store: StoragePort, table_id: int) -> None:
    """Remove a dropped table's indexes (their index tables go with it, see Catalog)."""
    store.mutate([Delete(layout.META, layout.indexes_key(table_id))])


def qualified_name(default_db: str | None, table: str | None) -> tuple[str, str]:
    """(db, table) of an index table name, ``db.table`` or ``table`` (in ``default_db``), as
    HMS's ``getQualifiedName`` splits it; lower-case."""
    parts = (table or "").split(".")
    if len(parts) == 1:
        return names.normalize(default_db), names.normalize(parts[0])
    return names.normalize(parts[0]), names.normalize(parts[1])


def refuse_index_table(ref: TableRef) -> None:
    """HMS's answer to ``drop_table`` of an index table: drop its index instead."""
    if ref.table.tableType == INDEX_TABLE:
        raise hms.MetaException(
            message=f"java.lang.RuntimeException: The table {ref.name} is an index table. "
            "Please do drop index instead."
        )


class Indexes:
    """HMS's index calls on the store (the index table itself is an ordinary table)."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables

    # -- reads -------------------------------------------------------------------------------

    def get(self, db: str | None, table: str | None, name: str | None) -> hms.Index:
        """One index; NoSuchObjectException ``db.t index=x not found``."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        row = self._row(ref) if ref is not None else {}
        data = row.get(layout.index_column(names.normalize(name)))
        if ref is None or data is None:
            raise hms.NoSuchObjectException(message=f"{db}.{table} index={name} not found")
        return _answer(ref, data)

    def index_table_of(
        self, db: str | None, table: str | None, name: str | None
    ) -> tuple[str, str]:
        """(db, name) of an index's index table; NoSuchObjectException as ``get``."""
        self.get(db, table, name)
        ref = self._tables.get(names.normalize(db), names.normalize(table))
        data = self._row(ref).get(layout.index_column(names.normalize(name)))
        stored = from_bytes(hms.Index, data) if data is not None else hms.Index()
        return qualified_name(ref.db, stored.indexTableName)

    def all(self, db: str | None, table: str | None) -> list[hms.Index]:
        """Every index on a table, by name (none for a table that does not exist, as HMS)."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        if ref is None:
            return []
        row = self._row(ref)
        return [_answer(ref, row[c]) for c in sorted(row) if c.startswith(layout.INDEX_PREFIX)]

    def index_tables(self, ref: TableRef) -> list[TableRef]:
        """The index tables of a table's indexes that exist."""
        found = []
        for data in self._row(ref).values():
            index = from_bytes(hms.Index, data)
            index_ref = self._tables.find(*qualified_name(ref.db, index.indexTableName))
            if index_ref is not None:
                found.append(index_ref)
        return found

    # -- writes ------------------------------------------------------------------------------

    def check_new(self, index: hms.Index) -> tuple[str, str]:
        """What HMS checks before it creates a new index's table: the index is new, its base
        exists, its index table does not. Returns the index table's (db, name)."""
        base = self._base(index)
        column = layout.index_column(names.normalize(index.indexName))
        if base is not None and column in self._row(base):
            raise hms.AlreadyExistsException(message=f"Index already exists:{_java(index)}")
        if base is None:
            raise hms.InvalidObjectException(
                message="Unable to add index because database or the orginal table do not exist"
            )
        index_table = qualified_name(index.dbName, index.indexTableName)
        if self._tables.find(*index_table) is not None:
            raise hms.InvalidObjectException(
                message="Unable to add index because index table already exists"
            )
        return index_table

    def record(self, index: hms.Index, now: int) -> hms.Index:
        """Store a new index whose index table exists; the index as HMS answers it (as sent,
        with its create time and DDL time set)."""
        base, index_table = self._validate(index)
        answer = copy.deepcopy(index)
        answer.createTime = now
        answer.lastAccessTime = index.lastAccessTime or 0  # Java ints and booleans: never null
        answer.deferredRebuild = bool(index.deferredRebuild)
        answer.parameters = {**(index.parameters or {}), DDL_TIME: str(now)}
        stored = copy.deepcopy(answer)
        stored.indexName = names.normalize(index.indexName)
        stored.indexTableName = ".".join(index_table)
        key, column = layout.indexes_key(base.table_id), layout.index_column(stored.indexName)
        put = Put(layout.META, key, {column: to_bytes(stored)})
        if not self._ctx.store.mutate([put], Condition(layout.META, key, column, None)):
            raise hms.AlreadyExistsException(message=f"Index already exists:{_java(index)}")
        self._ctx.changes.announce(Change(INDEX, CREATE, after=answer, when=now))
        return answer

    def alter(self, db: str | None, table: str | None, name: str | None,
              new_index: hms.Index) -> None:  # fmt: skip
        """Change an index's parameters (all HMS 2.3 changes), checking the new definition as
        HMS does: a missing index is a MetaException, a bad definition an
        InvalidOperationException."""
        column = layout.index_column(names.normalize(name))

        def attempt() -> None | Lost:
            ref = self._tables.find(names.normalize(db), names.normalize(table))
            old = self._row(ref).get(column) if ref is not None else None
            if ref is None or old is None:
                missing = f"{db}.{table} index={name} not found"
                raise hms.MetaException(message=f"NoSuchObjectException(message:{missing})")
            try:
                self._validate(new_index)
            except hms.InvalidObjectException as exc:
                raise hms.InvalidOperationException(message=exc.message) from None
            key = layout.indexes_key(ref.table_id)
            stored = from_bytes(hms.Index, old)
            stored.parameters = dict(new_index.parameters or {})
            put = Put(layout.META, key, {column: to_bytes(stored)})
            if not self._ctx.store.mutate([put], Condition(layout.META, key, column, old)):
                return LOST
            self._ctx.changes.announce(Change(
                INDEX, ALTER, before=_answer(ref, old), after=new_index, when=self._ctx.now()
            ))  # fmt: skip
            return None

        if retrying.race(retrying.INDEX_ALTER, attempt) is LOST:
            raise hms.MetaException(
                message=f"Index {name}: other calls kept changing it; try again"
            )

    def remove(self, index: hms.Index) -> None:
        """Forget an index as ``get`` answered it (its index table is dropped by the
        caller)."""
        ref = self._tables.find(names.normalize(index.dbName), names.normalize(index.origTableName))
        if ref is not None:
            column = layout.index_column(names.normalize(index.indexName))
            self._ctx.store.mutate([Delete(layout.META, layout.indexes_key(ref.table_id),
                                           [column])])  # fmt: skip
        self._ctx.changes.announce(Change(INDEX, DROP, before=index, when=self._ctx.now()))

    # -- helpers -----------------------------------------------------------------------------

    def _base(self, index: hms.Index) -> TableRef | None:
        db, table = names.normalize(index.dbName), names.normalize(index.origTableName)
        return self._tables.find(db, table)

    def _row(self, ref: TableRef) -> dict[bytes, bytes]:
        row = self._ctx.store.get(layout.META, layout.indexes_key(ref.table_id)) or {}
        return {c: v for c, v in row.items() if c.startswith(layout.INDEX_PREFIX)}

    def _validate(self, index: hms.Index) -> tuple[TableRef, tuple[str, str]]:
        """HMS's checks of an index definition (InvalidObjectException): a storage
        descriptor, an existing base table and an existing index table."""
        if index.sd is None:
            raise hms.InvalidObjectException(message="Storage descriptor is not defined for index.")
        base = self._base(index)
        if base is None:
            raise hms.InvalidObjectException(
                message="Original table does not exist for the given index."
            )
        index_table = qualified_name(index.dbName, index.indexTableName)
        if self._tables.find(*index_table) is None:
            raise hms.InvalidObjectException(
                message="Underlying index table does not exist for the given index."
            )
        return base, index_table


def _answer(ref: TableRef, data: bytes) -> hms.Index:
    """A stored index as HMS answers it: its base by its current names, its index table by
    name alone, the storage fields HMS always sets."""
    index = from_bytes(hms.Index, data)
    index.dbName, index.origTableName = ref.db, ref.name
    index.indexTableName = (index.indexTableName or "").split(".")[-1]
    fill_storage_defaults(index.sd)
    return index


def _java(index: hms.Index) -> str:
    """The index as Java's ``toString`` prints it (HMS's AlreadyExistsException message)."""
    return thrift_struct_text(index)
