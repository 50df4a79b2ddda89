"""Smoke test of the stack: PySpark with the metastore as its Hive metastore.

Creates a partitioned table, writes two partitions, reads them back with a partition filter and
lists the partitions; exits non-zero when anything is off.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

METASTORE_URI = os.environ.get("METASTORE_URI", "thrift://metastore:9083")
WAREHOUSE = os.environ.get("SPARK_WAREHOUSE", "/warehouse")


def main() -> int:
    """Run the smoke statements; 0 when every check holds."""
    spark = (
        SparkSession.builder.appName("metastore-smoke")
        .config("spark.hadoop.hive.metastore.uris", METASTORE_URI)
        .config("spark.sql.warehouse.dir", WAREHOUSE)
        .config("spark.ui.enabled", "false")
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sql("CREATE DATABASE IF NOT EXISTS smoke")
    spark.sql("DROP TABLE IF EXISTS smoke.events")
    spark.sql(
        "CREATE TABLE smoke.events (v INT) PARTITIONED BY (ds STRING, hr INT) STORED AS PARQUET"
    )
    spark.sql("INSERT INTO smoke.events PARTITION (ds='2024-01-01', hr=1) VALUES (1), (2)")
    spark.sql("INSERT INTO smoke.events PARTITION (ds='2024-01-02', hr=3) VALUES (3)")
    rows = spark.sql("SELECT v FROM smoke.events WHERE ds = '2024-01-01' AND hr = 1").collect()
    partitions = [r[0] for r in spark.sql("SHOW PARTITIONS smoke.events").collect()]
    spark.stop()
    ok = sorted(r.v for r in rows) == [1, 2] and partitions == [
        "ds=2024-01-01/hr=1",
        "ds=2024-01-02/hr=3",
    ]
    print(f"rows={sorted(r.v for r in rows)} partitions={partitions} -> {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
