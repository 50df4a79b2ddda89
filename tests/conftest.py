"""Shared pytest fixtures: the reference Hive Metastore, our server, and the one under test."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from support.net import MetastoreEndpoint  # noqa: E402
from support.our_server import our_metastore  # noqa: E402,F401
from support.reference_hms import reference_hms  # noqa: E402,F401


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers defined here."""
    config.addinivalue_line(
        "markers", "incremental: a failed test skips the remaining tests of its class/module"
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collect garbage here as a serving process does (``tune_garbage_collector``): the tests
    start servers inside this process, and with Python's default thresholds a run's growing
    heap made a full collection of some 0.2 s every second or two late in a run, a pause of
    every in-process server long enough to outlast the short writer leases some tests use."""
    from metastore_server.server.app import tune_garbage_collector

    tune_garbage_collector()


def _incremental_scope(item: pytest.Item) -> pytest.Node | None:
    """The class or module whose tests run as dependent steps, if the item is marked.

    Set PYTEST_KEEP_GOING=1 to run every step anyway (to see all failures at once).
    """
    if item.get_closest_marker("incremental") is None or os.environ.get("PYTEST_KEEP_GOING"):
        return None
    return item.getparent(pytest.Class) or item.getparent(pytest.Module)


def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> None:
    """Remember the first failing step of an incremental class/module."""
    scope = _incremental_scope(item)
    if (
        scope is not None
        and call.when == "call"
        and call.excinfo is not None
        and not call.excinfo.errisinstance(pytest.skip.Exception)
    ):
        scope._first_failed = item.name  # type: ignore[attr-defined]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip the later steps of an incremental class/module once one has failed."""
    scope = _incremental_scope(item)
    failed = getattr(scope, "_first_failed", None) if scope is not None else None
    if failed is not None:
        pytest.skip(f"previous step failed: {failed}")


@pytest.fixture(scope="session")
def metastore(request: pytest.FixtureRequest) -> MetastoreEndpoint:
    """The metastore under test: our server unless METASTORE_URI says otherwise.

    METASTORE_URI=thrift://host:port (+ METASTORE_WAREHOUSE=dir) uses an already running
    metastore; METASTORE_URI=reference starts the reference Hive Metastore 2.3.x.
    """
    uri = os.environ.get("METASTORE_URI", "").strip()
    if not uri:
        return request.getfixturevalue("our_metastore")
    if uri == "reference":
        return request.getfixturevalue("reference_hms")
    parts = urlsplit(uri)
    if parts.scheme != "thrift" or not parts.hostname or not parts.port:
        pytest.fail(f"METASTORE_URI must look like thrift://127.0.0.1:9083, got {uri!r}")
    warehouse = os.environ.get("METASTORE_WAREHOUSE")
    if not warehouse:
        pytest.fail("METASTORE_URI is set: also set METASTORE_WAREHOUSE to its warehouse dir")
    if warehouse.startswith("file:"):
        warehouse = urlsplit(warehouse).path
    return MetastoreEndpoint(parts.hostname, parts.port, warehouse.rstrip("/"))
