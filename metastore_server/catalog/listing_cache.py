"""Whole-table partition listings kept in memory while the store is unchanged.

Clients list all partitions of the same big tables again and again (every query that cannot
prune, every SHOW PARTITIONS). A listing is kept with the store's change token
(``StoragePort.change_token``) read before it was built; any commit to the store, by anyone,
changes the token and the listing is built again on the next request. Stores that cannot give a
token (HBase) are never cached. Memory is bounded: least recently used listings go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

DEFAULT_MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Listing:
    """Every partition of one table sorted by name: names (UTF-8) and stored encodings."""

    names: list[bytes]
    blobs: list[bytes]

    @property
    def size(self) -> int:
        """Bytes held (about)."""
        return sum(map(len, self.names)) + sum(map(len, self.blobs)) + 100 * len(self.names)


class ListingCache:
    """Listings by table id, valid for one change token; thread-safe, LRU, bounded in bytes."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[int, tuple[int, Listing, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, table_id: int, token: int) -> Listing | None:
        """The listing of a table built under ``token``, or None."""
        with self._lock:
            entry = self._entries.get(table_id)
            if entry is None or entry[0] != token:
                return None
            self._entries.move_to_end(table_id)
            return entry[1]

    def put(self, table_id: int, token: int, listing: Listing) -> None:
        """Keep a listing built under ``token`` (too large ones are not kept)."""
        size = listing.size
        with self._lock:
            old = self._entries.pop(table_id, None)
            if old is not None:
                self._bytes -= old[2]
            if size > self.max_bytes:
                return
            self._entries[table_id] = (token, listing, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, _, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped
