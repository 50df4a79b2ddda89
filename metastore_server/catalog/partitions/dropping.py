"""Dropping partitions with HMS's rules and messages: one by values, several by name, and every
partition of a dropped table; with the directories a drop deletes (planned and checked before
anything changes, deleted once the change has committed) and those of a dropped table's
partitions that lie outside its directory. See ``docs/managed-data.md``.

Every drop of a partition cascades the same way (``_drop_rows``): the drop policies of
dependent tables, the timelines, the partitions' statistics and grants, the events, and the
data deletions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from metastore_server.catalog.basics.changes import DROP, PARTITION, PartitionChange
from metastore_server.catalog.basics.java_text import java_list
from metastore_server.catalog.data.deletions import Deletion
from metastore_server.catalog.data.guard_index import GuardSet
from metastore_server.catalog.data.operations import Guards, Refusal
from metastore_server.catalog.objects.tables import TableRef, must_purge, owns_data
from metastore_server.catalog.partitions.dependency_records import (
    DEPENDENCY_MARK,
    partition_owns_data,
)
from metastore_server.catalog.partitions.row_writes import write_rows
from metastore_server.catalog.partitions.writer import PartitionWriter, each_until_failure
from metastore_server.catalog.reads.partition_rows import (
    checked_values,
    decoded,
    partition_name,
    row_key,
    values_from_name,
)
from metastore_server.catalog.reads.scan import values_of
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import partition_location

#: Rows deleted per store write when every partition of a table goes.
_BATCH = 1000


class Dropping(PartitionWriter):
    """Removes partition rows from the store, and plans the deletion of their data."""

    def drop(
        self,
        db: str,
        table: str,
        values: Sequence[str] | None,
        delete_data: bool,
        purge: bool = False,
    ) -> hms.Partition:
        """Drop one partition; its directory goes too when asked and the table owns its data
        (then parents left empty go, up to the table's directory). ``purge``: not to the
        trash. NoSuchObjectException when it is missing (or another server process dropped
        or changed it meanwhile); MetaException when its data cannot be deleted."""
        with self._ctx.write_lock:
            ref = self._tables.find(db, table)
            if ref is None:
                # HMS looks for the partition without checking the table first.
                raise hms.NoSuchObjectException(
                    message=f"partition values={java_list(list(values or []))}"
                )
            values = checked_values(ref, values)
            key = row_key(ref, values)
            row = self._ctx.store.get(layout.PARTITIONS, key)
            if row is None:
                raise hms.NoSuchObjectException(message=f"partition values={java_list(values)}")
            partition = decoded(ref, row[layout.OBJECT])
            still = Condition(layout.PARTITIONS, key, layout.OBJECT, row[layout.OBJECT])

            def delete_row() -> None:
                if not self._ctx.store.mutate([Delete(layout.PARTITIONS, key)], still):
                    # Another server process dropped or changed it meanwhile.
                    raise hms.NoSuchObjectException(
                        message=f"partition values={java_list(values)}"
                    )

            self._drop_rows(ref, [(values, partition)], delete_row, delete_data, purge)
        return partition

    def drop_by_names(
        self,
        db: str,
        table: str,
        part_names: Sequence[str] | None,
        delete_data: bool,
        if_exists: bool = True,
        purge: bool = False,
    ) -> list[hms.Partition]:
        """Drop partitions by name, all or nothing when one is missing and not ``if_exists``
        (NoSuchObjectException); their directories as ``drop`` deletes them."""
        with self._ctx.write_lock:
            ref = self._tables.get(db, table)
            found: list[tuple[bytes, hms.Partition]] = []
            keys, failure = each_until_failure(
                part_names or [], lambda name: row_key(ref, values_from_name(ref, name))
            )
            rows = dict(self._ctx.store.get_many(layout.PARTITIONS, keys))  # one request
            for key in keys:
                row = rows.get(key)
                if row is None:
                    if if_exists:
                        continue
                    raise hms.NoSuchObjectException(message="Some partitions to drop are missing")
                found.append((key, decoded(ref, row[layout.OBJECT])))
            if failure is not None:
                raise failure
            if found:
                deletes: list[Put | Delete] = [Delete(layout.PARTITIONS, k) for k, _ in found]

                def delete_rows() -> None:
                    write_rows(self._ctx, self._tables, ref, deletes, "Dropping partitions")

                dropped = [(values_of(ref, k), p) for k, p in found]
                self._drop_rows(ref, dropped, delete_rows, delete_data, purge)
        return [p for _, p in found]

    def _drop_rows(
        self,
        ref: TableRef,
        dropped: Sequence[tuple[list[str], hms.Partition]],
        delete: Callable[[], None],
        delete_data: bool,
        purge: bool,
    ) -> None:
        """The drop of partitions (values, partition) of ``ref`` whose rows ``delete``
        removes: the dependents' drop policies and the data deletions are checked first, the
        rows go in step with the timelines, then the partitions' statistics and grants, and
        the events; the data goes once the change has committed."""
        self._dependencies.guard_partition_drop(ref, [values for values, _ in dropped])
        deletions = self._plan_deletions(ref, [p for _, p in dropped], delete_data, purge)
        change = PartitionChange(
            PARTITION, DROP, before=[p for _, p in dropped], when=self._ctx.now(), table=ref,
            removed=[(v, p.parameters) for v, p in dropped],
        )  # fmt: skip
        with self._ctx.changes.writing(change):
            delete()
        self._ctx.data.reserve(deletions)
        self._ctx.delete_after_commit(deletions)

    def _plan_deletions(
        self, ref: TableRef, partitions: Sequence[hms.Partition], delete_data: bool, purge: bool
    ) -> list[Deletion | None]:
        """The directories dropping ``partitions`` deletes, checked before anything changes
        (MetaException otherwise): none unless asked and the table owns its data; never a
        dependent partition's (its data is its base's), the table's directory or a database's
        or anything holding one; parents left empty go, up to the table's directory."""
        if not (delete_data and owns_data(ref)) or not self._ctx.data.enabled:
            return []
        guards = GuardSet(
            self._ctx.data.guard_index(self._tables.database_locations()),
            before=tuple(self._ctx.data.guards([ref.location])),
        )
        levels = max(len(ref.key_names) - 1, 0)

        def refuse(reason: str) -> Exception:
            return hms.MetaException(message=f"Table partition not deleted since {reason}")

        deletions = [
            self._ctx.data.plan_delete(
                partition.sd.location,
                what=f"partition {partition_name(ref, partition.values)} of {ref.db}.{ref.name}",
                purge=purge or must_purge(ref),
                refuse=refuse,
                guards=guards,
                parent_levels=levels,
                boundary=ref.location,
            )
            for partition in partitions
            if partition.sd is not None
            and partition.sd.location
            and partition_owns_data(partition)
        ]
        if self._ctx.data.other_tables is not None:  # other tables' directories stay
            self._ctx.data.other_tables.keep(deletions, {f"{ref.db}.{ref.name}"})
        return deletions

    def drop_all(self, ref: TableRef) -> int:
        """Remove every partition row of a table (used when the table is dropped; its data
        is planned with ``plan_outside_deletions``); how many there were."""
        start, stop = layout.partition_range(ref.table_id)
        count = 0
        batch: list[Put | Delete] = []
        rows = self._ctx.store.scan(layout.PARTITIONS, start, stop, columns=[layout.OBJECT])
        for key, _row in rows:
            batch.append(Delete(layout.PARTITIONS, key))
            if len(batch) >= _BATCH:
                self._ctx.store.mutate(batch)
                count += len(batch)
                batch = []
        if batch:
            self._ctx.store.mutate(batch)
            count += len(batch)
        return count

    def plan_outside_deletions(
        self, ref: TableRef, purge: bool, refuse: Refusal, guards: Guards
    ) -> list[Deletion | None]:
        """The directories of a dropped table's partitions that lie outside its directory
        (HMS deletes those one by one; the rest go with the table's), checked (``refuse``'s
        exception otherwise)."""
        deletions: list[Deletion | None] = []
        for key, blob, location in self._outside(ref):
            if DEPENDENCY_MARK in blob and not partition_owns_data(decoded(ref, blob)):
                continue  # a dependent partition's data is its base's
            deletions.append(
                self._ctx.data.plan_delete(
                    location,
                    what=f"partition {partition_name(ref, values_of(ref, key))} "
                    f"of {ref.db}.{ref.name}",
                    purge=purge,
                    refuse=refuse,
                    guards=guards,
                )
            )
        return deletions

    def locations_outside(self, ref: TableRef) -> list[str]:
        """Locations of the partitions of ``ref`` that lie outside its directory."""
        return [location for _key, _blob, location in self._outside(ref)]

    def _outside(self, ref: TableRef) -> Iterator[tuple[bytes, bytes, str]]:
        """(key, stored bytes, location) of the partitions of ``ref`` located outside its
        directory, read without decoding whole partitions."""
        data = self._ctx.data
        table_place = data.find_place(ref.location)
        # Most partitions lie at "<table location>/<name>", spelt as the table's location is:
        # those are known to be inside without resolving anything.
        inside = (ref.location or "").rstrip("/") + "/" if table_place is not None else None
        start, stop = layout.partition_range(ref.table_id)
        rows = self._ctx.store.scan(layout.PARTITIONS, start, stop, columns=[layout.OBJECT])
        for key, row in rows:
            blob = row[layout.OBJECT]
            location = partition_location(blob)
            if not location:
                continue
            if inside and location.startswith(inside) and "/." not in location[len(inside) - 1 :]:
                continue
            place = data.find_place(location)
            if table_place is not None and place is not None and table_place.contains(place):
                continue
            yield key, blob, location
