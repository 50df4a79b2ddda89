"""The notification log: HMS's NOTIFICATION_LOG, a durable, ordered list of the changes made
through any server process on the store, read by replication tools and Impala
(``get_next_notification``, ``get_current_notificationEventId``).

Each event is one row of ``meta`` keyed by its id (``layout.event_key``). An event takes the id
one above the newest event row, written with a compare-and-set on that row's mark
(``layout.EVENT_MARK``) being absent: two writers (threads or processes, embedded or HBase)
never share an id, and an id is taken only once every smaller id has its row, so ids strictly
increase with no gaps and a reader that sees an event has seen every event before it. On the
embedded store a change's events are written in one transaction, each id's mark checked. With
``blocks`` (a store without atomic batches whose readers see a change's rows together) a
change's events take their ids as one block under one compare-and-set on the first id's mark;
each mark says how many ids of its block remain from its row, so the newest row written tells
the block's last id.
Retention (HMS's ``hive.metastore.event.db.listener.timetolive``) removes the events older than
the time to live, never the newest, and keeps their marks (a few bytes each), so that a writer
that stalled past the time to live still finds its id taken.

Events of metadata changes are written by the catalog inside its write lock, right after the
change they describe and before the call answers: an acknowledged change has its event. On the
embedded store they are in the change's store transaction (all or nothing); on HBase a server
killed between the two loses that one event (HMS with a non-transactional listener has the same
gap). Events of transactions and write ids join the compare-and-set of the change they describe
where the store can check several conditions in one ``mutate`` (:meth:`NotificationLog.rows`);
see ``txn.transactions`` for what holds on HBase.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

import structlog
from thriftpy2.thrift import TPayload, TType

from metastore_server.catalog.basics.bounded_cache import BoundedCache
from metastore_server.catalog.events import formats
from metastore_server.catalog.events.messages import Event, render, stored_payload
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Capabilities, Condition, Delete, Put, StoragePort
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes

log = structlog.get_logger(__name__)

#: HMS's default time to live of an event (hive.metastore.event.db.listener.timetolive).
DEFAULT_TTL_S = 86400.0
#: Attempts at taking an id before giving up (each lost one means another writer took it).
_APPEND_ATTEMPTS = retrying.EVENT_ID_ATTEMPTS
_EXPIRE_BATCH = 1000
_EXPIRE_BATCHES = 10
_MAX_ID = (1 << 63) - 1


class EventNames(Protocol):
    """What an event filter tests: a NotificationEvent, or its type and names alone."""

    @property
    def eventType(self) -> str | None: ...
    @property
    def dbName(self) -> str | None: ...
    @property
    def tableName(self) -> str | None: ...


class _EventNames(TPayload):
    """A NotificationEvent's id, type and names alone (what event filters test, and counts):
    decoding it skips the message."""

    eventId: int | None
    eventType: str | None
    dbName: str | None
    tableName: str | None

    thrift_spec = {
        1: (TType.I64, "eventId", False),
        3: (TType.STRING, "eventType", False),
        4: (TType.STRING, "dbName", False),
        5: (TType.STRING, "tableName", False),
    }
    default_spec = [("eventId", None), ("eventType", None), ("dbName", None), ("tableName", None)]


#: Bytes of events rendered when read (``ADD_PARTITION``'s JSON of every partition) kept.
RENDERED_BYTES = 64 * 1024 * 1024


class NotificationLog:
    """Appends and reads notification events in the store."""

    def __init__(
        self,
        store: StoragePort,
        now: Callable[[], int],
        ttl_s: float = DEFAULT_TTL_S,
        *,
        enabled: bool = True,
        message_format: str = formats.JSON,
        blocks: bool = False,
    ) -> None:
        #: Off: nothing is recorded (HMS without its database listener); reads see what
        #: was recorded before.
        self.enabled = enabled
        #: The format new events' messages are written in (``formats``; each event keeps its).
        self.message_format = message_format
        self._store = store
        self._now = now
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._next_expiry = 0.0
        #: The store's change token, where it has one: the newest id is kept with the token
        #: it was read under (``current_id``).
        capabilities = Capabilities.of(store)
        self._token = capabilities.change_token
        #: The newest event row's key found without reading the row, where the store can.
        self._last_key = capabilities.last_key
        #: A scan of the log that ends before an event still to be committed (HBase, whose
        #: changes commit in another order than they take their ids).
        self._until_pending = capabilities.scan_until_pending
        #: Whether a change's events are taken as one block under one condition
        #: (:meth:`_block`) on a store without atomic batches (where the newest row's mark is
        #: read): only where readers see a change's rows together (HBase's committed reads,
        #: which also offer ``scan_until_pending``). Without that, a block's rows landing in
        #: any order could show a reader a later event before an earlier one, which it would
        #: then skip; there each event is taken on its own.
        self._blocks = ((blocks or self._until_pending is not None)
                        and not store.atomic_batches and self._last_key is None)  # fmt: skip
        self._newest: tuple[int, int] | None = None
        #: Events whose message is rendered when read, as rendered (``_rendered_event``).
        self._rendered: BoundedCache[bytes] = BoundedCache(RENDERED_BYTES)

    # -- writing ---------------------------------------------------------------------------

    def record(self, events: Iterable[Event]) -> list[int]:
        """Append ``events`` in order, at consecutive ids taken at once; their ids (none when
        the log is off: ``events`` is not even iterated). Called inside the change's
        transaction: events that cannot be written raise, and the change is rolled back with
        them, as HMS's transactional listener does (a change is never kept without its
        events)."""
        if not self.enabled:
            return []
        batch = list(events)
        with self._lock:
            ids: list[int] = []
            if batch:
                try:
                    ids = self._append(batch)
                except Exception as exc:
                    log.error("notification_event_failed", event_type=batch[0].event_type,
                              events=len(batch), db=batch[0].db, table=batch[0].table,
                              error=f"{type(exc).__name__}: {exc}")  # fmt: skip
                    raise
            try:
                self._expire_if_due()
            except Exception as exc:  # noqa: BLE001 - retried at the next change
                log.warning("notification_expiry_failed", error=f"{type(exc).__name__}: {exc}")
        return ids

    def joins(self, conditions: int) -> bool:
        """Whether events can be written in one ``mutate`` with a change that checks
        ``conditions`` conditions of its own: always on a store with atomic batches; else
        (HBase: one condition per mutate) only when the change checks none."""
        return self._store.atomic_batches or conditions == 0

    def rows(self, events: Sequence[Event]) -> tuple[list[Put], list[Condition]]:
        """The rows that append ``events`` at the next ids, and the conditions under which
        they may be written, to join another change's ``mutate`` (see :meth:`joins`):
        all-or-nothing with it. When a condition fails (another writer took an id
        meanwhile), the caller reads again and retries (:meth:`_block`)."""
        return self._block(self.current_id() + 1, events)

    def _block(self, first: int, events: Sequence[Event]) -> tuple[list[Put], list[Condition]]:
        """The rows of ``events`` at ids ``first``, ``first + 1``, ... and their conditions.

        Each row's mark says how many ids of its block remain from it (1 for the last): the
        newest row written, whichever has landed, tells the block's last id
        (:meth:`current_id`). On a store with atomic batches each id's mark must be absent;
        on one without (HBase: one condition a ``mutate``), the first id's alone: taking it
        takes the block, and its other rows are written after it in the same change."""
        now = self._now()
        blocks = self._blocks
        puts: list[Put] = []
        conditions: list[Condition] = []
        for index, event in enumerate(events):
            event_id = first + index
            key = layout.event_key(event_id)
            mark = b"%d" % (len(events) - index) if blocks else b"1"
            row = {layout.EVENT_MARK: mark,
                   layout.OBJECT: to_bytes(event.to_thrift(event_id, now,
                                                           self.message_format))}  # fmt: skip
            if event.payload is not None:
                row[layout.EVENT_PAYLOAD] = stored_payload(event.payload)
            puts.append(Put(layout.META, key, row))
            if not blocks or index == 0:
                conditions.append(
                    Condition(layout.META, key, layout.EVENT_MARK, None, creates=True)
                )
        return puts, conditions

    def written(self) -> None:
        """Once events joined to a change are written: expire old ones if due (never raises)."""
        with self._lock:
            try:
                self._expire_if_due()
            except Exception as exc:  # noqa: BLE001 - retried at the next change
                log.warning("notification_expiry_failed", error=f"{type(exc).__name__}: {exc}")

    def _append(self, events: Sequence[Event]) -> list[int]:
        """Write ``events`` at the next ids: at once on a store with atomic batches or in
        blocks, else one after another (each a block of one)."""
        if self._store.atomic_batches or self._blocks or len(events) == 1:
            return self._append_block(events)
        return [event_id for event in events for event_id in self._append_block([event])]

    def _append_block(self, events: Sequence[Event]) -> list[int]:
        """Write ``events`` at the next ids, taken at once; again at the ids after the newest
        while other writers take them first."""
        first = self.current_id() + 1

        def attempt() -> list[int] | Lost:
            nonlocal first
            # The mark, not the event, decides: expiry removes the event and keeps the mark,
            # so an id once taken is never taken again, however long a writer stalled.
            puts, conditions = self._block(first, events)
            if self._store.mutate(puts, conditions):
                return list(range(first, first + len(events)))
            first = max(first, self.current_id()) + 1
            return LOST

        appended = retrying.race(retrying.EVENT_ID, attempt)
        if appended is not LOST:
            return appended
        raise hms.MetaException(
            message=f"Could not record a {events[0].event_type} event: other writers kept "
            f"taking the next event id ({_APPEND_ATTEMPTS} attempts)"
        )

    def _expire_if_due(self) -> None:
        now = self._now()
        if now < self._next_expiry:
            return
        self._next_expiry = now + min(self.ttl_s, 60.0)
        self.expire(now - self.ttl_s)

    def expire(self, before: float) -> int:
        """Remove events older than ``before`` (seconds), except the newest; how many. At
        most ``_EXPIRE_BATCHES`` batches a time (the rest go next time), so that the call
        that happens to run it is not held up for long."""
        newest = self.current_id()
        start, stop = layout.event_range()
        removed = 0
        for _ in range(_EXPIRE_BATCHES):
            old: list[bytes] = []
            rows = self._store.scan(layout.META, start, stop, limit=_EXPIRE_BATCH,
                                    columns=[layout.OBJECT])  # fmt: skip
            for key, row in rows:
                event = from_bytes(hms.NotificationEvent, row[layout.OBJECT])
                if event.eventId >= newest or event.eventTime >= before:
                    break
                old.append(key)
            if not old:
                return removed
            self._store.mutate([Delete(layout.META, key, [layout.OBJECT, layout.EVENT_PAYLOAD])
                                for key in old])  # fmt: skip
            removed += len(old)
            log.info("notification_events_expired", count=len(old), before=int(before))
            start = old[-1]
        return removed

    # -- reading ---------------------------------------------------------------------------

    def current_id(self) -> int:
        """The id of the newest event; 0 when there has been none. Read again only when the
        store has changed since the last read (on a store with a change token)."""
        token = self._token() if self._token is not None else None
        newest = self._newest
        if token is not None and newest is not None and newest[0] == token:
            return newest[1]
        found = 0
        start, stop = layout.event_range()
        if self._last_key is not None:  # (every event row holds its mark: expiry keeps it)
            last = self._last_key(layout.META, start, stop)
            found = 0 if last is None else layout.event_id(last)
        else:  # the newest row's mark: how many ids of its block remain from it
            for key, row in self._store.scan(layout.META, start, stop, reverse=True, limit=1,
                                             columns=[layout.EVENT_MARK]):  # fmt: skip
                found = layout.event_id(key) + _remaining(row.get(layout.EVENT_MARK)) - 1
        if token is not None:
            self._newest = (token, found)
        return found

    def next_stored(
        self,
        last_event: int,
        max_events: int | None,
        wanted: Callable[[EventNames], bool] | None = None,
    ) -> list[bytes]:
        """The events with ids above ``last_event`` in id order that ``wanted`` accepts (all
        when None), at most ``max_events`` when it is positive, as Thrift binary: each as it
        is stored, decoded and encoded again only where its message is rendered when read (a
        payload, ``render``). ``wanted`` is given the event's type and names alone (read
        without its message)."""
        limit = max_events if max_events and max_events > 0 else None
        found: list[bytes] = []
        for key, data, payload in self._stored_after(last_event, None if wanted else limit):
            if wanted is not None and not wanted(from_bytes(_EventNames, data)):
                continue
            if payload is not None:
                data = self._rendered_event(key, data, payload)
            found.append(data)
            if limit is not None and len(found) >= limit:
                break
        return found

    def count(
        self, after: int, up_to: int | None, wanted: Callable[[EventNames], bool]
    ) -> int:
        """How many events with ids in ``(after, up_to]`` ``wanted`` accepts."""
        counted = 0
        for _key, data, _payload in self._stored_after(after, None):
            event = from_bytes(_EventNames, data)  # no message decoded, none rendered
            if up_to is not None and (event.eventId or 0) > up_to:
                break
            counted += wanted(event)
        return counted

    def _stored_after(
        self, last_event: int | None, limit: int | None
    ) -> Iterator[tuple[bytes, bytes, bytes | None]]:
        """(row key, stored event, payload or None) of the events after ``last_event``, in id
        order."""
        start, stop = layout.event_range()
        if last_event is not None and last_event >= _MAX_ID:
            return
        if last_event is not None and last_event >= 0:
            start = layout.event_key(last_event + 1)
        columns = [layout.OBJECT, layout.EVENT_PAYLOAD]
        if self._until_pending is not None:  # (a follower waits for an event still to come)
            rows = self._until_pending(layout.META, start, stop, limit=limit, columns=columns)
        else:
            rows = self._store.scan(layout.META, start, stop, limit=limit, columns=columns)
        for key, row in rows:  # an expired event's mark holds no event: skipped
            data = row.get(layout.OBJECT)
            if data is not None:
                yield key, data, row.get(layout.EVENT_PAYLOAD)

    def _rendered_event(self, key: bytes, data: bytes, payload: bytes) -> bytes:
        """The stored event with its message rendered from its payload, as Thrift binary:
        rendered once, then kept (an event never changes, and its id is never used again) up
        to ``RENDERED_BYTES`` of rendered events, the least recently read going first."""
        kept = self._rendered.get(key)
        if kept is not None:
            return kept
        event = from_bytes(hms.NotificationEvent, data)
        event.message = _rendered(event, payload)
        rendered = to_bytes(event)
        if len(rendered) <= RENDERED_BYTES // 4:
            self._rendered.put(key, rendered, len(rendered))
        return rendered


def _rendered(event: hms.NotificationEvent, payload: bytes) -> str:
    """The message of an event stored with a payload, in the event's format."""
    return formats.encode(render(event.eventType, payload, event.eventTime), event.messageFormat)


def _remaining(mark: bytes | None) -> int:
    """The ids of its block a row's mark says remain from it (1: a block of its own)."""
    return int(mark) if mark and mark.isdigit() else 1
