"""Column statistics per engine (HMS 4): hive's and impala's statistics of one column are kept
side by side, each read, aggregated and deleted by its engine (no engine meaning hive), and
moved or dropped together with their table or partition; rows stored before engines were told
apart read as hive's."""

from __future__ import annotations

import itertools

import pytest
from metastore_server.storage import layout
from metastore_server.storage.open import open_store
from metastore_server.storage.port import Put

from metastore_server.thrift_api import hms
from metastore_server.wire.serde import to_bytes

from .conftest import create_db, make_partition, make_table

_dbs = itertools.count()


def long_stats(low: int, high: int, nulls: int = 0) -> hms.ColumnStatisticsObj:
    data = hms.LongColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=high - low)
    return hms.ColumnStatisticsObj("l", "bigint", hms.ColumnStatisticsData(longStats=data))


def stats(
    db: str,
    part: str | None,
    obj: hms.ColumnStatisticsObj,
    engine: str | None = None,
    analyzed: int = 1700000000,
) -> hms.ColumnStatistics:
    desc = hms.ColumnStatisticsDesc(
        isTblLevel=part is None, dbName=db, tableName="t", partName=part, lastAnalyzed=analyzed
    )
    return hms.ColumnStatistics(statsDesc=desc, statsObj=[obj], engine=engine)


def table_request(db: str, table: str = "t", engine: str | None = None) -> hms.TableStatsRequest:
    return hms.TableStatsRequest(dbName=db, tblName=table, colNames=["l", "s"], engine=engine)


def parts_request(
    db: str, engine: str | None = None, table: str = "t", parts: tuple[str, ...] = ("ds=1", "ds=2")
) -> hms.PartitionsStatsRequest:
    return hms.PartitionsStatsRequest(
        dbName=db, tblName=table, colNames=["l"], partNames=list(parts), engine=engine
    )


@pytest.fixture()
def db(client) -> str:
    name = f"se{next(_dbs)}"
    create_db(client, name)
    client.create_table(
        make_table(name, "t", keys=[("ds", "string")], columns=[("l", "bigint"), ("s", "string")])
    )
    client.add_partitions([make_partition(name, "t", [v]) for v in ("1", "2")])
    return name


def test_engines_coexist_and_are_read_by_engine(client, db: str) -> None:
    hive, impala = long_stats(0, 10), long_stats(5, 50)
    assert client.update_table_column_statistics(stats(db, None, hive))  # no engine: hive
    assert client.update_table_column_statistics(stats(db, None, impala, "impala", 1800000000))
    assert client.get_table_statistics_req(table_request(db)).tableStats == [hive]
    assert client.get_table_statistics_req(table_request(db, engine="hive")).tableStats == [hive]
    got = client.get_table_statistics_req(table_request(db, engine="impala")).tableStats
    assert got == [impala]
    assert client.get_table_statistics_req(table_request(db, engine="spark")).tableStats == []
    one = client.get_table_column_statistics(db, "t", "l")  # 2.3's call: hive's
    assert one.statsObj == [hive] and one.statsDesc.lastAnalyzed == 1700000000
    assert one.engine == "hive"
    # A rewrite of one engine's leaves the other's.
    newer = long_stats(1, 11)
    client.update_table_column_statistics(stats(db, None, newer, "hive"))
    got = client.get_table_statistics_req(table_request(db, engine="impala")).tableStats
    assert got == [impala]
    assert client.get_table_statistics_req(table_request(db)).tableStats == [newer]


