"""Adding partitions with HMS's rules and messages: all or nothing, each created exactly once
even with other server processes on the store.

What depends only on the table and the request (each partition's values, key, answer and row)
is made before the write lock is taken (``_early``), so that server processes adding at once
overlap in it; under the lock it is used only if the table is still the one it was made for.
On a store without atomic batches (HBase) a table's adders take turns through its adding
claim (``AddingClaim``, see ``core.claims``). See ``docs/storage.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import ADD, PARTITION, PartitionChange
from metastore_server.catalog.basics.java_text import thrift_struct_text
from metastore_server.catalog.core.claims import Claims, TooSlowToClaim
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.underway import SeenDirs
from metastore_server.catalog.dependencies.model import (
    DEPENDS_ON_KEY,
    Dependency,
    DependentSpec,
    TableName,
)
from metastore_server.catalog.dependencies.store import Dependencies
from metastore_server.catalog.dependencies.table_rules import dependent_spec
from metastore_server.catalog.objects.tables import (
    DDL_TIME,
    TableRef,
    Tables,
    fill_storage_defaults,
    owns_data,
    unable_to_create,
)
from metastore_server.catalog.partitions import wire_adding
from metastore_server.catalog.partitions.dependency_records import checked_dependency, mark_bases
from metastore_server.catalog.partitions.row_writes import row_columns, write_rows
from metastore_server.catalog.partitions.writer import PartitionWriter
from metastore_server.catalog.reads.partition_rows import (
    checked_values,
    new_row_key_named,
    partition_name,
)
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Condition, Put
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms
from metastore_server.wire.partitions import WirePartition
from metastore_server.wire.serde import shallow_copy

#: How often an add is tried when other server processes create its partitions meanwhile.
ADD_ATTEMPTS = retrying.ADD_PARTITIONS_ATTEMPTS
#: Longest wait for the adding claim of a table another server process holds (HBase).
ADD_CLAIM_WAIT_S = 10.0

#: Each partition's values, row key and name, or the error its values give.
Keyed = list[tuple[list[str], bytes, str] | Exception]


class _LostRace(Exception):
    """A partition an add found absent was created before the add's write landed."""


