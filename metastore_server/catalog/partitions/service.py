"""The partition writes the catalog offers (``catalog.partitions``): adds, drops and changes
of partitions, each done by its own part, composed here under one name. Reads are the reads
room's (``catalog.partition_reads``: ``reads.partition_reads.PartitionReads``).

``adding``, ``dropping`` and ``altering`` are the parts; every method below hands its call to
one of them, with the same arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.deletions import Deletion
from metastore_server.catalog.data.fast_stats import Context
from metastore_server.catalog.data.operations import Guards, Refusal
from metastore_server.catalog.dependencies.store import Dependencies
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.partitions.adding import Adding, AddingClaim
from metastore_server.catalog.partitions.altering import Altering
from metastore_server.catalog.partitions.dropping import Dropping
from metastore_server.storage.port import Put
from metastore_server.thrift_api import hms


class Partitions:
    """Partition writes on the store: the add, drop and alter parts together."""

    def __init__(
        self,
        ctx: CatalogContext,
        tables: Tables,
        dependencies: Dependencies,
    ) -> None:
        #: Adds and renames share the table's adding claim (stores without atomic batches).
        claim = AddingClaim(ctx)
        self.adding = Adding(ctx, tables, dependencies, claim)
        self.dropping = Dropping(ctx, tables, dependencies)
        self.altering = Altering(ctx, tables, dependencies, claim)

    # -- writes (Adding, Dropping, Altering) -------------------------------------------------

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
        """Add partitions, all or nothing; the partitions added, as HMS answers them."""
        return self.adding.add(
            db, table, parts, if_not_exists, missing_table_message, count_stats
        )

    def drop(
        self,
        db: str,
        table: str,
        values: Sequence[str] | None,
        delete_data: bool,
        purge: bool = False,
    ) -> hms.Partition:
        """Drop one partition (and its directory when asked); the partition dropped."""
        return self.dropping.drop(db, table, values, delete_data, purge)

    def drop_by_names(
        self,
        db: str,
        table: str,
        part_names: Sequence[str] | None,
        delete_data: bool,
        if_exists: bool = True,
        purge: bool = False,
    ) -> list[hms.Partition]:
        """Drop partitions by name, all or nothing; the partitions dropped."""
        return self.dropping.drop_by_names(db, table, part_names, delete_data, if_exists, purge)

    def drop_all(self, ref: TableRef) -> int:
        """Remove every partition row of a dropped table; how many there were."""
        return self.dropping.drop_all(ref)

    def plan_outside_deletions(
        self, ref: TableRef, purge: bool, refuse: Refusal, guards: Guards
    ) -> list[Deletion | None]:
        """The directories of a dropped table's partitions outside its directory, checked."""
        return self.dropping.plan_outside_deletions(ref, purge, refuse, guards)

    def locations_outside(self, ref: TableRef) -> list[str]:
        """Locations of the partitions of ``ref`` that lie outside its directory."""
        return self.dropping.locations_outside(ref)

    def alter(
        self,
        db: str,
        table: str,
        new_parts: Sequence[hms.Partition] | None,
        context: Context = None,
        *,
        batch: bool = False,
    ) -> None:
        """Replace partitions' definitions (values identify them; all must exist); ``context``
        is the call's environment context; ``batch``: the call changes several
        (``alter_partitions``), as HMS's messages say."""
        self.altering.alter(db, table, new_parts, context, batch=batch)

    def rename(
        self, db: str, table: str, old_values: Sequence[str] | None, new_part: hms.Partition
    ) -> None:
        """Give a partition new values; a default location (and its directory) follows."""
        self.altering.rename(db, table, old_values, new_part)

    def propagate_columns(self, ref: TableRef, columns: list[hms.FieldSchema] | None) -> None:
        """Give every partition the table's columns (ALTER TABLE ... CASCADE)."""
        self.altering.propagate_columns(ref, columns)

    def relocation_ops(self, ref: TableRef, old_location: str, new_location: str) -> list[Put]:
        """Rows moving the partitions inside ``old_location`` to ``new_location``."""
        return self.altering.relocation_ops(ref, old_location, new_location)
