"""Test fault: a Ctrl-C whose signal is taken while the main thread already waits in a system
call (a socket read), its handler not yet run, as when SIGINT arrives between the main thread's
last check for signals and the start of its wait. On SIGUSR1 a thread of the process waits until
the main thread waits in the kernel, then takes a SIGINT itself: Python's C handler notes it,
and nothing wakes the main thread."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path


def _waits(tid: int) -> bool:
    """Whether thread ``tid`` of this process waits in poll() (a socket read with a timeout),
    not for the interpreter lock (where the kernel does not tell, sleeping at all)."""
    task = Path(f"/proc/self/task/{tid}")
    asleep = task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] == "S"
    wchan = task.joinpath("wchan").read_text().strip()
    return asleep and ("poll" in wchan or wchan in ("", "0"))


def _take_sigint_when_asked(main_tid: int) -> None:
    signal.sigwait({signal.SIGUSR1})
    deadline = time.monotonic() + 30
    while not _waits(main_tid) and time.monotonic() < deadline:
        time.sleep(0.01)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})  # for every thread: sigwait takes it
threading.Thread(target=_take_sigint_when_asked, args=(threading.get_native_id(),),
                 name="late-ctrl-c", daemon=True).start()  # fmt: skip
