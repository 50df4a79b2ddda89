"""Whole-table partition listings kept in memory while the store is unchanged.

Clients list all partitions of the same big tables again and again (every query that cannot
prune, every SHOW PARTITIONS). A listing is kept with the store's change token
(``StoragePort.change_token``) read before it was built; any commit to the store, by anyone,
changes the token and the listing is built again on the next request. Stores that cannot give a
token (HBase) are never cached. Memory is bounded: least recently used listings go first.

A listing keeps each partition's row key too, so that a filter over the whole table (one a key
range cannot narrow, such as ``region in (...)``) is answered from it: the residual is tested
on the keys (each distinct value once) and the matching partitions are taken in name order,
without reading the store. A table whose listing was once too large to keep is remembered, so
that filters on it read the store instead of building a listing that would be thrown away.

A table's names alone (read by ``get_partition_names``) are kept under a key of their own
(``("names", table id)``) as a listing without stored partitions or keys.

Look-ups (hit or miss) and the bytes kept are counted in the metrics (``metastore_server.metrics``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from metastore_server import metrics

DEFAULT_MAX_BYTES = 256 * 1024 * 1024

#: A listing's key: its table's id (the whole listing), or ("names", id) (its names alone).
Key = int | tuple[str, int]


@dataclass(frozen=True)
class Listing:
    """Every partition of one table sorted by name: names (UTF-8), stored encodings and row
    keys (in the same order; empty in a listing built not to be kept)."""

    names: list[bytes]
    blobs: list[bytes]
    keys: list[bytes]
    #: What calls derive from the whole listing and keep with it (the names as they go to the
    #: wire: ``EncodedNames``), made by the first call that needs it.
    memo: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        """Bytes held (about)."""
        held = sum(map(len, self.names)) + sum(map(len, self.blobs)) + sum(map(len, self.keys))
        # + the names' wire form, which a names listing may keep with it (``memo``)
        return held + sum(map(len, self.names)) + 154 * len(self.names)


#: Tables remembered as too large to keep, or by the token of their last filter (the oldest
#: forgotten first).
_TOO_LARGE_REMEMBERED = 4096


class ListingCache:
    """Listings by table id, valid for one change token; thread-safe, LRU, bounded in bytes."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Key, tuple[int, Listing, int]] = OrderedDict()
        self._bytes = 0
        self._too_large: OrderedDict[Key, None] = OrderedDict()
        self._looks: OrderedDict[int, int] = OrderedDict()
        self._lock = threading.Lock()

    def second_look(self, table_id: int, token: int) -> bool:
        """Whether the previous call of this for the table saw the same token (the store is
        unchanged since then); the token is noted for the next call."""
        with self._lock:
            previous = self._looks.pop(table_id, None)
            self._looks[table_id] = token
            while len(self._looks) > _TOO_LARGE_REMEMBERED:
                self._looks.popitem(last=False)
            return previous == token

    def may_keep(self, table_id: int) -> bool:
        """False when a listing of this table was too large to keep the last time one was
        offered (building one only to answer a filter would then be wasted)."""
        with self._lock:
            return table_id not in self._too_large

    def too_large(self, table_id: int) -> None:
        """Remember that this table's listing would not be kept (found without building it)."""
        with self._lock:
            self._remember_too_large(table_id)

    def _remember_too_large(self, table_id: Key) -> None:
        self._too_large[table_id] = None
        self._too_large.move_to_end(table_id)
        while len(self._too_large) > _TOO_LARGE_REMEMBERED:
            self._too_large.popitem(last=False)

    def get(self, table_id: Key, token: int) -> Listing | None:
        """The listing of a table built under ``token``, or None."""
        found = None
        with self._lock:
            entry = self._entries.get(table_id)
            if entry is not None and entry[0] == token:
                self._entries.move_to_end(table_id)
                found = entry[1]
        metrics.listing_cache_lookup(found is not None)
        return found

    def put(self, table_id: Key, token: int, listing: Listing) -> None:
        """Keep a listing built under ``token`` (too large ones are not kept)."""
        size = listing.size
        with self._lock:
            before = self._bytes
            old = self._entries.pop(table_id, None)
            if old is not None:
                self._bytes -= old[2]
            if size > self.max_bytes:
                self._remember_too_large(table_id)
            else:
                self._too_large.pop(table_id, None)
                self._entries[table_id] = (token, listing, size)
                self._bytes += size
                while self._bytes > self.max_bytes:
                    _, (_, _, dropped) = self._entries.popitem(last=False)
                    self._bytes -= dropped
            change = self._bytes - before
        if change:
            metrics.listing_cache_bytes(change)
