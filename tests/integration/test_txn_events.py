"""Transaction, write id, catalog and data connector events in the notification log: HMS 3/4's
event types (``ALLOC_WRITE_ID_EVENT``, ``ACID_WRITE_EVENT``) and JSON message fields, in the
order of the changes, none while the log is off."""

from __future__ import annotations

import json
import threading

import pytest

from metastore_server.thrift_api import hms

from .conftest import ON_HBASE, create_db, make_table


def events_after(conn, last: int, **filters: object) -> list[hms.NotificationEvent]:
    request = hms.NotificationEventRequest(lastEvent=last, **filters)
    return conn.get_next_notification(request).events


def open_txns(conn, count: int = 1, **extra: object) -> list[int]:
    request = hms.OpenTxnRequest(num_txns=count, user="u", hostname="h", **extra)
    return conn.open_txns(request).txn_ids


def allocate(conn, db: str, table: str, *txn_ids: int) -> list[int]:
    request = hms.AllocateTableWriteIdsRequest(dbName=db, tableName=table, txnIds=list(txn_ids))
    return [t.writeId for t in conn.allocate_table_write_ids(request).txnToWriteIds]


def note(txnid: int, write_id: int, db: str, table: str, files: list[str],
         part: list[str] | None = None, sums: list[str] | None = None):  # fmt: skip
    return hms.WriteNotificationLogRequest(
        txnId=txnid, writeId=write_id, db=db, table=table, partitionVals=part,
        fileInfo=hms.InsertEventRequestData(filesAdded=files, filesAddedChecksum=sums))  # fmt: skip


def message(event: hms.NotificationEvent) -> dict:
    body = json.loads(event.message)
    assert body["server"] == "" and body["servicePrincipal"] == ""
    assert isinstance(body["timestamp"], int) and body["timestamp"] > 0
    assert event.messageFormat == "json-0.2"
    return body


def test_a_transaction_s_events_in_order(start_server) -> None:
    conn = start_server().client()
    create_db(conn, "tx")
    conn.create_table(make_table("tx", "t", keys=[("ds", "string")]))
    start = conn.get_current_notificationEventId().eventId
    first, second = open_txns(conn, 2)
    (write_id,) = allocate(conn, "tx", "T", first)
    assert allocate(conn, "tx", "t", first) == [write_id]  # known already: no event
    conn.add_write_notification_log(note(first, write_id, "tx", "t", ["f1", "f2"], sums=["c1"]))
    conn.add_write_notification_log_in_batch(hms.WriteNotificationLogBatchRequest(
        catalog="hive", db="tx", table="t",
        requestList=[note(first, write_id, "tx", "t", ["p1"], ["2024"])]))  # fmt: skip
    conn.commit_txn(hms.CommitTxnRequest(txnid=first))
    conn.abort_txn(hms.AbortTxnRequest(txnid=second))
    events = events_after(conn, start)
    assert [e.eventType for e in events] == [
        "OPEN_TXN",
        "ALLOC_WRITE_ID_EVENT",
        "ACID_WRITE_EVENT",
        "ACID_WRITE_EVENT",
        "COMMIT_TXN",
        "ABORT_TXN",
    ]
    assert [e.catName for e in events] == [None] * 6  # HMS's transactional listener: none
    assert [e.eventId for e in events] == list(range(start + 1, start + 7))
    assert conn.get_current_notificationEventId().eventId == start + 6
    opened, alloc, write, part_write, commit, abort = events

    body = message(opened)
    assert (opened.dbName, opened.tableName) == (None, None)
    assert body["txnIds"] == [first, second]
    assert (body["fromTxnId"], body["toTxnId"]) == (first, second)

    body = message(alloc)
    assert (alloc.dbName, alloc.tableName) == ("tx", "t")
    assert (body["catName"], body["dbName"], body["tableName"]) == ("hive", "tx", "t")
    assert (body["txnIdList"], body["writeIdList"]) == ([first], [write_id])

    body = message(write)
    assert (write.dbName, write.tableName) == ("tx", "t")
    assert (body["txnid"], body["writeId"], body["database"], body["table"]) == (
        first, write_id, "tx", "t")  # fmt: skip
    assert body["partition"] is None and body["files"] == ["f1#c1", "f2"]
    assert json.loads(body["tableObjJson"])["1"]["str"] == "t"  # Thrift JSON: 1 is tableName
    assert body["partitionObjJson"] is None
    assert message(part_write)["partition"] == "ds=2024"
    assert message(part_write)["partitionObjJson"] is None  # no such partition

    # As HMS: the transaction alone, its lists null (a follower appends what
    # get_all_write_event_info answers to them: lists already filled would misalign).
    body = message(commit)
    assert body["txnid"] == first
    assert all(body[name] is None for name in (
        "writeIds", "databases", "tables", "partitions", "tableObjs", "partitionObjs", "files"))

    body = message(abort)
    assert body["txnid"] == second and body["dbsUpdated"] == []


