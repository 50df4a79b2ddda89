"""Waiting for servers to go quiet before timing: the CPU time of a server's processes (the
supervisor and its workers, or a JVM and all its threads), read from each thread's
``/proc/PID/task/TID/schedstat`` (nanoseconds) until it stops growing. A server's background
work (a JVM compiling the code the warm-up calls ran, its collector, what it does after it has
replied) otherwise lands in the other server's timed calls whenever they share a CPU
(``--pin``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from pathlib import Path

from process_memory import tree


def cpu_seconds(pid: int) -> float:
    """CPU time of a process and its descendants, all their threads, seconds."""
    total_ns = 0
    for member in tree(pid):
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{member}/task").iterdir():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    total_ns += int((task / "schedstat").read_text().split()[0])
    return total_ns / 1e9


def wait_quiet(pids: Iterable[int], window_s: float = 0.3, share: float = 0.05,
               give_up_s: float = 20.0) -> float | None:  # fmt: skip
    """Block until, over ``window_s``, the processes of ``pids`` together used at most
    ``share`` of one CPU; the seconds waited, or None when they never did within
    ``give_up_s`` (the caller times anyway and may say so)."""
    pids = list(pids)
    started = time.monotonic()
    before = sum(cpu_seconds(p) for p in pids)
    while True:
        time.sleep(window_s)
        after = sum(cpu_seconds(p) for p in pids)
        if after - before <= share * window_s:
            return time.monotonic() - started
        if time.monotonic() - started > give_up_s:
            return None
        before = after
