"""Partition timelines kept by the server for the tables that opt in, as Apache Lens keeps them.

A table opts in with ``cube.storagetable.time.partcols`` (a comma list of its time partition
columns) or with our ``metastore.timeline.periods`` (``time_columns``). A partition is
tracked when its parameter ``cube.storagetable.partition.update.period`` names an update period,
or when its time column has a declared one: each time column's value that parses as a partition
of that period is in the (period, column) timeline; other values (Lens's ``latest``, say) are
ignored. The table is its own storage table. The timelines live in the table's parameters with
Lens's keys (``timeline.properties``) and, per table id, in memory with the version stamp of the
table row they were read at (``layout.TIMELINE_VERSION``): a read checks the stamp (one get)
first.

Every partition write keeps both in step, in Lens's order: add: memory, partition write,
parameters; drop: partition write, memory, parameters. A (period, column, value) leaves its
timeline only when no partition of the table still has it. The parameters are written
compare-and-set on the stamp; when another server process changed the table meanwhile, the
table is read again, every entry the change touched is set from the partitions now present, and
the write is tried again. A failed partition write drops the table's timelines from memory:
memory is never ahead of the store. The parameters are read and written through
``parameters``; timelines are rebuilt from the partitions by ``rebuild``. See
``docs/timelines.md``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

import structlog

from metastore_server.catalog.basics.changes import (
    DROP,
    TABLE,
    Change,
    PartitionChange,
    TableChange,
    TableListener,
)
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import TableRef, Tables, next_stamp, row_condition
from metastore_server.catalog.timelines.parameters import (
    PartitionSpec,
    TimelineKey,
    Timelines,
    changed,
    forces_rebuild,
    from_params,
    stored_timeline_keys,
    with_timelines,
    without_timelines,
)
from metastore_server.catalog.timelines.rebuild import present_entries, rebuilt
from metastore_server.catalog.timelines.time_columns import (
    Columns,
    Entry,
    check_declaration,
    partition_entries,
    time_columns,
)
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Delete, Put
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms
from metastore_server.timeline import PartitionTimeline, class_key, timeline_type
from metastore_server.wire.serde import to_bytes

log = structlog.get_logger(__name__)

#: Attempts at writing the timelines when other server processes change the table meanwhile
#: (random, growing pauses between them, ``retrying.TIMELINES``: processes racing drift apart).
MAX_ATTEMPTS = retrying.TIMELINES_ATTEMPTS


@dataclass(frozen=True)
class _Cached:
    """A table's timelines (never changed once cached) and the stamp they were read at."""

    stamp: bytes | None
    timelines: Mapping[TimelineKey, PartitionTimeline]


@dataclass
class _Pending:
    """A partition change of one table in progress."""

    ref: TableRef
    columns: Columns
    added: set[Entry]
    removed: set[Entry]
    #: Raw values of the time columns the change touched (to find partitions holding them).
    values: dict[str, set[str]] = field(default_factory=dict)
    timelines: Mapping[TimelineKey, PartitionTimeline] = field(default_factory=dict)

    @property
    def touched(self) -> set[Entry]:
        return self.added | self.removed


