"""Concurrent writers (docs/storage.md): 16 client threads on one server, and separately on two
server processes sharing one embedded store, add, drop, alter and list partitions of one table for
``METASTORE_STRESS_SECONDS`` (60 by default). Afterwards every acknowledged, undropped partition is
there exactly once, no dropped one remains, each shared partition raced for with
``add_partitions_req(ifNotExists=true)`` was reported created by exactly one caller, and the
timelines equal a rebuild. All threads also add, drop and alter the same 16 contended partitions:
for each, acknowledged creations minus acknowledged drops is 1 if it is there at the end and 0 if
not; an acknowledged alter that started after every other change to it had ended left its token
there; and one there is listed once and reads back whole (``support.stress`` does the work and the
checking). Racing adds through two processes also run on one HBase test double in the HBase pass."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import stress, test_storage
from support.net import MetastoreEndpoint
from support.our_server import OurServer

from metastore_server.thrift_api import hms, make_client

from .conftest import ON_HBASE, RunningServer

SECONDS = float(os.environ.get("METASTORE_STRESS_SECONDS", "60"))
THREADS = 16
ROUNDS = 20


def test_sixteen_threads_on_one_server(tmp_path: Path) -> None:
    server = RunningServer(tmp_path)
    try:
        report = stress.run([(server.host, server.port)], THREADS, SECONDS)
    finally:
        server.stop()
    print(report.summary())
    assert report.failures == []
    assert report.calls["add"] > 0 and report.calls["drop"] > 0 and report.calls["list"] > 0
    assert sum(report.shared_created.values()) > 0
    assert_contended(report)


@contextlib.contextmanager
def two_servers_on_one_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, hbase: bool = ON_HBASE
) -> Iterator[tuple[MetastoreEndpoint, MetastoreEndpoint]]:
    """Two server processes sharing one store: one SQLite file, or with ``hbase`` (by default
    in the HBase passes) one HBase test double, or the real HBase."""
    first, second = OurServer(tmp_path / "a"), OurServer(tmp_path / "b")
    with contextlib.ExitStack() as stack:
        if hbase:
            first.storage = stack.enter_context(test_storage.shared_hbase_url())
        monkeypatch.setenv("METASTORE_TEST_STORAGE", "embedded")  # no double of their own
        second.storage = first.storage
        a = stack.enter_context(first)
        b = stack.enter_context(second)
        yield a, b


def test_two_server_processes_on_one_embedded_store(tmp_path: Path, monkeypatch) -> None:
    """Two processes on one SQLite file (in the HBase pass too): their writers take turns, so
    every check holds exactly. (On HBase, two processes' timeline writes of one table race by
    compare-and-set; under heavy contention one may be deferred to a rebuild, see README.)"""
    with two_servers_on_one_store(tmp_path, monkeypatch, hbase=False) as (a, b):
        report = stress.run([(a.host, a.port), (b.host, b.port)], THREADS, SECONDS)
    print(report.summary())
    assert report.failures == []
    assert sum(report.shared_created.values()) > 0
    assert_contended(report)


def assert_contended(report: stress.Report) -> None:
    """The contended partitions were really raced for: created, dropped and altered."""
    assert report.contended[f"add {stress.CREATED}"] > 0
    assert report.contended[f"drop {stress.DROPPED}"] > 0
    assert report.contended[f"alter {stress.ALTERED}"] > 0


def test_retried_adds_of_the_same_partitions_create_each_once(tmp_path: Path) -> None:
    """Clients retrying one add after a timeout: 16 callers at once, ifNotExists=true."""
    server = RunningServer(tmp_path)
    try:
        setup = make_client(server.host, server.port)
        stress.prepare(setup)
        parts = [stress._partition(f"2024-02-01-{h:02d}", "retry") for h in range(24)]
        answers: list[list[str]] = []
        errors: list[BaseException] = []
        gate = threading.Barrier(THREADS)

        def add() -> None:
            client = make_client(server.host, server.port)
            try:
                gate.wait()
                request = hms.AddPartitionsRequest(
                    dbName=stress.DB, tblName=stress.TABLE, parts=parts,
                    ifNotExists=True, needResult=True,
                )  # fmt: skip
                result = client.add_partitions_req(request)
                answers.append([p.values[0] for p in result.partitions or []])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
            finally:
                client.close()

        threads = [threading.Thread(target=add) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        # One caller created all 24 (an add is all or nothing); the others found them there.
        assert sorted(len(a) for a in answers) == [0] * (THREADS - 1) + [24]
        names = setup.get_partition_names(stress.DB, stress.TABLE, -1)
        assert len(names) == len(set(names)) == 24
        setup.close()
    finally:
        server.stop()


def test_racing_adds_across_processes_create_each_once(tmp_path: Path, monkeypatch) -> None:
    """The same adds raced through two server processes on one store (on HBase, whose
    batches are not atomic, each row is its own compare-and-set)."""
    with two_servers_on_one_store(tmp_path, monkeypatch) as (a, b):
        setup = make_client(a.host, a.port)
        stress.prepare(setup)
        created: list[str] = []
        errors: list[BaseException] = []
        gate = threading.Barrier(THREADS)

        def add(host: str, port: int, index: int) -> None:
            client = make_client(host, port)
            try:
                gate.wait()
                for round_ in range(ROUNDS):
                    # Half the callers race for the same 8 partitions, the others for
                    # overlapping sets (an add is all or nothing either way).
                    first = 0 if index % 2 else index % 3
                    parts = [
                        stress._partition(f"2024-03-{1 + round_:02d}-{h:02d}", "race")
                        for h in range(first, first + 8)
                    ]
                    request = hms.AddPartitionsRequest(
                        dbName=stress.DB, tblName=stress.TABLE, parts=parts,
                        ifNotExists=True, needResult=True,
                    )  # fmt: skip
                    result = client.add_partitions_req(request)
                    created.extend(p.values[0] for p in result.partitions or [])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
            finally:
                client.close()

        endpoints = [(a.host, a.port), (b.host, b.port)]
        threads = [
            threading.Thread(target=add, args=(*endpoints[i % 2], i)) for i in range(THREADS)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(created) == len(set(created)) == ROUNDS * 10  # each created exactly once
        assert len(setup.get_partition_names(stress.DB, stress.TABLE, -1)) == ROUNDS * 10
        setup.close()
