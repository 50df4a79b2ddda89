"""A started server is ready when it listens: its port accepts connections only once a worker
can serve them, so the first calls are answered, and no connection made at start is handed to a
worker that is not ready (nor lost with one that dies at start). How soon the first call is
answered is measured by ``tests/bench/first_call.py``, not here."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.net import LOOPBACK, port_open
from support.our_server import OurServer
from thriftpy2.transport import TTransportException

from metastore_server.thrift_api import make_client

#: Puts the test faults of ``support/worker_start_site/sitecustomize.py`` into the server.
SITE = str(Path(__file__).parents[1] / "support" / "worker_start_site")
#: How long a server may take to open its port on a loaded machine.
START_S = 60.0


def connect_when_open(port: int, deadline: float) -> Any:
    """A client connected the moment the port accepts (tried every 5 ms until ``deadline``)."""
    while True:
        try:
            return make_client(LOOPBACK, port, timeout_ms=30_000)
        except TTransportException:
            assert time.monotonic() < deadline, "the port did not open"
            time.sleep(0.005)


def wait_for(condition: Any, timeout: float = START_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_the_port_opens_once_a_worker_can_serve(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    env = {"PYTHONPATH": SITE, "METASTORE_TEST_WORKER_GATE": str(gate)}
    server = OurServer(tmp_path / "server", extra_args=["--workers", "1"], env=env)
    process = server.launch()
    try:
        # The worker has opened the store and waits at the gate: the supervisor is up.
        wait_for(lambda: Path(f"{gate}.reached").exists() or process.poll() is not None)
        assert process.poll() is None, server.stderr_path.read_text()
        for _ in range(5):
            assert not port_open(LOOPBACK, server.port), "it accepts before a worker can serve"
            time.sleep(0.1)
        gate.touch()
        client = connect_when_open(server.port, time.monotonic() + START_S)
        assert "default" in client.get_all_databases()
        client.close()
    finally:
        server.stop()


def test_a_worker_dying_at_start_takes_no_connection_with_it(tmp_path: Path) -> None:
    marker = tmp_path / "first-worker"
    env = {"PYTHONPATH": SITE, "METASTORE_TEST_FIRST_WORKER_DIES": str(marker)}
    server = OurServer(tmp_path / "server", extra_args=["--workers", "1"], env=env)
    server.launch()
    try:
        client = connect_when_open(server.port, time.monotonic() + START_S)
        assert "default" in client.get_all_databases()  # not reset with the dead worker
        client.close()
        assert marker.exists()  # the first worker did start, and died
        wait_for(lambda: "worker_replaced" in server.stderr_path.read_text())
    finally:
        server.stop()


def first_calls(port: int, clients: int) -> list[str]:
    """``clients`` threads connect the moment the port opens and make a call at once; the
    errors they met."""
    deadline = time.monotonic() + START_S
    errors: list[str] = []

    def first_call() -> None:
        try:
            client = connect_when_open(port, deadline)
            try:
                assert "default" in client.get_all_databases()
            finally:
                client.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=first_call) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(START_S + 30)
    return errors


@pytest.mark.parametrize("workers", [0, 2])
def test_clients_connecting_as_the_port_opens_are_answered(tmp_path: Path, workers: int) -> None:
    """Several clients waiting for the port call the moment it opens, over a few starts."""
    for start in range(3):
        server = OurServer(tmp_path / f"server{start}", extra_args=["--workers", str(workers)])
        server.launch()
        try:
            errors = first_calls(server.port, 6)
        finally:
            server.stop()
        assert errors == [], f"start {start}: {errors}"
