"""The Iceberg REST catalog's process, seen from ``serve``: started beside the Thrift server
(the same program and arguments, with ``--rest-process``), started again when it dies, and
stopped with the server. It reads the end of its standard input as its parent's end, so that
it never outlives a server killed outright."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

import structlog

from metastore_server import metrics, stop_signals

log = structlog.get_logger(__name__)

#: Seconds between two starts of the process when it keeps dying.
RESTART_DELAY_S = 1.0
#: A process that exits within this many seconds of its start failed to start; after
#: ``MAX_FAILED_STARTS`` in a row it is not started again (its error is in the log).
FAILED_START_S = 10.0
MAX_FAILED_STARTS = 5


class RestSibling:
    """``start()`` the catalog's process, ``stop()`` it; in between, a process that exits is
    started again (after ``RESTART_DELAY_S``)."""

    def __init__(self, argv: Sequence[str]) -> None:
        self._command = [sys.executable, "-m", "metastore_server", *argv, "--rest-process"]
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._started = 0.0
        self._watcher = threading.Thread(target=self._watch, name="rest-sibling", daemon=True)

    def start(self) -> None:
        """Start the process and the thread that starts it again when it dies."""
        self._spawn()
        self._watcher.start()

    def _spawn(self) -> None:
        self._started = time.monotonic()
        with stop_signals.blocked():  # taken once it can stop cleanly
            self._process = subprocess.Popen(self._command, stdin=subprocess.PIPE)
        log.info("rest_catalog_process_started", pid=self._process.pid)

    def _watch(self) -> None:
        failed_starts = 0
        while not self._stopping.is_set():
            process = self._process
            if process is None:
                return
            code = process.wait()
            metrics.process_gone(process.pid)
            if self._stopping.is_set():
                return
            failed_starts = failed_starts + 1 if time.monotonic() - self._started < (
                FAILED_START_S) else 0  # fmt: skip
            if failed_starts >= MAX_FAILED_STARTS:
                log.error("rest_catalog_not_served", pid=process.pid, exit_code=code,
                          detail=f"it exited at start {failed_starts} times in a row")  # fmt: skip
                return
            log.warning("rest_catalog_process_exited", pid=process.pid, exit_code=code)
            if self._stopping.wait(RESTART_DELAY_S):
                return
            self._spawn()

    def begin_stop(self) -> None:
        """Start it no more: the server is stopping (safe in a signal handler). Its process,
        which may have had the same SIGINT (Ctrl-C), exits without being started again."""
        self._stopping.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the process (its input closed, then SIGTERM, then SIGKILL) and its watcher;
        one line tells how it ended (``rest_catalog_process_stopped`` when clean)."""
        self._stopping.set()
        process = self._process
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        with contextlib.suppress(OSError):
            process.terminate()
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
            log.warning("rest_catalog_process_killed", pid=process.pid, exit_code=code,
                        reason=f"still running {timeout:g}s after asked to stop")  # fmt: skip
        else:
            if code == 0:
                log.info("rest_catalog_process_stopped", pid=process.pid, exit_code=code)
            else:
                log.warning("rest_catalog_process_gone", pid=process.pid, exit_code=code)
        deadline = time.monotonic() + timeout
        if self._watcher.is_alive():
            self._watcher.join(max(0.0, deadline - time.monotonic()))
