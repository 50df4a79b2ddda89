"""The event calls: the notification log (read, counted, INSERT and RELOAD events fired by a
client) and partition event marks. See ``docs/hms-api.md#notification-log``."""

from __future__ import annotations

from collections.abc import Callable

from metastore_server.api.area import Area
from metastore_server.api.arguments import object_name
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.catalog import EncodedStructs, EventNames, event_messages, expiry_seconds
from metastore_server.thrift_api import hms


def _event_filter(
    db: str | None, tables: list[str] | None, skip_types: list[str] | None
) -> Callable[[EventNames], bool] | None:
    """The test of Hive 4's notification filters (database, tables, event types to skip);
    None when there are none. Names compare case-insensitively, as HMS stores them lower."""
    if not (db or tables or skip_types):
        return None
    db_name = object_name(db) if db else None
    table_names = {object_name(t) for t in tables or []}
    skipped = set(skip_types or [])

    def wanted(event: EventNames) -> bool:
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


def _partition_values(insert: hms.InsertEventRequestData) -> list[str]:
    """The partition one of several INSERTs names (HMS: MetaException without one)."""
    if not insert.partitionVal:
        raise hms.MetaException(
            message="Partition values must be set when firing multiple insert events"
        )
    return list(insert.partitionVal)


class EventCalls(Area):
    """The notification log and partition event marks. Raises MetaException (a request
    without its required fields, an event kind clients may not fire), NoSuchObjectException
    (firing on a missing table or partition, another catalog), and for the marks
    UnknownTableException and InvalidPartitionException as HMS answers them."""

    # -- the notification log ----------------------------------------------------------------

    @thrift(rule=auth.API)
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

    @thrift(kept="wire", rule=auth.API)
    def get_current_notificationEventId(self) -> hms.CurrentNotificationEventId:  # noqa: N802
        """The id of the last event recorded."""
        return hms.CurrentNotificationEventId(eventId=self.catalog.ctx.events.current_id())

    @thrift(since="3", rule=auth.API)
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

    @thrift(decode="either_layout", rule=auth.on_tables("QUERY", (auth.INSERT,), auth.RQST))
    def fire_listener_event(self, rqst: hms.FireEventRequest) -> hms.FireEventResponse:
        """Record the events clients fire on an existing table or partition, as HMS 4: an
        INSERT (``insertData``), one INSERT per partition (``insertDatas``, each naming its
        ``partitionVal``) or a RELOAD (``refreshEvent``, Impala's refresh or invalidate);
        files carry ``#checksum`` when checksums are given. The answer lists the events' ids."""
        data = rqst.data if rqst is not None else None
        inserts = None
        if data is not None and data.insertData is not None:
            inserts = [(rqst.partitionVals, data.insertData)]
        elif data is not None and data.insertDatas is not None:
            inserts = [(_partition_values(one), one) for one in data.insertDatas]
        elif data is None or data.refreshEvent is None:
            raise hms.MetaException(message="Event type not currently supported: only INSERT")
        db, table_name = self.database_in(rqst.catName, rqst.dbName), object_name(rqst.tableName)
        table = self.catalog.tables.get(db, table_name).table
        now = self.catalog.ctx.now()
        if inserts is None:
            partition = self._partition(db, table_name, rqst.partitionVals)
            events = [event_messages.reload(table, partition, bool(data.refreshEvent), now)]
        else:
            events = [
                event_messages.insert(table, self._partition(db, table_name, values),
                                      _added_files(insert), now,
                                      replace=insert.replace is not False)
                for values, insert in inserts
            ]  # fmt: skip
        return hms.FireEventResponse(eventIds=self.catalog.ctx.events.record(events))

    def _partition(self, db: str, table: str, values: list[str] | None) -> hms.Partition | None:
        """The partition an event names (None for none; NoSuchObjectException if missing)."""
        if not values:
            return None
        return self.catalog.partition_reads.get(db, table, values)

    # -- partition event marks ---------------------------------------------------------------

    @thrift(rule=auth.on_tables("LOAD", (auth.INSERT,), auth.PARTS))
    def markPartitionForEvent(  # noqa: N802 (IDL name)
        self,
        db_name: str,
        tbl_name: str,
        part_vals: dict[str, str],
        eventType: int,  # noqa: N803
    ) -> None:
        """Mark a partition (by its key values) for an event, such as LOAD_DONE."""
        self.catalog.partition_events.mark(db_name, tbl_name, part_vals, eventType)

    @thrift(rule=auth.read(auth.PARTS))
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
