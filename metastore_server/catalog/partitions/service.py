"""The partition service the catalog offers (``catalog.partitions``): reads, adds, drops and
changes of partitions, each done by its own part, composed here under one name.

``reads`` (``reads.partition_reads``), ``adding``, ``dropping`` and ``altering`` are the
parts; every method below hands its call to one of them, with the same arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.basics.encoded import EncodedPartitions
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.deletions import Deletion, Guard
from metastore_server.catalog.data.operations import Refusal
from metastore_server.catalog.dependencies.store import Dependencies
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.partitions.adding import Adding, AddingClaim
from metastore_server.catalog.partitions.altering import Altering
from metastore_server.catalog.partitions.dropping import Dropping
from metastore_server.catalog.reads.partition_reads import PartitionReads
from metastore_server.catalog.reads.scan import KeyRange
from metastore_server.thrift_api import hms
from planner.plan import MultiScanPlan
from storage.port import Put


class Partitions:
    """Partition rows on the store: the read, add, drop and alter parts together."""

    def __init__(
        self,
        ctx: CatalogContext,
        tables: Tables,
        dependencies: Dependencies,
    ) -> None:
        #: Adds and renames share the table's adding claim (stores without atomic batches).
        claim = AddingClaim(ctx)
        self.reads = PartitionReads(ctx, tables)
        self.adding = Adding(ctx, tables, dependencies, claim)
        self.dropping = Dropping(ctx, tables, dependencies)
        self.altering = Altering(ctx, tables, dependencies, claim)

    # -- reads (PartitionReads) --------------------------------------------------------------

    def get(self, db: str, table: str, values: Sequence[str] | None) -> hms.Partition:
        """One partition by its values; NoSuchObjectException when missing."""
        return self.reads.get(db, table, values)

    def get_by_name(self, db: str, table: str, name: str) -> hms.Partition:
        """One partition by its name ``k=v/...``; NoSuchObjectException when missing."""
        return self.reads.get_by_name(db, table, name)

    def get_by_names(
        self, db: str, table: str, part_names: Sequence[str] | None
    ) -> EncodedPartitions:
        """The partitions that exist among ``part_names``, sorted by name."""
        return self.reads.get_by_names(db, table, part_names)

    def by_expr(
        self, db: str, table: str, expr: bytes | str | None, max_parts: int | None = -1
    ) -> tuple[EncodedPartitions, bool]:
        """Partitions for an expression, and whether they may hold some that do not match."""
        return self.reads.by_expr(db, table, expr, max_parts)

    def names_by_expr(
        self, db: str, table: str, expr: bytes | str | None, max_parts: int | None = -1
    ) -> list[str]:
        """Partition names for an expression (every name when it cannot be read)."""
        return self.reads.names_by_expr(db, table, expr, max_parts)

    def values_from_name(self, ref: TableRef, name: str) -> list[str]:
        """Partition values of a name, in the table's key order; NoSuchObjectException when
        the name lacks a key."""
        return self.reads.values_from_name(ref, name)

    def list_all(self, db: str, table: str, max_parts: int | None = -1) -> EncodedPartitions:
        """All partitions (up to max_parts), sorted by name."""
        return self.reads.list_all(db, table, max_parts)

    def list_names(self, db: str, table: str, max_parts: int | None = -1) -> list[str]:
        """All partition names, sorted (up to max_parts)."""
        return self.reads.list_names(db, table, max_parts)

    def list_ps(
        self, db: str, table: str, part_vals: Sequence[str] | None, max_parts: int | None = -1
    ) -> EncodedPartitions:
        """Partitions matching a partial spec (empty values are wildcards)."""
        return self.reads.list_ps(db, table, part_vals, max_parts)

    def list_names_ps(
        self, db: str, table: str, part_vals: Sequence[str] | None, max_parts: int | None = -1
    ) -> list[str]:
        """Names of the partitions matching a partial spec, sorted."""
        return self.reads.list_names_ps(db, table, part_vals, max_parts)

    def by_filter(
        self, db: str, table: str, filter_text: str | None, max_parts: int | None = -1
    ) -> EncodedPartitions:
        """Partitions matching an HMS filter string, sorted by name."""
        return self.reads.by_filter(db, table, filter_text, max_parts)

    def names_by_filter(
        self, db: str, table: str, filter_text: str | None, max_parts: int | None = -1
    ) -> list[str]:
        """Names of the partitions matching a filter, sorted."""
        return self.reads.names_by_filter(db, table, filter_text, max_parts)

    def count_by_filter(self, db: str, table: str, filter_text: str | None) -> int:
        """How many partitions match a filter."""
        return self.reads.count_by_filter(db, table, filter_text)

    def filter_ranges(
        self, ref: TableRef, filter_text: str | None, *, like: str = "regex"
    ) -> list[KeyRange]:
        """The key ranges (with residuals) holding the partitions a filter selects."""
        return self.reads.filter_ranges(ref, filter_text, like=like)

    def filter_plan(
        self, ref: TableRef, filter_text: str | None, *, like: str = "regex"
    ) -> MultiScanPlan:
        """The scan plan of a filter on a table; MetaException for a filter HMS refuses."""
        return self.reads.filter_plan(ref, filter_text, like=like)

    def explain(
        self, db: str, table: str, filter_text: str | None, analyze: bool = False
    ) -> hms.ExplainFilterResult:
        """EXPLAIN (ANALYZE) of a filter on a table."""
        return self.reads.explain(db, table, filter_text, analyze)

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
    ) -> list[hms.Partition]:
        """Add partitions, all or nothing; the partitions added, as HMS answers them."""
        return self.adding.add(db, table, parts, if_not_exists, missing_table_message)

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
        self, ref: TableRef, purge: bool, refuse: Refusal, guards: Sequence[Guard]
    ) -> list[Deletion | None]:
        """The directories of a dropped table's partitions outside its directory, checked."""
        return self.dropping.plan_outside_deletions(ref, purge, refuse, guards)

    def locations_outside(self, ref: TableRef) -> list[str]:
        """Locations of the partitions of ``ref`` that lie outside its directory."""
        return self.dropping.locations_outside(ref)

    def alter(self, db: str, table: str, new_parts: Sequence[hms.Partition] | None) -> None:
        """Replace partitions' definitions (values identify them; all must exist)."""
        self.altering.alter(db, table, new_parts)

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
