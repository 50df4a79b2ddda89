"""Changing partitions with HMS's rules and messages: alter (new definitions for existing
partitions), rename (new values; a partition at its default location moves with its
directory), the table's columns pushed to every partition (ALTER TABLE ... CASCADE), and the
partition rows a table's rename with its directory rewrites. See ``docs/managed-data.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from functools import partial

from metastore_server.catalog.basics.changes import (
    ALTER,
    PARTITION,
    RENAME,
    PartitionChange,
    truncating,
)
from metastore_server.catalog.basics.java_text import java_list
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.fast_stats import Context
from metastore_server.catalog.data.moves import Move
from metastore_server.catalog.dependencies.model import TableName
from metastore_server.catalog.dependencies.store import Dependencies
from metastore_server.catalog.objects.tables import DDL_TIME, TableRef, Tables, owns_data
from metastore_server.catalog.partitions.adding import AddingClaim
from metastore_server.catalog.partitions.dependency_records import (
    keep_dependency,
    mark_bases,
    partition_owns_data,
)
from metastore_server.catalog.partitions.row_writes import row_columns, write_rows
from metastore_server.catalog.partitions.writer import PartitionWriter, each_until_failure
from metastore_server.catalog.reads.partition_rows import (
    checked_values,
    decoded,
    new_row_key,
    partition_name,
    row_key,
)
from metastore_server.storage import layout
from metastore_server.storage.port import Delete, Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import shallow_copy, stored_partition_bytes

#: Rows written per store write when every partition of a table changes.
_BATCH = 1000
#: HMS's refusals of a change of partitions of a missing table or of a missing partition.
MISSING_TABLE = "Unable to alter partition because table or database does not exist."
MISSING_TABLE_BATCH = "Unable to alter partitions because table or database does not exist."
RENAME_MISSING_PARTITION = "Unable to rename partition because old partition does not exist"


def _refuse_alter(ref: TableRef) -> Callable[[str], Exception]:
    """The refusal of a partition's new location outside the data roots."""

    def refuse(reason: str) -> Exception:
        return hms.InvalidOperationException(
            message=f"Alter partition operation for {ref.db}.{ref.name} failed: {reason}"
        )

    return refuse


def missing_in_batch(values: Sequence[str]) -> str:
    """HMS's refusal of a batch of alterations naming a partition that does not exist."""
    return (
        "Alter partition operation failed: NoSuchObjectException(message:partition values="
        f"{java_list(list(values))})"
    )


