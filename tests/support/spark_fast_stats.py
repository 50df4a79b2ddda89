"""The Spark statements of ``tests/spark/test_spark_fast_stats_side_by_side.py``, run in a process
of their own against one metastore (a JVM holds one Hive client), printing what DESCRIBE
EXTENDED shows of the tables and partitions as JSON.

    python tests/support/spark_fast_stats.py thrift://127.0.0.1:9083 <warehouse> <lake> <out.json>

The database (``DB``) is left for the caller to read through Thrift and drop.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

if not __package__:  # executed as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.net import MetastoreEndpoint  # noqa: E402
from support.spark_session import local_spark  # noqa: E402

DB = "spark_fast_stats"
#: DESCRIBE EXTENDED rows about statistics and parameters.
ROWS = ("Statistics", "Table Properties", "Partition Statistics", "Partition Parameters")
_DDL_TIME = re.compile(r"transient_lastDdlTime=\d+")


def _described(spark: Any, what: str, lake: str) -> dict[str, str]:
    found = {}
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {what}").collect():
        if row[0] in ROWS:
            text = _DDL_TIME.sub("transient_lastDdlTime=<time>", str(row[1]))
            found[row[0]] = text.replace(lake, "<LAKE>")
    return found


def _broadcasts(spark: Any, left: str, right: str) -> bool:
    plan = spark.sql(f"SELECT * FROM {left} a JOIN {right} b ON a.v = b.v")
    return "BroadcastHashJoin" in plan._jdf.queryExecution().executedPlan().toString()


def run(endpoint: MetastoreEndpoint, lake: Path) -> dict[str, Any]:
    """The statements, and what Spark shows after them."""
    shown: dict[str, Any] = {}
    scratch = Path(tempfile.mkdtemp(prefix="spark-fast-stats-"))
    settings = {"spark.sql.warehouse.dir": str(lake / "warehouse"),
                "spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict"}  # fmt: skip
    with local_spark(endpoint, scratch, "fast-stats", settings) as spark:
        source = spark.range(0, 200).selectExpr("id AS v", "CAST(id % 3 AS STRING) AS ds")
        source.repartition(2, "v").select("v").write.parquet(str(lake / "existing"))
        spark.sql(f"CREATE DATABASE {DB} LOCATION '{lake / 'db'}'")
        spark.sql(f"CREATE TABLE {DB}.ext (v BIGINT) STORED AS PARQUET "
                  f"LOCATION '{lake / 'existing'}'")  # fmt: skip
        shown["ext_created"] = _described(spark, f"{DB}.ext", str(lake))
        spark.sql(f"CREATE TABLE {DB}.small (v BIGINT) STORED AS PARQUET")
        spark.sql(f"INSERT INTO {DB}.small VALUES (1), (2)")
        shown["ext_broadcast"] = _broadcasts(spark, f"{DB}.small", f"{DB}.ext")
        spark.sql(f"INSERT OVERWRITE TABLE {DB}.ext SELECT id FROM range(0, 50)")
        shown["ext_overwritten"] = _described(spark, f"{DB}.ext", str(lake))
        spark.sql(f"CREATE TABLE {DB}.part (v BIGINT) PARTITIONED BY (ds STRING) "
                  "STORED AS PARQUET")  # fmt: skip
        source.createOrReplaceTempView("source")
        spark.sql(f"INSERT INTO {DB}.part PARTITION (ds) SELECT v, ds FROM source")
        shown["part"] = _described(spark, f"{DB}.part", str(lake))
        shown["partitions"] = sorted(
            row[0] for row in spark.sql(f"SHOW PARTITIONS {DB}.part").collect()
        )
        for name in shown["partitions"]:
            spec = name.replace("=", "='") + "'"
            shown[name] = _described(spark, f"{DB}.part PARTITION ({spec})", str(lake))
        spark.sql(f"INSERT OVERWRITE TABLE {DB}.part PARTITION (ds='1') SELECT id FROM range(5)")
        shown["ds=1 overwritten"] = _described(spark, f"{DB}.part PARTITION (ds='1')", str(lake))
    return shown


def main(argv: list[str]) -> int:
    uri, warehouse, lake, out = argv
    host, _, port = uri.removeprefix("thrift://").partition(":")
    shown = run(MetastoreEndpoint(host, int(port), warehouse), Path(lake))
    Path(out).write_text(json.dumps(shown, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
