"""Spark's ``HiveClientImpl`` (its built-in Hive 2.3 client) and Impala's catalogd start-up
against a real server over a real socket, each reply read strictly as that client's generated
Java code reads it (``support.java_wire``): Spark with HMS 2.3's IDL on a connection that shows
nothing newer, Impala with HMS 4's, its event processor's configuration check first on a fresh
connection, then the event log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.java_wire import HMS_2_3, HMS_4, JavaClient, RemoteError

from metastore_server.thrift_api import hms

from .client_flow_world import (
    DB,
    GROUPS,
    INSERT_ONLY_TABLES,
    NAMES,
    PART_PARAMS,
    TABLES,
    USER,
    assert_contiguous,
    params_sent,
)
from .conftest import make_table

#: What Impala's catalogd checks before following the log (MetastoreEventsProcessor's
#: validateConfigs; older ones the first three keys of the 3.x validator besides dml.events).
IMPALA_KEYS = {"hive.metastore.dml.events": "true", "metastore.catalog.default": "hive"}
OLDER_IMPALA_KEYS = {"hive.metastore.alter.notifications.basic": "false",
                     "hive.metastore.notification.parameters.exclude.patterns": ""}  # fmt: skip
ADD_OBJECTS = "hive.metastore.notifications.add.thrift.objects"
#: The Thrift objects (TJSON) Impala reads from each event (its MetastoreEvents classes).
IMPALA_READS = {"CREATE_DATABASE": ["dbJson"], "DROP_DATABASE": ["dbJson"],
                "CREATE_TABLE": ["tableObjJson"], "DROP_TABLE": ["tableObjJson"],
                "ALTER_TABLE": ["tableObjBeforeJson", "tableObjAfterJson"],
                "ADD_PARTITION": ["tableObjJson", "partitionListJson"],
                "ALTER_PARTITION": ["partitionObjBeforeJson", "partitionObjAfterJson"],
                "DROP_PARTITION": ["tableObjJson", "partitions"],
                "INSERT": ["tableObjJson"]}  # fmt: skip


@pytest.fixture()
def spark(world) -> Iterator[JavaClient]:
    """Spark's Hive 2.3 client, opened as HiveMetaStoreClient 2.3 opens (set_ugi)."""
    with JavaClient(world.host, world.port, HMS_2_3) as client:
        assert client.set_ugi(USER, GROUPS) == GROUPS
        yield client


# --------------------------------------------------------------------------- Spark


def test_spark_catalog_and_tables(spark: JavaClient) -> None:
    assert spark.get_database("default").name == "default"  # databaseExists at catalog init
    assert {"default", DB} <= set(spark.get_databases("*"))
    assert spark.get_all_tables(DB) == TABLES
    assert spark.get_tables(DB, "*") == TABLES
    table = spark.get_table_req(
        {"dbName": DB, "tblName": "events", "capabilities": {"values": [INSERT_ONLY_TABLES]}}
    ).table
    assert [k.name for k in table.partitionKeys] == ["ds", "hr"]
    assert [c.name for c in table.sd.cols] == ["id", "v"]
    tables = spark.get_table_objects_by_name_req(
        {"dbName": DB, "tblNames": ["plain", "v"]}).tables  # fmt: skip
    assert sorted(t.tableName for t in tables) == ["plain", "v"]
    assert spark.get_table(DB, "plain").tableName == "plain"


def test_spark_partitions(spark: JavaClient) -> None:
    every = spark.get_partitions_with_auth(DB, "events", -1, USER, GROUPS)
    assert [f"ds={p.values[0]}/hr={p.values[1]}" for p in every] == NAMES
    assert all(params_sent(p) == PART_PARAMS and p.sd.cols for p in every)
    some = spark.get_partitions_ps_with_auth(DB, "events", ["2024-01-01", ""], -1, USER, GROUPS)
    assert len(some) == 3
    filtered = spark.get_partitions_by_filter(DB, "events", 'ds = "2024-01-02"', -1)
    assert [p.values for p in filtered] == [["2024-01-02", "0"]]
    assert spark.get_partition_names(DB, "events", -1) == NAMES
    one = spark.get_partition_with_auth(DB, "events", ["2024-01-01", "1"], USER, GROUPS)
    assert one.values == ["2024-01-01", "1"]
    assert len(spark.get_partitions(DB, "events", -1)) == 4
    with pytest.raises(RemoteError) as missing:
        spark.get_partition_names(DB, "nosuch", -1)  # 2.3's layout of the error
    assert missing.value.kind == "MetaException"
    with pytest.raises(RemoteError) as no_part:
        spark.get_partition_with_auth(DB, "events", ["2030-01-01", "0"], USER, GROUPS)
    assert no_part.value.kind == "NoSuchObjectException"


