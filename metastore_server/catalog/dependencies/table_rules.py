"""What a dependent table's creation or alteration must satisfy, and the marks that let a base
find its dependents (``layout.dependents_key``), announced to us as table changes
(``basics.changes``).

A dependent table's properties must be readable, its base must exist and not lead back to it,
its partition keys must be a prefix of its base's, its columns its base's, and its completeness
rule must fit (refused with the change's error, ``dependent table db.t: ...``). A table created
without columns gets its base's. On alter the checks run when the ``metastore.dependent.*``
properties or the columns change; a base dropped meanwhile (drop policy ``allow``) is not
looked for unless it changes. The mark is written before the table row it protects, so a crash
in between leaves a stale mark, never a missing one.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.basics.changes import TableChange, TableListener
from metastore_server.catalog.dependencies.model import (
    BASE_KEY,
    PREFIX,
    DependentSpec,
    TableName,
    check_columns,
    check_completeness_rule,
    check_prefix,
)
from metastore_server.catalog.objects.tables import TableRef, Tables, column_types
from metastore_server.storage import layout
from metastore_server.storage.port import Delete, Put, StoragePort
from metastore_server.thrift_api import hms

#: How many base links a cycle check follows at the most.
_MAX_CHAIN = 64


def dependent_spec(table: hms.Table) -> DependentSpec | None:
    """The dependent-table spec a stored table declares; None when it is not dependent (or its
    properties cannot be read: only tables stored before the checks existed)."""
    try:
        return DependentSpec.from_parameters(table.parameters)
    except ValueError:
        return None


def dependents_of(store: StoragePort, db: str, name: str) -> tuple[str, ...]:
    """``db.table`` of the tables marked as depending on ``db.name`` (a mark may be stale:
    callers check the dependent itself). One point read."""
    row = store.get(layout.META, layout.dependents_key(db, name))
    return layout.marked_dependents(row) if row else ()


def mark_dependent(store: StoragePort, base: TableName, dependent: TableName) -> None:
    """Record that ``dependent`` depends on ``base``, by name: the mark outlives the base's row
    (a base dropped and created again keeps its dependents). Written before what it protects,
    so a crash in between leaves a stale mark, never a missing one."""
    mark = layout.dependent_mark(dependent.db, dependent.table)
    store.mutate([Put(layout.META, layout.dependents_key(base.db, base.table), {mark: b"1"})])


def unmark_dependent(store: StoragePort, base: TableName, dependent: TableName) -> None:
    """Remove the mark ``mark_dependent`` wrote."""
    mark = layout.dependent_mark(dependent.db, dependent.table)
    store.mutate([Delete(layout.META, layout.dependents_key(base.db, base.table), [mark])])


def _ours(table: hms.Table) -> dict[str, str]:
    return {k: v for k, v in (table.parameters or {}).items() if k.startswith(PREFIX)}


class DependentTableRules(TableListener):
    """Checks dependent tables as they are created or altered, and marks their bases."""

    def __init__(self, store: StoragePort, tables: Tables) -> None:
        self._store = store
        self._tables = tables

    def check(self, change: TableChange) -> None:
        """Refuse a dependent table that does not fit its base (see the module docstring)."""
        table, previous, error = change.table, change.previous, change.error
        where = f"dependent table {table.dbName}.{table.tableName}"
        params = table.parameters or {}
        old_spec = None
        if previous is not None:
            if _ours(previous) == _ours(table) and column_types(previous) == column_types(table):
                return
            old_spec = dependent_spec(previous)
        try:
            spec = DependentSpec.from_parameters(params)
        except ValueError as exc:
            raise error(message=f"{where}: {exc}") from None
        if spec is None:
            return
        if params.get(BASE_KEY) != str(spec.base):  # stored as records name it: db.table
            table.parameters = {**params, BASE_KEY: str(spec.base)}
        if (spec.base.db, spec.base.table) == (table.dbName, table.tableName):
            raise error(message=f"{where}: a table cannot be its own base")
        base = self._tables.find(spec.base.db, spec.base.table)
        if base is None:
            if old_spec is not None and old_spec.base == spec.base:
                return
            raise error(message=f"{where}: base table {spec.base} does not exist")
        cycle = self._base_chain_back_to(base, TableName(table.dbName, table.tableName))
        if cycle:
            raise error(
                message=f"{where}: {spec.base} would depend on it in turn "
                f"({' -> '.join(cycle)}); dependencies cannot form a cycle"
            )
        keys = [((k.name or "").lower(), k.type or "string") for k in table.partitionKeys or []]
        if table.sd is not None and not table.sd.cols and previous is None:
            table.sd.cols = copy.deepcopy(base.table.sd.cols if base.table.sd else [])
        try:
            check_prefix(keys, base.key_types)
            check_columns(column_types(table), column_types(base.table))
            if spec.completeness is not None:
                check_completeness_rule(spec.completeness, keys, base.key_types)
        except ValueError as exc:
            raise error(message=f"{where}: {exc}") from None

    def before_write(self, change: TableChange) -> None:
        """Mark the base of a new dependent, or of one re-pointed to another base."""
        spec = dependent_spec(change.table)
        if spec is None:
            return
        if change.previous is not None and spec == dependent_spec(change.previous):
            return
        name = TableName(change.table.dbName, change.table.tableName)
        mark_dependent(self._store, spec.base, name)

    def _base_chain_back_to(self, base: TableRef, table: TableName) -> list[str]:
        """The chain of current bases from ``base`` when it leads back to ``table`` (a cycle),
        else []. Follows at most ``_MAX_CHAIN`` links."""
        chain = [f"{base.db}.{base.name}"]
        cursor: TableRef | None = base
        for _ in range(_MAX_CHAIN):
            spec = dependent_spec(cursor.table) if cursor is not None else None
            if spec is None:
                return []
            chain.append(str(spec.base))
            if spec.base == table:
                return chain
            cursor = self._tables.find(spec.base.db, spec.base.table)
        return []
