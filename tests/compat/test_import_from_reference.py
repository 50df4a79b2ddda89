"""``metastore-server import`` from the reference Hive Metastore 2.3 into ours, then PySpark on
ours reads the imported tables' data files.

The data files are Parquet written by PySpark straight into the partition directories of the
reference metastore's warehouse; the reference metastore is loaded over Thrift (a database, a
partitioned table with 300 partitions, an unpartitioned table, a function); the import runs in
batches and is verified; a second run finds everything present. Run it inside a private network
namespace (the reference metastore binds every interface)::

    sh tests/run-isolated.sh .venv/bin/python -m pytest -q \
        tests/compat/test_import_from_reference.py
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.net import MetastoreEndpoint
from support.our_server import OurServer
from support.spark_session import local_spark

from metastore_server.cli import importing as cli_import
from metastore_server.thrift_api import hms, make_client

pytestmark = [pytest.mark.compat, pytest.mark.spark]

DB = "import_src"
DAYS, HOURS, ROWS_PER_PART = 30, 10, 2
PARQUET = {
    "inputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "outputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "serde": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetastoreEndpoint]:
    """A fresh instance of our server for this module."""
    with OurServer(tmp_path_factory.mktemp("import-ours")) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def spark(ours: MetastoreEndpoint, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """PySpark with Hive support on our server."""
    scratch = tmp_path_factory.mktemp("import-spark")
    with local_spark(ours, scratch, "metastore-import") as session:
        yield session


def storage(location: str, cols: list[tuple[str, str]]) -> Any:
    """A Parquet storage descriptor at ``location``."""
    return hms.StorageDescriptor(
        cols=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in cols],
        location=location,
        inputFormat=PARQUET["inputFormat"],
        outputFormat=PARQUET["outputFormat"],
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(
            name=None, serializationLib=PARQUET["serde"], parameters={"serialization.format": "1"}
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def table(name: str, location: str, keys: list[tuple[str, str]]) -> Any:
    """An external Parquet table with one int column ``v``."""
    return hms.Table(
        tableName=name,
        dbName=DB,
        owner="tester",
        createTime=0,
        lastAccessTime=0,
        retention=0,
        sd=storage(location, [("v", "int")]),
        partitionKeys=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in keys],
        parameters={"EXTERNAL": "TRUE"},
        tableType="EXTERNAL_TABLE",
    )


def day(d: int) -> str:
    return f"2024-01-{d + 1:02d}"


def load_reference(reference: MetastoreEndpoint, spark: Any) -> None:
    """Data files by PySpark, metadata on the reference metastore by Thrift."""
    root = Path(reference.warehouse_dir) / f"{DB}.db"
    rows = DAYS * HOURS * ROWS_PER_PART
    events = spark.range(rows).selectExpr(
        "cast(id as int) as v",
        f"date_format(date_add(date'2024-01-01', cast(id % {DAYS} as int)), 'yyyy-MM-dd') as ds",
        f"cast(floor(id / {DAYS}) % {HOURS} as int) as hr",
    )
    events.write.mode("overwrite").partitionBy("ds", "hr").parquet(str(root / "events"))
    spark.range(25).selectExpr("cast(id as int) as v").write.mode("overwrite").parquet(
        str(root / "plain")
    )

    client = make_client(reference.host, reference.port)
    try:
        client.create_database(
            hms.Database(name=DB, description="to import", locationUri=root.as_uri(), parameters={})
        )
        events_uri = (root / "events").as_uri()
        client.create_table(table("events", events_uri, [("ds", "string"), ("hr", "int")]))
        client.create_table(table("plain", (root / "plain").as_uri(), []))
        parts = [
            hms.Partition(
                values=[day(d), str(h)],
                dbName=DB,
                tableName="events",
                sd=storage(f"{events_uri}/ds={day(d)}/hr={h}", [("v", "int")]),
                parameters={},
            )
            for d in range(DAYS)
            for h in range(HOURS)
        ]
        for start in range(0, len(parts), 100):
            client.add_partitions(parts[start : start + 100])
        client.create_function(
            hms.Function(
                functionName="shout",
                dbName=DB,
                className="com.example.udf.Shout",
                ownerName="tester",
                ownerType=hms.PrincipalType.USER,
                createTime=0,
                functionType=hms.FunctionType.JAVA,
                resourceUris=[hms.ResourceUri(hms.ResourceType.JAR, "file:///jars/shout.jar")],
            )
        )
    finally:
        client.close()


def run_import(reference: MetastoreEndpoint, ours: MetastoreEndpoint) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["--from", reference.uri, "--to", ours.uri, "--databases", DB, "--batch-size", "64"]
    code = cli_import.main([*argv, "--verify"], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_import_from_reference_then_spark_reads(
    reference_hms: MetastoreEndpoint, ours: MetastoreEndpoint, spark: Any
) -> None:
    load_reference(reference_hms, spark)

    code, out, err = run_import(reference_hms, ours)
    assert code == 0, out + err
    assert f"database {DB}: created" in out
    assert f"{DB}.events  created; 300 partition(s) copied, 0 skipped as present" in out
    assert f"{DB}.plain   created (not partitioned)" in out
    assert f"function {DB}.shout: created" in out
    assert "verify: 2 table(s), 300 partition(s) compared; 0 table(s) differ" in out

    code, out, err = run_import(reference_hms, ours)  # again: everything is there already
    assert code == 0, out + err
    assert f"{DB}.events  existing; 0 partition(s) copied, 300 skipped as present" in out

    client = make_client(ours.host, ours.port)
    try:
        assert client.get_function(DB, "shout").className == "com.example.udf.Shout"
        assert len(client.get_partition_names(DB, "events", -1)) == DAYS * HOURS
    finally:
        client.close()

    total = DAYS * HOURS * ROWS_PER_PART
    assert spark.sql(f"SELECT count(*) FROM {DB}.events").collect()[0][0] == total
    shown = [row[0] for row in spark.sql(f"SHOW PARTITIONS {DB}.events").collect()]
    assert len(shown) == DAYS * HOURS
    assert "ds=2024-01-05/hr=3" in shown
    one = spark.sql(f"SELECT count(*) FROM {DB}.events WHERE ds = '2024-01-05' AND hr = 3")
    assert one.collect()[0][0] == ROWS_PER_PART
    assert spark.sql(f"SELECT count(*) FROM {DB}.plain").collect()[0][0] == 25
