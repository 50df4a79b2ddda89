"""The notification log: an event for every change, HMS's event types and message fields, ids
that strictly increase with no gaps across server processes, retention by age."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.rpc import make_client as make_thrift_client
from thriftpy2.thrift import TApplicationException

from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_table
from .test_concurrency import two_servers_on_one_store


def events_after(conn, last: int, most: int | None = None) -> list[hms.NotificationEvent]:
    request = hms.NotificationEventRequest(lastEvent=last, maxEvents=most)
    return conn.get_next_notification(request).events


def partition(db: str, table: str, *values: str) -> hms.Partition:
    return hms.Partition(dbName=db, tableName=table, values=list(values),
                         sd=hms.StorageDescriptor(cols=[]), parameters={})  # fmt: skip


def test_every_change_has_its_event_in_order(start_server) -> None:
    conn = start_server().client()
    start = conn.get_current_notificationEventId().eventId
    assert start == 0  # the default database is made at start, as HMS makes it: no event
    create_db(conn, "ev")
    conn.create_table(make_table("ev", "t", keys=[("ds", "string")]))
    conn.add_partitions([partition("ev", "t", "1"), partition("ev", "t", "2")])
    altered = conn.get_partition("ev", "t", ["1"])
    altered.parameters["k"] = "v"
    conn.alter_partition("ev", "t", altered)
    renamed = conn.get_partition("ev", "t", ["2"])
    renamed.values = ["3"]
    conn.rename_partition("ev", "t", ["2"], renamed)
    table = conn.get_table("ev", "t")
    table.parameters["owner_team"] = "data"
    conn.alter_table("ev", "t", table)
    conn.fire_listener_event(hms.FireEventRequest(
        successful=True, dbName="ev", tableName="t", partitionVals=["1"],
        data=hms.FireEventRequestData(insertData=hms.InsertEventRequestData(
            filesAdded=["file:/w/ev.db/t/ds=1/part-0"], filesAddedChecksum=["c0"]))))  # fmt: skip
    conn.drop_partition("ev", "t", ["1"], True)
    conn.create_function(hms.Function(
        functionName="f", dbName="ev", className="com.example.F", ownerName="o",
        ownerType=hms.PrincipalType.USER, functionType=hms.FunctionType.JAVA, resourceUris=[],
    ))  # fmt: skip
    conn.drop_function("ev", "f")
    conn.drop_table("ev", "t", True)
    conn.drop_database("ev", True, True)

    events = events_after(conn, start)
    assert [e.eventType for e in events] == [
        "CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION", "ALTER_PARTITION", "ALTER_PARTITION",
        "ALTER_TABLE", "INSERT", "DROP_PARTITION", "CREATE_FUNCTION", "DROP_FUNCTION",
        "DROP_TABLE", "DROP_DATABASE",
    ]  # fmt: skip
    assert [e.eventId for e in events] == list(range(start + 1, start + 13))
    assert conn.get_current_notificationEventId().eventId == start + 12
    now = time.time()
    for event in events:
        assert event.messageFormat == "json-0.2"
        assert event.dbName == "ev"
        assert abs(event.eventTime - now) < 60
        message = json.loads(event.message)
        assert message["db"] == "ev" and message["server"] == "" and "timestamp" in message
    by_type = {e.eventType: json.loads(e.message) for e in events}
    assert [e.tableName for e in events[1:8]] == ["t"] * 7
    assert events[0].tableName is None

    created = json.loads(by_type["CREATE_TABLE"]["tableObjJson"])
    assert created["1"] == {"str": "t"} and created["2"] == {"str": "ev"}
    assert created["8"]["lst"][:2] == ["rec", 1]  # the partition key, as Thrift JSON
    added = by_type["ADD_PARTITION"]
    assert added["partitions"] == [{"ds": "1"}, {"ds": "2"}]
    assert [json.loads(p)["1"]["lst"] for p in added["partitionListJson"]] == [
        ["str", 1, "1"], ["str", 1, "2"]]  # fmt: skip
    rename = json.loads(events[4].message)
    assert rename["keyValues"] == {"ds": "2"}
    assert json.loads(rename["partitionObjAfterJson"])["1"]["lst"] == ["str", 1, "3"]
    first_alter = json.loads(events[3].message)
    assert json.loads(first_alter["partitionObjAfterJson"])["7"]["map"][3]["k"] == "v"
    altered_table = by_type["ALTER_TABLE"]
    after = json.loads(altered_table["tableObjAfterJson"])
    assert after["9"]["map"][3]["owner_team"] == "data"
    assert "owner_team" not in json.loads(altered_table["tableObjBeforeJson"])["9"]["map"][3]
    assert by_type["INSERT"]["files"] == ["file:/w/ev.db/t/ds=1/part-0#c0"]
    assert by_type["INSERT"]["partKeyVals"] == {"ds": "1"}
    assert by_type["DROP_PARTITION"]["partitions"] == [{"ds": "1"}]
    assert json.loads(by_type["CREATE_FUNCTION"]["functionObjJson"])["1"] == {"str": "f"}
    assert by_type["DROP_FUNCTION"]["functionName"] == "f"
    assert by_type["DROP_TABLE"]["table"] == "t"


def test_reading_in_pages_and_past_the_end(start_server) -> None:
    conn = start_server().client()
    for n in range(5):
        create_db(conn, f"page{n}")
    first = events_after(conn, 0, 2)
    assert [e.eventId for e in first] == [1, 2]
    rest = events_after(conn, first[-1].eventId)
    assert [e.eventId for e in rest] == [3, 4, 5]
    assert events_after(conn, 5) == []
    assert events_after(conn, 2**63 - 1) == []
    assert [e.eventId for e in events_after(conn, -1)] == [1, 2, 3, 4, 5]
    assert [e.eventId for e in events_after(conn, 0, 0)] == [1, 2, 3, 4, 5]  # 0: no limit


def test_a_refused_change_has_no_event(start_server) -> None:
    conn = start_server().client()
    create_db(conn, "refused")
    conn.create_table(make_table("refused", "t", keys=[("ds", "string")]))
    before = conn.get_current_notificationEventId().eventId
    with pytest.raises(hms.AlreadyExistsException):
        conn.create_table(make_table("refused", "t"))
    with pytest.raises(hms.InvalidObjectException):
        conn.add_partitions([partition("refused", "nope", "1")])
    with pytest.raises(hms.NoSuchObjectException):
        conn.drop_partition("refused", "t", ["9"], True)
    assert conn.get_current_notificationEventId().eventId == before


def test_insert_events_need_the_table_and_partition(start_server) -> None:
    conn = start_server().client()
    create_db(conn, "ins")
    conn.create_table(make_table("ins", "t"))

    def fire(table: str, values: list[str] | None, files: list[str]) -> None:
        data = hms.FireEventRequestData(insertData=hms.InsertEventRequestData(filesAdded=files))
        conn.fire_listener_event(hms.FireEventRequest(
            successful=True, data=data, dbName="ins", tableName=table, partitionVals=values,
        ))  # fmt: skip

    # The IDL declares no exceptions for this call: HMS's errors reach the client as
    # TApplicationException with the message.
    with pytest.raises(TApplicationException, match="ins.nope table not found"):
        fire("nope", None, ["f"])
    with pytest.raises(TApplicationException, match="Invalid partition key & values"):
        fire("t", ["9"], ["f"])
    with pytest.raises(TApplicationException, match="only INSERT"):
        conn.fire_listener_event(hms.FireEventRequest(successful=True, dbName="ins",
                                                      tableName="t", data=None))  # fmt: skip
    fire("t", None, ["file:/a", "file:/b"])
    event = events_after(conn, conn.get_current_notificationEventId().eventId - 1)[0]
    assert (event.eventType, event.tableName) == ("INSERT", "t")
    assert json.loads(event.message)["files"] == ["file:/a", "file:/b"]
    assert json.loads(event.message)["partKeyVals"] is None


def test_events_survive_a_restart_and_ids_go_on(start_server) -> None:
    first = start_server()
    conn = first.client()
    create_db(conn, "kept1")
    create_db(conn, "kept2")
    first.stop()
    second = start_server(storage=first.config.storage)
    conn = second.client()
    assert [e.dbName for e in events_after(conn, 0)] == ["kept1", "kept2"]
    create_db(conn, "kept3")
    assert conn.get_current_notificationEventId().eventId == 3


def test_old_events_expire_but_ids_never_go_back(start_server) -> None:
    conn = start_server(event_ttl=1.0).client()
    for n in range(3):
        create_db(conn, f"old{n}")
    time.sleep(2.2)
    create_db(conn, "new0")  # the first change after the time to live clears the old events
    remaining = events_after(conn, 0)
    assert [e.dbName for e in remaining] == ["new0"]
    assert remaining[0].eventId == 4
    time.sleep(2.2)
    conn.drop_database("new0", True, False)  # the newest event always stays
    remaining = events_after(conn, 0)
    assert [e.eventId for e in remaining] == [5]


def _write_events(endpoints, writers: int, per_writer: int) -> list[BaseException]:
    errors: list[BaseException] = []
    gate = threading.Barrier(writers)

    def write(index: int) -> None:
        host, port = endpoints[index % len(endpoints)]
        conn = make_client(host, port)
        try:
            gate.wait()
            for n in range(per_writer):
                create_db(conn, f"w{index}_{n}")
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def _assert_one_event_each(conn, writers: int, per_writer: int) -> None:
    events = events_after(conn, 0)
    total = writers * per_writer
    assert [e.eventId for e in events] == list(range(1, total + 1))
    names = sorted(e.dbName for e in events)
    assert names == sorted(f"w{i}_{n}" for i in range(writers) for n in range(per_writer))


def test_ids_across_two_servers_in_one_process(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    endpoints = [(first.host, first.port), (second.host, second.port)]
    assert _write_events(endpoints, 6, 10) == []
    _assert_one_event_each(first.client(), 6, 10)


def test_ids_across_two_server_processes(tmp_path: Path, monkeypatch) -> None:
    """Two server processes on one store (one SQLite file; one HBase double in the HBase pass),
    six writers at once: every event once, ids 1..n with no gap."""
    with two_servers_on_one_store(tmp_path, monkeypatch) as (a, b):
        assert _write_events([(a.host, a.port), (b.host, b.port)], 6, 8) == []
        conn = make_client(a.host, a.port)
        _assert_one_event_each(conn, 6, 8)
        conn.close()


def test_the_log_can_be_off(start_server) -> None:
    """--notification-log off: no events, as HMS without its database listener."""
    conn = start_server(notification_log="off").client()
    create_db(conn, "quiet")
    conn.create_table(make_table("quiet", "t", keys=[("ds", "string")]))
    conn.add_partitions([partition("quiet", "t", "1")])
    assert conn.get_current_notificationEventId().eventId == 0
    assert events_after(conn, 0) == []


def test_hive4_filters_and_counts(start_server) -> None:
    """Hive 4's server-side filters (database, tables, types to skip) and event counts."""
    conn = start_server().client()
    for db in ("fa", "fb"):
        create_db(conn, db)
        conn.create_table(make_table(db, "t1"))
        conn.create_table(make_table(db, "t2"))
    only_fa = conn.get_next_notification(hms.NotificationEventRequest(lastEvent=0, dbName="FA"))
    assert [(e.eventType, e.tableName) for e in only_fa.events] == [
        ("CREATE_DATABASE", None), ("CREATE_TABLE", "t1"), ("CREATE_TABLE", "t2")]  # fmt: skip
    tables = conn.get_next_notification(hms.NotificationEventRequest(
        lastEvent=0, maxEvents=1, dbName="fb", tableNames=["t2"]))  # fmt: skip
    assert [(e.dbName, e.tableName) for e in tables.events] == [("fb", "t2")]
    skipped = conn.get_next_notification(hms.NotificationEventRequest(
        lastEvent=0, eventTypeSkipList=["CREATE_TABLE"]))  # fmt: skip
    assert [e.dbName for e in skipped.events] == ["fa", "fb"]

    def count(**fields) -> int:
        request = hms.NotificationEventsCountRequest(**fields)
        return conn.get_notification_events_count(request).eventsCount

    assert count(fromEventId=0, dbName="fb") == 3
    assert count(fromEventId=3, dbName="fb") == 3  # ids 4..6 are fb's
    assert count(fromEventId=4, dbName="fb") == 2
    assert count(fromEventId=4, dbName="fb", toEventId=5) == 1
    assert count(fromEventId=0, dbName="fb", limit=2) == 2
    assert count(fromEventId=0, dbName="fb", tableNames=["t1"]) == 1


