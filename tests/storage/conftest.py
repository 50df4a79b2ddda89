"""The storage contract's backends: one fixture, one param per backend.

A backend is described by a ``Backend``: how to open a store in this process, the Python source
that opens the same store in another process (for the crash test), and the guarantees it has.
Backends:

* ``embedded``: SQLite in a temporary directory.
* ``hbase-double``: ``storage.hbase`` against the HBase test double (``support.hbase_double``,
  a thriftpy2 server of HBase's Thrift IDL over an embedded store), one per session, a fresh
  table prefix per test. Always runs.
* ``hbase``: ``storage.hbase`` against a real HBase Thrift gateway: ``HBASE_THRIFT=host:port``,
  else a testcontainers HBase when a Docker engine answers (``HBASE_IMAGE``; by default the
  image of ``docker/hbase/``, Apache HBase 2.6.5, built first), else skipped. A fresh table
  prefix per test; its tables are dropped after.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import happybase
import pytest
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.port import StoragePort
from support.hbase_double import HBaseDouble, storage_url

#: The project's own HBase image (docker/hbase/), built when no other image is named.
OWN_HBASE_IMAGE = "hbase-metastore/hbase:2.6.5"
HBASE_IMAGE = os.environ.get("HBASE_IMAGE", OWN_HBASE_IMAGE)
HBASE_DOCKERFILE_DIR = Path(__file__).resolve().parents[2] / "docker" / "hbase"
_PREFIXES = itertools.count(1)


@dataclass(frozen=True)
class Backend:
    """One store's worth of backing storage, which may be opened several times."""

    name: str
    open: Callable[[], StoragePort]
    open_source: str | None
    """Python source that binds ``store`` to the same store in a fresh process (None: the
    crash test does not apply)."""
    atomic_batches: bool = True
    snapshot_scans: bool = True
    applies_filters: bool = False
    """Scans apply the filter string (so a filtered scan returns exactly the accepted rows)."""
    exact_empty_checks: bool = True
    """A condition tells an empty value from an absent column."""
    double: HBaseDouble | None = None
    """The HBase test double behind the store, for fault injection."""
    url: str | None = None
    """The storage URL (HBase), to open the store with other options."""


def _embedded(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    path = str(tmp_path / "nested" / "store.db")
    source = (
        "from metastore_server.storage.embedded import SqliteStore\n"
        f"store = SqliteStore({path!r})\n"
    )
    return Backend("embedded", lambda: SqliteStore(path), source)


def _hbase_backend(name: str, url: str, double: HBaseDouble | None) -> Backend:
    source = (
        "from metastore_server.storage.hbase import HBaseStore\n"
        f"store = HBaseStore.from_url({url!r})\n"
    )
    return Backend(
        name,
        lambda: HBaseStore.from_url(url),
        source,
        atomic_batches=False,
        snapshot_scans=False,
        applies_filters=True,
        exact_empty_checks=False,
        double=double,
        url=url,
    )


def _drop_tables(host: str, port: int, prefix: str) -> None:
    connection = happybase.Connection(host, port, timeout=60_000)
    try:
        for name in connection.tables():
            if name.startswith(prefix.encode()):
                connection.delete_table(name, disable=True)
    finally:
        connection.close()


def _hbase_double(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    double: HBaseDouble = request.getfixturevalue("hbase_double")
    prefix = f"c{next(_PREFIXES)}_"
    request.addfinalizer(lambda: _drop_tables(double.host, double.port, prefix))
    request.addfinalizer(double.heal)  # (finalizers run last first)
    url = storage_url(double.host, double.port, prefix=prefix, connect_retries=0)
    return _hbase_backend("hbase-double", url, double)


def _hbase(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    host, port = request.getfixturevalue("real_hbase")
    prefix = f"hmstest_{uuid.uuid4().hex[:8]}_"
    request.addfinalizer(lambda: _drop_tables(host, port, prefix))
    return _hbase_backend("hbase", storage_url(host, port, prefix=prefix), None)


_FACTORIES: dict[str, Callable[[pytest.FixtureRequest, Path], Backend]] = {
    "embedded": _embedded,
    "hbase-double": _hbase_double,
    "hbase": _hbase,
}


@pytest.fixture(scope="session")
def hbase_double() -> Iterator[HBaseDouble]:
    """One HBase test double for the session (tests use fresh table prefixes)."""
    with HBaseDouble() as double:
        yield double


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


@pytest.fixture(scope="session")
def real_hbase() -> Iterator[tuple[str, int]]:
    """(host, port) of a real HBase Thrift gateway, or skip with the reason."""
    given = os.environ.get("HBASE_THRIFT", "").strip()
    if given:
        host, _, port = given.rpartition(":")
        if not host or not port.isdigit():
            pytest.fail(f"HBASE_THRIFT must look like host:9090, not {given!r}")
        yield host, int(port)
        return
    if not _docker_answers():
        pytest.skip("no real HBase: set HBASE_THRIFT=host:port, or run a Docker engine so "
                    "testcontainers can start " + HBASE_IMAGE)  # fmt: skip
    from testcontainers.core.container import DockerContainer

    if HBASE_IMAGE == OWN_HBASE_IMAGE:
        from testcontainers.core.image import DockerImage

        DockerImage(path=str(HBASE_DOCKERFILE_DIR), tag=OWN_HBASE_IMAGE, clean_up=False).build()
    container = DockerContainer(HBASE_IMAGE).with_exposed_ports(9090)
    container.start()
    try:
        host, port = container.get_container_host_ip(), int(container.get_exposed_port(9090))
        # HBase takes a while: let the store's own start-up retries wait for the gateway.
        HBaseStore.from_url(
            storage_url(host, port, connect_retries=12, retry_backoff_ms=1000)
        ).close()
        yield host, port
    finally:
        container.stop()


@pytest.fixture(params=["hbase-double", "hbase"])
def hbase_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A fresh HBase backing storage (the double, or a real HBase when one is given)."""
    return _FACTORIES[request.param](request, tmp_path)


@pytest.fixture(params=sorted(_FACTORIES))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A fresh, empty backing storage for each test and backend."""
    return _FACTORIES[request.param](request, tmp_path)


@pytest.fixture
def store(backend: Backend) -> Iterator[StoragePort]:
    """An open store on the backend, closed after the test."""
    opened = backend.open()
    try:
        yield opened
    finally:
        opened.close()
