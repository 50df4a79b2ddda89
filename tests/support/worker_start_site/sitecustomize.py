"""Test faults at the start of a worker process (``serve --worker-channel-fd``), where its
store is open and it is about to serve, chosen by environment variables:

* ``METASTORE_TEST_WORKER_GATE=<file>``: the worker writes ``<file>.reached`` and waits (up to
  60 s) for ``<file>`` to exist: a worker slow to start.
* ``METASTORE_TEST_FIRST_WORKER_DIES=<file>``: the first worker to get there (the one that
  creates ``<file>``) waits up to 3 s for a connection to be handed to it, then exits without
  taking it: a worker dying at start.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from pathlib import Path

import metastore_server.cli.serving as cli_main

_original = cli_main._serve_as_worker


def _wait_for_gate(gate: Path) -> None:
    (gate.parent / (gate.name + ".reached")).touch()
    deadline = time.monotonic() + 60
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def _first(marker: str) -> bool:
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _serve_as_worker(server: object, close: Callable[[], None], channel_fd: int) -> int:
    gate = os.environ.get("METASTORE_TEST_WORKER_GATE")
    if gate:
        _wait_for_gate(Path(gate))
    marker = os.environ.get("METASTORE_TEST_FIRST_WORKER_DIES")
    if marker and _first(marker):
        select.select([channel_fd], [], [], 3.0)  # a connection handed over, or none
        os._exit(3)
    return _original(server, close, channel_fd)


cli_main._serve_as_worker = _serve_as_worker  # type: ignore[assignment]
