"""PySpark (built-in Hive 2.3 client) end to end against a metastore.

Runs every statement of the traced Spark workload (create database/table, static, mixed and
dynamic partition inserts, INSERT OVERWRITE, ALTER ADD/DROP PARTITION, SHOW PARTITIONS,
partition-pruned SELECTs with every predicate form Spark pushes down, MSCK REPAIR with and
without SYNC PARTITIONS, DROP TABLE/DATABASE) in order, checking results at each step.

The metastore is our server by default; METASTORE_URI=reference runs the reference Hive
Metastore 2.3.x, METASTORE_URI=thrift://host:port (+ METASTORE_WAREHOUSE) an external one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.net import MetastoreEndpoint
from support.spark_session import local_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.incremental]

DB = "smoke_db"
TABLE = f"{DB}.t"

PARTS_AFTER_ADD = [
    "ds=2024-01-01/hr=1",
    "ds=2024-01-01/hr=2",
    "ds=2024-01-01/hr=3",
    "ds=2024-01-02/hr=1",
    "ds=2024-01-03/hr=5",
    "ds=2024-02-01/hr=0",
]
PARTS_AFTER_DROP = PARTS_AFTER_ADD[:-1]
PARTS_AFTER_MSCK = [*PARTS_AFTER_DROP, "ds=2024-03-01/hr=7"]


@pytest.fixture(scope="module")
def spark(metastore: MetastoreEndpoint, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local PySpark session with Hive support, bound to loopback, using the metastore."""
    settings = {
        "spark.default.parallelism": "1",
        "spark.hadoop.hive.exec.dynamic.partition": "true",
        "spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict",
    }
    scratch = tmp_path_factory.mktemp("spark")
    with local_spark(metastore, scratch, "metastore-end-to-end", settings) as session:
        yield session


def values(spark: SparkSession, sql: str) -> list[Any]:
    """Sorted first-column values of a query."""
    return sorted(row[0] for row in spark.sql(sql).collect())


def partitions(spark: SparkSession, spec: str = "") -> list[str]:
    """SHOW PARTITIONS output, in the order Spark returns it."""
    suffix = f" PARTITION ({spec})" if spec else ""
    return [row[0] for row in spark.sql(f"SHOW PARTITIONS {TABLE}{suffix}").collect()]


def table_dir(spark: SparkSession) -> Path:
    """Local directory of the table, as the metastore reports it."""
    rows = spark.sql(f"DESCRIBE FORMATTED {TABLE}").collect()
    location = next(row[1] for row in rows if row[0].strip() == "Location")
    assert location.startswith("file:"), location
    return Path(location.removeprefix("file:"))


def test_01_show_databases(spark: SparkSession) -> None:
    assert "default" in values(spark, "SHOW DATABASES")


def test_02_drop_database_if_exists(spark: SparkSession) -> None:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    assert DB not in values(spark, "SHOW DATABASES")


def test_03_create_database(spark: SparkSession, metastore: MetastoreEndpoint) -> None:
    spark.sql(f"CREATE DATABASE {DB}")
    assert DB in values(spark, "SHOW DATABASES")
    db = spark.catalog.getDatabase(DB)
    assert db.locationUri.rstrip("/") == f"file:{metastore.warehouse_dir}/{DB}.db"


def test_04_create_table(spark: SparkSession, metastore: MetastoreEndpoint) -> None:
    spark.sql(f"CREATE TABLE {TABLE} (v int) PARTITIONED BY (ds string, hr int) STORED AS PARQUET")
    assert [r.tableName for r in spark.sql(f"SHOW TABLES IN {DB}").collect()] == ["t"]
    assert table_dir(spark) == Path(metastore.warehouse_dir) / f"{DB}.db" / "t"
    cols = [(c.name, c.dataType, c.isPartition) for c in spark.catalog.listColumns(TABLE)]
    assert cols == [("v", "int", False), ("ds", "string", True), ("hr", "int", True)]
    assert partitions(spark) == []


def test_05_insert_static(spark: SparkSession) -> None:
    spark.sql(f"INSERT INTO {TABLE} PARTITION (ds='2024-01-01', hr=1) VALUES (1), (2)")
    assert partitions(spark) == ["ds=2024-01-01/hr=1"]
    assert values(spark, f"SELECT v FROM {TABLE}") == [1, 2]


def test_06_insert_mixed_static_dynamic(spark: SparkSession) -> None:
    spark.sql(f"INSERT INTO {TABLE} PARTITION (ds='2024-01-01', hr) VALUES (3, 2), (4, 3)")
    assert partitions(spark) == PARTS_AFTER_ADD[:3]


def test_07_insert_dynamic(spark: SparkSession) -> None:
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(
        f"INSERT INTO {TABLE} PARTITION (ds, hr) VALUES (5, '2024-01-02', 1), (6, '2024-01-03', 5)"
    )
    assert partitions(spark) == PARTS_AFTER_ADD[:5]


def test_08_insert_overwrite_static(spark: SparkSession) -> None:
    spark.sql(f"INSERT OVERWRITE TABLE {TABLE} PARTITION (ds='2024-01-03', hr=5) VALUES (6)")
    assert partitions(spark) == PARTS_AFTER_ADD[:5]
    assert values(spark, f"SELECT v FROM {TABLE} WHERE ds = '2024-01-03'") == [6]