class Altering(PartitionWriter):
    """Changes partition rows on the store."""

    def __init__(
        self,
        ctx: CatalogContext,
        tables: Tables,
        dependencies: Dependencies,
        claim: AddingClaim,
    ) -> None:
        super().__init__(ctx, tables, dependencies)
        #: A rename creates a row: on stores without atomic batches it holds the adding claim.
        self._claim = claim

    def alter(
        self,
        db: str,
        table: str,
        new_parts: Sequence[hms.Partition] | None,
        context: Context = None,
        *,
        batch: bool = False,
    ) -> None:
        """Replace partitions' definitions (values identify them; all must exist, else
        InvalidOperationException in HMS's words for one partition, or a ``batch``); their fast
        statistics follow HMS's rules (``data.fast_stats``; ``context`` is the call's
        environment context)."""
        with self._ctx.write_lock:
            ref = self._tables.find(db, table)
            if ref is None:
                raise hms.InvalidOperationException(
                    message=MISSING_TABLE_BATCH if batch else MISSING_TABLE
                )
            now = self._ctx.now()
            ops: list[Put | Delete] = []
            added: list[tuple[list[str], dict[str, str] | None]] = []
            removed: list[tuple[list[str], dict[str, str] | None]] = []
            marks: set[TableName] = set()
            changes: list[tuple[hms.Partition, hms.Partition]] = []
            wanted, failure = each_until_failure(new_parts or [], partial(_keyed, ref))
            rows = dict(self._ctx.store.get_many(layout.PARTITIONS, [k for _, _, k in wanted]))
            for part, values, key in wanted:
                row = rows.get(key)
                if row is None:
                    raise hms.InvalidOperationException(
                        message=missing_in_batch(values) if batch else "alter is not possible"
                    )
                old = decoded(ref, row[layout.OBJECT])
                updated = self._altered(ref, old, part, now)
                self._stats.partition_altered(old, updated, ref.table, context)
                keep_dependency(self._tables, ref, old, updated, values, marks)
                changes.append((old, updated))
                ops.append(Put(layout.PARTITIONS, key, row_columns(ref, updated, values)))
                # The update period may change: the old partition leaves, the new one comes.
                removed.append((values, old.parameters))
                added.append((values, updated.parameters))
            if failure is not None:
                raise failure
            if ops:
                mark_bases(self._ctx.store, ref, marks)  # before the rows: stale, not missing
                change = PartitionChange(
                    PARTITION, ALTER, before=[old for old, _ in changes],
                    after=[new for _, new in changes], when=now, table=ref, added=added,
                    removed=removed, truncate=truncating(context),
                )  # fmt: skip
                with self._ctx.changes.writing(change):
                    write_rows(self._ctx, self._tables, ref, ops, "Altering partitions")

    def _altered(
        self, ref: TableRef, old: hms.Partition, new: hms.Partition, now: int
    ) -> hms.Partition:
        """The partition ``new`` asks for, as stored in place of ``old``: of this table, with
        ``old``'s creation time, and its storage descriptor (or location) unless ``new`` gives
        one; a missing DDL time is set. The request's objects are not changed: the partition
        and its storage descriptor are copied (their fields are set here and on a rename; the
        deeper parts are never written to), not the whole tree (a fifth of an alter's time)."""
        updated = shallow_copy(new)
        if updated.sd is not None:
            updated.sd = shallow_copy(updated.sd)
        updated.dbName, updated.tableName, updated.catName = ref.db, ref.name, None
        updated.createTime = old.createTime
        if updated.sd is None:  # a copy: a rename sets its location, ``old`` keeps its own
            updated.sd = shallow_copy(old.sd) if old.sd is not None else None
        elif not updated.sd.location and old.sd is not None:
            updated.sd.location = old.sd.location
        location = updated.sd.location if updated.sd else None
        if location != (old.sd.location if old.sd else None) and owns_data(ref):
            self._ctx.data.check_inside(location, _refuse_alter(ref))
        params = dict(updated.parameters or {})
        if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
            params[DDL_TIME] = str(now)
        updated.parameters = params
        return updated

    def rename(
        self, db: str, table: str, old_values: Sequence[str] | None, new_part: hms.Partition
    ) -> None:
        """Give a partition new values; a default location (and its directory) follows.
        InvalidOperationException when the partition is missing, the new one exists, or the
        values do not fit the table's keys."""
        if new_part is None:
            raise hms.InvalidOperationException(message="New partition cannot be null.")
        with self._ctx.write_lock:
            ref = self._tables.find(db, table)
            if ref is None:
                raise hms.InvalidOperationException(message=MISSING_TABLE)
            old_values = list(old_values or [])
            new_values = list(new_part.values or [])
            old = self._rename_source(ref, old_values, new_values)
            updated = self._altered(ref, old, new_part, self._ctx.now())
            marks: set[TableName] = set()
            keep_dependency(self._tables, ref, old, updated, new_values, marks)
            updated.values = new_values
            self._dependencies.guard_partition_drop(ref, [old_values], kept=new_values)
            move = self._follow(ref, old, updated, new_part, old_values)
            # Counted before the data moves, as HMS counts them.
            self._stats.partition_altered(old, updated, ref.table, renamed=True)
            self._write_renamed(ref, old, updated, old_values, marks, move)

    def _rename_source(
        self, ref: TableRef, old_values: list[str], new_values: list[str]
    ) -> hms.Partition:
        """The partition a rename renames, checked (InvalidOperationException): one value per
        key on both sides, the old partition present, the new one absent. A rename that
        creates a row holds the table's adding claim."""
        checked_values(ref, old_values)
        checked_values(ref, new_values)
        old_key, new_key = row_key(ref, old_values), new_row_key(ref, new_values)
        if new_key != old_key:
            self._claim.hold(ref, "Renaming a partition")  # it creates a row
        found = dict(self._ctx.store.get_many(layout.PARTITIONS, list({old_key, new_key})))
        row = found.get(old_key)
        if row is None:
            raise hms.InvalidOperationException(message=RENAME_MISSING_PARTITION)
        if new_key != old_key and new_key in found:
            raise hms.InvalidOperationException(
                message=f"Partition already exists:{ref.db}.{ref.name}.{java_list(new_values)}"
            )
        return decoded(ref, row[layout.OBJECT])

    def _follow(
        self,
        ref: TableRef,
        old: hms.Partition,
        updated: hms.Partition,
        new_part: hms.Partition,
        old_values: list[str],
    ) -> Move | None:
        """A managed partition at its default location moves with its new name (when this
        server manages data): ``updated`` gets the new default location, and the move of its
        directory is returned (checked). An external one, or one placed elsewhere, stays."""
        old_location = old.sd.location if old.sd else None
        default_old = (
            self._ctx.warehouse.child_location(ref.location, partition_name(ref, old_values))
            if ref.location
            else None
        )
        follows = (
            updated.sd is not None
            and ref.location
            and old_location
            and old_location == default_old
            and owns_data(ref)
            and partition_owns_data(old)
            and self._ctx.data.enabled
            and (
                not new_part.sd
                or not new_part.sd.location
                or new_part.sd.location == old_location
            )
        )
        # (follows: the sd and both locations are there)
        if not follows or updated.sd is None or not ref.location or not old_location:
            return None
        updated.sd.location = self._ctx.warehouse.child_location(
            ref.location, partition_name(ref, updated.values)
        )
        return self._ctx.data.plan_move(
            old_location,
            updated.sd.location,
            what=f"partition {partition_name(ref, old_values)} of {ref.db}.{ref.name}",
            subject=f"{ref.db}.{ref.name}",
        )

    def _write_renamed(
        self,
        ref: TableRef,
        old: hms.Partition,
        updated: hms.Partition,
        old_values: list[str],
        marks: set[TableName],
        move: Move | None,
    ) -> None:
        """Write a renamed partition (``updated``, with its new values): its data moves first
        (HMS) and moves back when the metadata change fails; its statistics follow its name
        (a listener of the change)."""
        new_values = list(updated.values)
        old_key, new_key = row_key(ref, old_values), new_row_key(ref, new_values)
        # The new row first, so a failure in between never loses the partition.
        ops: list[Put | Delete] = [
            Put(layout.PARTITIONS, new_key, row_columns(ref, updated, new_values))
        ]
        if new_key != old_key:
            ops.append(Delete(layout.PARTITIONS, old_key))
        mark_bases(self._ctx.store, ref, marks)  # before the rows: stale, not missing
        self._ctx.data.prepare(move, f"{ref.db}.{ref.name}")
        change = PartitionChange(
            PARTITION, RENAME, before=[old], after=[updated], when=self._ctx.now(), table=ref,
            added=[(new_values, updated.parameters)], removed=[(old_values, old.parameters)],
        )  # fmt: skip
        try:
            with self._ctx.changes.writing(change):
                self._ctx.store.mutate(ops)
        except BaseException:
            if move is not None:
                move.rollback()
            raise
        if move is not None:
            self._ctx.write_lock.after_commit(move.commit, undo=move.rollback)

    def propagate_columns(self, ref: TableRef, columns: list[hms.FieldSchema] | None) -> None:
        """Give every partition the table's columns (ALTER TABLE ... CASCADE)."""
        start, stop = layout.partition_range(ref.table_id)
        with self._ctx.write_lock:
            ops: list[Put | Delete] = []
            for key, row in self._ctx.store.scan(layout.PARTITIONS, start, stop):
                partition = decoded(ref, row[layout.OBJECT])
                if partition.sd is None:
                    continue
                partition.sd.cols = copy.deepcopy(columns)
                ops.append(
                    Put(layout.PARTITIONS, key, {layout.OBJECT: stored_partition_bytes(partition)})
                )
                if len(ops) >= _BATCH:
                    self._ctx.store.mutate(ops)
                    ops = []
            if ops:
                self._ctx.store.mutate(ops)

    def relocation_ops(self, ref: TableRef, old_location: str, new_location: str) -> list[Put]:
        """Rows giving the partitions of ``ref`` that lie inside ``old_location`` the same
        place inside ``new_location`` (a managed table renamed with its directory)."""
        data = self._ctx.data
        old_place, new_place = data.find_place(old_location), data.find_place(new_location)
        if old_place is None or new_place is None:
            return []
        old_root = old_place.path.rstrip("/")
        new_root = new_place.path.rstrip("/")
        start, stop = layout.partition_range(ref.table_id)
        ops: list[Put] = []
        rows = self._ctx.store.scan(layout.PARTITIONS, start, stop, columns=[layout.OBJECT])
        for key, row in rows:
            partition = decoded(ref, row[layout.OBJECT])
            place = data.find_place(partition.sd.location if partition.sd else None)
            if place is None or not (old_place.contains(place) or old_place.same_as(place)):
                continue
            partition.sd.location = new_place.uri_of(new_root + place.path[len(old_root) :])
            ops.append(
                Put(layout.PARTITIONS, key, {layout.OBJECT: stored_partition_bytes(partition)})
            )
        return ops


def _keyed(ref: TableRef, part: hms.Partition | None) -> tuple[hms.Partition, list[str], bytes]:
    """A partition to alter with its checked values and row key."""
    if part is None:
        raise hms.InvalidOperationException(message="Partition cannot be null.")
    values = checked_values(ref, part.values)
    return part, values, row_key(ref, values)
