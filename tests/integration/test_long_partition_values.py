"""Partition values too long for a row key (HBase refuses keys over 32,767 bytes): adding such
a partition is refused with a MetaException on every store and leaves nothing behind; reads
of such values answer not-found or empty (no partition can have them)."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms
from storage.port import MAX_ROW_KEY

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
    assert "ds" in message and "too long" in message and str(MAX_ROW_KEY) in message
    assert "40000 characters" in message
    assert client.get_partition_names(DB, "t", -1) == ["ds=2024-01-01/hr=1"]
    assert DB in client.get_all_databases()  # the connection goes on


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