def test_partition_statistics_per_engine_and_their_aggregates(client, db: str) -> None:
    for part, low, high in (("ds=1", 1, 10), ("ds=2", -4, 7)):
        request = hms.SetPartitionsStatsRequest(colStats=[stats(db, part, long_stats(low, high))])
        assert client.update_partition_column_statistics_req(request).result
        impala = stats(db, part, long_stats(low * 100, high * 100, nulls=1))
        request = hms.SetPartitionsStatsRequest(colStats=[impala], engine="impala")
        assert client.update_partition_column_statistics_req(request).result
    hive_parts = client.get_partitions_statistics_req(parts_request(db)).partStats
    impala_parts = client.get_partitions_statistics_req(parts_request(db, "impala")).partStats
    assert hive_parts["ds=1"] == [long_stats(1, 10)]
    assert impala_parts["ds=1"] == [long_stats(100, 1000, nulls=1)]
    hive = client.get_aggr_stats_for(parts_request(db)).colStats[0].statsData.longStats
    assert (hive.lowValue, hive.highValue, hive.numNulls) == (-4, 10, 0)
    aggregate = client.get_aggr_stats_for(parts_request(db, "impala"))
    impala = aggregate.colStats[0].statsData.longStats
    assert aggregate.partsFound == 2
    assert (impala.lowValue, impala.highValue, impala.numNulls) == (-400, 1000, 2)
    assert client.get_aggr_stats_for(parts_request(db, "spark")).partsFound == 0
    # set_aggr_stats_for merges within the engine it names.
    merged = stats(db, "ds=1", long_stats(2000, 3000))
    client.set_aggr_stats_for(
        hms.SetPartitionsStatsRequest(colStats=[merged], needMerge=True, engine="impala")
    )
    impala = client.get_partitions_statistics_req(parts_request(db, "impala")).partStats["ds=1"]
    assert (impala[0].statsData.longStats.lowValue, impala[0].statsData.longStats.highValue) == (
        100,
        3000,
    )
    hive_one = client.get_partition_column_statistics(db, "t", "ds=1", "l")
    assert hive_one.statsObj == [long_stats(1, 10)]


def test_each_engine_is_deleted_separately(client, db: str) -> None:
    client.update_table_column_statistics(stats(db, None, long_stats(0, 10)))
    client.update_table_column_statistics(stats(db, None, long_stats(5, 50), "impala"))
    client.update_partition_column_statistics(stats(db, "ds=1", long_stats(0, 1)))
    client.update_partition_column_statistics(stats(db, "ds=1", long_stats(0, 2), "impala"))
    assert client.delete_table_column_statistics(db, "t", "l", "impala")
    assert client.get_table_statistics_req(table_request(db, engine="impala")).tableStats == []
    assert client.get_table_statistics_req(table_request(db)).tableStats == [long_stats(0, 10)]
    with pytest.raises(hms.NoSuchObjectException, match="Column stats doesn't exist"):
        client.delete_table_column_statistics(db, "t", "l", "impala")
    assert client.delete_table_column_statistics(db, "t", "l", None)  # a 2.3 client: hive's
    assert client.get_table_statistics_req(table_request(db)).tableStats == []
    # Every column of one engine (no column named) leaves the other engine's.
    assert client.delete_partition_column_statistics(db, "t", "ds=1", None, "hive")
    assert client.get_partitions_statistics_req(parts_request(db)).partStats == {}
    impala = client.get_partitions_statistics_req(parts_request(db, "impala")).partStats
    assert impala == {"ds=1": [long_stats(0, 2)]}
    assert client.delete_partition_column_statistics(db, "t", "ds=1", "l", "impala")
    assert client.get_partitions_statistics_req(parts_request(db, "impala")).partStats == {}


def test_every_engine_moves_with_renames_and_goes_with_drops(client, db: str) -> None:
    for engine, high in ((None, 10), ("impala", 20)):
        client.update_table_column_statistics(stats(db, None, long_stats(0, high), engine))
        for part in ("ds=1", "ds=2"):
            client.update_partition_column_statistics(stats(db, part, long_stats(0, high), engine))
    renamed = client.get_partition(db, "t", ["2"])
    renamed.values = ["9"]
    client.rename_partition(db, "t", ["2"], renamed)
    client.drop_partition(db, "t", ["1"], True)
    client.add_partition(make_partition(db, "t", ["1"]))
    table = client.get_table(db, "t")
    table.tableName = "t2"
    client.alter_table(db, "t", table)
    for engine, high in (("hive", 10), ("impala", 20)):
        got = client.get_table_statistics_req(table_request(db, "t2", engine)).tableStats
        assert got == [long_stats(0, high)]
        parts = parts_request(db, engine, "t2", ("ds=1", "ds=9"))
        assert client.get_partitions_statistics_req(parts).partStats == {
            "ds=9": [long_stats(0, high)]
        }
    client.drop_table(db, "t2", True)
    client.create_table(make_table(db, "t2", columns=[("l", "bigint")]))
    for engine in ("hive", "impala"):
        assert client.get_table_statistics_req(table_request(db, "t2", engine)).tableStats == []


