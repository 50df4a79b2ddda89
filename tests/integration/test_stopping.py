"""Stopping a served server (``serve``) as users do: Ctrl-C in its terminal (SIGINT to its
whole process group: the supervisor, its workers and the REST catalog's process at once) or
SIGTERM to the supervisor alone. Either way a call in flight gets its reply, every process
exits by itself (exit code 0, none killed), each worker's end is one ``worker_stopped`` line
and nothing on stderr is a traceback."""

from __future__ import annotations

import os
import re
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from support import net
from support.net import LOOPBACK, free_port
from support.our_server import OurServer
from support.rest_catalog import Both, ready

from metastore_server.cli.serving import _rest_extra_missing
from metastore_server.thrift_api import make_client

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups (POSIX)")

#: Puts the held call of ``support/slow_call_site/sitecustomize.py`` into the server.
SLOW_SITE = str(Path(__file__).parents[1] / "support" / "slow_call_site")
SLOW_NAME = "__call_held_in_flight__"
#: Generous waits (a loaded machine); each ends as soon as what it waits for happens.
WAIT_S = 180.0
#: What would betray an unclean stop anywhere on stderr.
UNCLEAN = ("Traceback", "KeyboardInterrupt", "Fatal Python error", "Exception ignored",
           "interrupted", "worker_killed", "worker_gone", "worker_replaced",
           "rest_catalog_process_exited", "rest_catalog_process_killed",
           "rest_catalog_process_gone")  # fmt: skip
REST_MISSING = _rest_extra_missing()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    net.wait_until(condition, what, WAIT_S)


def events(log: str, name: str) -> list[dict[str, str]]:
    """The ``key=value`` fields of every line of event ``name`` in a console log."""
    return [dict(re.findall(r"(\w+)=(\S+)", line)) for line in log.splitlines()
            if re.search(rf"\] {name}(\s|$)", line)]  # fmt: skip


class HeldCall:
    """A call the server holds in flight until :meth:`release`; its reply or error kept."""

    def __init__(self, server: OurServer, workdir: Path) -> None:
        self.marker, self.release_file = workdir / "call-began", workdir / "call-released"
        server.env.update({"PYTHONPATH": SLOW_SITE, "SLOW_CALL_MARKER": str(self.marker),
                           "SLOW_CALL_RELEASE": str(self.release_file)})  # fmt: skip
        self.outcome: list[object] = []
        self._thread: threading.Thread | None = None

    def start(self, port: int) -> None:
        def call() -> None:
            client = make_client(LOOPBACK, port, timeout_ms=int(WAIT_S * 1000))
            try:
                self.outcome.append(client.get_database(SLOW_NAME).name)
            except Exception as exc:  # noqa: BLE001 - asserted on by the test
                self.outcome.append(exc)
            finally:
                client.close()

        self._thread = threading.Thread(target=call, daemon=True)
        self._thread.start()
        wait_until(lambda: self.marker.exists() or bool(self.outcome), "the held call")
        assert self.marker.exists(), f"the call was not held: {self.outcome}"

    def release(self) -> None:
        self.release_file.touch()

    def reply(self) -> object:
        assert self._thread is not None
        self._thread.join(WAIT_S)
        return self.outcome[0] if self.outcome else "no reply"


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def assert_clean(log: str) -> None:
    found = [word for word in UNCLEAN if word in log]
    assert not found, f"{found} on stderr:\n{log[-4000:]}"


def stop_with_call_in_flight(tmp_path: Path, ctrl_c: bool, extra: list[str], workers: int,
                             rest: bool) -> str:  # fmt: skip
    """Serve with ``extra``, hold a call, stop as asked (Ctrl-C or SIGTERM), release the call
    once every process asked to stop has begun to, and check the clean end; the log."""
    rest_port = free_port(LOOPBACK) if rest else 0
    rest_args = ["--rest-port", str(rest_port)] if rest else []
    server = OurServer(tmp_path / "server", extra_args=[*extra, *rest_args],
                       startup_timeout=WAIT_S)  # fmt: skip
    held = HeldCall(server, tmp_path)
    with server as endpoint:
        process = server.process
        assert process is not None
        read_log = server.stderr_path.read_text
        wait_until(lambda: len(events(read_log(), "worker_ready")) == workers, "the workers")
        if rest:
            ready(Both(server, rest_port), 200)
        held.start(endpoint.port)
        if ctrl_c:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(signal.SIGTERM)
        stopping = "worker_stopping" if workers else "server_stopping"
        wait_until(lambda: len(events(read_log(), stopping)) == max(workers, 1), stopping)
        held.release()  # the call is in flight while every process stops
        assert process.wait(WAIT_S) == 0
        assert held.reply() == "default"  # its reply came, the connection was not cut
        wait_until(lambda: group_gone(process.pid), "every process of the server to end")
        log = read_log()
    assert_clean(log)
    reason = "SIGINT" if ctrl_c else "SIGTERM"
    assert {e["reason"] for e in events(log, stopping)} == {reason}
    if rest:
        assert [e["exit_code"] for e in events(log, "rest_catalog_process_stopped")] == ["0"]
    return log


@pytest.mark.parametrize("rest", [False, True], ids=["thrift", "with-rest"])
@pytest.mark.parametrize("ctrl_c", [True, False], ids=["ctrl-c-to-group", "sigterm"])
def test_a_served_server_stops_cleanly_with_a_call_in_flight(
    tmp_path: Path, ctrl_c: bool, rest: bool
) -> None:
    if rest and REST_MISSING:
        pytest.skip(REST_MISSING)
    log = stop_with_call_in_flight(tmp_path, ctrl_c, ["--workers", "2"], 2, rest)
    started = {e["pid"] for e in events(log, "worker_started")}
    assert len(started) == 2
    stopped = events(log, "worker_stopped")
    assert {e["pid"] for e in stopped} == started  # one line each, for every worker
    assert [e["exit_code"] for e in stopped] == ["0", "0"]  # none SIGKILLed (-9)
    reason = "SIGINT" if ctrl_c else "SIGTERM"
    assert [e["reason"] for e in events(log, "supervisor_stopping")] == [reason]
    assert len(events(log, "supervisor_stopped")) == 1


def test_ctrl_c_stops_a_single_process_server_with_a_call_in_flight(tmp_path: Path) -> None:
    stop_with_call_in_flight(tmp_path, True, ["--workers", "0"], 0, False)


def test_ctrl_c_while_the_workers_start_ends_them_cleanly(tmp_path: Path) -> None:
    """SIGINT to the group as soon as the supervisor has started its workers, before they are
    ready (their start takes seconds: imports, the store): each exits by itself, 0."""
    server = OurServer(tmp_path / "server", extra_args=["--workers", "2"])
    try:
        process = server.launch()
        read_log = server.stderr_path.read_text
        wait_until(lambda: "supervisor_started" in read_log(), "the supervisor")
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(WAIT_S) == 0
        wait_until(lambda: group_gone(process.pid), "every process of the server to end")
        log = read_log()
    finally:
        server.stop()
    assert_clean(log)
    started = {e["pid"] for e in events(log, "worker_started")}
    stopped = events(log, "worker_stopped")
    assert {e["pid"] for e in stopped} == started and len(started) == 2
    assert [e["exit_code"] for e in stopped] == ["0", "0"]
