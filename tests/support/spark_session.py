"""A local PySpark session with Hive support on a metastore of the tests, bound to loopback."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from support.net import MetastoreEndpoint


@contextmanager
def local_spark(
    metastore: MetastoreEndpoint,
    scratch: Path,
    app_name: str,
    settings: Mapping[str, str] | None = None,
    java_options: str = "",
) -> Iterator[Any]:
    """A ``local[1]`` session using ``metastore`` (skips without pyspark or java); ``settings``
    are more Spark settings, ``java_options`` more options of the driver's JVM (they take effect
    only when this process has no JVM yet). Stopped afterwards. Spark logs at ERROR, or at the
    level ``SPARK_TEST_LOG_LEVEL`` names (``WARN`` shows why a metastore connection failed)."""
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("PySpark needs java")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName(app_name)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.local.dir", str(scratch / "local"))
        .config("spark.sql.warehouse.dir", metastore.warehouse_dir)
        .config("spark.hadoop.hive.metastore.uris", metastore.uri)
        .config(
            "spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch} {java_options}".strip()
        )
    )
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    session = builder.enableHiveSupport().getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("SPARK_TEST_LOG_LEVEL", "ERROR"))
    try:
        yield session
    finally:
        session.stop()
