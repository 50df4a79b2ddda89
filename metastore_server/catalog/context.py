"""What every catalog service shares: the store, the warehouse, data operations, the clock,
the write lock."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from metastore_server.catalog.data import DataOperations
from metastore_server.catalog.listing_cache import ListingCache
from metastore_server.catalog.notifications import DEFAULT_TTL_S, NotificationLog
from metastore_server.catalog.warehouse import Warehouse
from storage.port import StoragePort

#: How long a mark of a write in progress stands by default before it counts as a dead
#: server's (stores whose writers do not lock each other out).
WRITER_LEASE_S = 30.0


def _now_seconds() -> int:
    return int(time.time())


class WriteLock:
    """Reentrant lock serialising metadata changes among this process's threads and, when the
    store offers ``writers_lock`` (the embedded store), among the server processes sharing the
    store: the outermost holder in this process also holds the store's lock."""

    def __init__(self, store: StoragePort | None = None) -> None:
        self._local = threading.RLock()
        self._depth = 0
        self._store_lock: Callable[[], Any] | None = getattr(store, "writers_lock", None)
        self._held: contextlib.AbstractContextManager[Any] | None = None

    def __enter__(self) -> WriteLock:
        self._local.acquire()
        if self._depth == 0 and self._store_lock is not None:
            try:
                held = self._store_lock()
                held.__enter__()
            except BaseException:
                self._local.release()
                raise
            self._held = held
        self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._held is not None:
                held, self._held = self._held, None
                held.__exit__(None, None, None)
        finally:
            self._local.release()


@dataclass
class CatalogContext:
    """Shared state of the catalog services.

    ``write_lock`` serialises metadata changes inside this process (and among the processes
    sharing an embedded store), so that check-then-write sequences (create if absent, add
    partitions if not exists, a partition write and its timelines) are atomic for clients.
    """

    store: StoragePort
    warehouse: Warehouse
    #: Creating, deleting and moving managed data (every file system).
    data: DataOperations = field(default_factory=DataOperations)
    now: Callable[[], int] = _now_seconds
    #: Most partitions one request may return (HMS's hive.metastore.limit.partition.request);
    #: negative: no limit.
    partition_request_limit: int = -1
    #: Whole-table partition listings kept while the store is unchanged.
    listing_cache: ListingCache = field(default_factory=ListingCache)
    #: How long a mark of a write in progress (a partition claim, a timeline writer's mark)
    #: stands before it is taken for a dead server's, on stores whose writers do not lock each
    #: other out.
    writer_lease_s: float = WRITER_LEASE_S
    #: This server process's id in such marks.
    writer: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    #: How long notification events are kept (HMS's event.db.listener.timetolive).
    event_ttl_s: float = DEFAULT_TTL_S
    #: Whether changes are recorded in the notification log.
    notification_log: bool = True
    write_lock: WriteLock = field(init=False)
    #: The notification log; the services record an event inside the write lock, once the
    #: change it describes has committed.
    events: NotificationLog = field(init=False)

    def __post_init__(self) -> None:
        self.write_lock = WriteLock(self.store)
        self.events = NotificationLog(
            self.store, lambda: self.now(), self.event_ttl_s, enabled=self.notification_log
        )