def test_statistics_stored_before_engines_read_as_hives(running, client, db: str) -> None:
    """A row in the layout of earlier versions (``c:s:<column>``, ``c:la``, no engine), written
    straight into the store, is hive's: read with no engine or "hive", not with another, and
    an impala write beside it keeps it."""
    old = long_stats(3, 30)
    store = open_store(running.config.storage)
    try:
        table_id = int.from_bytes(
            store.get(layout.TABLES, layout.table_key(db, "t"))[layout.TABLE_ID], "big"
        )
        key = layout.stats_key(table_id, "")
        store.mutate(
            [
                Put(
                    layout.META,
                    key,
                    {b"c:s:l": to_bytes(old), b"c:la": (1600000000).to_bytes(8, "big")},
                )
            ]
        )
    finally:
        store.close()
    assert client.get_table_statistics_req(table_request(db)).tableStats == [old]
    assert client.get_table_statistics_req(table_request(db, engine="hive")).tableStats == [old]
    assert client.get_table_statistics_req(table_request(db, engine="impala")).tableStats == []
    assert client.get_table_column_statistics(db, "t", "l").statsDesc.lastAnalyzed == 1600000000
    client.update_table_column_statistics(stats(db, None, long_stats(0, 1), "impala"))
    assert client.get_table_statistics_req(table_request(db)).tableStats == [old]
    assert client.delete_table_column_statistics(db, "t", "l", "hive")
    got = client.get_table_statistics_req(table_request(db, engine="impala")).tableStats
    assert got == [long_stats(0, 1)]


def test_an_engine_name_the_store_cannot_hold_is_refused(client, db: str) -> None:
    with pytest.raises(hms.InvalidInputException, match="Invalid engine name"):
        client.update_table_column_statistics(stats(db, None, long_stats(0, 1), "bad\x00name"))


def test_statistics_attached_to_tables_and_partitions_answered(start_server) -> None:
    """HMS 4's get_table_req(getColumnStats) and get_partitions_by_names_req(get_col_stats)
    answer the table's and each partition's statistics of the request's engine."""
    conn = start_server().client()
    create_db(conn, "att")
    conn.create_table(make_table("att", "t", keys=[("ds", "string")], columns=[("n", "bigint")]))
    conn.add_partition(make_partition("att", "t", ["2024/01"]))
    for part_name, engine, high in ((None, None, 5), ("ds=2024%2F01", "impala", 9)):
        desc = hms.ColumnStatisticsDesc(isTblLevel=part_name is None, dbName="att",
                                        tableName="t", partName=part_name)  # fmt: skip
        data = hms.ColumnStatisticsData(longStats=hms.LongColumnStatsData(
            lowValue=0, highValue=high, numNulls=0, numDVs=high))  # fmt: skip
        stats = hms.ColumnStatistics(statsDesc=desc, engine=engine, statsObj=[
            hms.ColumnStatisticsObj(colName="n", colType="bigint", statsData=data)])  # fmt: skip
        if part_name is None:
            conn.update_table_column_statistics(stats)
        else:
            conn.update_partition_column_statistics(stats)
    table = conn.get_table_req(hms.GetTableRequest(dbName="att", tblName="t",
                                                   getColumnStats=True)).table  # fmt: skip
    assert table.colStats.statsObj[0].statsData.longStats.highValue == 5
    assert table.colStats.engine == "hive"
    plain = conn.get_table_req(hms.GetTableRequest(dbName="att", tblName="t")).table
    assert plain.colStats is None
    request = hms.GetPartitionsByNamesRequest(db_name="att", tbl_name="t", names=["ds=2024%2F01"],
                                              get_col_stats=True, engine="impala")  # fmt: skip
    (part,) = conn.get_partitions_by_names_req(request).partitions
    assert part.colStats.statsObj[0].statsData.longStats.highValue == 9
    assert part.colStats.statsDesc.partName == "ds=2024%2F01"
    request.engine = None  # hive's: none for this partition
    assert conn.get_partitions_by_names_req(request).partitions[0].colStats is None
