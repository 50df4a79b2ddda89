"""A test server on HBase drops the tables of its own table prefix when it stops, once no other
server runs on that store (at the end of the test when stopped within one, so a test may stop a
server and start another on the same store). Shown on an HBase test double of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import happybase
import pytest
from support import test_storage
from support.hbase_double import HBaseDouble

from . import conftest as harness
from .conftest import RunningServer, create_db


@pytest.fixture()
def double(monkeypatch: pytest.MonkeyPatch) -> Iterator[HBaseDouble]:
    """A double that the servers this test starts without a store get their prefixes on."""
    with HBaseDouble() as running:
        monkeypatch.setattr(harness, "ON_HBASE", True)
        monkeypatch.setattr(
            harness, "_storage_url", lambda tmp: running.url(prefix=test_storage.server_prefix())
        )
        yield running


def _tables(double: HBaseDouble, prefix: str) -> list[bytes]:
    connection = happybase.Connection(*double.address)
    try:
        return [name for name in connection.tables() if name.decode().startswith(prefix)]
    finally:
        connection.close()


def _prefix(server: RunningServer) -> str:
    from metastore_server.storage.hbase import HBaseSettings

    return HBaseSettings.from_url(server.config.storage).prefix


def test_a_stopped_servers_tables_are_dropped(double: HBaseDouble, tmp_path: Path) -> None:
    first = RunningServer(tmp_path / "first")
    prefix = _prefix(first)
    client = first.client()
    create_db(client, "kept")
    client.close()
    assert len(_tables(double, prefix)) >= 5
    first.stop()
    # within the test the drop waits: a server started on the same store sees the data
    again = RunningServer(tmp_path / "again", storage=first.config.storage)
    client = again.client()
    assert "kept" in client.get_all_databases()
    client.close()
    assert test_storage.drop_released() == 0  # a server still runs on it
    again.stop()
    assert _tables(double, prefix)  # still deferred
    assert test_storage.drop_released() >= 5  # what the end of the test does
    assert _tables(double, prefix) == []


def test_a_server_stopped_outside_a_test_drops_its_tables_at_once(
    double: HBaseDouble, tmp_path: Path
) -> None:
    server = RunningServer(tmp_path)
    prefix = _prefix(server)
    other = RunningServer(tmp_path / "other")  # another prefix on the same HBase: kept
    assert _tables(double, prefix)
    outside = test_storage._deferring[0]
    test_storage._deferring[0] = 0  # as at a module fixture's teardown
    try:
        server.stop()
    finally:
        test_storage._deferring[0] = outside
    assert _tables(double, prefix) == []
    assert _tables(double, _prefix(other))
    other.stop()


def test_a_store_given_to_a_server_is_not_its_own(double: HBaseDouble, tmp_path: Path) -> None:
    url = double.url(prefix="given_")
    server = RunningServer(tmp_path, storage=url)
    server.stop()
    assert test_storage.drop_released() == 0
    assert _tables(double, "given_")