# --------------------------------------------------------------------------- Impala


def test_impala_catalogd_start_up(world) -> None:
    with JavaClient(world.host, world.port, HMS_4) as catalogd:
        for key, expected in {**IMPALA_KEYS, **OLDER_IMPALA_KEYS}.items():
            assert catalogd.get_config_value(key, "") == expected, key
        carries = catalogd.get_config_value(ADD_OBJECTS, "")
        start = catalogd.get_current_notificationEventId().eventId
        _make_events(world)
        batch = catalogd.get_next_notification({"lastEvent": start, "maxEvents": 1000}).events
    assert_contiguous(batch, start)
    for event in batch:
        assert event.catName == "hive" and event.dbName == "impala_db"
        assert event.messageFormat == "json-0.2"
        if event.eventType not in ("CREATE_DATABASE", "DROP_DATABASE"):
            assert event.tableName == "t"  # table events name their table (batching reads it)
    made = {e.eventType for e in batch}
    assert set(IMPALA_READS) <= made
    lacking = [f"{e.eventType}.{name}" for e in batch for name in IMPALA_READS.get(e.eventType, [])
               if not json.loads(e.message).get(name)]  # fmt: skip
    assert carries == ("false" if lacking else "true"), lacking


def test_keys_hms_refuses_and_the_2_3_rule(start_server) -> None:
    server = start_server()
    with JavaClient(server.host, server.port, HMS_4) as client:
        for key in ("javax.jdo.option.ConnectionPassword", "fs.defaultFS",
                    "metastore.dbaccess.ssl.truststore.password"):  # fmt: skip
            with pytest.raises(RemoteError) as refused:
                client.get_config_value(key, "x")
            assert refused.value.kind == "ConfigValSecurityException"
            assert refused.value.value.message == (
                f"For security reasons, the config key {key} cannot be accessed")  # fmt: skip
        warehouse = client.get_config_value("hive.metastore.warehouse.dir", "")
        assert client.get_config_value("metastore.warehouse.dir", "") == warehouse
        assert client.get_config_value("metastore.no.such.key", "fallback") == "fallback"
    fixed = start_server(hms_api="2.3")
    with JavaClient(fixed.host, fixed.port, HMS_2_3) as client:
        with pytest.raises(RemoteError) as refused:
            client.get_config_value("metastore.catalog.default", "")
        assert refused.value.kind == "ConfigValSecurityException"
        assert client.get_config_value("hive.metastore.dml.events", "") == "true"
    quiet = start_server(notification_log="off")
    with JavaClient(quiet.host, quiet.port, HMS_4) as client:
        assert client.get_config_value("hive.metastore.dml.events", "") == "false"


def _make_events(world: Any) -> None:  # noqa: ANN401
    """A database, a partitioned table, its partition, an insert, changes and drops."""
    client = world.client()
    client.create_database(hms.Database(name="impala_db", parameters={}))
    client.create_table(make_table("impala_db", "t", keys=[("ds", "string")]))
    part = hms.Partition(values=["1"], dbName="impala_db", tableName="t", parameters={},
                         sd=client.get_table("impala_db", "t").sd)  # fmt: skip
    part.sd.location = None
    client.add_partition(part)
    stored = client.get_partition("impala_db", "t", ["1"])
    stored.parameters = {**stored.parameters, "k": "v"}
    client.alter_partition("impala_db", "t", stored)
    insert = hms.InsertEventRequestData(filesAdded=["file:/x/f1"])
    client.fire_listener_event(hms.FireEventRequest(
        successful=True, data=hms.FireEventRequestData(insertData=insert),
        dbName="impala_db", tableName="t", partitionVals=["1"]))  # fmt: skip
    table = client.get_table("impala_db", "t")
    table.parameters = {**table.parameters, "k": "v"}
    client.alter_table("impala_db", "t", table)
    client.drop_partition("impala_db", "t", ["1"], True)
    client.drop_table("impala_db", "t", True)
    client.drop_database("impala_db", True, True)
    client.close()
