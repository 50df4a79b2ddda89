"""Crash safety (docs/storage.md): ``kill -9`` of the server in the middle of a stream of
``add_partitions`` calls, then a restart on the same store (the embedded one, or in the HBase
pass one HBase test double): every acknowledged partition is there, every partition row decodes,
the table row is whole (its timelines equal a rebuild), the batch in flight is all there or not
at all (on HBase once the killed server's intent is past its lease), and on the embedded store
SQLite's integrity check passes."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from metastore_server.storage import retrying
from support import stress, test_storage
from support.hbase_double import running_double, storage_url
from support.our_server import OurServer

from metastore_server.catalog.timelines.keeper import TimelineKeeper
from metastore_server.thrift_api import hms, make_client

from .conftest import ON_HBASE, RunningServer

ROUNDS = 3
BATCH = 20
LEASE_S = 1.0
EPOCH = datetime(2020, 1, 1)


def _stream(host: str, port: int, start: int, acked: list[list[str]], pending: list[list[str]],
            stop: threading.Event) -> None:  # fmt: skip
    """Add batches of new partitions until the server dies; record what was acknowledged."""
    try:
        client = make_client(host, port)
    except Exception:  # noqa: BLE001 - the server may already be gone
        return
    batch = start
    try:
        while not stop.is_set():
            first = EPOCH + timedelta(hours=batch * BATCH)
            dts = [(first + timedelta(hours=i)).strftime("%Y-%m-%d-%H") for i in range(BATCH)]
            pending[:] = [dts]
            parts = [stress._partition(dt, "crash") for dt in dts]
            client.add_partitions(parts)
            acked.append(dts)
            pending.clear()
            batch += 1
    except Exception:  # noqa: BLE001 - the kill ends the stream
        return
    finally:
        client.close()


def _names(dts: list[str]) -> set[str]:
    return {f"dt={dt}/region=crash" for dt in dts}


@pytest.fixture()
def crash_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store the killed and restarted servers share: a SQLite file, or (in the HBase pass)
    one HBase test double that outlives them."""
    if ON_HBASE:
        with test_storage.shared_hbase_url() as url:
            monkeypatch.setenv("METASTORE_TEST_STORAGE", "embedded")  # no store of their own
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'store.db'}"


@pytest.mark.parametrize("seed", [11])
def test_kill_9_during_adds_loses_nothing_acknowledged(
    tmp_path: Path, crash_store: str, seed: int
) -> None:
    rng = random.Random(seed)
    # HBase: a killed writer's intent and marks count as dead after the lease (the embedded
    # store needs none: its writers take turns).
    lease = ["--writer-lease", str(LEASE_S)]
    server = OurServer(tmp_path / "server", extra_args=lease)
    server.storage = storage = crash_store
    embedded = storage.startswith("sqlite:")
    acked: list[list[str]] = []
    with server as endpoint:
        setup = make_client(endpoint.host, endpoint.port)
        stress.prepare(setup)  # a table keeping timelines: its row is rewritten on every add
        setup.close()
    for round_ in range(ROUNDS):
        server = OurServer(tmp_path / "server", extra_args=lease)
        server.storage = storage
        with server as endpoint:
            pending: list[list[str]] = []
            stop = threading.Event()
            writer = threading.Thread(
                target=_stream,
                args=(endpoint.host, endpoint.port, round_ * 10_000, acked, pending, stop),
            )
            writer.start()
            acked_before = len(acked)
            deadline = time.monotonic() + 60  # the workers may take a while to start
            while len(acked) == acked_before and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.5, 2.0))
            server.kill()  # SIGKILL of every process: no shutdown code runs
            stop.set()
            writer.join()
            in_flight = list(pending[0]) if pending else []
        assert acked, "no add was acknowledged before the kill"

        restarted = OurServer(tmp_path / "server", extra_args=lease)
        restarted.storage = storage
        if not embedded:
            time.sleep(LEASE_S * 1.5)  # the killed server's intent is past its lease
        with restarted as endpoint:
            client = make_client(endpoint.host, endpoint.port)
            names = set(client.get_partition_names(stress.DB, stress.TABLE, -1))
            expected = set().union(*(_names(dts) for dts in acked))
            assert expected <= names, f"lost: {sorted(expected - names)[:5]}"
            flight = _names(in_flight)
            assert not flight or flight <= names or not (flight & names), "half a batch"
            landed = [dt for dt in in_flight if _names([dt]) <= names]
            if landed:
                acked.append(landed)  # landed, unacknowledged: it stays
            assert names == set().union(*(_names(dts) for dts in acked))
            # Every row decodes, and the table row is whole: its timelines equal a rebuild.
            partitions = client.get_partitions(stress.DB, stress.TABLE, -1)
            assert len(partitions) == len(names)
            kept = client.get_partition_timelines(
                hms.GetPartitionTimelinesRequest(dbName=stress.DB, tblName=stress.TABLE)
            )
            rebuilt = client.rebuild_partition_timelines(
                hms.RebuildTimelinesRequest(dbName=stress.DB, tblName=stress.TABLE)
            )
            assert [list(t.ranges) for t in kept.timelines] == [
                list(t.ranges) for t in rebuilt.timelines
            ]
            assert sum(t.count for t in kept.timelines) == len(names)
            client.close()
    if embedded:
        database = storage.removeprefix("sqlite:///")
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _timeline_counts(client) -> list[tuple[str, list[str]]]:
    found = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=stress.DB, tblName=stress.TABLE)
    )
    return [(t.updatePeriod, list(t.ranges)) for t in found.timelines]