_HIVE3_INSERT_IDL = """
struct InsertEventRequestData {
    1: optional bool replace,
    2: required list<string> filesAdded,
    3: optional list<string> filesAddedChecksum,
}
union FireEventRequestData {
    1: InsertEventRequestData insertData,
}
struct FireEventRequest {
    1: required bool successful,
    2: required FireEventRequestData data,
    3: optional string dbName,
    4: optional string tableName,
    5: optional list<string> partitionVals,
}
struct FireEventResponse {
    1: list<i64> eventIds,
}
service ThriftHiveMetastore {
    FireEventResponse fire_listener_event(1: FireEventRequest rqst)
}
"""


def test_an_insert_event_from_a_hive3_client(start_server, tmp_path: Path) -> None:
    """Hive 3+ numbers InsertEventRequestData's fields differently (replace, files,
    checksums); its files and checksums are read as such, and Hive 4 gets the event's id."""
    idl = tmp_path / "hive3_insert.thrift"
    idl.write_text(_HIVE3_INSERT_IDL)
    hive3 = thriftpy2.load(str(idl), module_name="hive3_insert_thrift")
    server = start_server()
    conn = server.client()
    create_db(conn, "h3")
    conn.create_table(make_table("h3", "t"))
    client = make_thrift_client(hive3.ThriftHiveMetastore, server.host, server.port,
                                timeout=30000)  # fmt: skip
    data = hive3.FireEventRequestData(insertData=hive3.InsertEventRequestData(
        replace=False, filesAdded=["file:/a", "file:/b"], filesAddedChecksum=["c1", "c2"]))
    answer = client.fire_listener_event(hive3.FireEventRequest(
        successful=True, data=data, dbName="h3", tableName="t"))  # fmt: skip
    event = events_after(conn, answer.eventIds[0] - 1)[0]
    assert event.eventType == "INSERT"
    assert json.loads(event.message)["files"] == ["file:/a#c1", "file:/b#c2"]


