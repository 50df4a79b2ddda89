"""PySpark's built-in Hive 2.3 client over TLS to our server (in-process, 127.0.0.1 only).

The client is told with ``hive.metastore.use.SSL`` and a JKS trust store made with the JDK's
``keytool`` from a self-signed certificate made here with the ``openssl`` command.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from support.net import MetastoreEndpoint
from support.spark_session import local_spark
from support.tls import make_certificate, make_trust_store

from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig
from metastore_server.thrift_api import make_client

pytestmark = pytest.mark.spark

DB = "tls_spark"
STORE_PASSWORD = "changeit"


class TlsMetastore(NamedTuple):
    """A running TLS server, its certificate and a trust store holding it."""

    endpoint: MetastoreEndpoint
    cert: Path
    truststore: Path


def _make_trust(directory: Path) -> tuple[Path, Path, Path]:
    """(certificate, key, JKS trust store) for 127.0.0.1 / localhost."""
    cert, key = make_certificate(directory)
    return cert, key, make_trust_store(cert, directory / "trust.jks", STORE_PASSWORD)


@pytest.fixture(scope="module")
def tls_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsMetastore]:
    """Our server speaking TLS only, in this process, on a free loopback port."""
    work = tmp_path_factory.mktemp("spark-tls")
    cert, key, store = _make_trust(work)
    warehouse = work / "warehouse"
    warehouse.mkdir()
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        storage=f"sqlite:///{work / 'metastore.db'}",
        warehouse=str(warehouse),
        tls_cert=str(cert),
        tls_key=str(key),
    )
    config.validate()
    server, close = build_server(config)
    server.start()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.address
    try:
        yield TlsMetastore(MetastoreEndpoint(host, port, str(warehouse)), cert, store)
    finally:
        server.stop()
        close()


@pytest.fixture(scope="module")
def spark(tls_metastore: TlsMetastore, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local PySpark session whose Hive client talks TLS to the metastore."""
    settings = {
        "spark.hadoop.hive.metastore.use.SSL": "true",
        "spark.hadoop.hive.metastore.truststore.path": str(tls_metastore.truststore),
        "spark.hadoop.hive.metastore.truststore.password": STORE_PASSWORD,
    }
    scratch = tmp_path_factory.mktemp("spark-tls-session")
    with local_spark(tls_metastore.endpoint, scratch, "metastore-tls", settings) as session:
        yield session


def test_spark_sql_over_tls(spark: Any, tls_metastore: TlsMetastore) -> None:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"CREATE TABLE {DB}.events (v int) PARTITIONED BY (ds string) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.events PARTITION (ds='2024-01-01') VALUES (1), (2)")
    spark.sql(f"ALTER TABLE {DB}.events ADD PARTITION (ds='2024-01-02')")
    partitions = [row[0] for row in spark.sql(f"SHOW PARTITIONS {DB}.events").collect()]
    assert partitions == ["ds=2024-01-01", "ds=2024-01-02"]
    rows = spark.sql(f"SELECT v FROM {DB}.events WHERE ds = '2024-01-01' ORDER BY v").collect()
    assert [row.v for row in rows] == [1, 2]

    endpoint = tls_metastore.endpoint
    client = make_client(endpoint.host, endpoint.port, tls_ca=str(tls_metastore.cert))
    try:
        assert client.get_partition_names(DB, "events", -1) == ["ds=2024-01-01", "ds=2024-01-02"]
    finally:
        client.close()
    spark.sql(f"DROP DATABASE {DB} CASCADE")
