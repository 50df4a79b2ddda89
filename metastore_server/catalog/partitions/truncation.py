"""Truncating a table (HMS's ``truncate_table``): its data goes, its metadata stays.

The data of a managed table (or of the partitions named, or of all its partitions) is deleted
the way a drop deletes it (planned and checked first, deleted once the change has committed,
to the trash unless the table says ``auto.purge``; nothing with ``--data-operations off``),
then each directory is made again, empty. The table's (or the partitions') basic statistics
are reset to an empty table's through the ordinary alter paths, so their events and
timelines follow. See ``docs/hms-api.md``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence

import structlog

from metastore_server.catalog.basics.changes import TRUNCATING
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.deletions import Deletion
from metastore_server.catalog.data.fast_stats import (
    COLUMN_STATS_ACCURATE,
    DO_NOT_UPDATE_STATS,
    NUM_FILES,
    TOTAL_SIZE,
)
from metastore_server.catalog.data.guard_index import GuardSet
from metastore_server.catalog.objects.databases import Databases
from metastore_server.catalog.objects.tables import (
    MANAGED_TABLE,
    TableRef,
    Tables,
    must_purge,
    unable_to_create,
)
from metastore_server.catalog.partitions.service import Partitions
from metastore_server.catalog.reads.partition_reads import PartitionReads
from metastore_server.catalog.reads.partition_rows import partition_name
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: The basic statistics a truncated table or partition holds (HMS resets them to zero).
EMPTY_STATS = {NUM_FILES: "0", TOTAL_SIZE: "0", "numRows": "0", "rawDataSize": "0"}
#: The alters that reset them must not count the files (they are deleted after the commit).
_KEEP_STATS = {DO_NOT_UPDATE_STATS: "true", TRUNCATING: "true"}


def emptied(parameters: dict[str, str] | None) -> dict[str, str]:
    """``parameters`` with an empty table's basic statistics, marked accurate (column
    statistics are no longer: their mark goes)."""
    params = dict(parameters or {})
    params.update(EMPTY_STATS)
    params[COLUMN_STATS_ACCURATE] = json.dumps({"BASIC_STATS": "true"})
    return params


def refuse_unmanaged(ref: TableRef) -> None:
    """HMS truncates managed tables only (MetaException, HMS's words, otherwise)."""
    if ref.table.tableType != MANAGED_TABLE or ref.is_external:
        raise hms.MetaException(message=f"Cannot truncate non-managed table {ref.name}.")


class Truncation:
    """``truncate_table`` over the catalog's tables, partitions and data operations."""

    def __init__(
        self,
        ctx: CatalogContext,
        databases: Databases,
        tables: Tables,
        partitions: Partitions,
        partition_reads: PartitionReads,
    ) -> None:
        self._ctx, self._databases, self._tables = ctx, databases, tables
        self._partitions_service, self._reads = partitions, partition_reads

    def truncate(self, db: str, name: str, part_names: Sequence[str] | None) -> None:
        """Delete the data of table ``db.name`` (or of the partitions ``part_names`` names;
        of all its partitions when it is partitioned and they are none) and reset their basic
        statistics. NoSuchObjectException for a missing table or partition."""
        ctx = self._ctx
        with ctx.write_lock:
            ref = self._tables.get(db, name)
            refuse_unmanaged(ref)
            if ref.key_names:
                parts = self._partitions(ref, part_names)
                locations: list[str | None] = [p.sd.location for p in parts if p.sd is not None]
                what = [f"partition {partition_name(ref, p.values)}" for p in parts]
            else:
                parts, locations, what = [], [ref.location], ["table"]
            deletions = self._plan(ref, locations, what)
            if parts:
                reset = [copy.deepcopy(p) for p in parts]
                for part in reset:
                    part.parameters = emptied(part.parameters)
                self._partitions_service.alter(db, name, reset, _KEEP_STATS, batch=True)
            else:
                table = copy.deepcopy(ref.table)
                table.parameters = emptied(table.parameters)
                self._tables.alter(db, name, table, context=_KEEP_STATS)
            ctx.data.reserve(deletions)
            ctx.delete_after_commit(deletions)
            remake = [d.place.uri for d in deletions if d is not None and d.kept is None]
            ctx.write_lock.after_commit(lambda: self._remake(remake))

    def _partitions(self, ref: TableRef, part_names: Sequence[str] | None) -> list[hms.Partition]:
        """The partitions to truncate: those named (each must exist), or all of them."""
        reads = self._reads
        if not part_names:
            return reads.list_all(ref.db, ref.name).decode()
        return [reads.get_by_name(ref.db, ref.name, part) for part in part_names]

    def _plan(
        self, ref: TableRef, locations: Sequence[str | None], what: Sequence[str]
    ) -> list[Deletion | None]:
        """The directories to delete, checked before anything changes (MetaException)."""
        data = self._ctx.data
        if not data.enabled:
            return []

        def refuse(reason: str) -> Exception:
            return hms.MetaException(
                message=f"Table {ref.db}.{ref.name} not truncated since {reason}"
            )

        guards = GuardSet(
            data.guard_index(self._databases.locations()),
            after=tuple(data.guards([ref.location] if ref.key_names else [])),
        )
        deletions = [
            data.plan_delete(
                location,
                what=f"{kind} of {ref.db}.{ref.name} (truncated)",
                purge=must_purge(ref),
                refuse=refuse,
                guards=guards,
            )
            for location, kind in zip(locations, what, strict=True)
        ]
        if data.other_tables is not None:  # other tables' directories stay
            data.other_tables.keep(deletions, {f"{ref.db}.{ref.name}"})
        return deletions

    def _remake(self, locations: list[str]) -> None:
        """Make the emptied directories again (after their deletion); a failure is logged."""
        try:
            self._ctx.data.make_dirs(locations, unable_to_create)
        except Exception as exc:  # noqa: BLE001 - the truncate has committed
            log.warning("truncate_remake_failed", locations=locations, detail=str(exc))
