"""Constraints of tables, as HMS stores them (it records them; engines decide what to do with
them): primary and foreign keys, unique, not null, default and check constraints.

Each table's constraints are one ``meta`` row keyed by its stable id (``layout.constraints_key``),
one column per constraint name holding its kind (one byte) and its columns (Thrift binary, a
list of SQLPrimaryKey, SQLForeignKey, SQLUniqueConstraint...), so a rename carries them and a
drop removes them. A unique constraint spans the columns one call gives; a not null, default or
check constraint is one per entry (each its name), as HMS keeps them.

Each call that adds constraints records one ADD_* event of what it added, and a drop a
DROP_CONSTRAINT event, in its change (``events.table_messages``); the keys of a table being
created are recorded after its CREATE_TABLE, as HMS orders them (``events`` collects them).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from thriftpy2.thrift import TPayload, TType

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.events import table_messages
from metastore_server.catalog.events.messages import Event
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put, StoragePort
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes


class Entry(Protocol):
    """What the constraint structs kept one per column share (not SQLForeignKey)."""

    catName: str
    table_db: str
    table_name: str
    column_name: str


E = TypeVar("E", bound=Entry)
#: (kind, columns in key order) of each constraint: the columns are the kind's struct
#: (``_HOLDERS``), so they are told apart by the kind only.
Stored: TypeAlias = list[tuple[bytes, list[Any]]]


def forget_table(store: StoragePort, table_id: int) -> None:
    """Remove a dropped table's constraints."""
    store.mutate([Delete(layout.META, layout.constraints_key(table_id))])