def test_09_alter_add_partition(spark: SparkSession) -> None:
    spark.sql(f"ALTER TABLE {TABLE} ADD PARTITION (ds='2024-02-01', hr=0)")
    assert (table_dir(spark) / "ds=2024-02-01" / "hr=0").is_dir()


def test_10_show_partitions(spark: SparkSession) -> None:
    assert partitions(spark) == PARTS_AFTER_ADD


def test_11_show_partitions_spec(spark: SparkSession) -> None:
    assert partitions(spark, "ds='2024-01-01'") == PARTS_AFTER_ADD[:3]
    assert partitions(spark, "hr=1") == ["ds=2024-01-01/hr=1", "ds=2024-01-02/hr=1"]


SELECTS = [
    pytest.param("", [1, 2, 3, 4, 5, 6], id="select_all"),
    pytest.param("ds = '2024-01-01' AND hr = 1", [1, 2], id="eq_ds_hr"),
    pytest.param("hr = 2", [3], id="eq_hr_only"),
    pytest.param("ds > '2024-01-01' AND ds <= '2024-01-03'", [5, 6], id="range_ds"),
    pytest.param("hr >= 2 AND hr < 5", [3, 4], id="range_hr"),
    pytest.param("hr BETWEEN 1 AND 2", [1, 2, 3, 5], id="between_hr"),
    pytest.param("ds IN ('2024-01-02', '2024-01-03')", [5, 6], id="in_ds"),
    pytest.param("hr IN (1, 5)", [1, 2, 5, 6], id="in_hr"),
    pytest.param("ds LIKE '2024-01%'", [1, 2, 3, 4, 5, 6], id="like_prefix"),
    pytest.param("ds LIKE '%-02'", [5], id="like_suffix"),
    pytest.param("ds LIKE '%01-0%'", [1, 2, 3, 4, 5, 6], id="like_contains"),
    pytest.param("ds = '2024-01-02' OR hr = 3", [4, 5], id="or"),
    pytest.param("ds <> '2024-01-01'", [5, 6], id="not_eq"),
    pytest.param("ds = '2024-01-01' AND v > 1", [2, 3, 4], id="partcol_and_datacol"),
    pytest.param("ds = '2024-02-01'", [], id="empty_partition"),
    pytest.param("ds = '2099-01-01'", [], id="no_partition"),
]


@pytest.mark.parametrize(("where", "expected"), SELECTS)
def test_12_select(spark: SparkSession, where: str, expected: list[int]) -> None:
    clause = f" WHERE {where}" if where else ""
    assert values(spark, f"SELECT v FROM {TABLE}{clause}") == expected


def test_26_drop_partition(spark: SparkSession) -> None:
    spark.sql(f"ALTER TABLE {TABLE} DROP PARTITION (ds='2024-02-01', hr=0)")
    assert not (table_dir(spark) / "ds=2024-02-01" / "hr=0").exists()


def test_27_show_partitions_after_drop(spark: SparkSession) -> None:
    assert partitions(spark) == PARTS_AFTER_DROP


def test_28_prepare_msck_dir(spark: SparkSession, tmp_path: Path) -> None:
    out = tmp_path / "v7"
    spark.createDataFrame([(7,)], "v int").coalesce(1).write.parquet(str(out))
    part_dir = table_dir(spark) / "ds=2024-03-01" / "hr=7"
    part_dir.mkdir(parents=True)
    for f in out.glob("part-*.parquet"):
        shutil.copy(f, part_dir / f.name)
    assert list(part_dir.glob("*.parquet"))


def test_29_msck_repair(spark: SparkSession) -> None:
    spark.sql(f"MSCK REPAIR TABLE {TABLE}")


def test_30_show_partitions_after_msck(spark: SparkSession) -> None:
    assert partitions(spark) == PARTS_AFTER_MSCK


def test_31_select_msck_partition(spark: SparkSession) -> None:
    assert values(spark, f"SELECT v FROM {TABLE} WHERE ds = '2024-03-01' AND hr = 7") == [7]
    assert values(spark, f"SELECT v FROM {TABLE}") == [1, 2, 3, 4, 5, 6, 7]


def test_32_remove_partition_dir(spark: SparkSession) -> None:
    part_dir = table_dir(spark) / "ds=2024-03-01" / "hr=7"
    shutil.rmtree(part_dir)
    part_dir.parent.rmdir()


def test_33_msck_repair_sync(spark: SparkSession) -> None:
    spark.sql(f"MSCK REPAIR TABLE {TABLE} SYNC PARTITIONS")


def test_34_show_partitions_after_sync(spark: SparkSession) -> None:
    assert partitions(spark) == PARTS_AFTER_DROP
    assert values(spark, f"SELECT v FROM {TABLE}") == [1, 2, 3, 4, 5, 6]


def test_35_drop_table(spark: SparkSession, metastore: MetastoreEndpoint) -> None:
    spark.sql(f"DROP TABLE {TABLE}")
    assert not (Path(metastore.warehouse_dir) / f"{DB}.db" / "t").exists()


def test_36_show_tables_after_drop(spark: SparkSession) -> None:
    assert spark.sql(f"SHOW TABLES IN {DB}").collect() == []


def test_37_drop_database(spark: SparkSession, metastore: MetastoreEndpoint) -> None:
    spark.sql(f"DROP DATABASE {DB}")
    assert DB not in values(spark, "SHOW DATABASES")
    assert not (Path(metastore.warehouse_dir) / f"{DB}.db").exists()
