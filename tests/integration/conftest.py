"""An in-process server on a free loopback port, a real socket client, and table builders."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import test_storage
from support.hbase_double import HBaseDouble

from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig
from metastore_server.thrift_api import hms, make_client

#: Which store the integration servers use (``support.test_storage``): "embedded" (default),
#: "hbase-double" (the HBase backend against the protocol-level HBase test double) or "hbase"
#: (against the real HBase of HBASE_THRIFT), from METASTORE_TEST_STORAGE.
TEST_STORAGE = test_storage.kind()
#: Whether the servers run on the HBase backend (the double or a real HBase).
ON_HBASE = test_storage.uses_hbase()
_double: HBaseDouble | None = None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With METASTORE_TEST_STORAGE=hbase and no HBASE_THRIFT, every integration test is
    skipped with the reason (nothing to run them on)."""
    if TEST_STORAGE != "hbase" or test_storage.real_hbase() is not None:
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason=test_storage.SKIP_REASON)
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """On HBase, how many stores the servers leased and how many of them were new table
    prefixes (their tables created); on the run's double, the tables it created."""
    if not ON_HBASE or not test_storage.leases["leased"]:
        return
    made = f"; the double created {len(_double.tables_created)} tables" if _double else ""
    terminalreporter.write_line(
        f"HBase stores: {test_storage.leases['leased']} leased, "
        f"{test_storage.leases['new']} of them new table prefixes{made}"
    )


def _storage_url(tmp: Path) -> str:
    """A store of its own for one server on the storage the run is configured for (on HBase an
    emptied prefix of an earlier server, or a new one: ``test_storage.lease_url``). The run's
    double charges ``METASTORE_TEST_HBASE_DDL_S`` seconds a table operation (default 0; about 1
    is a real HBase's cost)."""
    global _double
    if TEST_STORAGE == "embedded":
        return f"sqlite:///{tmp / 'metastore.db'}"
    if TEST_STORAGE == "hbase":
        url = test_storage.real_hbase_url()
        if url is None:
            pytest.skip(test_storage.SKIP_REASON)
        return url
    if _double is None:
        _double = HBaseDouble(table_ddl_s=float(os.environ.get("METASTORE_TEST_HBASE_DDL_S", 0)))
        _double.start()
        atexit.register(_double.stop)
    return test_storage.lease_url(*_double.address)


class RunningServer:
    """A started server with its warehouse dir, and a client factory."""

    def __init__(self, tmp: Path, **config: object) -> None:
        self.warehouse = tmp / "warehouse"
        if "storage" not in config:  # a store of its own: on HBase, emptied when done
            url = _storage_url(tmp)
            config["storage"] = test_storage.own(url) if ON_HBASE else url
        self.config = ServerConfig(
            host="127.0.0.1",
            port=0,
            warehouse=str(self.warehouse),
            **config,  # type: ignore[arg-type]
        )
        self.server, self._close = build_server(self.config)
        test_storage.server_started(self.config.storage)
        self._stopped = False
        self.server.start()
        self.host, self.port = self.server.address
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def client(self, **kwargs: object):  # noqa: ANN201 - thriftpy2 client
        """A new client connection."""
        return make_client(self.host, self.port, **kwargs)  # type: ignore[arg-type]

    def stop(self) -> None:
        """Stop serving and close the store; on HBase, a store of its own that no other server
        uses has its tables emptied and its prefix leased again (at the end of the test when
        stopped within one)."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self.server.stop()
            self._close()
        finally:
            test_storage.server_stopped(self.config.storage)


@pytest.fixture(autouse=True)
def _release_after_the_test() -> Iterator[None]:
    """Stores of servers stopped during a test are emptied and released at its end (it may
    restart a server on the same store)."""
    with test_storage.deferred_release():
        yield


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server per test module."""
    server = RunningServer(tmp_path_factory.mktemp("metastore"))
    yield server
    server.stop()


@pytest.fixture()
def start_server(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Starts servers of a test's own, with the given settings; stops them at its end (a test
    may stop one itself, to start another on the same store)."""
    started: list[RunningServer] = []

    def start(**config: object) -> RunningServer:
        server = RunningServer(tmp_path / f"server{len(started)}", **config)
        started.append(server)
        return server

    yield start
    for server in started:
        with contextlib.suppress(Exception):  # stopped already
            server.stop()


@pytest.fixture(scope="module")
def world(running: RunningServer) -> RunningServer:
    """The module's server with the objects of the client call-sequence tests made
    (``client_flow_world``)."""
    from .client_flow_world import populate

    client = running.client()
    populate(client)
    client.close()
    return running


@pytest.fixture()
def client(running: RunningServer) -> Iterator[object]:
    """A client connected to the module's server."""
    connection = running.client()
    yield connection
    connection.close()


def column(name: str, type_: str = "string") -> hms.FieldSchema:
    """A column definition."""
    return hms.FieldSchema(name=name, type=type_, comment=None)


def make_table(
    db: str,
    name: str,
    keys: list[tuple[str, str]] | None = None,
    columns: list[tuple[str, str]] | None = None,
    **extra: object,
) -> hms.Table:
    """A Parquet table definition like the ones Spark sends."""
    sd = hms.StorageDescriptor(
        cols=[column(n, t) for n, t in (columns or [("v", "int")])],
        location=None,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(
            name=None,
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={"serialization.format": "1"},
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return hms.Table(
        tableName=name,
        dbName=db,
        owner="tester",
        createTime=0,
        lastAccessTime=0,
        retention=0,
        sd=sd,
        partitionKeys=[column(n, t) for n, t in (keys or [])],
        parameters=dict(extra.pop("parameters", {}) or {}),  # type: ignore[arg-type]
        tableType=extra.pop("tableType", "MANAGED_TABLE"),  # type: ignore[arg-type]
        **extra,
    )


def make_partition(
    db: str, table: str, values: list[str], location: str | None = None
) -> hms.Partition:
    """A partition definition with an optional explicit location."""
    sd = hms.StorageDescriptor(
        cols=[column("v", "int")],
        location=location,
        serdeInfo=hms.SerDeInfo(serializationLib="x", parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return hms.Partition(values=values, dbName=db, tableName=table, sd=sd, parameters={})


def create_db(client: object, name: str) -> None:
    """Create a database with a default location."""
    client.create_database(hms.Database(name=name, description="", parameters={}))  # type: ignore[attr-defined]


def clocked_catalog(tmp: Path, start: int) -> tuple[object, list[int]]:
    """A catalog over an embedded store of its own whose clock (seconds) is the list's one
    element, moved by the test; no data operations."""
    from metastore_server.storage.open import open_store

    from metastore_server.catalog.data.operations import DataOperations
    from metastore_server.catalog.data.warehouse import Warehouse
    from metastore_server.catalog.facade import Catalog

    catalog = Catalog(
        open_store(f"sqlite:///{tmp / 'm.db'}"),
        Warehouse(tmp / "wh"),
        data=DataOperations(enabled=False),
    )
    clock = [start]
    catalog.ctx.now = lambda: clock[0]
    return catalog, clock


def audit_lines(logs: list[dict], method: str, count: int) -> list[dict]:
    """The audit lines of ``method``: the server writes one after sending the reply, so it may
    come a moment after the client has its answer."""
    deadline = time.monotonic() + 5
    while True:
        lines = [e for e in logs if e.get("event") == "call" and e.get("method") == method]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.01)