class Constraints:
    """HMS's constraint calls."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables

    def _recorded(self, event_type: str, stored: list[Any], events: list[Event] | None) -> None:
        """The ADD_* event of constraints added: into ``events`` when given (a table being
        created), else recorded now."""
        event = table_messages.add_constraints(event_type, stored, self._ctx.now())
        if events is not None:
            events.append(event)
        else:
            self._ctx.events.record([event])

    def add_primary_key(
        self, columns: Sequence[hms.SQLPrimaryKey] | None, events: list[Event] | None = None
    ) -> None:
        """Record a table's primary key (one per table)."""
        if not columns:
            return
        first = columns[0]
        ref = self._table(first.table_db, first.table_name, "Parent")
        name = (first.pk_name or f"pk_{uuid.uuid4().hex[:16]}").lower()
        stored = []
        for seq, column in enumerate(columns, start=1):
            if (names.normalize(column.table_db), names.normalize(column.table_name)) != (
                ref.db, ref.name):  # fmt: skip
                raise hms.MetaException(message="A primary key must be on one table")
            self._require_column(ref, column.column_name, "Parent")
            kept = hms.SQLPrimaryKey(
                table_db=ref.db, table_name=ref.name, column_name=column.column_name.lower(),
                key_seq=column.key_seq or seq, pk_name=name, enable_cstr=column.enable_cstr,
                validate_cstr=column.validate_cstr, rely_cstr=column.rely_cstr,
            )  # fmt: skip
            stored.append(kept)
        with self._ctx.write_lock:
            if self.primary_keys(ref.db, ref.name):
                raise hms.MetaException(
                    message=f"Primary key already exists for: {ref.db}.{ref.name}"
                )
            self._add(ref, name, _PK, stored)
            self._recorded(table_messages.ADD_PRIMARYKEY, stored, events)

    def add_foreign_key(
        self, columns: Sequence[hms.SQLForeignKey] | None, events: list[Event] | None = None
    ) -> None:
        """Record a foreign key; the parent columns must be the parent table's primary key."""
        if not columns:
            return
        first = columns[0]
        child = self._table(first.fktable_db, first.fktable_name, "Child")
        parent = self._table(first.pktable_db, first.pktable_name, "Parent")
        name = (first.fk_name or f"fk_{uuid.uuid4().hex[:16]}").lower()
        keys = self._parent_keys(parent)
        for column in columns:  # then missing columns, as HMS checks them
            self._require_column(child, column.fkcolumn_name, "Child")
            self._require_column(parent, column.pkcolumn_name, "Parent")
        key_name = _referenced_key(parent, keys, {(c.pkcolumn_name or "").lower() for c in columns})
        stored = []
        for seq, column in enumerate(columns, start=1):
            stored.append(hms.SQLForeignKey(
                pktable_db=parent.db, pktable_name=parent.name,
                pkcolumn_name=column.pkcolumn_name.lower(), fktable_db=child.db,
                fktable_name=child.name, fkcolumn_name=column.fkcolumn_name.lower(),
                key_seq=column.key_seq or seq, update_rule=column.update_rule,
                delete_rule=column.delete_rule, fk_name=name,
                pk_name=key_name,
                enable_cstr=column.enable_cstr, validate_cstr=column.validate_cstr,
                rely_cstr=column.rely_cstr,
            ))  # fmt: skip
        with self._ctx.write_lock:
            self._add(child, name, _FK, stored)
            self._recorded(table_messages.ADD_FOREIGNKEY, stored, events)

    def _parent_keys(self, parent: TableRef) -> dict[str, set[str]]:
        """The parent's primary key and unique constraints (name -> columns, the primary key
        first); MetaException, HMS's words, when it has none."""
        keys: dict[str, set[str]] = {}
        stored = self._stored(parent)
        for wanted in (_PK, _UK):
            for kind, columns in stored:
                for c in columns if kind == wanted else []:
                    name = c.pk_name if kind == _PK else c.uk_name
                    keys.setdefault(name, set()).add(c.column_name)
        if not keys:
            raise hms.MetaException(
                message="Trying to define foreign key but there are no primary keys or unique "
                f"keys for referenced table {parent.db}.{parent.name}"
            )
        return keys

    def add_unique(
        self, columns: Sequence[hms.SQLUniqueConstraint] | None, events: list[Event] | None = None
    ) -> None:
        """Record a unique constraint over the columns given (one name, HMS's or generated)."""
        if not columns:
            return
        ref = self._table(columns[0].table_db, columns[0].table_name, "Parent")
        name = (columns[0].uk_name or f"uk_{uuid.uuid4().hex[:16]}").lower()
        stored = []
        for seq, column in enumerate(columns, start=1):
            self._require_same_table(ref, column)
            kept = self._kept(ref, column, require=True)
            kept.key_seq, kept.uk_name = column.key_seq or seq, name
            stored.append(kept)
        with self._ctx.write_lock:
            self._add(ref, name, _UK, stored)
            self._recorded(table_messages.ADD_UNIQUECONSTRAINT, stored, events)

    def add_each(
        self, kind: bytes, entries: Sequence[Entry] | None, events: list[Event] | None = None
    ) -> None:
        """Record not null (``_NN``), default (``_DC``) or check (``_CC``) constraints, one per
        entry, all of one table, all or nothing where the store has transactions."""
        if not entries:
            return
        field, prefix = _NAME_FIELDS[kind]
        ref = self._table(entries[0].table_db, entries[0].table_name, "Parent")
        planned: list[tuple[str, Entry]] = []
        for entry in entries:
            self._require_same_table(ref, entry)
            kept = self._kept(ref, entry, require=kind != _CC or entry.column_name is not None)
            name = (getattr(entry, field) or f"{prefix}_{uuid.uuid4().hex[:16]}").lower()
            if name in (n for n, _ in planned):
                raise hms.MetaException(message=f"Constraint name already exists: {name}")
            setattr(kept, field, name)
            planned.append((name, kept))
        with self._ctx.write_lock:
            for name, kept in planned:
                self._add(ref, name, kind, [kept])
            self._recorded(_EVENT_TYPES[kind], [kept for _, kept in planned], events)

    def of_kind(self, kind: bytes, db: str | None, table: str | None) -> list[Any]:
        """A table's constraints of one kind, each's columns in key order (none for a missing
        table, as HMS answers)."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        if ref is None:
            return []
        return [c for k, columns in self._stored(ref) if k == kind for c in columns]

    def all_of(self, db: str | None, table: str | None) -> hms.SQLAllTableConstraints:
        """Every constraint of a table, by kind (``get_all_table_constraints``)."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        found: dict[bytes, list[Any]] = {kind: [] for kind in _HOLDERS}
        for kind, columns in self._stored(ref) if ref is not None else []:
            found[kind].extend(columns)
        return hms.SQLAllTableConstraints(
            primaryKeys=found[_PK], foreignKeys=found[_FK], uniqueConstraints=found[_UK],
            notNullConstraints=found[_NN], defaultConstraints=found[_DC],
            checkConstraints=found[_CC],
        )  # fmt: skip

    def drop(self, db: str | None, table: str | None, name: str | None) -> None:
        """Remove a constraint by name."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        if ref is None:
            raise hms.NoSuchObjectException(
                message=f"Table {names.normalize(db)}.{names.normalize(table)} does not exist"
            )
        column = layout.constraint_column((name or "").lower())
        row = self._ctx.store.get(layout.META, layout.constraints_key(ref.table_id)) or {}
        if column not in row:
            raise hms.NoSuchObjectException(
                message=f"The constraint: {name} does not exist for the associated table: "
                f"{ref.db}.{ref.name}"
            )
        with self._ctx.write_lock:
            self._ctx.store.mutate([Delete(layout.META, layout.constraints_key(ref.table_id),
                                           [column])])  # fmt: skip
            self._ctx.events.record([table_messages.drop_constraint(
                ref.table.catName or names.DEFAULT_CATALOG, ref.db, ref.name,
                (name or "").lower(), self._ctx.now())])  # fmt: skip

    def primary_keys(self, db: str | None, table: str | None) -> list[hms.SQLPrimaryKey]:
        """The table's primary key columns, in key order (none for a missing table, as HMS)."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        if ref is None:
            return []
        return [k for kind, keys in self._stored(ref) if kind == _PK for k in keys]

    def foreign_keys(self, request: hms.ForeignKeysRequest) -> list[hms.SQLForeignKey]:
        """The foreign keys of a child table, or onto a parent table, or both (HMS: those
        matching what the request names; none for a missing table)."""
        parent = (names.normalize(request.parent_db_name), names.normalize(request.parent_tbl_name))
        child = (
            names.normalize(request.foreign_db_name), names.normalize(request.foreign_tbl_name)
        )
        if child[1]:
            ref = self._tables.find(*child)
            stored = self._stored(ref) if ref is not None else []
        else:
            stored = self._every_stored()
        found = []
        for kind, keys in stored:
            if kind != _FK:
                continue
            for key in keys:
                if parent[1] and (key.pktable_db, key.pktable_name) != parent:
                    continue
                found.append(key)
        return found

    # -- helpers ---------------------------------------------------------------------------

    def _table(self, db: str | None, table: str | None, role: str) -> TableRef:
        """The parent or child table of a key; InvalidObjectException (HMS's words) when
        missing."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        if ref is None:
            raise hms.InvalidObjectException(message=f"{role} table not found: {table}")
        return ref

    @staticmethod
    def _require_same_table(ref: TableRef, entry: Entry) -> None:
        """MetaException when a constraint's entry names another table than its first."""
        if (names.normalize(entry.table_db), names.normalize(entry.table_name)) != (
            ref.db, ref.name):  # fmt: skip
            raise hms.MetaException(message="A constraint must be on one table")

    def _kept(self, ref: TableRef, entry: E, *, require: bool) -> E:
        """The entry as stored: names lower-case, the default catalog (its column must exist
        when ``require``)."""
        if require:
            self._require_column(ref, entry.column_name, "Parent")
        kept = copy.deepcopy(entry)
        kept.catName, kept.table_db, kept.table_name = names.DEFAULT_CATALOG, ref.db, ref.name
        if kept.column_name is not None:
            kept.column_name = kept.column_name.lower()
        return kept

    @staticmethod
    def _require_column(ref: TableRef, column: str | None, role: str) -> None:
        known = {(c.name or "").lower() for c in (ref.table.sd.cols if ref.table.sd else []) or []}
        if (column or "").lower() not in known:
            raise hms.InvalidObjectException(message=f"{role} column not found: {column}")

    def _every_stored(self) -> Stored:
        """The constraints of every table."""
        found: Stored = []
        start, stop = layout.constraints_range()
        for _key, row in self._ctx.store.scan(layout.META, start, stop):
            found.extend(_decoded(row))
        return found

    def _add(self, ref: TableRef, name: str, kind: bytes, stored: Sequence[object]) -> None:
        key = layout.constraints_key(ref.table_id)
        column = layout.constraint_column(name)
        value = kind + to_bytes(_HOLDERS[kind](keys=stored))
        if not self._ctx.store.mutate([Put(layout.META, key, {column: value})],
                                      Condition(layout.META, key, column, None)):  # fmt: skip
            raise hms.MetaException(message=f"Constraint name already exists: {name}")

    def _stored(self, ref: TableRef) -> Stored:
        return _decoded(self._ctx.store.get(layout.META, layout.constraints_key(ref.table_id)))


