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
from typing import Protocol, cast

from metastore_server import audit
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.listing_cache import Listing
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads import spilled_names
from metastore_server.catalog.reads.scan import (
    LISTING_COLUMNS,
    NAME_COLUMNS,
    KeyRange,
    column_batches,
    matching_columns,
    name_bytes_of,
    whole_table,
)
from metastore_server.catalog.reads.whole_listing import (
    change_token,
    filtered,
    whole_listing,
    with_names,
)
from metastore_server.storage import layout
from metastore_server.thrift_api import hms
from metastore_server.wire.encoded import EncodedNames, EncodedPartitions

#: Partitions read from the store at a time for a listing (each batch then joins the sort).
PARTITION_BATCH = 100_000
#: Names read from the store at a time (a batch holds each row's key as well).
NAME_BATCH = 250_000


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

    def names(self, max_parts: int | None) -> EncodedNames:
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

    def names(self, max_parts: int | None) -> EncodedNames:
        """The selected partitions' names, sorted, up to max_parts (all of them: the
        listing's, their wire form kept with it)."""
        limit = limit_of(max_parts)
        names = self.listing.names
        if self.positions is not None:
            return EncodedNames([names[i] for i in self.positions[:limit]])
        if limit is None or limit >= len(names):
            return EncodedNames(names, self.listing.memo)
        return EncodedNames(names[:limit])

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
        ref = self.ref
        # UTF-8 byte order is code point order: sorting the names' bytes sorts the names.
        sorter = spilled_names.PartitionSorter()
        try:
            batches = column_batches(self.ctx.store, ref, self.ranges, LISTING_COLUMNS,
                                     keys=False, batch=PARTITION_BATCH)  # fmt: skip
            for rows, incomplete in batches:
                sorter.add(with_names(ref, rows, incomplete))
                del rows
            check_request_limit(self.ctx, ref, len(sorter), limit)
        except BaseException:
            sorter.close()
            raise
        return sorter.sorted(ref.db, ref.name, limit)

    def names(self, max_parts: int | None) -> EncodedNames:
        """Names of the partitions in the ranges, sorted, up to max_parts: sorted in memory
        up to ``spilled_names.RUN_NAMES`` of them, past it in runs on disk merged as the reply
        is written (bounded memory)."""
        ref = self.ref
        sorter = spilled_names.NameSorter()
        batch = min(NAME_BATCH, spilled_names.RUN_NAMES)
        batches = column_batches(self.ctx.store, ref, self.ranges, NAME_COLUMNS, keys=False,
                                 batch=batch)  # fmt: skip
        for rows, incomplete in batches:
            found = [row[0] for row in rows]
            for i, (name, key) in enumerate(rows if incomplete else ()):
                if name is None:  # a row without its name: made from the key (kept in it)
                    found[i] = name_bytes_of(ref, cast(bytes, key), {})
            del rows
            sorter.add(cast(list[bytes], found))  # (every name, made where missing)
        return sorter.sorted(limit_of(max_parts))

    def count(self) -> int:
        """How many partitions the ranges hold (none is decoded)."""
        rows, _ = matching_columns(self.ctx.store, self.ref, self.ranges, NAME_COLUMNS,
                                   keys=False)  # fmt: skip
        return len(rows)


@dataclass(frozen=True)
class Points:
    """Partitions read from the store by their row keys (gets, not scans)."""

    ctx: CatalogContext
    ref: TableRef
    keys: list[bytes]

    def _named(self) -> list[tuple[bytes, bytes]]:
        """(name, stored partition) of the keys that exist, in key order."""
        ref = self.ref
        named = []
        for key, row in self.ctx.store.get_many(layout.PARTITIONS, self.keys):
            blob = row.get(layout.OBJECT)
            if blob is None:
                raise ValueError(f"partition row {key!r} of {ref.db}.{ref.name} is empty")
            named.append((name_bytes_of(ref, key, row), blob))
        audit.count(rows_scanned=len(named), rows_matched=len(named))
        return named

    def partitions(self, max_parts: int | None) -> EncodedPartitions:
        """The partitions that exist, sorted by name, up to max_parts; MetaException past the
        request limit."""
        limit = limit_of(max_parts)
        named = self._named()
        check_request_limit(self.ctx, self.ref, len(named), limit)
        named.sort()
        if limit is not None:
            del named[limit:]
        return EncodedPartitions(self.ref.db, self.ref.name, [row[1] for row in named])

    def names(self, max_parts: int | None) -> EncodedNames:
        """The names of the partitions that exist, sorted, up to max_parts."""
        found = sorted(name for name, _blob in self._named())
        limit = limit_of(max_parts)
        return EncodedNames(found if limit is None else found[:limit])

    def count(self) -> int:
        """How many of the keys exist."""
        return len(self._named())


def from_keys(ctx: CatalogContext, ref: TableRef, keys: list[bytes]) -> Selection:
    """The partitions at these row keys (each once), read from the store by gets."""
    return Points(ctx, ref, keys)


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


def table_names(ctx: CatalogContext, ref: TableRef, max_parts: int | None) -> EncodedNames:
    """Every partition name of a table, sorted, up to max_parts: from its cached listing, or
    its cached names, else read from the store (every name: they are sorted) and kept in the
    listing cache while the store is unchanged (reading them built them: keeping them costs
    only their memory, bounded by the cache)."""
    token = change_token(ctx)
    cache = ctx.listing_cache
    if token is not None:
        listing = cache.get(ref.table_id, token) or cache.get(names_key(ref.table_id), token)
        if listing is not None:
            audit.note(listing_cache="hit")
            return Listed(ctx, ref, listing).names(max_parts)
    found = Stored(ctx, ref, whole_table(ref)).names(None)
    if not found.replayable:  # merged from runs on disk: far too many to keep
        limit = limit_of(max_parts)
        merged = cast(spilled_names.MergedNames, found)  # (only names merged from runs)
        return merged if limit is None else merged.first(limit)
    names = list(found.names)
    if token is not None and cache.max_bytes > 0:
        cache.put(names_key(ref.table_id), token, Listing(names, [], []))
    limit = limit_of(max_parts)
    return found if limit is None or limit >= len(names) else EncodedNames(names[:limit])


def names_key(table_id: int) -> tuple[str, int]:
    """The listing cache's key of a table's names alone (its whole listing's is its id)."""
    return ("names", table_id)
