"""Strings that are not UTF-8: the call is refused, naming the field, and nothing is written;
the connection goes on."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

NOT_UTF8 = b"/tmp/\xff\xfe"


def test_a_table_with_a_location_that_is_not_text_is_refused(client) -> None:
    create_db(client, "txt")
    table = make_table("txt", "t1")
    table.sd.location = NOT_UTF8
    with pytest.raises(hms.InvalidObjectException, match=r"tbl\.sd\.location is not valid UTF-8"):
        client.create_table(table)
    assert client.get_tables("txt", "*") == []
    table = make_table("txt", "t2")
    table.parameters = {"comment": b"\xc3\x28"}
    with pytest.raises(hms.InvalidObjectException, match=r"tbl\.parameters\['comment'\]"):
        client.create_table(table)
    assert client.get_tables("txt", "*") == []


def test_partition_values_and_names(client) -> None:
    create_db(client, "txt2")
    client.create_table(make_table("txt2", "t", keys=[("ds", "string")]))
    good = make_partition("txt2", "t", ["2024-01-01"])
    bad = make_partition("txt2", "t", [b"2024-\xff"])
    with pytest.raises(hms.InvalidObjectException, match=r"new_parts\[1\]\.values\[0\]"):
        client.add_partitions([good, bad])
    assert client.get_partition_names("txt2", "t", -1) == []  # all or nothing
    with pytest.raises(hms.MetaException, match="tbl_name is not valid UTF-8"):
        client.get_table("txt2", b"t\xff")  # declares MetaException, not InvalidObject
    assert client.get_table("txt2", "t").tableName == "t"  # the connection goes on


def test_statistics_bit_vectors_may_be_binary(client) -> None:
    """HMS 3+ sends bitVectors as binary: any bytes are kept."""
    create_db(client, "txt3")
    client.create_table(make_table("txt3", "t", columns=[("v", "bigint")]))
    data = hms.ColumnStatisticsData(longStats=hms.LongColumnStatsData(
        lowValue=1, highValue=2, numNulls=0, numDVs=2, bitVectors=b"\xff\x00\xfe"))  # fmt: skip
    stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="txt3", tableName="t"),
        statsObj=[hms.ColumnStatisticsObj(colName="v", colType="bigint", statsData=data)],
    )
    assert client.update_table_column_statistics(stats)
    got = client.get_table_column_statistics("txt3", "t", "v")
    assert got.statsObj[0].statsData.longStats.numDVs == 2
