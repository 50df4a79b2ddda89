"""The event calls: the notification log (read, counted, an INSERT event fired by a client) and
partition event marks. See ``docs/hms-api.md#notification-log``."""

from __future__ import annotations

from collections.abc import Callable

from metastore_server.api.area import Area
from metastore_server.api.arguments import object_name
from metastore_server.catalog.basics.encoded import EncodedStructs
from metastore_server.catalog.events import messages as event_messages
from metastore_server.catalog.objects.partition_marks import expiry_seconds
from metastore_server.thrift_api import hms


def _event_filter(
    db: str | None, tables: list[str] | None, skip_types: list[str] | None
) -> Callable[[hms.NotificationEvent], bool] | None:
    """The test of Hive 4's notification filters (database, tables, event types to skip);
    None when there are none. Names compare case-insensitively, as HMS stores them lower."""
    if not (db or tables or skip_types):
        return None
    db_name = object_name(db) if db else None
    table_names = {object_name(t) for t in tables or []}
    skipped = set(skip_types or [])

    def wanted(event: hms.NotificationEvent) -> bool:
        if event.eventType in skipped:
            return False
        if db_name is not None and (event.dbName or "").lower() != db_name:
            return False
        return not table_names or (event.tableName or "").lower() in table_names

    return wanted


def _added_files(insert: hms.InsertEventRequestData) -> list[str]:
    """The files an INSERT event added, each ``name#checksum`` where a checksum is given;
    MetaException when the counts differ."""
    files, sums = list(insert.filesAdded or []), insert.filesAddedChecksum
    if sums is None:
        return files
    if len(sums) != len(files):
        raise hms.MetaException(message=f"{len(files)} files added but {len(sums)} checksums given")
    return [f"{name}#{checksum}" if checksum else name
            for name, checksum in zip(files, sums, strict=True)]  # fmt: skip


class EventCalls(Area):
    """The notification log and partition event marks. Raises MetaException (a request
    without its required fields, an event kind clients may not fire), NoSuchObjectException
    (firing on a missing table or partition, another catalog), and for the marks
    UnknownTableException and InvalidPartitionException as HMS answers them."""

    # -- the notification log ----------------------------------------------------------------

    def get_next_notification(self, rqst: hms.NotificationEventRequest) -> EncodedStructs:
        """Events after ``lastEvent`` in order, at most ``maxEvents`` (when positive): a
        NotificationEventResponse whose events are passed through as stored."""
        if rqst is None or rqst.lastEvent is None:
            raise hms.MetaException(message="NotificationEventRequest needs lastEvent")
        wanted = _event_filter(rqst.dbName, rqst.tableNames, rqst.eventTypeSkipList)
        events = self.catalog.ctx.events.next_stored(rqst.lastEvent, rqst.maxEvents, wanted)
        return EncodedStructs(
            hms.NotificationEvent, events, within=(hms.NotificationEventResponse, 1)
        )

    def get_current_notificationEventId(self) -> hms.CurrentNotificationEventId:  # noqa: N802
        """The id of the last event recorded."""
        return hms.CurrentNotificationEventId(eventId=self.catalog.ctx.events.current_id())

    def get_notification_events_count(
        self, rqst: hms.NotificationEventsCountRequest
    ) -> hms.NotificationEventsCountResponse:
        """How many events of a database (and tables) follow ``fromEventId`` (up to
        ``toEventId``; at most ``limit``)."""
        if rqst is None or rqst.fromEventId is None or not rqst.dbName:
            raise hms.MetaException(
                message="NotificationEventsCountRequest needs fromEventId and dbName"
            )
        wanted = _event_filter(rqst.dbName, rqst.tableNames, None) or (lambda _event: True)
        counted = self.catalog.ctx.events.count(rqst.fromEventId, rqst.toEventId, wanted)
        if rqst.limit is not None and rqst.limit > 0:
            counted = min(counted, rqst.limit)
        return hms.NotificationEventsCountResponse(eventsCount=counted)

    def fire_listener_event(self, rqst: hms.FireEventRequest) -> hms.FireEventResponse:
        """Record an INSERT event (the only kind clients fire) on an existing table or
        partition; files carry ``#checksum`` when checksums are given."""
        insert = rqst.data.insertData if rqst is not None and rqst.data is not None else None
        if insert is None:
            raise hms.MetaException(message="Event type not currently supported: only INSERT")
        db, table_name = self.database_in(rqst.catName, rqst.dbName), object_name(rqst.tableName)
        table = self.catalog.tables.get(db, table_name).table
        key_values = None
        if rqst.partitionVals:
            partition = self.catalog.partition_reads.get(db, table_name, rqst.partitionVals)
            key_values = event_messages.key_values(table, partition.values)
        files = _added_files(insert)
        event = event_messages.insert(db, table_name, key_values, files, self.catalog.ctx.now())
        return hms.FireEventResponse(eventIds=self.catalog.ctx.events.record([event]))

    # -- partition event marks ---------------------------------------------------------------

    def markPartitionForEvent(  # noqa: N802 (IDL name)
        self,
        db_name: str,
        tbl_name: str,
        part_vals: dict[str, str],
        eventType: int,  # noqa: N803
    ) -> None:
        """Mark a partition (by its key values) for an event, such as LOAD_DONE."""
        self.catalog.partition_events.mark(db_name, tbl_name, part_vals, eventType)

    def isPartitionMarkedForEvent(  # noqa: N802 (IDL name)
        self,
        db_name: str,
        tbl_name: str,
        part_vals: dict[str, str],
        eventType: int,  # noqa: N803
    ) -> bool:
        """Whether a partition carries a mark for an event that has not expired."""
        expiry = expiry_seconds(self.settings.config_values)
        return self.catalog.partition_events.is_marked(
            db_name, tbl_name, part_vals, eventType, expiry
        )