def _decoded(row: dict[bytes, bytes] | None) -> Stored:
    """(kind, columns in key order) of each constraint of a table's constraints row."""
    found: Stored = []
    for column, value in sorted((row or {}).items()):
        if not column.startswith(layout.CONSTRAINT_PREFIX):
            continue
        kind, data = value[:1], value[1:]
        if kind not in _HOLDERS:
            continue  # a kind of a later version
        holder = from_bytes(_HOLDERS[kind], data)
        found.append((kind, sorted(holder.keys or [], key=lambda k: getattr(k, "key_seq", 0) or 0)))
    return found


#: The kinds of constraint (the first byte of a stored one).
_PK, _FK, _UK, _NN, _DC, _CC = b"P", b"F", b"U", b"N", b"D", b"C"
NOT_NULL, DEFAULT, CHECK, UNIQUE = _NN, _DC, _CC, _UK
#: The name field of each kind stored one per entry, and the prefix of a generated name.
_NAME_FIELDS = {_NN: ("nn_name", "nn"), _DC: ("dc_name", "dc"), _CC: ("dc_name", "cc")}
#: The ADD_* event of each kind stored one per entry.
_EVENT_TYPES = {
    _NN: table_messages.ADD_NOTNULLCONSTRAINT,
    _DC: table_messages.ADD_DEFAULTCONSTRAINT,
    _CC: table_messages.ADD_CHECKCONSTRAINT,
}


