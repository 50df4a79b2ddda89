"""A test server on HBase gets a table prefix of its own, leased: once no server runs on it any
more (at the end of the test when stopped within one, so a test may stop a server and start
another on the same store), its tables are emptied and the prefix goes to the next server. So
the suite creates each table once per prefix, not once per server: on a real HBase a table
takes about a second to create. Shown on an HBase test double of the test's own that charges
time for each table operation and counts the tables it creates."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import happybase
import pytest
from support import test_storage
from support.hbase_cleanup import count_rows
from support.hbase_double import HBaseDouble

from . import conftest as harness
from .conftest import RunningServer, create_db

pytestmark = pytest.mark.own_double

#: Seconds the double takes per table operation here: enough to be a cost, small enough for
#: ``make test`` (a real HBase takes about 1; METASTORE_TEST_HBASE_DDL_S sets the suite's).
DDL_S = 0.05


@pytest.fixture()
def double(monkeypatch: pytest.MonkeyPatch) -> Iterator[HBaseDouble]:
    """A double that the servers this test starts without a store get their prefixes on."""
    with HBaseDouble(table_ddl_s=DDL_S) as running:
        monkeypatch.setattr(harness, "ON_HBASE", True)
        monkeypatch.setattr(harness, "_storage_url", lambda tmp: test_storage.lease_url(
            *running.address))  # fmt: skip
        yield running
        test_storage.forget(*running.address)


def _tables(double: HBaseDouble, prefix: str) -> list[bytes]:
    connection = happybase.Connection(*double.address)
    try:
        return [name for name in connection.tables() if name.decode().startswith(prefix)]
    finally:
        connection.close()


def _prefix(server: RunningServer) -> str:
    from metastore_server.storage.hbase import HBaseSettings

    return HBaseSettings.from_url(server.config.storage).prefix


def _databases(server: RunningServer) -> list[str]:
    client = server.client()
    try:
        return list(client.get_all_databases())
    finally:
        client.close()


def test_a_stopped_servers_tables_are_emptied_and_its_prefix_leased_again(
    double: HBaseDouble, tmp_path: Path
) -> None:
    first = RunningServer(tmp_path / "first")
    prefix = _prefix(first)
    client = first.client()
    create_db(client, "kept")
    client.close()
    created = len(_tables(double, prefix))
    assert created >= 5
    first.stop()
    # within the test the release waits: a server started on the same store sees the data
    again = RunningServer(tmp_path / "again", storage=first.config.storage)
    assert "kept" in _databases(again)
    assert test_storage.release_unused() == 0  # a server still runs on it
    again.stop()
    assert count_rows(*double.address, prefix) > 0  # still deferred
    assert test_storage.release_unused() == created  # what the end of the test does
    assert len(_tables(double, prefix)) == created  # kept, and empty
    assert count_rows(*double.address, prefix) == 0
    later = RunningServer(tmp_path / "later")
    assert _prefix(later) == prefix  # the next server's
    assert "kept" not in _databases(later)
    later.stop()


def test_servers_one_after_another_create_the_tables_once(
    double: HBaseDouble, tmp_path: Path
) -> None:
    prefixes = set()
    for number in range(4):  # as four tests, each with a server of its own
        server = RunningServer(tmp_path / f"s{number}")
        prefixes.add(_prefix(server))
        assert _databases(server) == ["default"]  # nothing of the tests before
        create_db(server.client(), f"db{number}")
        server.stop()
        test_storage.release_unused()  # the end of the test
    assert len(prefixes) == 1
    per_prefix = len(_tables(double, prefixes.pop()))
    assert len(double.tables_created) == per_prefix  # once, not four times
    assert double.calls["deleteTable"] == 0


def test_servers_at_once_get_prefixes_of_their_own(double: HBaseDouble, tmp_path: Path) -> None:
    one, two = RunningServer(tmp_path / "one"), RunningServer(tmp_path / "two")
    create_db(one.client(), "only_in_one")
    assert _prefix(one) != _prefix(two)
    assert "only_in_one" not in _databases(two)
    one.stop()
    two.stop()
    test_storage.release_unused()
    three, four = RunningServer(tmp_path / "three"), RunningServer(tmp_path / "four")
    assert {_prefix(three), _prefix(four)} == {_prefix(one), _prefix(two)}  # both reused
    assert _databases(three) == _databases(four) == ["default"]
    three.stop()
    four.stop()


def test_a_server_stopped_outside_a_test_releases_its_store_at_once(
    double: HBaseDouble, tmp_path: Path
) -> None:
    server = RunningServer(tmp_path)
    create_db(server.client(), "gone")
    prefix = _prefix(server)
    other = RunningServer(tmp_path / "other")  # another prefix on the same HBase: kept
    create_db(other.client(), "stays")
    outside = test_storage._deferring[0]
    test_storage._deferring[0] = 0  # as at a module fixture's teardown
    try:
        server.stop()
    finally:
        test_storage._deferring[0] = outside
    assert count_rows(*double.address, prefix) == 0
    assert "stays" in _databases(other)
    other.stop()


def test_a_store_given_to_a_server_is_not_its_own(double: HBaseDouble, tmp_path: Path) -> None:
    url = double.url(prefix="given_")
    server = RunningServer(tmp_path, storage=url)
    create_db(server.client(), "given_db")
    server.stop()
    assert test_storage.release_unused() == 0
    assert count_rows(*double.address, "given_") > 0


def test_a_store_that_cannot_be_emptied_is_dropped(
    double: HBaseDouble, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = RunningServer(tmp_path)
    prefix = _prefix(server)
    server.stop()

    def fail(*args: object) -> int:
        raise OSError("HBase went away")

    monkeypatch.setattr(test_storage, "empty_tables", fail)
    assert test_storage.release_unused() > 0  # dropped instead
    assert _tables(double, prefix) == []
    following = RunningServer(tmp_path / "next")
    assert _prefix(following) != prefix  # not leased again
    following.stop()
