"""What the per-client call-sequence tests (``test_client_flows_*.py``) find on the server:
a database with a partitioned table (partition parameters of several kinds, column statistics),
an unpartitioned table, a view and a partitioned insert-only transactional table. Made with our
own client; the flows then read it as each client does (``support.java_wire``)."""

from __future__ import annotations

from typing import Any

from metastore_server.thrift_api import hms

from .conftest import column, create_db, make_table

DB = "flows"
USER = "alice"
GROUPS = ["analysts"]
#: The partitions of ``events`` (ds, hr), in name order.
PARTS = [("2024-01-01", 0), ("2024-01-01", 1), ("2024-01-01", 2), ("2024-01-02", 0)]
NAMES = [f"ds={ds}/hr={hr}" for ds, hr in PARTS]
#: Parameters every partition of ``events`` has (besides those the server adds).
PART_PARAMS = {"numRows": "10", "impala.events.catalogVersion": "7", "spark.sql.x": "y"}
TABLES = ["acid", "events", "plain", "v"]
INSERT_ONLY = {"transactional": "true", "transactional_properties": "insert_only"}
#: HMS's enums, by value (the tests send numbers, as the wire does).
SHARED_READ, TABLE_LEVEL, SELECT, ACQUIRED = 1, 2, 1, 1
INSERT_ONLY_TABLES, READ_ONLY_TXN = 2, 1


def populate(client: Any) -> None:  # noqa: ANN401 - a thriftpy2 client
    """Make the world (see the module)."""
    create_db(client, DB)
    keys = [("ds", "string"), ("hr", "int")]
    columns = [("id", "bigint"), ("v", "string")]
    client.create_table(make_table(DB, "events", keys=keys, columns=columns,
                                   parameters={"comment": "flows"}))  # fmt: skip
    for ds, hr in PARTS:
        client.add_partition(_partition("events", [ds, str(hr)], columns))
    client.create_table(make_table(DB, "plain", columns=columns))
    view = make_table(DB, "v", tableType="VIRTUAL_VIEW", viewOriginalText="select 1",
                      viewExpandedText="select 1")  # fmt: skip
    client.create_table(view)
    client.create_table(make_table(DB, "acid", keys=[("ds", "string")], columns=columns,
                                   parameters=dict(INSERT_ONLY)))  # fmt: skip
    client.add_partition(_partition("acid", ["2024-01-01"], columns))
    _statistics(client)


def _partition(table: str, values: list[str], columns: list[tuple[str, str]]) -> hms.Partition:
    sd = hms.StorageDescriptor(
        cols=[column(n, t) for n, t in columns],
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        compressed=False, numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
        serdeInfo=hms.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={"serialization.format": "1"},
        ),
    )  # fmt: skip
    return hms.Partition(values=values, dbName=DB, tableName=table, sd=sd,
                         parameters=dict(PART_PARAMS))  # fmt: skip


def _long_stats(low: int, high: int) -> list[hms.ColumnStatisticsObj]:
    data = hms.LongColumnStatsData(lowValue=low, highValue=high, numNulls=0, numDVs=high - low)
    return [hms.ColumnStatisticsObj("id", "bigint", hms.ColumnStatisticsData(longStats=data))]


def _statistics(client: Any) -> None:  # noqa: ANN401
    desc = hms.ColumnStatisticsDesc(isTblLevel=True, dbName=DB, tableName="events")
    client.update_table_column_statistics(hms.ColumnStatistics(desc, _long_stats(1, 99)))
    for i, name in enumerate(NAMES):
        desc = hms.ColumnStatisticsDesc(isTblLevel=False, dbName=DB, tableName="events",
                                        partName=name)  # fmt: skip
        stats = hms.ColumnStatistics(desc, _long_stats(i, 10 + i))
        client.update_partition_column_statistics(stats)


def params_sent(part: Any) -> dict[str, str]:  # noqa: ANN401
    """A partition's parameters without those the server adds."""
    return {k: v for k, v in (part.parameters or {}).items() if k in PART_PARAMS}


def assert_contiguous(events: list[Any], last: int) -> None:  # noqa: ANN401
    """HiveMetaStoreClient.getNextNotification's check: ids ``last+1, last+2...``."""
    assert [e.eventId for e in events] == list(range(last + 1, last + 1 + len(events)))
