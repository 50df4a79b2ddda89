"""Writes of the HBase store (``storage.hbase``): one port mutate as HBase write requests
(``Writer``, over the store's connection and tables).

See ``StoragePort.mutate`` for ``atomic_batches = False``: a mutate's ops are folded into one
change per row (``Change``); each row's change is one ``mutateRow`` (or one entry of a
``mutateRows`` group of up to ``write_batch`` rows); a row that both puts and deletes goes in
two steps (puts first); a condition is ``checkAndPut``. A cell whose KeyValue would be longer
than ``max_cell_bytes`` (HBase's hbase.client.keyvalue.maxsize, default 10,485,760 bytes) is
refused before anything is sent (ValueError naming the table, column and size). When a group
fails, the rows of it that landed are found by reading them back, and ``PartialWriteError``
tells which rows landed.

The changes are also the rows an intent records (``storage.intent_entries.RowChange``: table,
key, whole, puts, deletes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from metastore_server.storage import hbase_keys
from metastore_server.storage.hbase_connection import THRIFT, HBaseConnection
from metastore_server.storage.hbase_tables import HBaseTables, check_column
from metastore_server.storage.port import (
    Condition,
    Delete,
    PartialWriteError,
    Put,
    Row,
    StorageError,
)

#: Reads one row (the store's ``get``): a replaced row's columns, a write read back.
Read = Callable[[str, bytes], Row | None]


class Writer:
    """Port mutates as HBase write requests: ``plan`` checks and folds one, ``carry_out``
    sends it, ``mutate`` both (the intent log's own writes, outside any intent)."""

    def __init__(self, connection: HBaseConnection, tables: HBaseTables, read: Read) -> None:
        self.connection = connection
        self.tables = tables
        self.read = read

    def plan(
        self, ops: Sequence[Put | Delete], condition: Condition | Sequence[Condition] | None
    ) -> Plan:
        """The checked, folded changes of a mutate (nothing is sent)."""
        return plan(self, ops, condition)

    def carry_out(self, plan: Plan) -> bool:
        """Send a planned mutate; False when its condition failed."""
        return carry_out(self, plan)

    def mutate(self, ops: Sequence[Put | Delete], condition: Condition | None) -> bool:
        """Plan and send a mutate, outside any intent."""
        return carry_out(self, plan(self, ops, condition))


@dataclass(eq=False)
class Change:
    """The net change of one row: after ``whole`` (the row emptied) put ``puts``, and delete
    ``deletes`` (disjoint from ``puts``)."""

    table: str
    key: bytes
    name: bytes
    families: frozenset[bytes]
    whole: bool = False
    puts: dict[bytes, bytes] = field(default_factory=dict)
    deletes: set[bytes] = field(default_factory=set)
    written: set[bytes] = field(default_factory=set)  # puts already sent (the compare-and-set)

    @property
    def slot(self) -> tuple[str, bytes]:
        return self.table, self.key

    def apply(self, op: Put | Delete) -> None:
        if isinstance(op, Put):
            self.puts.update(op.columns)
            self.deletes.difference_update(op.columns)
        elif op.columns is None:
            self.whole, self.puts, self.deletes = True, {}, set()
        else:
            for column in op.columns:
                self.puts.pop(column, None)
                if not self.whole:
                    self.deletes.add(column)

    @property
    def pending_puts(self) -> dict[bytes, bytes]:
        return {c: v for c, v in self.puts.items() if c not in self.written}

    @property
    def deletes_anything(self) -> bool:
        return self.whole or bool(self.deletes)

    def landed(self, row: Row | None) -> bool:
        """Whether ``row`` (as read back) holds this change."""
        row = row or {}
        if any(row.get(column) != value for column, value in self.puts.items()):
            return False
        if self.whole:
            return set(row) == set(self.puts)
        return not any(column in row for column in self.deletes)


@dataclass(frozen=True)
class Plan:
    """A mutate, checked and folded into one change per row; ``order``: those that write."""

    changes: dict[tuple[str, bytes], Change]
    order: list[Change]
    condition: Condition | None


@dataclass(eq=False)
class Step:
    """One write request (``mutateRow`` / ``mutateRows``); once it is done the rows of
    ``completes`` have landed. ``kind``: "put" or "delete" (groupable with neighbours of the
    same kind and table), "put1" (the first step of a two-step row) or "replace" (delete what
    a replaced row holds beyond its puts, read when sent)."""

    table: bytes
    kind: str
    rows: list[tuple[bytes, list[Any]]]
    changes: list[Change]
    completes: list[Change]


def plan(
    host: Writer,
    ops: Sequence[Put | Delete],
    condition: Condition | Sequence[Condition] | None,
) -> Plan:
    """The checked, folded changes of a mutate (nothing is sent)."""
    if condition is not None and not isinstance(condition, Condition):
        several = list(condition)
        if len(several) > 1:
            raise ValueError("HBase checks one condition per mutate, not several")
        condition = several[0] if several else None
    changes: dict[tuple[str, bytes], Change] = {}
    for op in ops:
        if not isinstance(op, Put | Delete):
            raise TypeError(f"mutate takes Put and Delete, not {type(op).__name__}")
        name, families = host.tables.lookup(op.table)
        hbase_keys.check_key(op.key)
        for column in op.columns if isinstance(op, Put) else op.columns or ():
            check_column(column, families, op.table)
        if isinstance(op, Put):
            for column, value in op.columns.items():
                if not isinstance(value, bytes):
                    raise TypeError(f"values are bytes, not {type(value).__name__}")
                limit = host.connection.settings.max_cell_bytes
                hbase_keys.check_cell(name, op.key, column, value, limit)
        slot = (op.table, op.key)
        if slot not in changes:
            changes[slot] = Change(op.table, op.key, name, families)
        changes[slot].apply(op)
    if condition is not None:
        _, families = host.tables.lookup(condition.table)
        hbase_keys.check_key(condition.key)
        check_column(condition.column, families, condition.table)
        if condition.expected == b"":
            raise ValueError(
                "HBase cannot check for an empty value (it reads as absent); "
                "condition on a non-empty value or on None"
            )
    order = [c for c in changes.values() if c.puts or c.deletes_anything]
    return Plan(changes, order, condition)


def carry_out(host: Writer, plan: Plan) -> bool:
    """Send a planned mutate (see ``HBaseStore.mutate``); False when its condition failed."""
    condition, order = plan.condition, plan.order
    if condition is None:
        _write(host, order)
        return True
    name, _ = host.tables.lookup(condition.table)
    guard = plan.changes.get((condition.table, condition.key))
    if not _check_and_put(host, name, condition, guard):
        return False
    rest = [c for c in order if c is not guard]
    if guard is not None and (guard.pending_puts or guard.deletes_anything):
        rest.insert(0, guard)
    _write(host, rest, already=[guard] if guard is not None and guard.written else [])
    return True


def _check_and_put(host: Writer, name: bytes, condition: Condition, guard: Change | None) -> bool:
    """The atomic check (and first write) of a conditioned mutate."""
    puts = guard.puts if guard is not None else {}
    if condition.column in puts:
        column, value = condition.column, puts[condition.column]
    elif puts:
        column, value = next(iter(puts.items()))
    elif condition.expected is not None:
        column, value = condition.column, condition.expected  # written back unchanged
    else:  # nothing to put on that row, and no value to write back: a plain read
        row = host.read(condition.table, condition.key) or {}
        return not row.get(condition.column)
    mutation = THRIFT.Mutation(isDelete=False, column=column, value=value)
    held = host.connection.call(
        "checkAndPut",
        lambda c: c.checkAndPut(
            name, condition.key, condition.column, condition.expected, mutation, {}
        ),
        idempotent=False,
    )
    if held and guard is not None and column in guard.puts:
        guard.written.add(column)
    return bool(held)


def _write(host: Writer, order: list[Change], *, already: Sequence[Change] = ()) -> None:
    """Send the changes step by step; PartialWriteError when a step fails after a first
    write was sent. ``already``: a conditioned row the compare-and-set wrote to."""
    steps = _steps(order, host.connection.settings.write_batch)
    everything = list({id(c): c for c in [*already, *order]}.values())
    applied = {id(c) for c in already if not any(c is o for o in order)}
    for step in steps:
        try:
            _send(host, step)
        except (StorageError, ValueError) as error:
            if not already and len(steps) == 1 and len(step.changes) == 1:
                raise  # one row in one step: nothing landed (or the error says unknown)
            applied |= {id(c) for c in _verify(host, step.completes)}
            ok = [c.slot for c in everything if id(c) in applied]
            failed = [c.slot for c in everything if id(c) not in applied]
            raise PartialWriteError(
                f"a write of {len(everything)} rows failed part-way, {len(ok)} landed: {error}",
                ok,
                failed,
            ) from error
        applied |= {id(c) for c in step.completes}


def _steps(order: list[Change], write_batch: int) -> list[Step]:
    """The write requests of the changes, in order (see the port's ``mutate``)."""
    steps: list[Step] = []
    for change in order:
        puts = [
            THRIFT.Mutation(isDelete=False, column=c, value=v)
            for c, v in change.pending_puts.items()
        ]
        one = [(change.key, puts)]
        if change.whole and change.puts:  # replace: puts, then whatever else it holds
            if puts:
                steps.append(Step(change.name, "put1", one, [change], []))
            steps.append(Step(change.name, "replace", [(change.key, [])], [change], [change]))
            continue
        if puts and change.deletes:  # puts, then deletes
            deletes = _delete_mutations(change, ())
            steps.append(Step(change.name, "put1", one, [change], []))
            steps.append(Step(change.name, "delete", [(change.key, deletes)], [change], [change]))
            continue
        kind = "put" if puts else "delete"
        mutations = puts or _delete_mutations(change, ())
        last = steps[-1] if steps else None
        if (
            last is not None
            and last.kind == kind
            and last.table == change.name
            and len(last.rows) < write_batch
        ):
            last.rows.append((change.key, mutations))
            last.changes.append(change)
            last.completes.append(change)
        else:
            steps.append(Step(change.name, kind, [(change.key, mutations)], [change], [change]))
    return steps


def _delete_mutations(change: Change, current: Iterable[bytes]) -> list[Any]:
    """Mutations deleting what a change deletes: its columns; for a whole row, every
    family it puts nothing in, and the ``current`` columns of the others it does not put."""
    if not change.whole:
        return [THRIFT.Mutation(isDelete=True, column=c) for c in sorted(change.deletes)]
    kept = {c.partition(b":")[0] for c in change.puts}
    doomed = [f for f in sorted(change.families - kept)]
    doomed += sorted(c for c in current if c.partition(b":")[0] in kept and c not in change.puts)
    return [THRIFT.Mutation(isDelete=True, column=c) for c in doomed]


def _send(host: Writer, step: Step) -> None:
    """One step as one request (a "replace" reads the row first, to know what to delete)."""
    rows = step.rows
    if step.kind == "replace":
        change = step.changes[0]
        current = host.read(change.table, change.key) or {}
        rows = [(change.key, _delete_mutations(change, current))]
        if not rows[0][1]:
            return
    if len(rows) == 1:
        key, mutations = rows[0]
        host.connection.call(
            "mutateRow", lambda c: c.mutateRow(step.table, key, mutations, {}), idempotent=True
        )
        return
    batch = [THRIFT.BatchMutation(row=key, mutations=m) for key, m in rows]
    host.connection.call(
        "mutateRows", lambda c: c.mutateRows(step.table, batch, {}), idempotent=True
    )


def _verify(host: Writer, changes: Sequence[Change]) -> list[Change]:
    """The changes that are found to have landed (none when reading fails)."""
    landed = []
    try:
        for change in changes:
            if change.landed(host.read(change.table, change.key)):
                landed.append(change)
    except (StorageError, ValueError):
        pass
    return landed
