"""The metastore calls of Trino's ``ThriftHiveMetastoreClient``, Flink's ``HiveCatalog`` and the
StarRocks and Doris ``HiveMetaClient``s against a real server over a real socket, each reply read
strictly as that client's generated Java code reads it (``support.java_wire``). Trino compiles
Hive master's IDL (``io.trino.hive:hive-thrift``); Flink is taken with its Hive 2.3 client;
StarRocks and Doris bundle Hive 3 clients, read here with HMS 4's IDL (Hive 3's structs are
HMS 4's without the fields 4 added, all optional)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.java_wire import HMS_2_3, HMS_4, JavaClient, RemoteError

from metastore_server.thrift_api import hms

from .client_flow_world import (
    ACQUIRED,
    DB,
    INSERT_ONLY_TABLES,
    NAMES,
    SHARED_READ,
    TABLE_LEVEL,
    TABLES,
    USER,
    assert_contiguous,
)


@pytest.fixture()
def connect(world) -> Iterator[Any]:
    """Opens connections of a generation's client; closes them at the end."""
    opened: list[JavaClient] = []

    def open_one(generation: str) -> JavaClient:
        opened.append(JavaClient(world.host, world.port, generation))
        return opened[-1]

    yield open_one
    for client in opened:
        client.close()


# --------------------------------------------------------------------------- Trino


def test_trino_metadata(connect) -> None:
    trino = connect(HMS_4)
    assert DB in trino.get_all_databases()
    assert trino.get_database(DB).name == DB
    assert trino.get_all_tables(DB) == TABLES
    assert trino.get_tables_by_type(DB, ".*", "VIRTUAL_VIEW") == ["v"]
    request = {"dbName": DB, "tblName": "events", "capabilities": {"values": [INSERT_ONLY_TABLES]}}
    table = trino.get_table_req(request).table
    assert [k.name for k in table.partitionKeys] == ["ds", "hr"]
    assert [f.name for f in trino.get_fields(DB, "events")] == ["id", "v"]
    assert trino.get_partition_names(DB, "events", -1) == NAMES
    assert trino.get_partition_names_ps(DB, "events", ["2024-01-02", ""], -1) == NAMES[3:]
    parts = trino.get_partitions_by_names(DB, "events", NAMES[:2])
    assert [p.values for p in parts] == [["2024-01-01", "0"], ["2024-01-01", "1"]]
    assert trino.get_partition(DB, "events", ["2024-01-01", "2"]).values[1] == "2"
    (stats,) = trino.get_table_statistics_req(
        {"dbName": DB, "tblName": "events", "colNames": ["id"]}).tableStats  # fmt: skip
    assert stats.statsData.longStats.numDVs == 98
    by_part = trino.get_partitions_statistics_req(
        {"dbName": DB, "tblName": "events", "colNames": ["id"], "partNames": NAMES}).partStats
    assert sorted(by_part) == NAMES
    assert trino.get_config_value("hive.metastore.warehouse.dir", "") != ""
    with pytest.raises(RemoteError) as missing:
        trino.get_table_req({"dbName": DB, "tblName": "nosuch"})
    assert missing.value.kind == "NoSuchObjectException"


def test_trino_acid_write(connect) -> None:
    trino = connect(HMS_4)
    (txn,) = trino.open_txns({"num_txns": 1, "user": USER, "hostname": "trino"}).txn_ids
    open_txns = trino.get_open_txns()  # before any HMS 3+ call on this connection
    assert txn in open_txns.open_txns and open_txns.abortedBits is not None
    (ids,) = trino.get_valid_write_ids(
        {"fullTableNames": [f"{DB}.acid"], "validTxnList": f"{txn}:{txn}:{txn}:"}
    ).tblValidWriteIds
    assert ids.fullTableName == f"{DB}.acid"
    (written,) = trino.allocate_table_write_ids(
        {"dbName": DB, "tableName": "acid", "txnIds": [txn]}).txnToWriteIds  # fmt: skip
    component = {"type": SHARED_READ, "level": TABLE_LEVEL, "dbname": DB, "tablename": "acid"}
    locked = trino.lock({"component": [component], "txnid": txn, "user": USER,
                         "hostname": "trino"})  # fmt: skip
    assert locked.state == ACQUIRED
    assert trino.check_lock({"lockid": locked.lockid}).state == ACQUIRED
    beat = trino.heartbeat_txn_range({"min": txn, "max": txn})
    assert (beat.aborted, beat.nosuch) == (set(), set())
    trino.add_dynamic_partitions({"txnid": txn, "writeid": written.writeId, "dbname": DB,
                                  "tablename": "acid", "partitionnames": ["ds=2024-01-01"],
                                  "operationType": 2})  # fmt: skip
    trino.commit_txn({"txnid": txn})


