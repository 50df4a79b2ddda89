"""Memory of a server's processes (the supervisor and its workers) for the benchmarks: the
resident memory now and the peak (VmRSS, VmHWM of ``/proc/PID/status``), summed over the
process tree, and a sampler of the peak's growth while a block runs."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path


def tree(pid: int) -> list[int]:
    """A process and its descendants (the supervisor and its workers)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        with contextlib.suppress(OSError, ValueError):
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
    return found


def status_kib(pid: int, field: str) -> int:
    """A memory figure of /proc/PID/status (VmHWM, VmRSS) of a process tree, KiB."""
    total = 0
    for member in tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
    return total


def peak_kib(pid: int) -> int:
    """The peak resident memory (VmHWM) of the server's processes together, KiB."""
    return status_kib(pid, "VmHWM")


def rss_kib(pid: int) -> int:
    """The resident memory now (VmRSS) of the server's processes together, KiB."""
    return status_kib(pid, "VmRSS")


def reset_peak(pid: int) -> None:
    """Make each server process's peak resident memory its current one (``clear_refs`` 5)."""
    for member in tree(pid):
        with contextlib.suppress(OSError):
            Path(f"/proc/{member}/clear_refs").write_text("5")


class MemorySampler:
    """Samples a server's resident memory (its whole tree) every 20 ms while its block runs:
    the growth of the peak over what it held when the block began (``growth_mib``)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.growth_mib = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> MemorySampler:
        base = rss_kib(self.pid)

        def sample() -> None:
            peak = base
            while not self._stop.wait(0.02):
                peak = max(peak, rss_kib(self.pid))
            self.growth_mib = (peak - base) / 1024

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