def test_a_big_add_is_split_over_several_events(start_server) -> None:
    """ADD_PARTITION messages stay below 1 MiB (an HBase cell holds 10 MB): 300 partitions of
    about 5 KB each go into two events that together name every partition once."""
    conn = start_server().client()
    create_db(conn, "big")
    conn.create_table(make_table("big", "t", keys=[("ds", "string")]))
    start = conn.get_current_notificationEventId().eventId
    parts = [partition("big", "t", f"{n:04d}") for n in range(300)]
    for part in parts:
        part.parameters = {"note": "x" * 5000}
    conn.add_partitions(parts)
    events = events_after(conn, start)
    assert [e.eventType for e in events] == ["ADD_PARTITION", "ADD_PARTITION"]
    assert all(len(e.message) < (1 << 20) + 100_000 for e in events)
    named = [p["ds"] for e in events for p in json.loads(e.message)["partitions"]]
    assert named == [f"{n:04d}" for n in range(300)]


def test_a_change_whose_event_cannot_be_written_is_undone(start_server) -> None:
    """As HMS's transactional listener: an event that cannot be written fails its change,
    which is rolled back (a change is never kept without its event)."""
    server = start_server()
    conn = server.client()
    log = server.server._processor._handler.catalog.ctx.events
    append = log._append

    def broken(_event) -> int:
        raise OSError("the store went away")

    create_db(conn, "evfail")
    first = conn.get_current_notificationEventId().eventId
    log._append = broken
    with pytest.raises(hms.MetaException, match="the store went away"):
        conn.create_table(make_table("evfail", "t"))
    assert conn.get_all_tables("evfail") == []
    assert conn.get_current_notificationEventId().eventId == first
    log._append = append
    conn.create_table(make_table("evfail", "t"))
    assert conn.get_current_notificationEventId().eventId == first + 1