def test_a_change_cut_between_partitions_and_timelines_leaves_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The partitions of a change are written, then its writer fails before the timelines are:
    on the embedded store the change is one transaction, so neither the other server process nor
    a restarted one sees the partition or its timeline, and the change can be made again. (On
    HBase the change's intent is rolled back alike: test_all_or_nothing and
    test_timeline_writer_marks.)"""
    store = f"sqlite:///{tmp_path / 'store.db'}"  # the embedded store, whatever the run's
    first = RunningServer(tmp_path / "first", storage=store)
    second = RunningServer(tmp_path / "second", storage=store)
    before = [("HOURLY", ["[2024-01-01-00, 2024-01-01-01)"])]
    try:
        one, two = first.client(), second.client()
        stress.prepare(one)
        one.add_partition(stress._partition("2024-01-01-00", "x"))
        assert _timeline_counts(two) == before

        def die(self, pending) -> None:  # noqa: ANN001 - stands in for TimelineKeeper._finish
            raise RuntimeError("the process died here")

        with monkeypatch.context() as patch:
            patch.setattr(TimelineKeeper, "_finish", die)
            with pytest.raises(Exception, match="died here"):
                one.add_partition(stress._partition("2024-01-01-05", "x"))
        assert _timeline_counts(two) == before
        assert _timeline_counts(one) == before  # nothing of it stayed in the writer's memory
        assert len(two.get_partition_names(stress.DB, stress.TABLE, -1)) == 1
        one.close()
        two.close()
    finally:
        first.stop()
        second.stop()
    restarted = RunningServer(tmp_path / "third", storage=store)
    try:
        client = restarted.client()
        assert _timeline_counts(client) == before
        client.add_partition(stress._partition("2024-01-01-05", "x"))
        assert _timeline_counts(client) == [
            ("HOURLY", ["[2024-01-01-00, 2024-01-01-01)", "[2024-01-01-05, 2024-01-01-06)"])
        ]
        client.close()
    finally:
        restarted.stop()


def test_a_timeline_write_that_keeps_losing_its_race_on_hbase_is_deferred(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On HBase a partition change whose timeline write keeps losing its compare-and-set to
    other server processes stands: the call succeeds, and the writer's mark has the timelines
    rebuilt on their next use."""
    with running_double() as address:
        server = RunningServer(tmp_path, storage=storage_url(*address, prefix="defer_"))
        try:
            client = server.client()
            stress.prepare(client)
            client.add_partition(stress._partition("2024-01-01-00", "x"))
            with monkeypatch.context() as patch:
                patch.setattr(TimelineKeeper, "_persist", lambda *args: False)
                no_pauses = replace(retrying.TIMELINES, first_s=0.0, cap_s=0.0)
                patch.setattr(retrying, "TIMELINES", no_pauses)
                client.add_partition(stress._partition("2024-01-01-05", "x"))
            names = client.get_partition_names(stress.DB, stress.TABLE, -1)
            assert names == ["dt=2024-01-01-00/region=x", "dt=2024-01-01-05/region=x"]
            assert _timeline_counts(client) == [
                ("HOURLY", ["[2024-01-01-00, 2024-01-01-01)", "[2024-01-01-05, 2024-01-01-06)"])
            ]
            client.close()
        finally:
            server.stop()
