"""Partition values too long for a row key (HBase refuses keys over 32,767 bytes): adding such
a partition is refused with a MetaException on every store and leaves nothing behind; reads
of such values answer not-found or empty (no partition can have them)."""

from __future__ import annotations

import pytest
from metastore_server.storage.port import MAX_ROW_KEY

from metastore_server.catalog.reads.partition_rows import DERIVED_KEY_ROOM
from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "longvals"
LONG = "x" * 40_000


@pytest.fixture(scope="module", autouse=True)
def table(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    connection.create_table(make_table(DB, "t", keys=[("ds", "string"), ("hr", "int")]))
    connection.add_partitions([make_partition(DB, "t", ["2024-01-01", "1"])])
    connection.close()


@pytest.mark.parametrize(
    "add",
    [
        lambda c, p: c.add_partition(p),
        lambda c, p: c.add_partitions([make_partition(DB, "t", ["2024-01-02", "1"]), p]),
        lambda c, p: c.add_partitions_req(
            hms.AddPartitionsRequest(dbName=DB, tblName="t", parts=[p], ifNotExists=True)
        ),
    ],
    ids=["add_partition", "add_partitions", "add_partitions_req"],
)
def test_a_value_too_long_for_a_row_key_is_refused_and_leaves_nothing(client, add) -> None:
    with pytest.raises(hms.MetaException) as caught:
        add(client, make_partition(DB, "t", [LONG, "1"]))
    message = caught.value.message
    limit = MAX_ROW_KEY - DERIVED_KEY_ROOM
    assert "ds" in message and "too long" in message and f"the limit of {limit} bytes" in message
    assert "40000 characters" in message
    assert client.get_partition_names(DB, "t", -1) == ["ds=2024-01-01/hr=1"]
    assert DB in client.get_all_databases()  # the connection goes on


def test_a_value_whose_escaped_name_is_too_long_is_refused(client) -> None:
    slashes = "/" * 12_000  # a 12,000-byte key, but a 36,000-byte name (each escaped %2F)
    with pytest.raises(hms.MetaException, match="ds is too long"):
        client.add_partition(make_partition(DB, "t", [slashes, "1"]))
    assert client.get_partition_names(DB, "t", -1) == ["ds=2024-01-01/hr=1"]


def test_a_long_value_that_fits_takes_statistics(client) -> None:
    value = "y" * 20_000  # (too long for a directory name: the partition gets a location)
    location = client.get_table(DB, "t").sd.location + "/long"
    client.add_partition(make_partition(DB, "t", [value, "2"], location=location))
    name = f"ds={value}/hr=2"
    stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=False, dbName=DB, tableName="t",
                                           partName=name),
        statsObj=[hms.ColumnStatisticsObj(
            colName="v", colType="int", statsData=hms.ColumnStatisticsData(
                longStats=hms.LongColumnStatsData(lowValue=1, highValue=2, numNulls=0, numDVs=2)))],
    )  # fmt: skip
    assert client.update_partition_column_statistics(stats)
    found = client.get_partitions_statistics_req(
        hms.PartitionsStatsRequest(dbName=DB, tblName="t", colNames=["v"], partNames=[name])
    )
    assert list(found.partStats) == [name]
    assert client.drop_partition(DB, "t", [value, "2"], True)


def test_reads_of_a_value_too_long_find_nothing(client) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition(DB, "t", [LONG, "1"])
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition_by_name(DB, "t", f"ds={LONG}/hr=1")
    assert client.get_partitions_by_names(DB, "t", [f"ds={LONG}/hr=1"]) == []
    assert client.get_partitions_by_filter(DB, "t", f"ds = '{LONG}'", -1) == []
    assert client.get_num_partitions_by_filter(DB, "t", f"ds = '{LONG}' and hr = 1") == 0
    assert client.get_partitions_by_filter(DB, "t", f"ds >= '{LONG}'", -1) == []
    assert len(client.get_partitions_by_filter(DB, "t", f"ds < '{LONG}'", -1)) == 1
    assert client.get_partitions_ps(DB, "t", [LONG], -1) == []