def test_aborts_and_read_only_transactions(start_server) -> None:
    conn = start_server().client()
    start = conn.get_current_notificationEventId().eventId
    a, b = open_txns(conn, 2)
    allocate(conn, "default", "w", b)
    (read_only,) = open_txns(conn, txn_type=hms.TxnType.READ_ONLY)
    conn.commit_txn(hms.CommitTxnRequest(txnid=read_only))  # HMS 4: no event for read-only
    conn.abort_txns(hms.AbortTxnsRequest(txn_ids=[a, b]))
    events = events_after(conn, start)
    assert [e.eventType for e in events] == [
        "OPEN_TXN", "ALLOC_WRITE_ID_EVENT", "ABORT_TXN", "ABORT_TXN"]  # fmt: skip
    aborts = [message(e) for e in events[2:]]
    assert [(m["txnid"], m["dbsUpdated"]) for m in aborts] == [(a, []), (b, ["default"])]


def test_filters_and_counts_see_transaction_events(start_server) -> None:
    conn = start_server().client()
    create_db(conn, "fx")
    conn.create_table(make_table("fx", "t"))
    start = conn.get_current_notificationEventId().eventId
    (txnid,) = open_txns(conn)
    allocate(conn, "fx", "t", txnid)
    conn.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    skipped = events_after(conn, start, eventTypeSkipList=["OPEN_TXN", "COMMIT_TXN"])
    assert [e.eventType for e in skipped] == ["ALLOC_WRITE_ID_EVENT"]
    assert [e.eventType for e in events_after(conn, start, dbName="fx", tableNames=["T"])] == [
        "ALLOC_WRITE_ID_EVENT"]  # fmt: skip
    count = conn.get_notification_events_count(
        hms.NotificationEventsCountRequest(fromEventId=start, dbName="fx"))  # fmt: skip
    assert count.eventsCount == 1


def test_catalog_and_connector_events(start_server) -> None:
    conn = start_server().client()
    start = conn.get_current_notificationEventId().eventId
    conn.create_catalog(hms.CreateCatalogRequest(catalog=hms.Catalog(
        name="Cat1", description="d", locationUri="file:/tmp/cat1")))  # fmt: skip
    conn.alter_catalog(hms.AlterCatalogRequest(name="cat1", newCat=hms.Catalog(
        name="cat1", description="d2")))  # fmt: skip
    conn.drop_catalog(hms.DropCatalogRequest(name="cat1"))
    connector = hms.DataConnector(name="dc", type="mysql", url="jdbc:mysql://h/db")
    conn.create_dataconnector_req(hms.CreateDataConnectorRequest(connector=connector))
    conn.alter_dataconnector_req(
        hms.AlterDataConnectorRequest(
            connectorName="dc", newConnector=hms.DataConnector(name="dc", url="jdbc:mysql://h2/db")
        )
    )
    conn.drop_dataconnector_req(hms.DropDataConnectorRequest(connectorName="dc"))
    conn.drop_dataconnector_req(hms.DropDataConnectorRequest(connectorName="dc",
                                                             ifNotExists=True))  # fmt: skip
    events = events_after(conn, start)
    assert [e.eventType for e in events] == [
        "CREATE_CATALOG", "ALTER_CATALOG", "DROP_CATALOG",
        "CREATE_DATACONNECTOR", "ALTER_DATACONNECTOR", "DROP_DATACONNECTOR"]  # fmt: skip
    create, alter, drop, dc_create, dc_alter, dc_drop = (message(e) for e in events)
    assert create["catalog"] == "cat1" and drop["catalog"] == "cat1"
    assert json.loads(alter["catObjBeforeJson"])["2"]["str"] == "d"
    assert json.loads(alter["catObjAfterJson"])["2"]["str"] == "d2"
    assert dc_create["connector"] == "dc" and dc_drop["connector"] == "dc"
    assert json.loads(dc_alter["connectorObjAfterJson"])["3"]["str"] == "jdbc:mysql://h2/db"


