"""PySpark against our server: tables opted in to partition timelines from Spark SQL.

Spark SQL cannot set partition parameters (``ALTER TABLE ... PARTITION ... SET TBLPROPERTIES``
does not exist). With Lens's opt-in the update period of Spark's partitions is set over Thrift;
with ours (``metastore.timeline.periods`` in TBLPROPERTIES) nothing is set by hand: partitions
added by ADD PARTITION, a dynamic-partition INSERT and MSCK REPAIR all count.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from metastore_server.timeline import PREFIX, UPDATE_PERIOD_KEY
from support.net import MetastoreEndpoint
from support.spark_session import local_spark

from metastore_server.catalog.timelines.time_columns import PERIODS_KEY
from metastore_server.client import MetastoreClient
from metastore_server.thrift_api import make_client

pytestmark = pytest.mark.spark

DB = "tl_spark"
TABLE = f"{DB}.facts"
H = PREFIX + "HOURLY.dt."


@pytest.fixture(scope="module")
def spark(
    our_metastore: MetastoreEndpoint, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """A local PySpark session with Hive support on our server (timelines are ours only)."""
    # SHOW TBLPROPERTIES redacts keys matching spark.sql.redaction.options.regex, "(?i)url"
    # by default, and "HOURLY" contains "URL".
    settings = {"spark.sql.redaction.options.regex": "(?i)password"}
    scratch = tmp_path_factory.mktemp("spark-timelines")
    with local_spark(our_metastore, scratch, "metastore-timelines", settings) as session:
        yield session


def timeline_keys(client: Any) -> dict[str, str]:
    params = client.get_table(DB, "facts").parameters or {}
    return {k: v for k, v in params.items() if k.startswith(PREFIX)}


def test_spark_table_keeps_its_timelines(spark: Any, our_metastore: MetastoreEndpoint) -> None:
    client = make_client(our_metastore.host, our_metastore.port)
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(
        f"CREATE TABLE {TABLE} (v int) PARTITIONED BY (dt string, region string) "
        "STORED AS PARQUET TBLPROPERTIES ('cube.storagetable.time.partcols'='dt')"
    )
    spark.sql(
        f"ALTER TABLE {TABLE} ADD PARTITION (dt='2024-01-01-00', region='us') "
        "PARTITION (dt='2024-01-01-02', region='us') PARTITION (dt='2024-01-01-03', region='us')"
    )
    assert timeline_keys(client) == {}  # Spark sets no update period: nothing tracked

    parts = client.get_partitions(DB, "facts", -1)
    for partition in parts:
        partition.parameters[UPDATE_PERIOD_KEY] = "HOURLY"
    client.alter_partitions(DB, "facts", parts)
    keys = timeline_keys(client)
    assert (keys[H + "first"], keys[H + "latest"]) == ("2024-01-01-00", "2024-01-01-03")
    assert keys[H + "holes0"] == "2024-01-01-01"

    # Spark sends the whole table back with the properties it read: the timelines hold.
    spark.sql(f"ALTER TABLE {TABLE} SET TBLPROPERTIES ('comment'='from spark')")
    assert client.get_table(DB, "facts").parameters["comment"] == "from spark"
    assert timeline_keys(client) == keys

    spark.sql(f"ALTER TABLE {TABLE} DROP PARTITION (dt='2024-01-01-03', region='us')")
    keys = timeline_keys(client)
    assert (keys[H + "latest"], keys[H + "holes0"]) == ("2024-01-01-02", "2024-01-01-01")

    # An insert into a new partition (no update period) leaves the timelines alone.
    spark.sql(f"INSERT INTO {TABLE} PARTITION (dt='2024-01-01-09', region='us') VALUES (1)")
    assert timeline_keys(client) == keys

    shown = dict(spark.sql(f"SHOW TBLPROPERTIES {TABLE}").collect())
    assert shown[H + "latest"] == "2024-01-01-02"
    spark.sql(f"DROP DATABASE {DB} CASCADE")
    client.close()


def test_plain_spark_sql_fills_declared_timelines(
    spark: Any, our_metastore: MetastoreEndpoint
) -> None:
    """No partition parameter anywhere: the table declares ``ds:DAILY`` and every statement
    that adds partitions feeds the timeline, which the CLI and cover_time_range then see."""
    db, name = "tl_plain", "events"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(
        f"CREATE TABLE {db}.{name} (v int) PARTITIONED BY (ds string) STORED AS PARQUET "
        f"TBLPROPERTIES ('{PERIODS_KEY}'='ds:DAILY')"
    )
    spark.sql(f"ALTER TABLE {db}.{name} ADD PARTITION (ds='2024-03-01')")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(
        f"INSERT INTO {db}.{name} PARTITION (ds) "
        "SELECT * FROM VALUES (1, '2024-03-02'), (2, '2024-03-03'), (3, '2024-03-06') AS t(v, ds)"
    )
    uri = f"thrift://{our_metastore.host}:{our_metastore.port}"
    with MetastoreClient.from_uri(uri) as client:
        location = client.get_table(db, name).sd.location
        # Files written beside the table, then found by MSCK REPAIR TABLE.
        frame = spark.createDataFrame([(4,)], "v int")
        frame.write.parquet(f"{location}/ds=2024-03-04")
        spark.sql(f"MSCK REPAIR TABLE {db}.{name}")
        assert [p.values for p in client.get_partitions(db, name, -1)] == [
            ["2024-03-01"], ["2024-03-02"], ["2024-03-03"], ["2024-03-04"], ["2024-03-06"]
        ]  # fmt: skip
        assert all(UPDATE_PERIOD_KEY not in (p.parameters or {})
                   for p in client.get_partitions(db, name, -1))  # fmt: skip

        (daily,) = client.partition_timelines(db, name).timelines
        assert (daily.updatePeriod, daily.column) == ("DAILY", "ds")
        assert list(daily.ranges) == ["[2024-03-01, 2024-03-05)", "[2024-03-06, 2024-03-07)"]

        cover = client.cover_time_range(db, [name], "ds", "2024-03-02", "2024-03-07")
        assert [part.partition for part in cover.parts] == [
            "2024-03-02", "2024-03-03", "2024-03-04", "2024-03-06"
        ]  # fmt: skip
        assert [(u.startTime, u.endTime) for u in cover.uncovered] == [
            ("2024-03-05", "2024-03-06")
        ]

    shown = subprocess.run(
        [sys.executable, "-m", "metastore_server", "timeline", "show", f"{db}.{name}",
         "--uri", uri],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "DAILY" in shown.stdout and "[2024-03-06, 2024-03-07)" in shown.stdout
    # Spark reads the declaration back as it was set.
    properties = dict(spark.sql(f"SHOW TBLPROPERTIES {db}.{name}").collect())
    assert properties[PERIODS_KEY] == "ds:DAILY"
    spark.sql(f"DROP DATABASE {db} CASCADE")
