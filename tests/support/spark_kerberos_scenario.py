"""PySpark's Hive client on a Kerberos metastore, in a process (and JVM) of its own.

A JVM's Kerberos set-up (its krb5.conf, Hadoop's login user) is global and PySpark keeps one JVM
per Python process, so the Kerberos Spark tests run their session here, in a child process:
``python spark_kerberos_scenario.py SPEC`` where SPEC is a JSON file (see :func:`settings`). It
prints one JSON line: what the queries returned, or the error that stopped them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if str(Path(__file__).parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parents[1]))

from support.net import MetastoreEndpoint  # noqa: E402
from support.spark_session import local_spark  # noqa: E402

DB = "kerberos_spark"


def settings(spec: dict[str, Any]) -> dict[str, str]:
    """The Spark settings of a Kerberos Hive client: the metastore's principal (``_HOST``
    stands for the host of the metastore URI), the spec's ``extra_settings``, and the user's
    principal and keytab (none: no login)."""
    values = {
        "spark.hadoop.hive.metastore.sasl.enabled": "true",
        "spark.hadoop.hive.metastore.kerberos.principal": spec["service_principal"],
        "spark.hadoop.hadoop.security.authentication": "kerberos",
        # One attempt: a refused client fails at once (the Hive client's default is 3, 1 s apart).
        "spark.hadoop.hive.metastore.connect.retries": "1",
    }
    values.update(spec.get("extra_settings", {}))
    if spec.get("user_principal"):
        values["spark.kerberos.principal"] = spec["user_principal"]
        values["spark.kerberos.keytab"] = spec["user_keytab"]
    return values


def scenario(spark: Any) -> dict[str, Any]:
    """Create, write and read a partitioned table."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"CREATE TABLE {DB}.events (v int) PARTITIONED BY (ds string) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.events PARTITION (ds='2024-01-01') VALUES (1), (2)")
    spark.sql(f"INSERT INTO {DB}.events PARTITION (ds='2024-01-02') VALUES (3)")
    filtered = spark.sql(f"SELECT v FROM {DB}.events WHERE ds = '2024-01-02'").collect()
    everything = spark.sql(f"SELECT v, ds FROM {DB}.events ORDER BY v").collect()
    partitions = spark.sql(f"SHOW PARTITIONS {DB}.events").collect()
    return {
        "filtered": [row.v for row in filtered],
        "all": [[row.v, row.ds] for row in everything],
        "partitions": [row[0] for row in partitions],
        "spark_user": spark.sparkContext.sparkUser(),
    }


def main(spec_path: str) -> int:
    """Run the spec's session; print the result as one JSON line."""
    spec = json.loads(Path(spec_path).read_text())
    endpoint = MetastoreEndpoint(spec["host"], spec["port"], spec["warehouse"])
    java = f"-Djava.security.krb5.conf={spec['krb5_conf']}"
    scratch = Path(spec["scratch"])
    with local_spark(endpoint, scratch, "metastore-kerberos", settings(spec), java) as spark:
        try:
            result: dict[str, Any] = {"ok": True, **scenario(spark)}
        except Exception as exc:  # noqa: BLE001 - reported to the test, which judges it
            result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
