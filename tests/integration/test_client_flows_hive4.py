"""Hive 4's ``HiveMetaStoreClient`` and ``Hive`` (HiveServer2, the CLI) against a real server over
a real socket, each reply read strictly as the client generated from HMS 4's IDL reads it
(``support.java_wire``): start-up, listing, ``getTable``, the partitions of a table as
``Hive.getPartitions`` asks for them (``get_partitions_ps_with_auth_req`` with ``partVals``
unset, and the three fields ``MetaStoreUtils.createThriftPartitionsReq`` always sets),
statistics, and the ACID reads of a query on a transactional table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.java_wire import HMS_4, JavaClient, RemoteError

from .client_flow_world import (
    ACQUIRED,
    DB,
    GROUPS,
    INSERT_ONLY_TABLES,
    NAMES,
    PART_PARAMS,
    READ_ONLY_TXN,
    SELECT,
    SHARED_READ,
    TABLE_LEVEL,
    TABLES,
    USER,
    params_sent,
)

LONG_MAX = 2**63 - 1


@pytest.fixture()
def hive(world) -> Iterator[JavaClient]:
    """A Hive 4 client's connection, opened as ``HiveMetaStoreClient.open`` opens it."""
    with JavaClient(world.host, world.port, HMS_4) as client:
        assert client.set_ugi(USER, GROUPS) == GROUPS  # unsecure mode: set_ugi first
        yield client


def partitions_request(**fields: object) -> dict[str, object]:
    """``Hive.getPartitions(table)`` as ``HiveMetaStoreClient`` sends it: no ``partVals``,
    the default catalog, ``maxParts`` -1 and what ``createThriftPartitionsReq`` sets."""
    request = {"dbName": DB, "tblName": "events", "catName": "hive", "maxParts": -1,
               "userName": USER, "groupNames": GROUPS, "skipColumnSchemaForPartition": False,
               "includeParamKeyPattern": "", "excludeParamKeyPattern": ""}  # fmt: skip
    request.update(fields)
    return request


def test_start_up_and_listing(hive: JavaClient) -> None:
    hive.get_all_functions()  # Hive.registerAllFunctionsOnce: answers, whatever the list
    assert {"default", DB} <= set(hive.get_databases("@hive#"))
    database = hive.get_database_req({"name": DB, "catalogName": "hive"})
    assert (database.name, database.catalogName) == (DB, "hive")
    assert database.locationUri
    assert hive.get_tables(f"@hive#{DB}", "*") == TABLES
    assert hive.get_all_tables(f"@hive#{DB}") == TABLES
    assert hive.get_tables_by_type(f"@hive#{DB}", "*", "VIRTUAL_VIEW") == ["v"]


def test_get_table(hive: JavaClient) -> None:
    capabilities = {"values": [INSERT_ONLY_TABLES]}
    table = hive.get_table_req({"dbName": DB, "tblName": "events", "catName": "hive",
                                "capabilities": capabilities}).table  # fmt: skip
    assert (table.dbName, table.tableName, table.catName) == (DB, "events", "hive")
    assert [k.name for k in table.partitionKeys] == ["ds", "hr"]
    assert [c.name for c in table.sd.cols] == ["id", "v"]
    acid = hive.get_table_req({"dbName": DB, "tblName": "acid", "catName": "hive",
                               "capabilities": capabilities}).table  # fmt: skip
    assert acid.parameters["transactional_properties"] == "insert_only"
    with pytest.raises(RemoteError) as missing:
        hive.get_table_req({"dbName": DB, "tblName": "nosuch", "catName": "hive"})
    assert missing.value.kind == "NoSuchObjectException"


def test_partitions_of_a_table_as_hive_lists_them(hive: JavaClient) -> None:
    parts = hive.get_partitions_ps_with_auth_req(partitions_request()).partitions
    assert [p.values for p in parts] == [n.replace("ds=", "").split("/hr=") for n in NAMES]
    for part in parts:
        assert [c.name for c in part.sd.cols] == ["id", "v"]
        assert part.sd.location.endswith("hr=" + part.values[1])
        assert params_sent(part) == PART_PARAMS
    names = hive.fetch_partition_names_req({"dbName": DB, "tblName": "events",
                                            "catName": "hive", "maxParts": -1})  # fmt: skip
    assert names == NAMES


def test_partition_request_fields_hive_sets(hive: JavaClient) -> None:
    def listed(**fields: object) -> list[Any]:
        return hive.get_partitions_ps_with_auth_req(partitions_request(**fields)).partitions

    assert len(listed(maxParts=2)) == 2
    assert len(listed(partVals=["2024-01-01", ""])) == 3  # Hive.getPartitions(tbl, spec)
    assert len(listed(partVals=["", ""])) == 4  # every value unspecified: all
    assert len(listed(partVals=["2024-01-02"])) == 1  # leading values only
    skipped = listed(skipColumnSchemaForPartition=True)
    assert [p.sd.cols for p in skipped] == [[]] * 4
    only = listed(includeParamKeyPattern="impala.%", excludeParamKeyPattern="%Version")
    assert [p.parameters for p in only] == [{}] * 4
    some = listed(includeParamKeyPattern="%s", excludeParamKeyPattern="spark%")
    assert [params_sent(p) for p in some] == [{"numRows": "10"}] * 4
    with pytest.raises(RemoteError, match=r"keys \[\], values \[\]") as empty:
        listed(partVals=[])  # an empty list is an error, as in HMS
    assert empty.value.kind == "MetaException"
    with pytest.raises(RemoteError) as missing:
        listed(tblName="nosuch")
    assert missing.value.kind == "NoSuchObjectException"


