"""The server answers ``hive.metastore.notifications.add.thrift.objects`` true (older Impala
catalogds check it before following the log): every event a follower reads must then carry
its Thrift objects. Made by real calls, read from the log as a follower reads it."""

from __future__ import annotations

import json
from typing import Any

from metastore_server.thrift_api import hms

from .conftest import make_partition, make_table

#: The JSON fields holding a Thrift object that a follower reads, by event type.
OBJECT_FIELDS: dict[str, tuple[str, ...]] = {
    "CREATE_DATABASE": ("dbJson",),
    "DROP_DATABASE": ("dbJson",),
    "ALTER_DATABASE": ("dbObjBeforeJson", "dbObjAfterJson"),
    "CREATE_TABLE": ("tableObjJson",),
    "ALTER_TABLE": ("tableObjBeforeJson", "tableObjAfterJson"),
    "DROP_TABLE": ("tableObjJson",),
    "ADD_PARTITION": ("tableObjJson", "partitionListJson"),
    "ALTER_PARTITION": ("tableObjJson", "partitionObjBeforeJson", "partitionObjAfterJson"),
    "DROP_PARTITION": ("tableObjJson",),
    "INSERT": ("tableObjJson", "ptnObjJson"),
}


def _make_events(client: Any) -> None:
    """Create, alter, write to and drop a partitioned table in a database of its own."""
    database = hms.Database(name="objects", parameters={})
    client.create_database(database)
    database = client.get_database("objects")
    database.parameters = {"k": "v"}
    client.alter_database("objects", database)
    client.create_table(make_table("objects", "t", keys=[("p", "string")]))
    client.add_partition(make_partition("objects", "t", ["1"]))
    part = client.get_partition("objects", "t", ["1"])
    part.parameters = {**(part.parameters or {}), "k": "v"}
    client.alter_partition("objects", "t", part)
    client.fire_listener_event(hms.FireEventRequest(
        successful=True, dbName="objects", tableName="t", partitionVals=["1"],
        data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
            filesAdded=["file:/objects/f"]))))  # fmt: skip
    table = client.get_table("objects", "t")
    table.parameters = {**(table.parameters or {}), "k": "v"}
    client.alter_table("objects", "t", table)
    client.drop_partition("objects", "t", ["1"], False)
    client.drop_table("objects", "t", False)
    client.drop_database("objects", False, False)


def test_every_event_carries_the_objects_followers_read(client: Any) -> None:
    setting = "hive.metastore.notifications.add.thrift.objects"
    assert client.get_config_value(setting, "") == "true"
    first = client.get_current_notificationEventId().eventId
    _make_events(client)
    events = client.get_next_notification(
        hms.NotificationEventRequest(lastEvent=first, maxEvents=1000)).events  # fmt: skip
    mine = [e for e in events if e.dbName == "objects"]
    assert {e.eventType for e in mine} >= set(OBJECT_FIELDS)
    lacking = [f"{e.eventType}.{name}" for e in mine
               for name in OBJECT_FIELDS.get(e.eventType, ())
               if not json.loads(e.message or "{}").get(name)]  # fmt: skip
    assert lacking == []


def test_a_rename_without_a_storage_descriptor_keeps_the_old_place_in_its_event(
    client: Any,
) -> None:
    """``rename_partition`` with no ``sd`` takes the old one, and a managed partition's
    directory follows its new name: the event's before-image still names the old place."""
    client.create_database(hms.Database(name="renamed_sd", parameters={}))
    client.create_table(make_table("renamed_sd", "t", keys=[("p", "string")]))
    client.add_partition(make_partition("renamed_sd", "t", ["1"]))
    old_place = client.get_partition("renamed_sd", "t", ["1"]).sd.location
    first = client.get_current_notificationEventId().eventId
    moved = hms.Partition(values=["2"], dbName="renamed_sd", tableName="t", parameters={})
    client.rename_partition("renamed_sd", "t", ["1"], moved)
    new_place = client.get_partition("renamed_sd", "t", ["2"]).sd.location
    events = client.get_next_notification(
        hms.NotificationEventRequest(lastEvent=first, maxEvents=100)).events  # fmt: skip
    (altered,) = [e for e in events if e.eventType == "ALTER_PARTITION"]
    message = json.loads(altered.message)
    before, after = message["partitionObjBeforeJson"], message["partitionObjAfterJson"]
    assert new_place != old_place and new_place.endswith("/p=2")
    assert old_place in before and new_place not in before
    assert new_place in after