# --------------------------------------------------------------------------- Flink


def test_flink_hive_catalog_open_and_listing(connect) -> None:
    flink = connect(HMS_2_3)
    flink.set_ugi(USER, [])
    assert flink.get_database("default").name == "default"  # HiveCatalog.open checks it
    assert DB in flink.get_all_databases()
    assert flink.get_all_tables(DB) == TABLES
    assert flink.get_tables_by_type(DB, ".*", "VIRTUAL_VIEW") == ["v"]
    table = flink.get_table(DB, "events")
    assert (table.tableName, table.tableType) == ("events", "MANAGED_TABLE")
    assert flink.get_partition_names(DB, "events", -1) == NAMES
    assert flink.get_partition(DB, "events", ["2024-01-02", "0"]).values == ["2024-01-02", "0"]
    assert flink.get_functions(DB, "*") == []
    with pytest.raises(RemoteError) as missing:
        flink.get_database("nosuch")
    assert missing.value.kind == "NoSuchObjectException"


# --------------------------------------------------------------------------- StarRocks, Doris


def test_starrocks_hive_meta_client(connect) -> None:
    starrocks = connect(HMS_4)
    assert DB in starrocks.get_all_databases()
    assert starrocks.get_database(DB).name == DB
    assert starrocks.get_all_tables(DB) == TABLES
    table = starrocks.get_table_req({"dbName": DB, "tblName": "events", "catName": "hive",
                                     "capabilities": {"values": [INSERT_ONLY_TABLES]}}).table
    assert table.sd.location
    assert starrocks.get_partition_names(DB, "events", -1) == NAMES
    assert starrocks.get_partition_names_ps(DB, "events", ["2024-01-01", ""], -1) == NAMES[:3]
    found = starrocks.get_partitions_by_filter(DB, "events", 'ds = "2024-01-01" and hr > 0', -1)
    assert [p.values[1] for p in found] == ["1", "2"]
    assert starrocks.get_partition(DB, "events", ["2024-01-01", "0"]).sd.cols
    by_names = starrocks.get_partitions_by_names_req(
        {"db_name": DB, "tbl_name": "events", "names": NAMES[2:]}).partitions  # fmt: skip
    assert [p.values for p in by_names] == [["2024-01-01", "2"], ["2024-01-02", "0"]]
    (stats,) = starrocks.get_table_statistics_req(
        {"dbName": DB, "tblName": "events", "colNames": ["id"], "engine": "hive"}).tableStats
    assert stats.colName == "id"


def test_starrocks_and_doris_follow_the_event_log(connect, world) -> None:
    follower = connect(HMS_4)
    start = follower.get_current_notificationEventId().eventId
    writer = world.client()
    writer.create_table(_table("followed"))
    writer.drop_table(DB, "followed", True)
    writer.close()
    batch = follower.get_next_notification({"lastEvent": start, "maxEvents": 100}).events
    assert_contiguous(batch, start)
    assert [(e.eventType, e.dbName, e.tableName) for e in batch] == [
        ("CREATE_TABLE", DB, "followed"), ("DROP_TABLE", DB, "followed")]  # fmt: skip
    assert all(e.messageFormat == "json-0.2" for e in batch)  # plain JSON: both read it
    later = follower.get_next_notification({"lastEvent": batch[-1].eventId, "maxEvents": 100})
    assert later.events == []


def _table(name: str) -> hms.Table:
    from .conftest import make_table

    return make_table(DB, name)