def test_statistics(hive: JavaClient) -> None:
    request = {"dbName": DB, "tblName": "events", "colNames": ["id"], "catName": "hive",
               "engine": "hive"}  # fmt: skip
    (stats,) = hive.get_table_statistics_req(request).tableStats
    assert (stats.colName, stats.statsData.longStats.highValue) == ("id", 99)
    by_part = hive.get_partitions_statistics_req({**request, "partNames": NAMES}).partStats
    assert sorted(by_part) == NAMES
    assert [by_part[n][0].statsData.longStats.lowValue for n in NAMES] == [0, 1, 2, 3]
    aggregate = hive.get_aggr_stats_for({**request, "partNames": NAMES})
    assert aggregate.partsFound == 4
    assert aggregate.colStats[0].statsData.longStats.highValue == 13


def test_acid_reads_of_a_query(hive: JavaClient) -> None:
    (txn,) = hive.open_txns({"num_txns": 1, "user": USER, "hostname": "hs2",
                             "agentInfo": "hive-query"}).txn_ids  # fmt: skip
    snapshot = hive.get_open_txns_req({"excludeTxnTypes": [READ_ONLY_TXN]})
    assert txn in snapshot.open_txns and snapshot.txn_high_water_mark >= txn
    others = [t for t in snapshot.open_txns if t != txn]
    minimum = min(others, default=LONG_MAX)
    valid_txns = f"{snapshot.txn_high_water_mark}:{minimum}:{','.join(map(str, others))}:"
    (ids,) = hive.get_valid_write_ids({"fullTableNames": [f"{DB}.acid"],
                                       "validTxnList": valid_txns}).tblValidWriteIds  # fmt: skip
    assert (ids.fullTableName, ids.writeIdHighWaterMark) == (f"{DB}.acid", 0)
    (written,) = hive.allocate_table_write_ids({"dbName": DB, "tableName": "acid",
                                                "txnIds": [txn]}).txnToWriteIds  # fmt: skip
    assert (written.txnId, written.writeId) == (txn, 1)
    component = {"type": SHARED_READ, "level": TABLE_LEVEL, "dbname": DB, "tablename": "acid",
                 "operationType": SELECT, "isTransactional": True}  # fmt: skip
    locked = hive.lock({"component": [component], "txnid": txn, "user": USER,
                        "hostname": "hs2", "agentInfo": "hive-query"})  # fmt: skip
    assert locked.state == ACQUIRED and locked.lockid > 0
    parts = hive.get_partitions_ps_with_auth_req(partitions_request(
        tblName="acid", validWriteIdList=f"{DB}.acid:1:{LONG_MAX}::", id=1)).partitions
    assert [p.values for p in parts] == [["2024-01-01"]]  # validWriteIdList and id ignored
    hive.commit_txn({"txnid": txn})
    assert txn not in hive.get_open_txns_req({"excludeTxnTypes": [READ_ONLY_TXN]}).open_txns


def test_every_partition_read_request_is_trimmed_as_asked(hive: JavaClient) -> None:
    """``createThriftPartitionsReq`` sets the three fields on each partition read request."""
    trim = {"skipColumnSchemaForPartition": True, "includeParamKeyPattern": "num%",
            "excludeParamKeyPattern": ""}  # fmt: skip
    table = {"dbName": DB, "tblName": "events", "catName": "hive"}
    answers = {
        "get_partitions_req": hive.get_partitions_req({**table, **trim}).partitions,
        "get_partitions_by_names_req": hive.get_partitions_by_names_req(
            {"db_name": DB, "tbl_name": "events", "names": NAMES, **trim}).partitions,
        "get_partitions_by_filter_req": hive.get_partitions_by_filter_req(
            {**table, "filter": 'ds >= "2024"', **trim}),
        "get_partitions_by_expr": hive.get_partitions_by_expr(
            {**table, "expr": b'ds >= "2024"', **trim}).partitions,
    }  # fmt: skip
    for call, parts in answers.items():
        assert len(parts) == 4, call
        assert [(p.sd.cols, p.parameters) for p in parts] == [([], {"numRows": "10"})] * 4, call
    untrimmed = hive.get_partitions_by_filter_req({**table, "filter": 'ds >= "2024"'})
    assert [params_sent(p) for p in untrimmed] == [PART_PARAMS] * 4
