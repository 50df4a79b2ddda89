"""Where a partition read's answer comes from: the table's cached whole listing, or the store.

The choice is made here, once per call, by one of three functions: ``for_filter`` (a filter
planned as one range over the whole table is answered from the listing when there is one, or
one worth building: ``whole_listing.filtered``), ``for_table`` (every partition: the cached
listing, built when asked) and ``from_store`` (ranges read from the store). What they return,
a ``Selection``, answers the partitions (sorted by name, up to max_parts), their names, or how
many there are, the same way from either source. A read that may return more partitions than
``partition_request_limit`` allows (HMS's hive.metastore.limit.partition.request) fails before
anything is sorted or sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from metastore_server.catalog.basics.encoded import EncodedPartitions
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.listing_cache import Listing
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads.scan import (
    NAME_COLUMNS,
    KeyRange,
    matching_columns,
    name_bytes_of,
    whole_table,
)
from metastore_server.catalog.reads.whole_listing import filtered, named_rows, whole_listing
from metastore_server.thrift_api import hms


def limit_of(max_parts: int | None) -> int | None:
    """HMS max_parts as a limit: a negative number means none."""
    if max_parts is None or max_parts < 0:
        return None
    return max_parts


def check_request_limit(
    ctx: CatalogContext, ref: TableRef, count: int, limit: int | None
) -> None:
    """MetaException (HMS's words) when a request would return more partitions than
    ``partition_request_limit`` allows."""
    cap = ctx.partition_request_limit
    if cap is not None and cap >= 0 and (limit is None or limit > cap) and count > cap:
        raise hms.MetaException(
            message=(
                f"Number of partitions scanned (={count}) on table '{ref.name}' "
                f"exceeds limit (={cap}). This is controlled on the metastore server by "
                "hive.metastore.limit.partition.request."
            )
        )


def may_build_listing(ctx: CatalogContext, max_parts: int | None) -> bool:
    """Whether a listing of every partition may be built for a request of ``max_parts``:
    under a request limit, only by a request that fails fast (one asking for no more than
    the limit)."""
    limit = limit_of(max_parts)
    cap = ctx.partition_request_limit
    return cap is None or cap < 0 or (limit is not None and limit <= cap)


class Selection(Protocol):
    """The partitions a read selects, whichever source holds them."""

    def partitions(self, max_parts: int | None) -> EncodedPartitions:
        """The selected partitions sorted by name, up to max_parts; MetaException past the
        request limit."""
        ...

    def names(self, max_parts: int | None) -> list[str]:
        """The selected partitions' names, sorted, up to max_parts."""
        ...

    def count(self) -> int:
        """How many partitions are selected (none is decoded)."""
        ...


@dataclass(frozen=True)
class Listed:
    """Partitions of a whole-table listing: those at ``positions`` (name order), or all."""

    ctx: CatalogContext
    ref: TableRef
    listing: Listing
    positions: list[int] | None = None

    def partitions(self, max_parts: int | None) -> EncodedPartitions:
        """The selected partitions sorted by name, up to max_parts; MetaException past the
        request limit."""
        limit = limit_of(max_parts)
        check_request_limit(self.ctx, self.ref, self.count(), limit)
        blobs = self.listing.blobs
        if self.positions is None:
            chosen = blobs if limit is None else blobs[:limit]
        else:
            chosen = [blobs[i] for i in self.positions[:limit]]
        return EncodedPartitions(self.ref.db, self.ref.name, chosen)

    def names(self, max_parts: int | None) -> list[str]:
        """The selected partitions' names, sorted, up to max_parts."""
        limit = limit_of(max_parts)
        names = self.listing.names
        if self.positions is None:
            found = names if limit is None else names[:limit]
        else:
            found = [names[i] for i in self.positions[:limit]]
        return [name.decode("utf-8") for name in found]

    def count(self) -> int:
        """How many partitions are selected."""
        return len(self.listing.names) if self.positions is None else len(self.positions)


@dataclass(frozen=True)
class Stored:
    """Partitions read from the store, in key ranges."""

    ctx: CatalogContext
    ref: TableRef
    ranges: list[KeyRange]

    def partitions(self, max_parts: int | None) -> EncodedPartitions:
        """The stored partitions in the ranges, sorted by name, up to max_parts; MetaException
        before anything is sorted or sent when more match than one request may return."""
        limit = limit_of(max_parts)
        named = named_rows(self.ctx, self.ref, self.ranges)
        check_request_limit(self.ctx, self.ref, len(named), limit)
        # UTF-8 byte order is code point order: sorting the names' bytes sorts the names.
        named.sort()
        if limit is not None:
            named = named[:limit]
        return EncodedPartitions(self.ref.db, self.ref.name, [row[1] for row in named])

    def names(self, max_parts: int | None) -> list[str]:
        """Names of the partitions in the ranges, sorted, up to max_parts."""
        ref = self.ref
        rows, _ = matching_columns(self.ctx.store, ref, self.ranges, NAME_COLUMNS, keys=False)
        found = sorted(
            name if name is not None else name_bytes_of(ref, key, {}) for name, key in rows
        )
        limit = limit_of(max_parts)
        found = found if limit is None else found[:limit]
        return [name.decode("utf-8") for name in found]

    def count(self) -> int:
        """How many partitions the ranges hold (none is decoded)."""
        rows, _ = matching_columns(self.ctx.store, self.ref, self.ranges, NAME_COLUMNS,
                                   keys=False)  # fmt: skip
        return len(rows)


def from_store(ctx: CatalogContext, ref: TableRef, ranges: list[KeyRange]) -> Selection:
    """The partitions in ``ranges``, read from the store."""
    return Stored(ctx, ref, ranges)


def for_filter(ctx: CatalogContext, ref: TableRef, ranges: list[KeyRange]) -> Selection:
    """The partitions a filter planned as ``ranges`` selects: from the table's listing when
    the filter reads the whole table and a listing is at hand or worth building, else from
    the store."""
    found = filtered(ctx, ref, ranges)
    if found is None:
        return Stored(ctx, ref, ranges)
    listing, positions = found
    return Listed(ctx, ref, listing, positions)


def for_table(ctx: CatalogContext, ref: TableRef, *, build: bool) -> Selection:
    """Every partition of a table: from its cached listing (built and kept first when
    ``build``), else from the store."""
    listing = whole_listing(ctx, ref, build=build)
    if listing is None:
        return Stored(ctx, ref, whole_table(ref))
    return Listed(ctx, ref, listing)