class AddingClaim:
    """A table's adding claim on a store without atomic batches: one holder at a time across
    server processes, for an add's batch or a change that creates a row (a rename)."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self._claims = Claims(ctx)

    def take(self, ref: TableRef, action: str) -> list[bytes]:
        """Take the table's adding claim, waiting up to ``ADD_CLAIM_WAIT_S`` while other server
        processes hold it; MetaException when they hold it longer."""
        try:
            claimed = self._claims.take_waiting([layout.adding_key(ref.table_id)], ADD_CLAIM_WAIT_S)
        except TooSlowToClaim as exc:
            raise hms.MetaException(message=f"{action} of {ref.db}.{ref.name}: {exc}") from None
        if claimed is None:
            raise hms.MetaException(
                message=f"{action} of {ref.db}.{ref.name}: other server processes kept adding "
                f"partitions to the table for over {ADD_CLAIM_WAIT_S:g} s; try again"
            )
        return claimed

    def release(self, claimed: list[bytes]) -> None:
        """Let go of a claim ``take`` returned."""
        self._claims.release(claimed)

    def hold(self, ref: TableRef, action: str) -> None:
        """On a store without atomic batches, hold the table's adding claim (as an add takes
        it) until this thread's outermost write lock lets go: a row this change creates is
        then created exactly once across server processes. MetaException when other
        processes hold it longer than ``ADD_CLAIM_WAIT_S``."""
        if self._ctx.store.atomic_batches:
            return
        claimed = self.take(ref, action)

        def release() -> None:
            self.release(claimed)

        self._ctx.write_lock.after_commit(release, undo=release)


@dataclass(frozen=True)
class _EarlyAdd:
    """What ``Adding._early`` made for an add, and the table row it was made from."""

    table_id: int
    object_bytes: bytes | None
    keyed: Keyed
    ready: list[tuple[hms.Partition, dict[bytes, bytes]] | None]
    #: The directories found counting their files (``DataOperations.seeing``).
    seen: SeenDirs | None = None

    def made_for(self, ref: TableRef) -> bool:
        """Whether ``ref`` is the table as it was read for this (same id, same definition)."""
        return (
            self.object_bytes is not None
            and ref.table_id == self.table_id
            and ref.object_bytes == self.object_bytes
        )


#: What an add answers each partition with: the partition, or a wire add's answer to it.
_Answer = TypeVar("_Answer", hms.Partition, wire_adding.WireAnswer)


@dataclass
class _AddPlan(Generic[_Answer]):
    """What one attempt of an add writes."""

    #: The new partitions in the request's order: key, values, and the answer to send back.
    to_store: list[tuple[bytes, list[str], _Answer]] = field(default_factory=list)
    #: Row columns made before the lock, by key (the others are made when written).
    stored_columns: dict[bytes, dict[bytes, bytes]] = field(default_factory=dict)
    #: Row writes made before the lock, by key (``stored_columns`` written as they are).
    stored_puts: dict[bytes, Put] = field(default_factory=dict)
    #: The conditions of the write (each new row absent), when made before the lock.
    absent: list[Condition] | None = None
    #: Whether a new row key holds a non-canonical typed spelling, when known.
    spelled: bool | None = None
    #: Keys of dependent partitions located at their base's data (no directory is made).
    on_base: set[bytes] = field(default_factory=set)
    #: Every base the new partitions depend on.
    bases: set[TableName] = field(default_factory=set)
    #: Bases other than the one the table declares (marked before the rows are written).
    other_bases: set[TableName] = field(default_factory=set)
    #: The directories found before the lock, counting their files.
    seen: SeenDirs | None = None


class Adding(PartitionWriter):
    """Adds partition rows to the store."""

    def __init__(
        self,
        ctx: CatalogContext,
        tables: Tables,
        dependencies: Dependencies,
        claim: AddingClaim,
    ) -> None:
        super().__init__(ctx, tables, dependencies)
        #: New partitions on stores without atomic batches are claimed before they are written.
        self._claim = claim

    def add(
        self,
        db: str,
        table: str,
        parts: Sequence[hms.Partition] | None,
        if_not_exists: bool = False,
        missing_table_message: str = (
            "Unable to add partition because table or database do not exist"
        ),
        count_stats: bool = True,
    ) -> Sequence[hms.Partition]:
        """Add partitions, all or nothing; with ``if_not_exists`` existing ones are skipped;
        with ``count_stats`` the fast statistics of files already there are counted (not for
        an exchange's partitions, as HMS).

        Returns the partitions added, as HMS answers them: with the location, times and
        parameters set, and the other storage fields as the client sent them. Raises
        InvalidObjectException (no table), AlreadyExistsException, MetaException (a partition
        of another table, duplicates, values that do not fit, a directory that cannot be made).
        """

        def attempt() -> Sequence[hms.Partition] | Lost:
            try:
                return self._add_once(
                    db, table, parts, if_not_exists, missing_table_message, count_stats
                )
            except _LostRace:
                return LOST  # another server process created (or is creating) one: look again

        # Random, growing pauses between tries: writers racing for the same rows drift apart.
        added = retrying.race(retrying.ADD_PARTITIONS, attempt)
        if added is not LOST:
            return added
        raise hms.MetaException(
            message=(
                f"Adding partitions to {db}.{table}: other server processes kept adding the same "
                f"partitions ({ADD_ATTEMPTS} attempts; a partition claimed by a server that "
                "died is free again after --writer-lease seconds)"
            )
        )

    def _add_once(
        self,
        db: str,
        table: str,
        parts: Sequence[hms.Partition] | None,
        if_not_exists: bool,
        missing_table_message: str,
        count_stats: bool = True,
    ) -> Sequence[hms.Partition]:
        """One attempt of ``add``: ``_LostRace`` when a partition it found absent was created
        (by another server process) before its write."""
        parts = list(parts or [])
        now = self._ctx.now()
        if wire_adding.wire_parts(parts):
            added = self._add_wire(db, table, parts, if_not_exists, now, count_stats)
            if added is not None:
                return added
            parts = [part.decode() for part in parts]  # the usual add, with its errors
        early = self._early(db, table, parts, now, count_stats)
        with self._ctx.write_lock:
            ref = self._tables.find(db, table)
            if ref is None:
                raise hms.InvalidObjectException(message=missing_table_message)
            if early is not None and not early.made_for(ref):
                early = None
            plan = self._plan(ref, (db, table), parts, early, if_not_exists, now, count_stats)
            if plan.to_store:
                self._store(ref, plan)
        return [p for _, _, p in plan.to_store]

    def _add_wire(
        self,
        db: str,
        table: str,
        parts: Sequence[WirePartition],
        if_not_exists: bool,
        now: int,
        count_stats: bool,
    ) -> Sequence[hms.Partition] | None:
        """``_add_once`` of partitions that came as wire bytes (``wire_adding``); None when
        they must be decoded and added the usual way."""
        ref = self._tables.find(db, table)
        if ref is None or dependent_spec(ref.table) is not None:
            return None
        plan: _AddPlan[wire_adding.WireAnswer] = _AddPlan()
        prepared = wire_adding.prepared(ref, parts, (db, table), now)
        if prepared is None:
            return None
        answers, plan.spelled = prepared
        if count_stats:  # every location read at once, before any directory is made
            plan.seen = self._ctx.data.seeing()
            self._stats.partitions_added(answers, ref.table, plan.seen)
        table_name = layout.PARTITIONS
        puts = {answer.key: Put(table_name, answer.key, answer.columns()) for answer in answers}
        if len(puts) != len(answers):
            return None  # duplicates: refused by the usual add
        # Looked up before the lock, so that adders overlap in it: a row created after this
        # fails the write's condition (each row absent), and the add is tried again.
        present = self._present(list(puts))
        if present and not if_not_exists:
            return None  # refused by the usual add
        if not present:
            plan.absent = [Condition(table_name, key, layout.OBJECT, None) for key in puts]
        with self._ctx.write_lock:
            now_ref = self._tables.find(db, table)
            if now_ref is None or (now_ref.table_id, now_ref.object_bytes) != (
                ref.table_id,
                ref.object_bytes,
            ):
                return None
            if present:  # skipped ones: those there now (the written keys' spellings read)
                present, plan.spelled = self._present(list(puts)), None
            for answer in answers:
                if answer.key not in present:
                    plan.stored_puts[answer.key] = puts[answer.key]
                    plan.to_store.append((answer.key, answer.values, answer))
            if plan.to_store:
                self._store(ref, plan)
        return wire_adding.AddedWire([answer for _, _, answer in plan.to_store])

    def _present(self, keys: list[bytes]) -> set[bytes]:
        """Which of these partition rows exist."""
        return {key for key, _ in self._ctx.store.get_many(layout.PARTITIONS, keys)}

    def _plan(
        self,
        ref: TableRef,
        target: tuple[str, str],
        parts: list[hms.Partition],
        early: _EarlyAdd | None,
        if_not_exists: bool,
        now: int,
        count_stats: bool = True,
    ) -> _AddPlan[hms.Partition]:
        """Check every partition of the request, in order, and make what is written."""
        spec = dependent_spec(ref.table)
        plan: _AddPlan[hms.Partition] = _AddPlan(seen=early.seen if early is not None else None)
        seen: set[bytes] = set()
        keyed = early.keyed if early is not None else self._keyed(ref, parts)
        present = {key for key, _ in self._ctx.store.get_many(
            layout.PARTITIONS, [k[1] for k in keyed if not isinstance(k, Exception)])}  # fmt: skip
        for index, (part, found) in enumerate(zip(parts, keyed, strict=True)):
            _check_target(part, target)
            if isinstance(found, Exception):
                raise found
            values, key, name = found
            if key in present:
                if if_not_exists:
                    continue
                raise hms.AlreadyExistsException(
                    message=f"Partition already exists: {thrift_struct_text(part)}"
                )
            ready = early.ready[index] if early is not None else None
            if ready is not None:
                answer, plan.stored_columns[key] = ready
            else:
                answer = self._prepare(ref, part, values, now, count_stats, name)
            if spec is not None or DEPENDS_ON_KEY in answer.parameters:
                self._plan_dependency(ref, spec, part, values, answer, key, plan)
            if key in seen:
                raise hms.MetaException(
                    message="java.io.IOException: Duplicate partitions in the list: "
                    f"{thrift_struct_text(answer)}"
                )
            seen.add(key)
            plan.to_store.append((key, values, answer))
        return plan

    def _plan_dependency(
        self,
        ref: TableRef,
        spec: DependentSpec | None,
        part: hms.Partition,
        values: list[str],
        answer: hms.Partition,
        key: bytes,
        plan: _AddPlan[hms.Partition],
    ) -> None:
        """Record a new dependent partition's dependency (``_depend``) and note its base."""
        dependency, on_base_location = self._depend(ref, spec, part, values, answer)
        if on_base_location:
            plan.on_base.add(key)
        plan.bases.add(dependency.base)
        if spec is None or dependency.base != spec.base:
            plan.other_bases.add(dependency.base)

    def _store(self, ref: TableRef, plan: _AddPlan[_Answer]) -> None:
        """Make the new partitions' directories, then write their rows (each still absent) and
        their event; the directories go again when the rows cannot be written."""
        ops: list[Put] = []
        for key, values, answer in plan.to_store:
            put = plan.stored_puts.get(key)
            if put is None:
                columns = plan.stored_columns.get(key)
                if columns is None:
                    # (never of a wire add: it makes every row's put before: stored_puts)
                    assert isinstance(answer, hms.Partition)
                    columns = self._stored_columns(ref, answer, values)
                put = Put(layout.PARTITIONS, key, columns)
            ops.append(put)
        added = [(values, answer.parameters) for _, values, answer in plan.to_store]
        # Directories first (HMS): one that cannot be made refuses the whole call.
        made = self._ctx.data.make_dirs(
            (
                stored.sd.location if stored.sd else None
                for key, _, stored in plan.to_store
                if key not in plan.on_base  # a dependent partition's data is its base's
            ),
            unable_to_create,
            owned=owns_data(ref),
            seen=plan.seen,
        )
        try:
            # Held until the rows and their event are written: a base partition's
            # drop in another server process then sees them, or goes first.
            self._dependencies.guard.hold(plan.bases)
            mark_bases(self._ctx.store, ref, plan.other_bases)  # a mark may be stale
            # Created exactly once even with other server processes on the store:
            # each row must still be absent when its write lands.
            change = PartitionChange(
                PARTITION, ADD, when=self._ctx.now(), table=ref, added=added,
                stored=[op.columns[layout.OBJECT] for op in ops],
            )  # fmt: skip
            with self._ctx.changes.writing(change):
                if not self._write_absent(ref, ops, "Adding partitions", plan):
                    raise _LostRace
        except BaseException:
            self._ctx.data.undo(made)
            raise

    def _write_absent(
        self, ref: TableRef, puts: list[Put], action: str, plan: _AddPlan[_Answer] | None = None
    ) -> bool:
        """Write new partition rows, each only if it is still absent; False (nothing written)
        when another server process created one of them (MetaException when other processes
        held the table's adding claim too long).

        A store with atomic batches checks every row in the one transaction. Without them
        (HBase), the table's adding claim is taken first (one compare-and-set for the batch;
        adders of one table take turns, waiting up to ``ADD_CLAIM_WAIT_S``), the rows are
        checked absent in one read, then written whole, one atomic row put each, in batches.
        A storage failure part-way is named as ``row_writes.write_rows`` names it. ``plan``:
        the add's, with the conditions and whether a key is spelled, when made before."""
        spelled = plan.spelled if plan is not None else None
        if self._ctx.store.atomic_batches:
            absent = plan.absent if plan is not None else None
            if absent is None:
                absent = [Condition(layout.PARTITIONS, op.key, layout.OBJECT, None) for op in puts]
            return write_rows(self._ctx, self._tables, ref, puts, action, absent, spelled)
        keys = [op.key for op in puts]
        # One claim for the whole batch: the table's (every adder of it takes turns).
        claimed = self._claim.take(ref, action)
        try:
            if self._ctx.store.get_many(layout.PARTITIONS, keys):
                return False  # created by another process since this call looked
            return write_rows(self._ctx, self._tables, ref, puts, action, spelled=spelled)
        finally:
            self._claim.release(claimed)

    def _stored_columns(
        self,
        ref: TableRef,
        answer: hms.Partition,
        values: Sequence[str],
        name: str | None = None,
    ) -> dict[bytes, bytes]:
        """The row columns of a partition about to be added (``answer`` is left as it is: it
        keeps the storage fields the client sent); ``name``: its name, when already made."""
        sd = answer.sd
        if sd is not None and (sd.skewedInfo is None or sd.storedAsSubDirectories is None):
            sd = shallow_copy(sd)
            fill_storage_defaults(sd)
        if sd is answer.sd:
            return row_columns(ref, answer, values, name)
        stored = shallow_copy(answer)
        stored.sd = sd
        return row_columns(ref, stored, values, name)

    def _early(
        self,
        db: str,
        table: str,
        parts: Sequence[hms.Partition | None],
        now: int,
        count_stats: bool = True,
    ) -> _EarlyAdd | None:
        """An add's work that needs no lock: each partition's values and key, and for a plain
        partition of a table that depends on none its answer and row columns (None where it
        is left to be done under the lock, in order, with the errors). None when the table is
        missing or dependent."""
        ref = self._tables.find(db, table)
        if ref is None or dependent_spec(ref.table) is not None:
            return None
        keyed = self._keyed(ref, parts)
        answers: list[tuple[hms.Partition, list[str], str] | None] = []
        for part, found in zip(parts, keyed, strict=True):
            entry = None
            if part is not None and not isinstance(found, Exception):
                values, _, name = found
                try:
                    answer = self._prepare(ref, part, values, now, False, name)
                    if DEPENDS_ON_KEY not in answer.parameters:
                        entry = (answer, values, name)
                except Exception:  # noqa: BLE001 - done again under the lock, raised there
                    entry = None
            answers.append(entry)
        seen = None
        if count_stats:  # every location read at once, before any directory is made
            seen = self._ctx.data.seeing()
            counted = [e[0] for e in answers if e is not None]
            self._stats.partitions_added(counted, ref.table, seen)
        ready = [
            None if entry is None else (entry[0], self._stored_columns(ref, *entry))
            for entry in answers
        ]
        return _EarlyAdd(ref.table_id, ref.object_bytes, keyed, ready, seen)

    def _depend(
        self,
        ref: TableRef,
        spec: DependentSpec | None,
        part: hms.Partition,
        values: list[str],
        answer: hms.Partition,
    ) -> tuple[Dependency, bool]:
        """Record a new partition of a dependent table's dependency (on the table's current
        base unless the client named one) in ``answer``; without a location from the client,
        point it at the base's prefix location. Spark and Hive send the dependent table's own
        default location (``<table>/ds=1``) when the statement names none: that counts as no
        location. Returns the dependency, and whether the location is the base's (no directory
        is made then)."""
        given = answer.parameters.get(DEPENDS_ON_KEY)
        dependency, base = checked_dependency(
            self._tables, ref, given, values, spec, hms.InvalidObjectException
        )
        answer.parameters[DEPENDS_ON_KEY] = dependency.to_text()
        location = part.sd.location if part.sd is not None else None
        own_default = (
            self._ctx.warehouse.child_location(ref.location, partition_name(ref, values))
            if ref.location
            else None
        )
        if (location and location.rstrip("/") != own_default) or not base.location:
            return dependency, False
        answer.sd.location = self._ctx.warehouse.child_location(
            base.location, dependency.partition_name()
        )
        return dependency, True

    def _keyed(self, ref: TableRef, parts: Sequence[hms.Partition | None]) -> Keyed:
        """Each partition's values and row key, or the error its values give (raised in
        order by the caller), so that the rows present are looked up in one read."""
        keyed: Keyed = []
        for part in parts:
            try:
                values = checked_values(ref, part.values if part is not None else None)
                keyed.append((values, *new_row_key_named(ref, values)))
            except Exception as exc:  # raised by the caller, in the partitions' order
                keyed.append(exc)
        return keyed

    def _prepare(
        self,
        ref: TableRef,
        part: hms.Partition,
        values: list[str],
        now: int,
        count_stats: bool = True,
        name: str | None = None,
    ) -> hms.Partition:
        """The partition as added: of this table, with its values, a storage descriptor (the
        table's when the client sent none), its default location unless it has one, its
        times, and the fast statistics of files already there; ``part`` itself is not
        changed. ``name``: the partition's name, when already made."""
        # Shallow copies: only fields of the partition and of its sd are set below (and by
        # _depend and fill_storage_defaults); nested lists and maps are never changed in place.
        stored = shallow_copy(part)
        stored.dbName, stored.tableName, stored.catName = ref.db, ref.name, None
        stored.values = list(values)
        if stored.sd is None:
            stored.sd = copy.deepcopy(ref.table.sd) or hms.StorageDescriptor(cols=[], parameters={})
            stored.sd.location = None
        else:
            stored.sd = shallow_copy(stored.sd)
        if not stored.sd.location and ref.location:
            stored.sd.location = self._ctx.warehouse.child_location(
                ref.location, partition_name(ref, values) if name is None else name
            )
        stored.createTime = stored.createTime or now
        stored.lastAccessTime = stored.lastAccessTime or 0
        params = dict(stored.parameters or {})
        params[DDL_TIME] = str(now)
        stored.parameters = params
        if count_stats:  # before its directory is made: only files already there count
            self._stats.partition_added(stored, ref.table)
        return stored


def _check_target(part: hms.Partition | None, target: tuple[str, str]) -> None:
    """MetaException unless ``part`` is a partition of the table ``target`` (db, table): a
    partition naming no database or table is taken as the target's."""
    if part is None:
        raise hms.MetaException(message="Partition cannot be null.")
    db, table = target
    part_db = names.normalize(part.dbName) or db
    part_table = names.normalize(part.tableName) or table
    if (part_db, part_table) != (db, table):
        raise hms.MetaException(
            message=(
                f"Partition does not belong to target table {db}.{table}: "
                f"{thrift_struct_text(part)}"
            )
        )
