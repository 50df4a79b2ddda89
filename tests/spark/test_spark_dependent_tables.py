"""PySpark against our server: the seed's dependent-table scenario driven from Spark SQL.

Spark creates the hourly base ``T``, declares the daily dependent ``Tdep`` with TBLPROPERTIES,
adds its partition with ALTER TABLE ... ADD PARTITION (no location: the server points it at the
base's ``ds`` directory and records the dependency), reads the base's rows through it, and meets
the default drop policy when it drops a base partition or the database. Resolution is read back
through our client.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.net import MetastoreEndpoint
from support.spark_session import local_spark

from metastore_server.catalog.dependencies.model import DEPENDS_ON_KEY
from metastore_server.client import MetastoreClient

pytestmark = pytest.mark.spark

DB = "dep_spark"


@pytest.fixture(scope="module")
def spark(
    our_metastore: MetastoreEndpoint, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """A local PySpark session with Hive support on our server (dependent tables are ours),
    reading Hive tables with their SerDe and input directories recursively, as a dependent
    partition's directory holds its base's partition directories."""
    scratch = tmp_path_factory.mktemp("spark-dependents")
    settings = {
        "spark.sql.hive.convertMetastoreParquet": "false",
        "spark.hadoop.mapreduce.input.fileinputformat.input.dir.recursive": "true",
        "spark.hadoop.hive.mapred.supports.subdirectories": "true",
    }
    with local_spark(our_metastore, scratch, "metastore-dependents", settings) as session:
        yield session


def test_dependent_table_from_spark_sql(spark: Any, our_metastore: MetastoreEndpoint) -> None:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(
        f"CREATE TABLE {DB}.t (key string, value string) PARTITIONED BY (ds string, hr string) "
        "STORED AS PARQUET"
    )
    for hr in ("01", "02", "03"):
        spark.sql(
            f"INSERT INTO {DB}.t PARTITION (ds='1', hr='{hr}') "
            f"VALUES ('k{hr}', 'a'), ('k{hr}', 'b')"
        )
    spark.sql(
        f"CREATE TABLE {DB}.tdep (key string, value string) PARTITIONED BY (ds string) "
        f"STORED AS PARQUET TBLPROPERTIES ('metastore.dependent.base'='{DB}.t', "
        "'metastore.dependent.completeness.period'='HOURLY', "
        "'metastore.dependent.completeness.columns'='ds,hr')"
    )
    spark.sql(f"ALTER TABLE {DB}.tdep ADD PARTITION (ds='1')")

    with MetastoreClient(our_metastore.host, our_metastore.port) as ms:
        base_location = ms.get_table(DB, "t").sd.location
        partition = ms.get_partition(DB, "tdep", ["1"])
        assert partition.parameters[DEPENDS_ON_KEY] == f"{DB}.t@ds=1"
        assert partition.sd.location == base_location + "/ds=1"
        (resolved,) = ms.resolve_dependencies(DB, "tdep", "ds=1").partitions
        assert resolved.basePartNames == ["ds=1/hr=01", "ds=1/hr=02", "ds=1/hr=03"]

    # Spark sees the dependent partition like any other.
    shown = [row[0] for row in spark.sql(f"SHOW PARTITIONS {DB}.tdep").collect()]
    assert shown == ["ds=1"]
    described = spark.sql(f"DESCRIBE FORMATTED {DB}.tdep PARTITION (ds='1')").collect()
    text = "\n".join(f"{r[0]} {r[1]}" for r in described)
    assert f"{DB}.t@ds=1" in text  # the partition parameters show the dependency

    # Spark reads the base's rows through the dependent partition (its location is the base's
    # ds=1 directory; the hourly files are in subdirectories, read with the settings above).
    rows = spark.sql(f"SELECT key, value FROM {DB}.tdep WHERE ds = '1'").collect()
    assert sorted((r.key, r.value) for r in rows) == [
        (f"k{hr}", v) for hr in ("01", "02", "03") for v in ("a", "b")
    ]

    # The default drop policy refuses to drop a base partition a dependent stands on.
    with pytest.raises(Exception, match="dependent partition dep_spark.tdep@ds=1 depends on it"):
        spark.sql(f"ALTER TABLE {DB}.t DROP PARTITION (ds='1', hr='02')")
    rows = spark.sql(f"SELECT count(*) FROM {DB}.t WHERE ds = '1'").collect()
    assert rows[0][0] == 6  # nothing was dropped

    # Dropping the dependent partition never deletes the base's data; then the drop goes through.
    spark.sql(f"ALTER TABLE {DB}.tdep DROP PARTITION (ds='1')")
    assert spark.sql(f"SELECT count(*) FROM {DB}.t").collect()[0][0] == 6
    spark.sql(f"ALTER TABLE {DB}.t DROP PARTITION (ds='1', hr='02')")
    assert spark.sql(f"SELECT count(*) FROM {DB}.t").collect()[0][0] == 4

    # Hive's client drops a database's tables one by one (by name) before drop_database, so the
    # base's drop policy holds under DROP DATABASE ... CASCADE too: drop the dependent first.
    with pytest.raises(Exception, match=f"Cannot drop table {DB}.t: dependent table {DB}.tdep"):
        spark.sql(f"DROP DATABASE {DB} CASCADE")
    assert spark.sql(f"SELECT count(*) FROM {DB}.t").collect()[0][0] == 4
    spark.sql(f"DROP TABLE {DB}.tdep")
    spark.sql(f"DROP DATABASE {DB} CASCADE")
    with MetastoreClient(our_metastore.host, our_metastore.port) as ms:
        assert DB not in ms.get_all_databases()
