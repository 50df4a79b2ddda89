"""Column statistics over Thrift: every kind round-trips, partitions' are listed, merged,
deleted, carried by renames and removed with their partition or table."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

_dbs = itertools.count()
COLUMNS = [("b", "boolean"), ("l", "bigint"), ("d", "double"), ("s", "string"),
           ("bin", "binary"), ("dec", "decimal(10,2)"), ("dt", "date")]  # fmt: skip


def data(kind: str, **fields: object) -> hms.ColumnStatisticsData:
    makers = {
        "booleanStats": hms.BooleanColumnStatsData, "longStats": hms.LongColumnStatsData,
        "doubleStats": hms.DoubleColumnStatsData, "stringStats": hms.StringColumnStatsData,
        "binaryStats": hms.BinaryColumnStatsData, "decimalStats": hms.DecimalColumnStatsData,
        "dateStats": hms.DateColumnStatsData,
    }  # fmt: skip
    return hms.ColumnStatisticsData(**{kind: makers[kind](**fields)})


def every_kind() -> list[hms.ColumnStatisticsObj]:
    return [
        hms.ColumnStatisticsObj("b", "boolean", data("booleanStats", numTrues=3, numFalses=4,
                                                     numNulls=1)),
        hms.ColumnStatisticsObj("l", "bigint", data("longStats", lowValue=-5, highValue=90,
                                                    numNulls=0, numDVs=12)),
        hms.ColumnStatisticsObj("d", "double", data("doubleStats", lowValue=0.5, highValue=2.5,
                                                    numNulls=2, numDVs=7)),
        hms.ColumnStatisticsObj("s", "string", data("stringStats", maxColLen=10, avgColLen=4.5,
                                                    numNulls=0, numDVs=9)),
        hms.ColumnStatisticsObj("bin", "binary", data("binaryStats", maxColLen=64,
                                                      avgColLen=30.0, numNulls=1)),
        hms.ColumnStatisticsObj("dec", "decimal(10,2)", data(
            "decimalStats", lowValue=hms.Decimal(unscaled=(-150).to_bytes(2, "big", signed=True),
                                                 scale=2),
            highValue=hms.Decimal(unscaled=(999).to_bytes(2, "big", signed=True), scale=2),
            numNulls=0, numDVs=3)),
        hms.ColumnStatisticsObj("dt", "date", data("dateStats",
                                                   lowValue=hms.Date(daysSinceEpoch=19000),
                                                   highValue=hms.Date(daysSinceEpoch=19100),
                                                   numNulls=0, numDVs=100)),
    ]  # fmt: skip


def desc(db: str, table: str, part: str | None = None) -> hms.ColumnStatisticsDesc:
    return hms.ColumnStatisticsDesc(isTblLevel=part is None, dbName=db, tableName=table,
                                    partName=part, lastAnalyzed=1700000000)  # fmt: skip


@pytest.fixture()
def db(client) -> str:
    name = f"st{next(_dbs)}"
    create_db(client, name)
    client.create_table(make_table(name, "t", keys=[("ds", "string")], columns=COLUMNS))
    client.add_partitions([make_partition(name, "t", [v]) for v in ("1", "2", "3")])
    return name


def test_every_kind_round_trips(client, db: str) -> None:
    sent = every_kind()
    assert client.update_table_column_statistics(hms.ColumnStatistics(desc(db, "t"), sent))
    got = client.get_table_statistics_req(
        hms.TableStatsRequest(dbName=db, tblName="t", colNames=[n for n, _ in COLUMNS] + ["x"])
    ).tableStats
    assert got == sent
    one = client.get_table_column_statistics(db, "T", "L")
    assert one.statsObj == [sent[1]]
    assert (one.statsDesc.isTblLevel, one.statsDesc.lastAnalyzed) == (True, 1700000000)


def test_partition_statistics_are_listed_and_merged(client, db: str) -> None:
    for part, low, high, nulls in (("ds=1", 1, 10, 0), ("ds=2", -4, 7, 3)):
        numbers = {"lowValue": low, "highValue": high, "numNulls": nulls, "numDVs": high - low}
        stats = [hms.ColumnStatisticsObj("l", "bigint", data("longStats", **numbers))]
        assert client.update_partition_column_statistics(
            hms.ColumnStatistics(desc(db, "t", part), stats)
        )
    request = hms.PartitionsStatsRequest(dbName=db, tblName="t", colNames=["l"],
                                         partNames=["ds=1", "ds=2", "ds=3"])  # fmt: skip
    listed = client.get_partitions_statistics_req(request).partStats
    assert sorted(listed) == ["ds=1", "ds=2"]
    aggregate = client.get_aggr_stats_for(request)
    assert aggregate.partsFound == 2
    merged = aggregate.colStats[0].statsData.longStats
    assert (merged.lowValue, merged.highValue, merged.numNulls, merged.numDVs) == (-4, 10, 3, 11)
    one = client.get_partition_column_statistics(db, "t", "ds=2", "l")
    assert one.statsDesc.partName == "ds=2" and not one.statsDesc.isTblLevel


def test_set_aggr_stats_for_merges_when_asked(client, db: str) -> None:
    def long_stats(low: int, high: int) -> hms.ColumnStatistics:
        return hms.ColumnStatistics(desc(db, "t", "ds=3"), [hms.ColumnStatisticsObj(
            "l", "bigint", data("longStats", lowValue=low, highValue=high, numNulls=1,
                                numDVs=5))])  # fmt: skip

    client.set_aggr_stats_for(hms.SetPartitionsStatsRequest(colStats=[long_stats(0, 5)]))
    client.set_aggr_stats_for(hms.SetPartitionsStatsRequest(colStats=[long_stats(3, 9)],
                                                            needMerge=True))  # fmt: skip
    merged = client.get_partition_column_statistics(db, "t", "ds=3", "l").statsObj[0]
    stats = merged.statsData.longStats
    assert (stats.lowValue, stats.highValue, stats.numNulls) == (0, 9, 2)


def test_delete_and_lifecycle(client, db: str) -> None:
    client.update_table_column_statistics(hms.ColumnStatistics(desc(db, "t"), every_kind()))
    part_stats = [every_kind()[1]]
    for part in ("ds=1", "ds=2"):
        client.update_partition_column_statistics(hms.ColumnStatistics(desc(db, "t", part),
                                                                       part_stats))  # fmt: skip
    assert client.delete_table_column_statistics(db, "t", "b")
    with pytest.raises(hms.NoSuchObjectException, match="Column stats doesn't exist"):
        client.delete_table_column_statistics(db, "t", "b")
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table_column_statistics(db, "t", "b")
    client.drop_partition(db, "t", ["1"], True)  # its statistics go with it
    renamed = client.get_partition(db, "t", ["2"])
    renamed.values = ["9"]
    client.rename_partition(db, "t", ["2"], renamed)  # and follow a rename
    assert client.get_partition_column_statistics(db, "t", "ds=9", "l").statsObj == part_stats
    client.add_partition(make_partition(db, "t", ["1"]))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition_column_statistics(db, "t", "ds=1", "l")
    table = client.get_table(db, "t")
    table.tableName = "t2"
    client.alter_table(db, "t", table)  # a table rename carries them
    assert client.get_table_column_statistics(db, "t2", "l").statsObj == [every_kind()[1]]
    assert client.delete_partition_column_statistics(db, "t2", "ds=9", None)
    client.drop_table(db, "t2", True)
    client.create_table(make_table(db, "t2", keys=[("ds", "string")], columns=COLUMNS))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table_column_statistics(db, "t2", "l")


def test_bad_statistics_are_refused(client, db: str) -> None:
    unknown = hms.ColumnStatisticsObj("nope", "int", data("longStats", numNulls=0, numDVs=1))
    with pytest.raises(hms.MetaException, match="Column nope doesn't exist"):
        client.update_table_column_statistics(hms.ColumnStatistics(desc(db, "t"), [unknown]))
    empty = hms.ColumnStatisticsObj("l", "bigint", hms.ColumnStatisticsData())
    with pytest.raises(hms.InvalidInputException, match="exactly one kind"):
        client.update_table_column_statistics(hms.ColumnStatistics(desc(db, "t"), [empty]))
    with pytest.raises(hms.NoSuchObjectException):
        client.update_table_column_statistics(hms.ColumnStatistics(desc(db, "missing"), []))
    with pytest.raises(hms.NoSuchObjectException):
        client.update_partition_column_statistics(
            hms.ColumnStatistics(desc(db, "t", "ds=404"), [every_kind()[1]])
        )


def test_statistics_of_missing_partitions_are_passed_over(client, db: str) -> None:
    """As HMS: a request naming partitions that do not exist answers for those that do."""
    stats = [hms.ColumnStatisticsObj("l", "bigint", data("longStats", lowValue=1, highValue=4,
                                                         numNulls=0, numDVs=4))]  # fmt: skip
    assert client.update_partition_column_statistics(
        hms.ColumnStatistics(desc(db, "t", "ds=1"), stats)
    )
    request = hms.PartitionsStatsRequest(dbName=db, tblName="t", colNames=["l"],
                                         partNames=["ds=1", "ds=nosuch", "bad"])  # fmt: skip
    assert list(client.get_partitions_statistics_req(request).partStats) == ["ds=1"]
    aggregate = client.get_aggr_stats_for(request)
    assert aggregate.partsFound == 1
    assert aggregate.colStats[0].statsData.longStats.highValue == 4


def _refused(call: Callable[[], object], kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as refused:
        call()
    assert refused.value.message == message


def test_missing_objects_are_answered_in_hms_words(client, db: str) -> None:
    """The exception type and message HMS 2.3 gives for each statistics call on a missing
    table, partition or column (read off the reference metastore)."""
    one = [hms.ColumnStatisticsObj("l", "bigint", data("longStats", numNulls=0, numDVs=1))]
    no_such = f"Specified database/table does not exist : {db}.nosuch"
    reads = [
        lambda: client.get_table_statistics_req(
            hms.TableStatsRequest(dbName=db, tblName="nosuch", colNames=["l"])),
        lambda: client.get_partitions_statistics_req(hms.PartitionsStatsRequest(
            dbName=db, tblName="nosuch", colNames=["l"], partNames=["ds=1"])),
        lambda: client.get_aggr_stats_for(hms.PartitionsStatsRequest(
            dbName=db, tblName="nosuch", colNames=["l"], partNames=["ds=1"])),
        lambda: client.get_table_column_statistics(db, "nosuch", "l"),
        lambda: client.get_partition_column_statistics(db, "nosuch", "ds=1", "l"),
        lambda: client.update_table_column_statistics(
            hms.ColumnStatistics(desc(db, "nosuch"), one)),
    ]  # fmt: skip
    for call in reads:
        _refused(call, hms.NoSuchObjectException, no_such)
    _refused(lambda: client.update_partition_column_statistics(
        hms.ColumnStatistics(desc(db, "nosuch", "ds=1"), one)),
        hms.InvalidObjectException, f"{db}.nosuch table not found")  # fmt: skip
    _refused(lambda: client.delete_partition_column_statistics(db, "nosuch", "ds=1", "l"),
             hms.InvalidObjectException, f"{db}.nosuch table not found")  # fmt: skip
    _refused(lambda: client.delete_table_column_statistics(db, "nosuch", "l"),
             hms.NoSuchObjectException,
             "Table nosuch  for which stats deletion is requested doesn't exist")  # fmt: skip
    _refused(lambda: client.update_partition_column_statistics(
        hms.ColumnStatistics(desc(db, "t", "ds=9"), one)),
        hms.NoSuchObjectException, "Partition for which stats is gathered doesn't exist.")
    _refused(lambda: client.delete_partition_column_statistics(db, "t", "ds=9", "l"),
             hms.NoSuchObjectException,
             "Partition ds=9 for which stats deletion is requested doesn't exist")  # fmt: skip
    unknown = [hms.ColumnStatisticsObj("nope", "int", data("longStats", numNulls=0, numDVs=1))]
    _refused(lambda: client.update_table_column_statistics(
        hms.ColumnStatistics(desc(db, "t"), unknown)),
        hms.MetaException, f"Column nope doesn't exist in table t in database {db}")
