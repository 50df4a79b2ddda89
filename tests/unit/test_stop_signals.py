"""A stop signal that comes while a worker starts ends the worker, even when the raise of the
start's handler is swallowed: the code that takes over the signals stops at once."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from metastore_server import stop_signals
from metastore_server.cli.serving import StopOnce


class _Server:
    """Records its stop."""

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def stop(self) -> None:
        self.stopped.set()


@pytest.fixture
def starting() -> Iterator[None]:
    """This process as a worker that starts (the stop signals' handlers of its start)."""
    before = {s: signal.getsignal(s) for s in stop_signals.STOP_SIGNALS}
    stop_signals.take_at_start()
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        stop_signals._taken = None  # noqa: SLF001 - the process-wide record, reset


def _swallowing_sigterm() -> bool:
    """SIGTERM this process where its raise is swallowed; whether it raised StoppedAtStart."""
    raised = False
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a call: the handler runs by now
    except stop_signals.StoppedAtStart:  # a library's bare except would take it too
        raised = True
    return raised


@pytest.mark.usefixtures("starting")
def test_the_signal_is_remembered_when_its_raise_is_swallowed() -> None:
    assert stop_signals.taken_at_start() is None
    assert _swallowing_sigterm()
    assert stop_signals.taken_at_start() == "SIGTERM"


@pytest.mark.usefixtures("starting")
def test_the_server_taking_over_stops_at_once_on_a_swallowed_signal() -> None:
    assert _swallowing_sigterm()
    server = _Server()
    StopOnce(server, "worker_stopping")
    assert server.stopped.wait(30)  # the stopper thread stops it without another signal


@pytest.mark.usefixtures("starting")
def test_without_a_signal_at_start_the_server_serves_on() -> None:
    server = _Server()
    StopOnce(server, "worker_stopping")
    assert not server.stopped.wait(0.5)
