"""Small networking helpers shared by the metastore launchers."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

LOOPBACK = "127.0.0.1"


class MetastoreEndpoint(NamedTuple):
    """Where a running metastore listens, and the warehouse directory it uses."""

    host: str
    port: int
    warehouse_dir: str

    @property
    def uri(self) -> str:
        """The ``thrift://host:port`` URI clients (Spark) connect to."""
        return f"thrift://{self.host}:{self.port}"


def network_interfaces() -> list[str]:
    """Names of the network interfaces visible in this process's network namespace.

    ``/sys/class/net`` is not used: after ``unshare -n`` sysfs still shows the
    interfaces of the namespace that mounted it. ``if_nameindex`` and
    ``/proc/net/dev`` are both per network namespace.
    """
    try:
        return [name for _, name in socket.if_nameindex()]
    except OSError:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
        return [line.split(":", 1)[0].strip() for line in lines if ":" in line]


def in_isolated_netns() -> bool:
    """True when the only network interface of this process is loopback (``unshare -n``)."""
    try:
        return network_interfaces() == ["lo"]
    except OSError:
        return False


def free_port(host: str = "") -> int:
    """Return a TCP port that is currently free (on all interfaces when host is empty)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when a TCP connection to host:port succeeds."""
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def wait_for_port(
    host: str,
    port: int,
    timeout: float,
    alive: Callable[[], bool] = lambda: True,
    interval: float = 0.2,
) -> bool:
    """Poll until host:port accepts connections; False on timeout or when alive() turns False."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            return False
        if port_open(host, port):
            return True
        time.sleep(interval)
    return False


def wait_until(condition: Callable[[], bool], what: str, timeout: float) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` s (a bound
    far above the unloaded time: the wait ends as soon as the condition holds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def tail(path: Path, lines: int = 40) -> str:
    """The last lines of a text file ('' when it does not exist)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def terminate(proc: subprocess.Popen[bytes] | None, timeout: float) -> int | None:
    """SIGTERM a child process, SIGKILL it if still alive after ``timeout`` s; its exit code."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


class StartedByWith:
    """``with launcher as started:`` calls ``launcher.start()`` (its result is ``started``) and
    ``launcher.stop()`` on the way out, whatever happens."""

    def start(self) -> Any:  # pragma: no cover - every launcher defines it
        raise NotImplementedError

    def stop(self) -> Any:  # pragma: no cover - every launcher defines it
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def failed_to_start(
    process: subprocess.Popen[bytes], port: int, timeout: float, stop: Callable[[], object]
) -> str | None:
    """Wait until ``process`` listens on loopback ``port``; None when it does, else (after
    calling ``stop``) what went wrong: "exited with code N after 3.1s" or "did not open its
    port after 60.0s"."""
    started = time.monotonic()
    if wait_for_port(LOOPBACK, port, timeout, lambda: process.poll() is None):
        return None
    code = process.poll()
    stop()
    what = f"exited with code {code}" if code is not None else "did not open its port"
    return f"{what} after {time.monotonic() - started:.1f}s"

