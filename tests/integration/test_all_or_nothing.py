"""A call that answers an error leaves no change behind: in the metadata, the timelines, the
statistics, the grants, the dependent partitions, the notification log and the data on disk.

Each test makes a late step of a write call fail (a store write after the first one, as a full
disk or a lost store would) and checks through the Thrift API and the file system that the
client's view and the data agree with the call never having happened, on every store: on the
embedded store every metadata change is one transaction, on HBase one intent
(``storage.intents``) that the failure rolls back."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metastore_server.catalog.objects import statistics
from metastore_server.catalog.partitions.altering import Altering
from metastore_server.catalog.security.privileges import Privileges
from metastore_server.catalog.timelines.keeper import TimelineKeeper
from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_partition, make_table

DB = "aon"
TIMED = {"cube.storagetable.time.partcols": "ds"}
DAILY = {"cube.storagetable.partition.update.period": "DAILY"}


class Injected(OSError):
    """The failure a test injects."""


def _fail(*_args: object, **_kwargs: object) -> None:
    raise Injected("injected store failure")


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[RunningServer]:
    running = RunningServer(tmp_path)
    client = running.client()
    client.create_database(hms.Database(name=DB, description="", parameters={}))
    client.close()
    yield running
    running.stop()


@pytest.fixture()
def client(server: RunningServer) -> Iterator[Any]:
    conn = server.client()
    yield conn
    conn.close()


def _local(location: str) -> Path:
    return Path(location.removeprefix("file:"))


def _timed_table(client: Any, name: str) -> Any:
    client.create_table(make_table(DB, name, keys=[("ds", "string")], parameters=dict(TIMED)))
    part = make_partition(DB, name, ["2024-01-01"])
    part.parameters = dict(DAILY)
    client.add_partitions([part])
    stored = client.get_partition(DB, name, ["2024-01-01"])
    (_local(stored.sd.location) / "f.parquet").write_text("data")
    return stored


def _event_id(client: Any) -> int:
    return client.get_current_notificationEventId().eventId


def _refused(call: Any, *args: object) -> None:
    with pytest.raises(Exception) as info:  # noqa: PT011 - the injected error, as the client sees it
        call(*args)
    assert "injected store failure" in str(info.value)


@pytest.mark.parametrize("late_step", ["timelines", "statistics"])
def test_rename_partition(client: Any, monkeypatch: pytest.MonkeyPatch, late_step: str) -> None:
    before = _timed_table(client, "t")
    events = _event_id(client)
    if late_step == "timelines":
        monkeypatch.setattr(TimelineKeeper, "_persist", _fail)
    else:
        monkeypatch.setattr(statistics, "move", _fail)
    renamed = make_partition(DB, "t", ["2024-01-02"])
    renamed.parameters = dict(DAILY)
    _refused(client.rename_partition, DB, "t", ["2024-01-01"], renamed)
    monkeypatch.undo()
    assert client.get_partition_names(DB, "t", -1) == ["ds=2024-01-01"]
    kept = client.get_partition(DB, "t", ["2024-01-01"])
    assert kept.sd.location == before.sd.location
    assert (_local(kept.sd.location) / "f.parquet").read_text() == "data"
    assert not _local(before.sd.location).with_name("ds=2024-01-02").exists()
    assert _event_id(client) == events
    # The timelines were not changed in memory either: the next rename works and counts.
    client.rename_partition(DB, "t", ["2024-01-01"], renamed)
    table = client.get_table(DB, "t")
    assert any("2024-01-02" in value for value in table.parameters.values())


def test_exchange_partition(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    client.create_table(make_table(DB, "src", keys=[("ds", "string")]))
    client.create_table(make_table(DB, "dst", keys=[("ds", "string")]))
    client.add_partitions([make_partition(DB, "src", ["1"])])
    location = client.get_partition(DB, "src", ["1"]).sd.location
    (_local(location) / "f.parquet").write_text("data")
    monkeypatch.setattr(statistics, "forget", _fail)  # after the source's rows are dropped
    _refused(client.exchange_partition, {"ds": "1"}, DB, "src", DB, "dst")
    monkeypatch.undo()
    assert client.get_partition_names(DB, "src", -1) == ["ds=1"]
    assert client.get_partition_names(DB, "dst", -1) == []
    assert (_local(location) / "f.parquet").read_text() == "data"


def test_drop_partition_with_data(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _timed_table(client, "t")
    monkeypatch.setattr(statistics, "forget", _fail)
    _refused(client.drop_partition, DB, "t", ["2024-01-01"], True)
    monkeypatch.undo()
    assert client.get_partition_names(DB, "t", -1) == ["ds=2024-01-01"]
    assert (_local(stored.sd.location) / "f.parquet").read_text() == "data"
    client.drop_partition(DB, "t", ["2024-01-01"], True)  # a retry does it all
    assert not _local(stored.sd.location).exists()


def test_drop_table_with_data(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _timed_table(client, "t")
    monkeypatch.setattr(statistics, "forget_table", _fail)
    _refused(client.drop_table, DB, "t", True)
    monkeypatch.undo()
    assert client.get_partition_names(DB, "t", -1) == ["ds=2024-01-01"]
    assert (_local(stored.sd.location) / "f.parquet").read_text() == "data"
    client.drop_table(DB, "t", True)
    assert not _local(stored.sd.location).parent.exists()


def test_rename_table_with_cascade(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _timed_table(client, "t")
    table_dir = _local(stored.sd.location).parent
    monkeypatch.setattr(Altering, "propagate_columns", _fail)
    renamed = client.get_table(DB, "t")
    renamed.tableName = "t2"
    _refused(client.alter_table_with_cascade, DB, "t", renamed, True)
    monkeypatch.undo()
    assert client.get_all_tables(DB) == ["t"]
    assert client.get_partition(DB, "t", ["2024-01-01"]).sd.location == stored.sd.location
    assert (_local(stored.sd.location) / "f.parquet").read_text() == "data"
    assert not table_dir.with_name("t2").exists()


def test_add_partitions(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    client.create_table(make_table(DB, "t", keys=[("ds", "string")], parameters=dict(TIMED)))
    table_dir = _local(client.get_table(DB, "t").sd.location)
    events = _event_id(client)
    parts = [make_partition(DB, "t", [f"2024-01-0{day}"]) for day in (1, 2)]
    for part in parts:
        part.parameters = dict(DAILY)
    monkeypatch.setattr(TimelineKeeper, "_persist", _fail)
    _refused(client.add_partitions, parts)
    monkeypatch.undo()
    assert client.get_partition_names(DB, "t", -1) == []
    assert sorted(os.listdir(table_dir)) == []
    assert _event_id(client) == events
    assert client.add_partitions(parts) == 2  # nothing was left to collide with


def test_create_table_with_grants(client: Any, server: RunningServer,
                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    table = make_table(DB, "granted")
    grant = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="me",
                                   grantorType=hms.PrincipalType.USER, grantOption=False)
    table.privileges = hms.PrincipalPrivilegeSet(userPrivileges={"bob": [grant]})
    monkeypatch.setattr(Privileges, "_grant_one", _fail)
    _refused(client.create_table, table)
    monkeypatch.undo()
    assert client.get_all_tables(DB) == []
    assert not (server.warehouse / f"{DB}.db" / "granted").exists()
    client.create_table(table)
    assert client.get_table(DB, "granted").tableName == "granted"


def test_a_refused_base_drop_leaves_its_dependents_unmarked(client: Any) -> None:
    client.create_table(make_table(DB, "base", keys=[("ds", "string"), ("hr", "string")]))
    dependent = make_table(DB, "dep", keys=[("ds", "string")], parameters={
        "metastore.dependent.base": f"{DB}.base",
        "metastore.dependent.on.base.drop": "mark_incomplete"})  # fmt: skip
    dependent.sd.cols = []
    client.create_table(dependent)
    client.add_partitions([make_partition(DB, "base", ["1", "00"])])
    client.add_partitions([make_partition(DB, "dep", ["1"])])
    base = client.get_partition(DB, "base", ["1", "00"])
    base.sd.location = "gopher://nowhere/x"  # data that cannot be deleted: the drop is refused
    client.alter_partition(DB, "base", base)
    with pytest.raises(hms.MetaException):
        client.drop_partition(DB, "base", ["1", "00"], True)
    assert client.get_partition_names(DB, "base", -1) == ["ds=1/hr=00"]
    params = client.get_partition(DB, "dep", ["1"]).parameters
    assert "metastore.dependent.incomplete" not in params