class TimelineKeeper(TableListener):
    """Keeps the partition timelines of opted-in tables in step with their partitions."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables
        self._cache: dict[int, _Cached] = {}
        #: A table row is marked while a change is half-written, so that a writer dying
        #: between its partitions and its timelines is noticed and the timelines rebuilt.
        #: Where the writers of all processes lock each other out (the embedded store) one
        #: mark (``layout.TIMELINE_PENDING``) found by the next writer always means a writer
        #: died. Elsewhere (HBase) each writer marks the row with its id and the time it began
        #: (``layout.TIMELINE_WRITER``); a mark older than ``ctx.writer_lease_s``, or one of this
        #: process's own outside a change, is taken for a dead writer's. Taking a live one's
        #: for dead costs a rebuild, not correctness: its compare-and-set then fails and it
        #: sets what it touched from the partitions present.
        self._marks = ctx.capabilities.writers_lock is not None
        self._writer = ctx.writer
        #: Ids of the tables this process is writing a change of (under the write lock).
        self._changing: set[int] = set()
        #: Per table id, the dead writers' marks whose changes the last rebuild took in: the
        #: next successful store of the timelines removes them (and only them).
        self._covered: dict[int, set[bytes]] = {}
        # A change whose writes were rolled back may have left its timelines here.
        ctx.write_lock.on_rollback.append(self._forget_all)

    def _forget_all(self) -> None:
        self._cache.clear()
        self._covered.clear()

    def _dead_writers(self, ref: TableRef) -> list[bytes]:
        """The columns of the writer marks on ``ref`` whose writers died (see ``__init__``)."""
        if self._marks:
            return []
        oldest = time.time() - self._ctx.writer_lease_s
        return [
            layout.timeline_writer_mark(writer)
            for writer, began in ref.timeline_writers
            if began < oldest or (writer == self._writer and ref.table_id not in self._changing)
        ]

    def _interrupted(self, ref: TableRef) -> bool:
        """Whether a change of ``ref``'s partitions may be in its partitions and not in its
        timelines because its writer died (or, on the embedded store, is being written)."""
        if self._marks:
            return ref.timelines_pending
        return bool(self._dead_writers(ref))

    # -- reads -------------------------------------------------------------------------------

    def timelines(self, db: str, table: str) -> dict[TimelineKey, PartitionTimeline]:
        """The table's timelines by (period, column); empty when the table does not opt in.

        Loaded on first need (from the parameters when the presence flag says they are there,
        else rebuilt from the partitions and stored). The timelines are shared: do not change
        them. NoSuchObjectException when the table is missing.
        """
        ref = self._tables.get(db, table)
        if not time_columns(ref.table):
            return {}
        fresh = self._fresh(ref)
        if fresh is not None:
            return dict(fresh)
        return self._load(db, table, rebuild=False)

    def rebuild(self, db: str, table: str) -> dict[TimelineKey, PartitionTimeline]:
        """Rebuild the table's timelines from its partitions, store and return them."""
        self._tables.get(db, table)
        return self._load(db, table, rebuild=True)

    def forget(self, table_id: int) -> None:
        """Drop a table's timelines from memory (read again on next need)."""
        self._cache.pop(table_id, None)

    def _fresh(self, ref: TableRef) -> Mapping[TimelineKey, PartitionTimeline] | None:
        """The cached timelines when they were read at the row's current stamp."""
        cached = self._cache.get(ref.table_id)
        if self._interrupted(ref):
            return None  # a change is being written, or its writer died: see _state
        if cached is not None and ref.settled and cached.stamp == ref.stamp:
            return cached.timelines
        return None

    def _load(self, db: str, name: str, *, rebuild: bool) -> dict[TimelineKey, PartitionTimeline]:
        with self._ctx.write_lock:
            answer = retrying.race(
                retrying.TIMELINES, lambda: self._load_once(db, name, rebuild=rebuild)
            )
            if answer is LOST:
                raise self._contention(db, name)
            return answer

    def _load_once(
        self, db: str, name: str, *, rebuild: bool
    ) -> dict[TimelineKey, PartitionTimeline] | Lost:
        """One try of ``_load``: LOST when another process changed the row meanwhile."""
        ref = self._tables.find_settled(db, name)
        if ref is None:
            raise hms.NoSuchObjectException(message=f"{db}.{name} table not found")
        columns = time_columns(ref.table)
        if not columns:
            return {}
        loaded: Mapping[TimelineKey, PartitionTimeline] | None = None
        if not rebuild and not self._interrupted(ref):
            loaded = self._fresh(ref)
            if loaded is None:
                loaded = from_params(ref, columns)
        # A row whose stamp and definition disagree (its writer died half-way) is
        # repaired by storing what it says.
        if loaded is not None and ref.settled:
            self._cache[ref.table_id] = _Cached(ref.stamp, loaded)
            return dict(loaded)
        if loaded is None:
            self._covered[ref.table_id] = set(self._dead_writers(ref))
            loaded = rebuilt(self._ctx.store, ref, columns, ref.table.parameters or {})
        if self._persist(ref, columns, loaded):
            return dict(loaded)
        return LOST

    def _state(self, ref: TableRef, columns: Columns) -> Mapping[TimelineKey, PartitionTimeline]:
        """The timelines of ``ref`` as its row says: cached, from its parameters, or rebuilt
        (always when a change's mark is still on the row: under the write lock that means its
        writer died between the partitions and the timelines)."""
        if self._interrupted(ref):
            log.warning("timelines_change_interrupted", db=ref.db, table=ref.name)
            self._covered[ref.table_id] = set(self._dead_writers(ref))
            return rebuilt(self._ctx.store, ref, columns, ref.table.parameters or {})
        fresh = self._fresh(ref)
        if fresh is not None:
            return fresh
        loaded = from_params(ref, columns)
        if loaded is not None:
            return loaded
        return rebuilt(self._ctx.store, ref, columns, ref.table.parameters or {})

    # -- writes ------------------------------------------------------------------------------

    def _persist(
        self, ref: TableRef, columns: Columns, timelines: Mapping[TimelineKey, PartitionTimeline]
    ) -> bool:
        """Store the timelines in the table's parameters, compare-and-set on the row read as
        ``ref``; False when another process changed the row since."""
        table = copy.copy(ref.table)
        table.parameters = with_timelines(ref.table.parameters or {}, timelines, columns)
        data = to_bytes(table)
        stamp = next_stamp(ref.stamp, data)
        key = layout.table_key(ref.db, ref.name)
        ops: list[Put | Delete] = [
            Put(layout.TABLES, key, {layout.OBJECT: data, layout.TIMELINE_VERSION: stamp})
        ]
        if self._marks:  # the change (if any) is whole now
            ops.append(Delete(layout.TABLES, key, [layout.TIMELINE_PENDING]))
        else:  # this writer's change (if any) is whole, and so are the dead writers' whose
            # changes a rebuild took in (only those: a mark that died since stays for the next)
            covered = self._covered.get(ref.table_id, set())
            done = {layout.timeline_writer_mark(self._writer), *covered}
            ops.append(Delete(layout.TABLES, key, sorted(done)))
        if not self._ctx.store.mutate(ops, row_condition(ref)):
            log.info("timelines_conflict", db=ref.db, table=ref.name)
            return False
        self._covered.pop(ref.table_id, None)
        self._cache[ref.table_id] = _Cached(stamp, timelines)
        return True

    def _contention(self, db: str, name: str) -> hms.MetaException:
        return hms.MetaException(
            message=(
                f"Could not store the partition timelines of {db}.{name}: other server processes "
                f"kept changing the table ({MAX_ATTEMPTS} attempts)"
            )
        )

    def around(self, change: PartitionChange) -> AbstractContextManager[None]:
        """Keep the timelines in step with a partition write (``basics.changes``)."""
        return self.change(change.table, added=change.added, removed=change.removed)

    def changed(self, change: Change) -> None:
        """Forget a dropped table's timelines (``basics.changes``)."""
        if change.kind == TABLE and change.action == DROP and change.table_id is not None:
            self.forget(change.table_id)

    @contextmanager
    def change(
        self,
        ref: TableRef,
        added: Iterable[PartitionSpec] = (),
        removed: Iterable[PartitionSpec] = (),
    ) -> Iterator[None]:
        """Keep the timelines in step with one partition write (the body of the ``with``),
        which adds the partitions ``added`` and removes ``removed``; call under the write lock.

        Before the body the added entries go into memory; after it the removed ones leave
        (each only when no partition still has it) and the parameters are stored. When the
        body fails the table's timelines are forgotten.
        """
        pending = self._begin(ref, added, removed)
        if pending is None:
            yield
            return
        try:
            yield
            self._finish(pending)
        except BaseException:
            self.forget(ref.table_id)
            raise
        finally:
            self._changing.discard(ref.table_id)

    def _begin(
        self, ref: TableRef, added: Iterable[PartitionSpec], removed: Iterable[PartitionSpec]
    ) -> _Pending | None:
        columns = time_columns(ref.table)
        if not columns:
            return None
        pending = _Pending(ref, columns, set(), set())
        for specs, entries in ((added, pending.added), (removed, pending.removed)):
            for values, params in specs:
                found = partition_entries(columns, values, params)
                entries |= found
                for _, column, _ in found:
                    index = next(i for i, name in columns if name == column)
                    pending.values.setdefault(column, set()).add(values[index])
        # An entry both before (a removed partition held it) and after the write (an added
        # one holds it) does not change: an alter that keeps the period touches nothing.
        same = pending.added & pending.removed
        pending.added -= same
        pending.removed -= same
        if not pending.touched:
            return None
        if not ref.settled:
            ref = self._tables.find_settled(ref.db, ref.name) or ref
        key = layout.table_key(ref.db, ref.name)
        if self._marks and not ref.timelines_pending:
            self._ctx.store.mutate([Put(layout.TABLES, key, {layout.TIMELINE_PENDING: b"1"})])
        elif not self._marks:
            ref = self._mark_writer(ref)
        pending.ref = ref
        timelines = self._state(ref, columns)
        if pending.added:
            timelines = changed(timelines, ref.name, ref.table.parameters or {}, pending.added)
            self._cache[ref.table_id] = _Cached(ref.stamp, timelines)
        pending.timelines = timelines
        if not self._marks:  # from here ``change`` discards it again, whatever happens
            self._changing.add(ref.table_id)
        return pending

    def _mark_writer(self, ref: TableRef) -> TableRef:
        """Mark ``ref``'s row with this writer (``layout.TIMELINE_WRITER``), compare-and-set on
        the row as read, so that a table dropped meanwhile is never brought back as a row of
        marks; the row as marked. InvalidObjectException when the table is gone."""
        key = layout.table_key(ref.db, ref.name)

        def attempt() -> TableRef | Lost:
            nonlocal ref
            mark = {layout.timeline_writer_mark(self._writer): f"{time.time():.3f}".encode()}
            if self._ctx.store.mutate([Put(layout.TABLES, key, mark)], row_condition(ref)):
                return ref
            found = self._tables.find_settled(ref.db, ref.name)
            if found is None or found.table_id != ref.table_id:
                raise hms.InvalidObjectException(message=f"{ref.db}.{ref.name} table not found")
            ref = found
            return LOST

        marked = retrying.race(retrying.TIMELINES, attempt)
        if marked is LOST:
            raise self._contention(ref.db, ref.name)
        return marked

    def _finish(self, pending: _Pending) -> None:
        ref, columns = pending.ref, pending.columns
        timelines = pending.timelines
        if pending.removed:
            still = present_entries(
                self._ctx.store, ref, columns, pending.removed, pending.values
            )
            gone = pending.removed - still
            timelines = changed(timelines, ref.name, ref.table.parameters or {}, drop=gone)
            self._cache[ref.table_id] = _Cached(ref.stamp, timelines)

        def attempt() -> None | Lost:
            nonlocal ref, columns, timelines
            if self._persist(ref, columns, timelines):
                return None
            # Another process changed the table: read it again and set what we touched from
            # the partitions now present (a rebuild already holds our change).
            found = self._tables.find_settled(ref.db, ref.name)
            columns = time_columns(found.table) if found is not None else Columns()
            if found is None or found.table_id != ref.table_id or not columns:
                log.warning("timelines_table_gone", db=ref.db, table=ref.name)
                self.forget(ref.table_id)
                return None
            ref = found
            touched = pending.touched
            present = present_entries(self._ctx.store, ref, columns, touched, pending.values)
            timelines = changed(
                self._state(ref, columns),
                ref.name,
                ref.table.parameters or {},
                add=touched & present,
                drop=touched - present,
            )
            return LOST

        if retrying.race(retrying.TIMELINES, attempt) is not LOST:
            return
        if self._marks:
            raise self._contention(ref.db, ref.name)
        # The partitions are written and stand: the call succeeds. This writer's mark stays on
        # the row, so the timelines are rebuilt from the partitions (here at once, elsewhere
        # once the mark is older than the lease).
        log.warning("timelines_deferred", db=ref.db, table=ref.name, attempts=MAX_ATTEMPTS)
        self.forget(ref.table_id)

    # -- alter table -------------------------------------------------------------------------

    def check_definition(self, change: TableChange) -> None:
        """Refuse a new table whose time-column declaration cannot be read (an altered
        table's is checked by ``before_write``)."""
        if change.creating:
            check_declaration(change.table, change.error)

    def before_write(self, change: TableChange) -> None:
        """Set an altered table's timeline parameters (``before_alter``); once it is stored,
        the timelines in memory follow it (a step added to ``change.then``)."""
        if change.creating:
            return
        after = self.before_alter(change.current, change.table)
        if after is not None:
            change.then.append(after)

    def before_alter(
        self, current: TableRef, table: hms.Table
    ) -> Callable[[TableRef], None] | None:
        """Set the timeline parameters of an altered table (``table``, changed in place).

        Clients send the parameters they read back, maybe with stale timeline keys: the
        server's timelines are written over them, except that a presence flag other than
        "true" rebuilds them from the partitions, and a changed class key migrates that
        timeline to the new class (a class key for a timeline with no partition yet creates it
        empty, as Lens expects). Turning the opt-in on builds them; turning it off drops every
        timeline key. Returns what to do once the table is stored (None: not opted in).
        """
        check_declaration(table, hms.InvalidOperationException)
        old_columns, new_columns = time_columns(current.table), time_columns(table)
        params = dict(table.parameters or {})
        if not new_columns:
            if not old_columns:
                return None
            table.parameters = without_timelines(params)
            return lambda stored: self.forget(stored.table_id)
        if old_columns != new_columns or forces_rebuild(params):
            timelines = rebuilt(self._ctx.store, current, new_columns, params)
        else:
            timelines = self._with_classes(current, table.tableName, new_columns, params)
        table.parameters = with_timelines(params, timelines, new_columns)

        def stored(ref: TableRef) -> None:
            self._cache[ref.table_id] = _Cached(ref.stamp, timelines)

        return stored

    def _with_classes(
        self, current: TableRef, storage_table: str, columns: Columns, params: Mapping[str, str]
    ) -> Timelines:
        """The current timelines, each of the class ``params`` name where the client changed
        a class key (migrated: the same partitions in the new class)."""
        timelines = dict(self._state(current, columns))
        stored_params = current.table.parameters or {}
        for key in set(timelines) | stored_timeline_keys(params, columns):
            wanted = params.get(class_key(*key))
            if wanted is None or wanted == stored_params.get(class_key(*key)):
                continue
            kind = timeline_type(wanted)
            timeline = timelines.get(key)
            if timeline is not None and type(timeline) is kind:
                continue
            migrated = kind(storage_table, *key)
            if timeline is not None:
                migrated.add_all(timeline.partitions())
            timelines[key] = migrated
            log.info(
                "timeline_migrated",
                db=current.db,
                table=current.name,
                period=key[0].name,
                column=key[1],
                to=wanted,
            )
        return timelines

