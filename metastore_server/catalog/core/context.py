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

from metastore_server.catalog.basics.changes import Announcer
from metastore_server.catalog.core.listing_cache import ListingCache
from metastore_server.catalog.data.deletions import Deletion
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.events import formats
from metastore_server.catalog.events.log import DEFAULT_TTL_S, NotificationLog
from metastore_server.storage.port import Capabilities, StoragePort

#: The kind of the store's undo notes that record a data move (``DataOperations.journal``).
MOVE_NOTE = "data-move"

#: How long a mark of a write in progress stands by default before it counts as a dead
#: server's (stores whose writers do not lock each other out).
WRITER_LEASE_S = 30.0


def _now_seconds() -> int:
    return int(time.time())


class WriteLock:
    """Reentrant lock serialising metadata changes among this process's threads and, when the
    store offers ``writers_lock`` (the embedded store), among the server processes sharing the
    store: the outermost holder in this process also holds the store's lock.

    The outermost holder's writes are also one transaction of the store (``transaction()``,
    which every store the catalog runs on offers: SQLite's on the embedded store, an intent
    on HBase): they commit when it releases the lock, or, when it leaves with an exception,
    none of them does and each of :attr:`on_rollback` is called (to forget what was kept in
    memory of them). So a call that answers an error leaves no change in the store."""

    def __init__(self, store: StoragePort) -> None:
        self._local = threading.RLock()
        self._depth = 0
        capabilities = Capabilities.of(store)
        if capabilities.transaction is None:
            raise ValueError(
                f"{type(store).__name__} offers no transactions: the catalog needs them to "
                f"keep each change all or nothing"
            )
        self._store_lock: Callable[[], Any] | None = capabilities.writers_lock
        self._transaction: Callable[[], Any] | None = capabilities.transaction
        self._held_lock: contextlib.AbstractContextManager[Any] | None = None
        self._held_transaction: contextlib.AbstractContextManager[Any] | None = None
        #: Called after a rollback (to forget what was kept in memory of its writes).
        self.on_rollback: list[Callable[[], None]] = []
        self._owner: int | None = None  # the thread holding the lock
        #: (action, undo) pairs waiting for the outermost holder's commit (see after_commit).
        self._after: list[tuple[Callable[[], None], Callable[[], None] | None]] = []

    def after_commit(
        self, action: Callable[[], None], *, undo: Callable[[], None] | None = None
    ) -> None:
        """Run ``action`` once this thread's writes have committed: at once when it does
        not hold the lock, else when its outermost holder lets go (after the store's locks);
        when they roll back instead, run ``undo`` (if any). For what must not happen before
        the metadata change is final: deleting dropped data, removing a moved copy."""
        if self._owner != threading.get_ident():
            action()
            return
        self._after.append((action, undo))

    def __enter__(self) -> WriteLock:
        self._local.acquire()
        if self._depth == 0:
            self._owner = threading.get_ident()
            try:
                if self._store_lock is not None:
                    self._held_lock = self._store_lock()
                    self._held_lock.__enter__()
                if self._transaction is not None:
                    self._held_transaction = self._transaction()
                    self._held_transaction.__enter__()
            except BaseException:
                self._held_transaction = None
                self._release_store_lock()
                self._owner = None
                self._local.release()
                raise
        self._depth += 1
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth:
            self._local.release()
            return
        after, self._after = self._after, []
        committed = False
        try:
            try:
                self._end_transaction(exc_type, exc, tb)
                committed = exc_type is None
            finally:
                self._release_store_lock()
        finally:
            self._owner = None
            self._local.release()
            for action, undo in after:
                if committed:
                    action()
                elif undo is not None:
                    undo()

    def _end_transaction(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Commit the outermost holder's writes, or roll them back when it leaves with an
        exception (or the commit fails, which raises); after a rollback, call on_rollback."""
        transaction, self._held_transaction = self._held_transaction, None
        if transaction is None:
            return
        rolled_back = exc_type is not None
        try:
            transaction.__exit__(exc_type, exc, tb)
        except BaseException:
            rolled_back = True
            raise
        finally:
            if rolled_back:
                for forget in self.on_rollback:
                    forget()

    def _release_store_lock(self) -> None:
        held, self._held_lock = self._held_lock, None
        if held is not None:
            held.__exit__(None, None, None)


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
    #: The format of new events' messages (``events.formats``).
    event_message_format: str = formats.JSON
    #: Whether creates and adds count fast statistics (HMS's hive.stats.autogather).
    stats_autogather: bool = True
    #: The store's optional capabilities (``storage.port.Capabilities``).
    capabilities: Capabilities = field(init=False)
    write_lock: WriteLock = field(init=False)
    #: The notification log; the services record an event inside the write lock, once the
    #: change it describes has committed.
    events: NotificationLog = field(init=False)
    #: The listeners told of every written change (``basics.changes``), registered at start
    #: by ``facade.Catalog``.
    changes: Announcer = field(default_factory=Announcer)

    def delete_after_commit(self, deletions: list[Deletion | None]) -> None:
        """Delete what a drop reserved once its change has committed (nothing, and the
        reservations given up, when it rolls back)."""
        data = self.data
        self.write_lock.after_commit(lambda: data.carry_out(deletions),
                                     undo=lambda: data.cancel(deletions))  # fmt: skip

    def __post_init__(self) -> None:
        self.capabilities = Capabilities.of(self.store)
        self.write_lock = WriteLock(self.store)
        note = self.capabilities.undo_note
        if note is not None:  # a move of a process that dies mid-change is undone (HBase)
            self.data.journal = lambda move: note(MOVE_NOTE, move.note())
        self.events = NotificationLog(
            self.store, lambda: self.now(), self.event_ttl_s, enabled=self.notification_log,
            message_format=self.event_message_format,
        )  # fmt: skip
