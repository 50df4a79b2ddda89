"""PySpark with its own warehouse (``spark.sql.warehouse.dir`` elsewhere than the server's, as for
every Spark user): managed data is created, deleted and moved as HMS does, external data is
never touched. Dropped partitions stay dropped through MSCK REPAIR and recoverPartitions, and a
table created again under a dropped one's name reads no old rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.net import MetastoreEndpoint
from support.spark_session import local_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.incremental]

DB = "managed_db"


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Spark's own warehouse, apart from the metastore's."""
    return tmp_path_factory.mktemp("spark-own-warehouse")


@pytest.fixture(scope="module")
def spark(
    metastore: MetastoreEndpoint, lake: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    settings = {
        "spark.sql.warehouse.dir": str(lake),
        "spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict",
    }
    scratch = tmp_path_factory.mktemp("spark-managed")
    with local_spark(metastore, scratch, "managed-data", settings) as session:
        session.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
        yield session
        session.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def rows(spark: SparkSession, sql: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in spark.sql(sql).collect())


def partitions(spark: SparkSession, table: str) -> list[str]:
    return sorted(row[0] for row in spark.sql(f"SHOW PARTITIONS {DB}.{table}").collect())


def data_files(directory: Path) -> list[str]:
    """Data files below a directory, relative, without Spark's hidden files."""
    return sorted(
        str(p.relative_to(directory))
        for p in directory.rglob("*")
        if p.is_file() and not p.name.startswith((".", "_"))
    )


def test_01_database_in_sparks_warehouse(spark: SparkSession, lake: Path) -> None:
    spark.sql(f"CREATE DATABASE {DB}")
    assert (lake / f"{DB}.db").is_dir()


def test_02_hive_table_drop_partition_deletes_its_files(spark: SparkSession, lake: Path) -> None:
    spark.sql(f"CREATE TABLE {DB}.h (v INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.h PARTITION (ds='1') VALUES (1)")
    spark.sql(f"INSERT INTO {DB}.h PARTITION (ds='2') VALUES (2)")
    table_dir = lake / f"{DB}.db" / "h"
    assert data_files(table_dir / "ds=1")
    spark.sql(f"ALTER TABLE {DB}.h DROP PARTITION (ds='1')")
    assert not (table_dir / "ds=1").exists()
    assert partitions(spark, "h") == ["ds=2"]


def test_03_msck_repair_does_not_bring_it_back(spark: SparkSession) -> None:
    spark.sql(f"MSCK REPAIR TABLE {DB}.h")
    assert partitions(spark, "h") == ["ds=2"]
    spark.catalog.recoverPartitions(f"{DB}.h")
    assert partitions(spark, "h") == ["ds=2"]
    assert rows(spark, f"SELECT v, ds FROM {DB}.h") == [(2, "2")]


def test_04_datasource_table_too(spark: SparkSession, lake: Path) -> None:
    spark.sql(f"CREATE TABLE {DB}.p (v INT, ds STRING) USING parquet PARTITIONED BY (ds)")
    spark.sql(f"INSERT INTO {DB}.p VALUES (1, '1'), (2, '2')")
    table_dir = lake / f"{DB}.db" / "p"
    assert (table_dir / "ds=1").is_dir()
    spark.sql(f"ALTER TABLE {DB}.p DROP PARTITION (ds='1')")
    assert not (table_dir / "ds=1").exists()
    spark.sql(f"MSCK REPAIR TABLE {DB}.p")
    assert partitions(spark, "p") == ["ds=2"]
    assert rows(spark, f"SELECT v, ds FROM {DB}.p") == [(2, "2")]


def test_05_rename_moves_the_directory(spark: SparkSession, lake: Path) -> None:
    spark.sql(f"ALTER TABLE {DB}.h RENAME TO {DB}.h2")
    assert not (lake / f"{DB}.db" / "h").exists()
    assert data_files(lake / f"{DB}.db" / "h2" / "ds=2")
    assert rows(spark, f"SELECT v, ds FROM {DB}.h2") == [(2, "2")]
    spark.sql(f"INSERT INTO {DB}.h2 PARTITION (ds='3') VALUES (3)")
    assert (lake / f"{DB}.db" / "h2" / "ds=3").is_dir()
    spark.sql(f"ALTER TABLE {DB}.p RENAME TO {DB}.p2")
    assert rows(spark, f"SELECT v, ds FROM {DB}.p2") == [(2, "2")]
    assert not (lake / f"{DB}.db" / "p").exists()


def test_06_drop_table_deletes_it_and_a_new_one_reads_nothing_old(
    spark: SparkSession, lake: Path
) -> None:
    spark.sql(f"DROP TABLE {DB}.h2")
    spark.sql(f"DROP TABLE {DB}.p2")
    assert not (lake / f"{DB}.db" / "h2").exists()
    assert not (lake / f"{DB}.db" / "p2").exists()
    spark.sql(f"CREATE TABLE {DB}.h2 (v INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    spark.sql(f"MSCK REPAIR TABLE {DB}.h2")
    assert rows(spark, f"SELECT v FROM {DB}.h2") == []
    spark.sql(f"CREATE TABLE {DB}.p2 (v INT, ds STRING) USING parquet PARTITIONED BY (ds)")
    assert rows(spark, f"SELECT v FROM {DB}.p2") == []


def test_07_external_table_files_stay(spark: SparkSession, tmp_path_factory) -> None:
    location = tmp_path_factory.mktemp("external") / "events"
    create = (
        f"CREATE EXTERNAL TABLE {DB}.e (v INT) PARTITIONED BY (ds STRING) STORED AS PARQUET "
        f"LOCATION '{location}'"
    )
    spark.sql(create)
    spark.sql(f"INSERT INTO {DB}.e PARTITION (ds='1') VALUES (1)")
    spark.sql(f"ALTER TABLE {DB}.e DROP PARTITION (ds='1')")
    assert data_files(location / "ds=1")
    spark.sql(f"DROP TABLE {DB}.e")
    assert data_files(location / "ds=1")
    spark.sql(create)
    spark.sql(f"MSCK REPAIR TABLE {DB}.e")
    assert rows(spark, f"SELECT v, ds FROM {DB}.e") == [(1, "1")]


def test_08_drop_database_cascade(spark: SparkSession, lake: Path) -> None:
    spark.sql(f"DROP DATABASE {DB} CASCADE")
    assert not (lake / f"{DB}.db").exists()
