"""Partition reads with HMS's rules and messages: one partition by values or name, partitions
(or their names) by names, partial spec, filter or expression, every partition, and how many a
filter matches.

Partitions of a table are one contiguous, typed-ordered key range (``storage.layout``); every
listing is a scan of that range, narrowed to a prefix when leading values are known
(``request_ranges``). Whether the answer comes from the listing cache or the store is decided
in ``selection``. See ``docs/filters.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.basics.java_text import java_list
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.reads import partition_rows, request_ranges, selection
from metastore_server.catalog.reads.explain import explain_plan
from metastore_server.catalog.reads.partition_rows import checked_values, decoded, row_key
from metastore_server.catalog.reads.scan import KeyRange
from metastore_server.planner.plan import MultiScanPlan
from metastore_server.storage import layout
from metastore_server.thrift_api import hms
from metastore_server.wire.encoded import EncodedNames, EncodedPartitions


class PartitionReads:
    """Reads of partition rows on the store."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables

    # -- one partition -----------------------------------------------------------------------

    def get(self, db: str, table: str, values: Sequence[str] | None) -> hms.Partition:
        """One partition by its values; NoSuchObjectException when missing, MetaException
        when the values do not fit the table's keys."""
        ref = self._tables.get(db, table)
        return self._stored(ref, checked_values(ref, values))

    def get_by_name(self, db: str, table: str, name: str) -> hms.Partition:
        """One partition by its name ``k=v/...``; NoSuchObjectException when missing."""
        ref = self._tables.get(db, table)
        return self._stored(ref, partition_rows.values_from_name(ref, name))

    def exists(self, ref: TableRef, values: Sequence[str]) -> bool:
        """Whether ``ref`` has a partition of ``values`` (one row read, not decoded)."""
        return self._ctx.store.get(layout.PARTITIONS, row_key(ref, values)) is not None

    def _stored(self, ref: TableRef, values: list[str]) -> hms.Partition:
        row = self._ctx.store.get(layout.PARTITIONS, row_key(ref, values))
        if row is None:
            raise hms.NoSuchObjectException(message=f"partition values={java_list(values)}")
        return decoded(ref, row[layout.OBJECT])

    def values_from_name(self, ref: TableRef, name: str) -> list[str]:
        """Partition values of a name (keys in any order), in the table's key order.

        NoSuchObjectException naming the first key the name lacks, as HMS does.
        """
        return partition_rows.values_from_name(ref, name)

    # -- partitions --------------------------------------------------------------------------

    def get_by_names(
        self, db: str, table: str, part_names: Sequence[str] | None
    ) -> EncodedPartitions:
        """The partitions that exist among ``part_names``, sorted by name (unknown names and
        names that lack a key are skipped)."""
        ref = self._tables.get(db, table)
        keys = request_ranges.name_keys(ref, part_names)
        return selection.from_keys(self._ctx, ref, keys).partitions(-1)

    def by_expr(
        self, db: str, table: str, expr: bytes | str | None, max_parts: int | None = -1
    ) -> tuple[EncodedPartitions, bool]:
        """Partitions for a get_partitions_by_expr expression, and whether the answer may hold
        partitions that do not match (an expression we cannot read: then every partition)."""
        ref = self._tables.get(db, table)
        ranges, unknown = request_ranges.expr_ranges(ref, expr)
        return selection.from_store(self._ctx, ref, ranges).partitions(max_parts), unknown

    def names_by_expr(
        self, db: str, table: str, expr: bytes | str | None, max_parts: int | None = -1
    ) -> list[str]:
        """Partition names for an expression (every name when it cannot be read)."""
        ref = self._tables.get(db, table)
        ranges, _unknown = request_ranges.expr_ranges(ref, expr)
        return selection.from_store(self._ctx, ref, ranges).names(max_parts).decode()

    def list_all(self, db: str, table: str, max_parts: int | None = -1) -> EncodedPartitions:
        """All partitions (up to max_parts), sorted by name as HMS returns them; MetaException
        past the request limit."""
        ref = self._tables.get(db, table)
        build = selection.may_build_listing(self._ctx, max_parts)
        return selection.for_table(self._ctx, ref, build=build).partitions(max_parts)

    def list_names(self, db: str, table: str, max_parts: int | None = -1) -> EncodedNames:
        """All partition names, sorted by name as HMS does (up to max_parts), as UTF-8."""
        ref = self._tables.get(db, table)
        return selection.table_names(self._ctx, ref, max_parts)

    def list_ps(
        self, db: str, table: str, part_vals: Sequence[str] | None, max_parts: int | None = -1
    ) -> EncodedPartitions:
        """Partitions matching a partial spec (empty values are wildcards); MetaException for
        an empty spec or one with too many values."""
        ref = self._tables.get(db, table)
        if not part_vals:
            raise hms.MetaException(message="Invalid partition key & values; keys [], values []")
        ranges = request_ranges.spec_ranges(ref, part_vals)
        return selection.from_store(self._ctx, ref, ranges).partitions(max_parts)

    def list_names_ps(
        self, db: str, table: str, part_vals: Sequence[str] | None, max_parts: int | None = -1
    ) -> EncodedNames:
        """Names of the partitions matching a partial spec, sorted by name, as UTF-8;
        MetaException for an empty spec or one with too many values."""
        ref = self._tables.get(db, table)
        if not part_vals:
            raise hms.MetaException(message="Invalid partition key & values; keys [], values []")
        ranges = request_ranges.spec_ranges(ref, part_vals)
        return selection.from_store(self._ctx, ref, ranges).names(max_parts)

    # -- filters -----------------------------------------------------------------------------

    def by_filter(
        self, db: str, table: str, filter_text: str | None, max_parts: int | None = -1
    ) -> EncodedPartitions:
        """Partitions matching an HMS filter string, sorted by name; MetaException for a
        filter HMS refuses, or past the request limit."""
        ref = self._tables.get(db, table)
        return self._filtered(ref, filter_text).partitions(max_parts)

    def count_by_filter(self, db: str, table: str, filter_text: str | None) -> int:
        """How many partitions match a filter (no partition is decoded); NoSuchObjectException
        when the table is missing."""
        ref = self._tables.find(db, table)
        if ref is None:
            raise hms.NoSuchObjectException(
                message=f"Specified database/table does not exist : {db}.{table}"
            )
        return self._filtered(ref, filter_text).count()

    def _filtered(self, ref: TableRef, filter_text: str | None) -> selection.Selection:
        return selection.for_filter(self._ctx, ref, self.filter_ranges(ref, filter_text))

    def filter_ranges(
        self, ref: TableRef, filter_text: str | None, *, like: str = "regex"
    ) -> list[KeyRange]:
        """The key ranges (with residuals) holding the partitions a filter selects."""
        return request_ranges.filter_ranges(ref, filter_text, like=like)

    def filter_plan(
        self, ref: TableRef, filter_text: str | None, *, like: str = "regex"
    ) -> MultiScanPlan:
        """The scan plan of a filter on a table; MetaException for a filter HMS refuses."""
        return request_ranges.filter_plan(ref, filter_text, like=like)

    def explain(
        self, db: str, table: str, filter_text: str | None, analyze: bool = False
    ) -> hms.ExplainFilterResult:
        """EXPLAIN (ANALYZE) of a filter on a table."""
        ref = self._tables.get(db, table)
        return explain_plan(
            self._ctx.store, ref, request_ranges.filter_plan(ref, filter_text), analyze=analyze
        )
