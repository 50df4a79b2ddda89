"""PySpark (its bundled Hive client, on the Thrift port) and an Iceberg REST client (pyiceberg's
``RestCatalog``, on ``--rest-port``) against one server: a table made through REST is in
Spark's ``SHOW TABLES``, and Spark's own Hive tables are not Iceberg tables to REST."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.net import LOOPBACK, MetastoreEndpoint, free_port
from support.our_server import OurServer
from support.spark_session import local_spark

pytestmark = [pytest.mark.spark]
pa = pytest.importorskip("pyarrow", reason="pyiceberg's writes need pyarrow")
pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
rest = pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MetastoreEndpoint, str]]:
    """Our server (Thrift endpoint) and its REST catalog's URI."""
    rest_port = free_port(LOOPBACK)
    server = OurServer(tmp_path_factory.mktemp("spark-rest"),
                       extra_args=["--rest-port", str(rest_port)])  # fmt: skip
    with server as endpoint:
        uri = f"http://{LOOPBACK}:{rest_port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                rest.RestCatalog("probe", uri=uri).list_namespaces()
                break
            except Exception:  # noqa: BLE001 - not listening yet
                assert time.monotonic() < deadline, "the REST catalog did not start"
                time.sleep(0.2)
        yield endpoint, uri


def test_spark_sees_the_rest_catalogs_tables(
    served: tuple[MetastoreEndpoint, str], tmp_path: Path
) -> None:
    endpoint, uri = served
    catalog = rest.RestCatalog("rest", uri=uri)
    catalog.create_namespace("shared")
    table = catalog.create_table("shared.events", schema=SCHEMA)
    table.append(pa.Table.from_pylist([{"id": 1, "name": "a"}], schema=SCHEMA))
    with local_spark(endpoint, tmp_path, "iceberg-rest") as spark:
        shown = [row.tableName for row in spark.sql("SHOW TABLES IN shared").collect()]
        assert shown == ["events"]
        spark.sql("CREATE TABLE shared.plain (v INT) STORED AS PARQUET")
        spark.sql("INSERT INTO shared.plain VALUES (1)")
        props = {row[0]: row[1] for row in spark.sql("SHOW TBLPROPERTIES shared.events").collect()}
        # (Spark hides table_type among the properties HMS keeps for itself.)
        assert props["metadata_location"] == catalog.load_table("shared.events").metadata_location
    assert catalog.list_tables("shared") == [("shared", "events")]  # plain is not Iceberg
    status: Any = None
    try:
        catalog.load_table("shared.plain")
    except Exception as exc:  # noqa: BLE001 - its type is what is checked
        status = type(exc).__name__
    assert status == "NoSuchTableError"