@pytest.mark.parametrize("setting", ["off"])
def test_nothing_recorded_when_the_log_is_off(start_server, setting: str) -> None:
    conn = start_server(notification_log=setting).client()
    create_db(conn, "q")
    conn.create_table(make_table("q", "t"))
    a, b = open_txns(conn, 2)
    (write_id,) = allocate(conn, "q", "t", a)
    conn.add_write_notification_log(note(a, write_id, "q", "t", ["f"]))
    conn.commit_txn(hms.CommitTxnRequest(txnid=a))
    conn.abort_txn(hms.AbortTxnRequest(txnid=b))
    conn.create_catalog(hms.CreateCatalogRequest(catalog=hms.Catalog(
        name="c", locationUri="file:/tmp/c")))  # fmt: skip
    conn.create_dataconnector_req(
        hms.CreateDataConnectorRequest(
            connector=hms.DataConnector(name="d", type="mysql", url="jdbc:mysql://h/db")
        )
    )
    assert conn.get_current_notificationEventId().eventId == 0
    assert events_after(conn, 0) == []
    infos = conn.get_all_write_event_info(hms.GetAllWriteEventInfoRequest(txnId=a))
    assert [i.files for i in infos] == ["f"]  # the change itself stands


def test_concurrent_transactions_each_have_their_events(start_server) -> None:
    """Four clients opening and committing at once, with DDL between: one OPEN_TXN and one
    COMMIT_TXN per transaction, ids with no gap; on the embedded store (events in the same
    change as the compare-and-set) OPEN_TXN events follow the order the ids were handed out."""
    server = start_server()
    conn = server.client()
    start = conn.get_current_notificationEventId().eventId
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            mine = server.client()
            for i in range(5):
                (txnid,) = open_txns(mine)
                if i == 2:
                    create_db(mine, f"cc{n}")
                mine.commit_txn(hms.CommitTxnRequest(txnid=txnid))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    events = events_after(conn, start)
    assert [e.eventId for e in events] == list(range(start + 1, start + 1 + len(events)))
    opened = [json.loads(e.message)["txnIds"][0] for e in events if e.eventType == "OPEN_TXN"]
    committed = [json.loads(e.message)["txnid"] for e in events if e.eventType == "COMMIT_TXN"]
    assert sorted(opened) == sorted(committed) and len(set(opened)) == 20
    assert sum(e.eventType == "CREATE_DATABASE" for e in events) == 4
    if not ON_HBASE:
        assert opened == sorted(opened)


def test_a_lost_event_id_retries_the_whole_change(start_server, monkeypatch) -> None:
    """Another writer took the event id meanwhile (the newest id read stale once): on the
    embedded store the transactions' change and its event are one ``mutate``, so the change is
    not written either and the retry hands out the next transaction id, not one after it."""
    from metastore_server.catalog.events.log import NotificationLog

    conn = start_server().client()
    create_db(conn, "lost")
    (first,) = open_txns(conn)
    start = conn.get_current_notificationEventId().eventId
    real = NotificationLog.current_id
    stale = {"left": 1}

    def current_id(self: NotificationLog) -> int:
        if stale["left"]:
            stale["left"] -= 1
            return real(self) - 1  # an id already taken
        return real(self)

    monkeypatch.setattr(NotificationLog, "current_id", current_id)
    assert open_txns(conn) == [first + 1]
    assert stale["left"] == 0
    events = events_after(conn, start)
    assert [(e.eventId, e.eventType) for e in events] == [(start + 1, "OPEN_TXN")]
    assert json.loads(events[0].message)["txnIds"] == [first + 1]
