"""Whole-table listings: built from the store, kept in the listing cache, and used to answer
filters over the whole table from memory.

A listing is every partition of a table sorted by name, with its stored encoding and row key
(``listing_cache.Listing``). ``get_partitions`` builds one when the cache has none for the
store's change token. A filter that no key range narrows (``region in ("r1", "r2")`` on a table
keyed ds, hr, region) reads the whole table anyway; it is answered from the cached listing
when there is one: the residual is tested on the keys (``partition_scan.key_test``, each
distinct value once) and the passing partitions come out already in name order. Such a filter
builds the listing itself only when the store was unchanged since the previous filter of that
table (so a table written between every two filters never pays for a listing it cannot reuse)
and when the listing is expected to fit the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from metastore_server import audit
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.listing_cache import Listing
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads.scan import (
    LISTING_COLUMNS,
    KeyRange,
    key_test,
    matching_columns,
    name_bytes_of,
    whole_table,
)
from metastore_server.storage import layout
from metastore_server.storage.row_scan import passing

#: Bytes a listing holds per partition besides the stored encoding (name, key, list slots).
_PER_PARTITION = 220


def named_rows(
    ctx: CatalogContext, ref: TableRef, ranges: Sequence[KeyRange], *, keys: bool = False
) -> list[tuple[bytes, bytes, bytes | None]]:
    """(name, stored partition, key) of the partitions in ``ranges``, in key order (names are
    unique: sorting these sorts by name). With ``keys=False`` the key may be None."""
    rows, incomplete = matching_columns(ctx.store, ref, ranges, LISTING_COLUMNS, keys=keys)
    _fill_names(ref, rows, incomplete)
    return cast(list[tuple[bytes, bytes, bytes | None]], rows)  # (each with its name and blob)


def with_names(
    ref: TableRef, rows: list[tuple[bytes | None, ...]], incomplete: int
) -> list[tuple[bytes, bytes]]:
    """(name, stored partition) of rows of ``LISTING_COLUMNS`` (with their keys)."""
    _fill_names(ref, rows, incomplete)
    filled = cast(list[tuple[bytes, bytes, bytes | None]], rows)  # (each with its name and blob)
    return [(row[0], row[1]) for row in filled]


def _fill_names(ref: TableRef, rows: list[tuple[bytes | None, ...]], incomplete: int) -> None:
    """Give the rows without a stored name (``incomplete`` of them) the name their key makes;
    ValueError for a row without its partition."""
    for i, (name, blob, key) in enumerate(rows if incomplete else ()):
        if name is None or blob is None:  # a row without its name: made from the key
            if blob is None:
                raise ValueError(f"partition row {key!r} of {ref.db}.{ref.name} is empty")
            # (the key is kept in a row lacking a column: row_scan.packed_columns)
            rows[i] = (name_bytes_of(ref, cast(bytes, key), {}), blob, key)


def whole_listing(ctx: CatalogContext, ref: TableRef, *, build: bool = True) -> Listing | None:
    """Every partition of a table sorted by name, from the listing cache when the store has
    not changed since it was built (else built and kept, when ``build``); None when the store
    cannot say, or it is not cached and not to be built (then read the store directly)."""
    token = change_token(ctx)
    if token is None:
        return None
    return _listing(ctx, ref, token, build)


def change_token(ctx: CatalogContext) -> int | None:
    """The store's change token (None: it has none, or cannot say now)."""
    token_of = ctx.capabilities.change_token
    return token_of() if token_of is not None else None


def _listing(ctx: CatalogContext, ref: TableRef, token: int, build: bool) -> Listing | None:
    cached = ctx.listing_cache.get(ref.table_id, token)
    if cached is not None:
        audit.note(listing_cache="hit")
        return cached
    if not build:
        return None
    # A table too large to keep is read from the store by the caller (sorted in bounded
    # memory: ``spilled_names``), not built into a listing of its own.
    return _built(ctx, ref, token) if _may_fit(ctx, ref) else None


def _built(ctx: CatalogContext, ref: TableRef, token: int) -> Listing:
    """The table's listing, read whole and offered to the cache."""
    named = named_rows(ctx, ref, whole_table(ref), keys=True)
    named.sort()
    names = [row[0] for row in named]
    blobs = [row[1] for row in named]
    listing = Listing(names, blobs, cast(list[bytes], [row[2] for row in named]))  # (keys=True)
    ctx.listing_cache.put(ref.table_id, token, listing)
    return listing


def filtered(
    ctx: CatalogContext, ref: TableRef, ranges: Sequence[KeyRange]
) -> tuple[Listing, list[int]] | None:
    """For a filter planned as one range over the whole table: the table's listing and the
    positions (in name order) of the partitions that pass the filter; None when the filter is
    to be read from the store (a narrower plan, no listing at hand and none worth building)."""
    if len(ranges) != 1:
        return None
    key_range = ranges[0]
    if key_range.point is not None or (key_range.start, key_range.stop) != layout.partition_range(
        ref.table_id
    ):
        return None
    token = change_token(ctx)
    if token is None:
        return None
    listing = ctx.listing_cache.get(ref.table_id, token)
    if listing is not None:
        audit.note(listing_cache="hit")
        read = len(listing.keys)
    elif ctx.listing_cache.second_look(ref.table_id, token) and _may_fit(ctx, ref):
        with audit.collecting_extras() as building:  # the rows the store read count, no more
            listing = _built(ctx, ref, token)
        audit.note(listing_cache="built")
        read = int(building.get("rows_scanned", 0))
    else:
        return None
    test = key_test(ref, key_range)
    positions = list(range(len(listing.keys))) if test is None else passing(listing.keys, test)
    audit.count(rows_scanned=read, rows_matched=len(positions))
    return listing, positions


def _may_fit(ctx: CatalogContext, ref: TableRef) -> bool:
    """Whether the table's listing is expected to fit the cache: its rows (counted up to what
    could fit) times the size of its first partition. A table found too large is remembered."""
    cache = ctx.listing_cache
    if not cache.may_keep(ref.table_id):
        return False
    count_range = ctx.capabilities.count_range
    if count_range is None:
        return False
    start, stop = layout.partition_range(ref.table_id)
    first = next(iter(ctx.store.scan(layout.PARTITIONS, start, stop, limit=1)), None)
    if first is None:
        return True
    per_partition = _PER_PARTITION + sum(map(len, first[1].values())) + len(first[0])
    most = cache.max_bytes // per_partition
    if count_range(layout.PARTITIONS, start, stop, limit=most + 1) > most:
        cache.too_large(ref.table_id)
        return False
    return True