if TYPE_CHECKING:

    class _Holder(TPayload):
        """What thriftpy2 makes of a holder's spec (below): its field and constructor."""

        keys: list[Any] | None

        def __init__(self, keys: Sequence[object] | None = None) -> None: ...

else:
    _Holder = TPayload


def _holder(element: type[TPayload]) -> type[_Holder]:
    """A Thrift struct with one list of ``element`` (to store a constraint's columns)."""

    class Holder(_Holder):
        thrift_spec = {1: (TType.LIST, "keys", (TType.STRUCT, element), False)}
        default_spec = [("keys", None)]

    return Holder


_HOLDERS = {
    _PK: _holder(hms.SQLPrimaryKey),
    _FK: _holder(hms.SQLForeignKey),
    _UK: _holder(hms.SQLUniqueConstraint),
    _NN: _holder(hms.SQLNotNullConstraint),
    _DC: _holder(hms.SQLDefaultConstraint),
    _CC: _holder(hms.SQLCheckConstraint),
}


def _referenced_key(parent: TableRef, keys: dict[str, set[str]], referenced: set[str]) -> str:
    """The name of the parent's key (``keys``: the primary key first, then unique
    constraints) that holds every referenced column (MetaException when none does)."""
    for name, held in keys.items():
        if referenced <= held:
            return name
    missing = sorted(referenced - set().union(*keys.values())) or sorted(referenced)
    raise hms.MetaException(
        message=f"Foreign key references {parent.db}.{parent.name}.{missing[0]}, which is "
        "not in its primary key or a unique constraint"
    )
