"""Seeking reads of partition values on HBase (against the HBase test double, which records
what the server asks of it): the latest value and distinct values ask each scanner round trip
for a few rows (``values_reader.SEEKING_BATCH``), not a whole scan batch, since such a read
stops after a block's first rows; the answers are those of a full read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.hbase_double import HBaseDouble, storage_url

from metastore_server.catalog.reads.values_reader import SEEKING_BATCH
from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

pytestmark = pytest.mark.own_double

DAYS = [f"2024-03-{d:02d}" for d in range(1, 13)]
HOURS, REGIONS = 24, 8  # 192 rows a day: more than a seeking round trip asks for
ROWS = len(DAYS) * HOURS * REGIONS


@pytest.fixture(scope="module")
def on_double(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HBaseDouble, object]]:
    with HBaseDouble() as double:
        host, port = double.address
        server = RunningServer(
            tmp_path_factory.mktemp("seeking"), storage=storage_url(host, port, prefix="seek_")
        )
        client = server.client()
        create_db(client, "sdb")
        keys = [("ds", "string"), ("hr", "int"), ("region", "string")]
        client.create_table(make_table("sdb", "t", keys=keys))
        client.add_partitions(
            [
                make_partition("sdb", "t", [day, str(hr), f"r{region}"])
                for day in DAYS
                for hr in range(HOURS)
                for region in range(REGIONS)
            ]
        )
        yield double, client
        client.close()
        server.stop()


def _values(client: object, **fields: object) -> list[list[str]]:
    request = hms.PartitionValuesRequest(
        dbName="sdb", tblName="t", partitionKeys=[hms.FieldSchema(name="ds", type="string")],
        **fields,
    )  # fmt: skip
    return [r.row for r in client.get_partition_values(request).partitionValues]  # type: ignore[attr-defined]


def test_latest_value_asks_for_a_few_rows(on_double) -> None:
    double, client = on_double
    before = len(double.scanner_batches)
    assert _values(client, ascending=False, maxParts=1) == [[DAYS[-1]]]
    asked = double.scanner_batches[before:]
    assert asked and max(asked) <= SEEKING_BATCH
    assert sum(double.scan_rows_examined[-len(asked) :]) <= SEEKING_BATCH


def test_distinct_values_seek_in_small_round_trips(on_double) -> None:
    double, client = on_double
    before = len(double.scanner_batches)
    assert _values(client, applyDistinct=True) == [[day] for day in DAYS]
    asked = double.scanner_batches[before:]
    assert asked and max(asked) <= SEEKING_BATCH
    # HBase walks a small part of the table: the reader seeks past each day.
    assert sum(double.scan_rows_examined[-len(asked) :]) < ROWS // 2


def test_a_listing_still_reads_whole_batches(on_double) -> None:
    double, client = on_double
    before = len(double.scanner_batches)
    assert len(client.get_partition_names("sdb", "t", -1)) == ROWS
    assert max(double.scanner_batches[before:]) > SEEKING_BATCH


def test_latest_values_under_a_filter_are_right_on_hbase_1_2(on_double) -> None:
    """HBase 1.2.x fails a reversed scan with a filter on the region server; the store reads
    on without the filter and the answers are those of a healthy HBase."""
    double, client = on_double
    asks = [
        {"ascending": False, "maxParts": 3, "filter": 'region = "r3"'},
        {"ascending": False, "maxParts": 2, "filter": 'hr > 20 and region = "r7"'},
        {"ascending": False, "applyDistinct": True, "filter": 'region = "r1" and hr = 5'},
    ]
    healthy = [_values(client, **ask) for ask in asks]
    assert healthy[0] == [[day] for day in DAYS[:-4:-1]]
    failures = double.reverse_scan_failures
    double.reverse_filter_bug = True
    try:
        assert [_values(client, **ask) for ask in asks] == healthy
    finally:
        double.reverse_filter_bug = False
    assert double.reverse_scan_failures > failures  # the bug was met, and gone round
