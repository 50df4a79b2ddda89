"""PySpark against our server: a table opted in to partition timelines from Spark SQL.

Spark SQL cannot set partition parameters (``ALTER TABLE ... PARTITION ... SET TBLPROPERTIES``
does not exist), so the update period of Spark's partitions is set over Thrift; everything else
(create with TBLPROPERTIES, add, drop, insert, alter of table properties, SHOW TBLPROPERTIES)
is Spark.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.net import MetastoreEndpoint
from support.spark_session import local_spark

from metastore_server.thrift_api import make_client
from timeline import PREFIX, UPDATE_PERIOD_KEY

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
