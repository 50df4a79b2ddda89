"""What every catalog service shares: the store, the warehouse, the clock, the write lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from metastore_server.catalog.listing_cache import ListingCache
from metastore_server.catalog.warehouse import Warehouse
from storage.port import StoragePort


def _now_seconds() -> int:
    return int(time.time())


@dataclass
class CatalogContext:
    """Shared state of the catalog services.

    ``write_lock`` serialises metadata changes inside this process, so that check-then-write
    sequences (create if absent, add partitions if not exists) are atomic for its clients.
    """

    store: StoragePort
    warehouse: Warehouse
    now: Callable[[], int] = _now_seconds
    #: Most partitions one request may return (HMS's hive.metastore.limit.partition.request);
    #: negative: no limit.
    partition_request_limit: int = -1
    #: Whole-table partition listings kept while the store is unchanged.
    listing_cache: ListingCache = field(default_factory=ListingCache)
    write_lock: threading.RLock = field(default_factory=threading.RLock)