def test_a_renamed_table_has_its_event_under_the_new_name(start_server) -> None:
    """As HMS: ALTER_TABLE of a rename is recorded under the table's new name (its message
    keeps the name before the change), so a reader following the new name sees it."""
    conn = start_server().client()
    create_db(conn, "evr")
    conn.create_table(make_table("evr", "old"))
    start = conn.get_current_notificationEventId().eventId
    table = conn.get_table("evr", "old")
    table.tableName = "new"
    conn.alter_table("evr", "old", table)
    (event,) = events_after(conn, start)
    assert (event.eventType, event.dbName, event.tableName) == ("ALTER_TABLE", "evr", "new")
    message = json.loads(event.message)
    assert (message["db"], message["table"]) == ("evr", "old")
    assert json.loads(message["tableObjAfterJson"])["1"]["str"] == "new"


def test_a_partition_event_is_rendered_once_and_read_alike(start_server, monkeypatch) -> None:
    """An ADD_PARTITION event's message (rendered from its stored partitions when read) is
    rendered at its first read and kept: later reads answer the same bytes."""
    from metastore_server.catalog.events import log as event_log

    rendered = []
    render = event_log.render

    def counted(*args):  # noqa: ANN002, ANN202
        rendered.append(args[0])
        return render(*args)

    monkeypatch.setattr(event_log, "render", counted)
    conn = start_server().client()
    create_db(conn, "evr")
    conn.create_table(make_table("evr", "t", keys=[("ds", "string")]))
    conn.add_partitions([partition("evr", "t", str(day)) for day in range(30)])
    first = events_after(conn, 0)
    again = events_after(conn, 0)
    assert first == again
    (added,) = [e for e in first if e.eventType == "ADD_PARTITION"]
    assert len(json.loads(added.message)["partitionListJson"]) == 30
    assert rendered == ["CREATE_TABLE", "ADD_PARTITION"]  # each once
    conn.close()
