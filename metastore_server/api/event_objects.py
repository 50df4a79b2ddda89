"""Whether this server's notification messages carry the Thrift objects event followers read
(Hive's ``hive.metastore.notifications.add.thrift.objects``, which older Impala catalogds check
before following the log): found out by making the events on a scratch store through the
handler (the same code that serves clients) and reading their messages, once per process.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from metastore_server.thrift_api import hms

#: The JSON fields holding a Thrift object (TJSON) that a follower reads, by event type.
OBJECT_FIELDS: dict[str, tuple[str, ...]] = {
    "CREATE_DATABASE": ("dbJson",),
    "DROP_DATABASE": ("dbJson",),
    "ALTER_DATABASE": ("dbObjAfterJson",),
    "CREATE_TABLE": ("tableObjJson",),
    "ALTER_TABLE": ("tableObjBeforeJson", "tableObjAfterJson"),
    "DROP_TABLE": ("tableObjJson",),
    "ADD_PARTITION": ("tableObjJson", "partitionListJson"),
    "ALTER_PARTITION": ("tableObjJson", "partitionObjBeforeJson", "partitionObjAfterJson"),
    "DROP_PARTITION": ("tableObjJson",),
    "INSERT": ("tableObjJson",),
}


def lacking_objects(events: list[hms.NotificationEvent]) -> list[str]:
    """``TYPE.field`` of each object a follower reads that an event's message lacks."""
    lacking = []
    for event in events:
        body = json.loads(event.message or "{}")
        for name in OBJECT_FIELDS.get(event.eventType, ()):
            if not body.get(name):
                lacking.append(f"{event.eventType}.{name}")
    return lacking


@functools.cache
def events_carry_objects() -> bool:
    """Whether every event a follower reads carries its objects (see the module)."""
    with tempfile.TemporaryDirectory(prefix="event-objects-") as scratch:
        events = _scratch_events(Path(scratch))
    made = {event.eventType for event in events}
    return set(OBJECT_FIELDS) - {"ALTER_DATABASE"} <= made and not lacking_objects(events)


def _scratch_events(scratch: Path) -> list[hms.NotificationEvent]:
    """The events of creating, altering, writing to and dropping a partitioned table."""
    from metastore_server.api.handler import MetastoreHandler  # the handler imports this area
    from metastore_server.catalog.data.operations import DataOperations
    from metastore_server.catalog.data.warehouse import Warehouse
    from metastore_server.catalog.facade import Catalog
    from metastore_server.server.store_url import open_store

    catalog = Catalog(
        open_store(f"sqlite:///{scratch / 'probe.db'}"),
        Warehouse(scratch / "warehouse"),
        data=DataOperations(enabled=False),
    )
    try:
        handler = MetastoreHandler(catalog)
        _make_events(handler)
        request = hms.NotificationEventRequest(lastEvent=0, maxEvents=1000)
        return list(handler.get_next_notification(request).decode().events or [])
    finally:
        catalog.close()


def _make_events(handler: Any) -> None:  # noqa: ANN401 - the handler's Thrift methods
    sd = hms.StorageDescriptor(
        cols=[hms.FieldSchema(name="v", type="int")],
        serdeInfo=hms.SerDeInfo(serializationLib="x", parameters={}),
        parameters={},
    )
    database = hms.Database(name="probe", parameters={})
    handler.create_database(database)
    database.parameters = {"k": "v"}
    handler.alter_database("probe", database)
    table = hms.Table(dbName="probe", tableName="t", sd=sd, parameters={},
                      partitionKeys=[hms.FieldSchema(name="p", type="string")],
                      tableType="EXTERNAL_TABLE")  # fmt: skip
    handler.create_table(table)
    part = hms.Partition(dbName="probe", tableName="t", values=["1"], sd=sd, parameters={})
    handler.add_partition(part)
    part.parameters = {"k": "v"}
    handler.alter_partition("probe", "t", part)
    insert = hms.InsertEventRequestData(filesAdded=["file:/probe/f"])
    handler.fire_listener_event(hms.FireEventRequest(
        successful=True, data=hms.FireEventRequestData(insertData=insert),
        dbName="probe", tableName="t", partitionVals=["1"],
    ))  # fmt: skip
    stored = handler.get_table("probe", "t")
    stored.parameters = {**(stored.parameters or {}), "k": "v"}
    handler.alter_table("probe", "t", stored)
    handler.drop_partition("probe", "t", ["1"], False)
    handler.drop_table("probe", "t", False)
    handler.drop_database("probe", False, False)
