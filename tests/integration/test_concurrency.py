"""Concurrent writers (issue 8): 16 client threads on one server, and separately on two server
processes sharing one embedded store, add, drop, alter and list partitions of one table for
``METASTORE_STRESS_SECONDS`` (60 by default). Afterwards every acknowledged, undropped partition
is there exactly once, no dropped one remains, each shared partition raced for with
``add_partitions_req(ifNotExists=true)`` was reported created by exactly one caller, and the
timelines equal a rebuild (``support.stress`` does the work and the checking)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from support import stress
from support.our_server import OurServer

from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer

SECONDS = float(os.environ.get("METASTORE_STRESS_SECONDS", "60"))
THREADS = 16


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


def test_two_server_processes_on_one_embedded_store(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("METASTORE_TEST_STORAGE", "embedded")
    first, second = OurServer(tmp_path / "a"), OurServer(tmp_path / "b")
    second.storage = first.storage
    with first as a, second as b:
        report = stress.run([(a.host, a.port), (b.host, b.port)], THREADS, SECONDS)
    print(report.summary())
    assert report.failures == []
    assert sum(report.shared_created.values()) > 0


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


@pytest.mark.parametrize("processes", [2])
def test_racing_adds_across_processes_create_each_once(
    tmp_path: Path, monkeypatch, processes: int
) -> None:
    """The same add raced through two server processes on one embedded store."""
    monkeypatch.setenv("METASTORE_TEST_STORAGE", "embedded")
    servers = [OurServer(tmp_path / str(i)) for i in range(processes)]
    for server in servers[1:]:
        server.storage = servers[0].storage
    with servers[0] as a, servers[1] as b:
        setup = make_client(a.host, a.port)
        stress.prepare(setup)
        created: list[str] = []
        errors: list[BaseException] = []
        gate = threading.Barrier(THREADS)

        def add(host: str, port: int, index: int) -> None:
            client = make_client(host, port)
            try:
                gate.wait()
                for round_ in range(20):
                    parts = [
                        stress._partition(f"2024-03-{1 + round_:02d}-{h:02d}", "race")
                        for h in range(index % 3, 24, 3)
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
        assert len(created) == len(set(created)) == 20 * 24  # each created exactly once
        assert len(setup.get_partition_names(stress.DB, stress.TABLE, -1)) == 20 * 24
        setup.close()
