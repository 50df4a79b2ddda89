"""Ctrl-C interrupts a client command whatever its main thread waits on
(``metastore_server.cli.interrupts``)."""

from __future__ import annotations

import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from metastore_server.cli.interrupts import reliable_ctrl_c

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or not hasattr(signal, "pthread_kill"),
    reason="needs /proc and pthread_kill",
)


def _sleeping(tid: int) -> bool:
    """Whether thread ``tid`` waits in poll() (where the kernel does not tell: sleeps)."""
    task = Path(f"/proc/self/task/{tid}")
    asleep = task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] == "S"
    wchan = task.joinpath("wchan").read_text().strip()
    return asleep and ("poll" in wchan or wchan in ("", "0"))


def _take_sigint_once_waiting(main_tid: int) -> None:
    """Take a SIGINT in this thread once the main thread waits in the kernel: its handler is
    then pending while the main thread's wait goes on (as for a SIGINT noted just before the
    wait began)."""
    deadline = time.monotonic() + 10
    while not _sleeping(main_tid) and time.monotonic() < deadline:
        time.sleep(0.01)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)


def test_a_sigint_noted_while_the_main_thread_waits_interrupts_the_wait() -> None:
    previous = signal.getsignal(signal.SIGINT)
    ours, theirs = socket.socketpair()
    ours.settimeout(30)  # nobody writes: the read ends with TimeoutError unless interrupted
    try:
        with pytest.raises(KeyboardInterrupt), reliable_ctrl_c():
            helper = threading.Thread(
                target=_take_sigint_once_waiting, args=(threading.get_native_id(),), daemon=True
            )
            helper.start()
            ours.recv(1)
    finally:
        ours.close()
        theirs.close()
    assert signal.getsignal(signal.SIGINT) is previous
    assert signal.set_wakeup_fd(-1) == -1  # nothing left behind


def test_a_second_sigint_while_the_first_is_handled_changes_nothing() -> None:
    raised = 0
    with reliable_ctrl_c():
        for _ in range(2):
            try:
                signal.raise_signal(signal.SIGINT)
                time.sleep(0.2)  # the watching thread sees it too
            except KeyboardInterrupt:
                raised += 1
    assert raised == 1


def test_a_sigint_blocked_in_the_main_thread_is_taken_meanwhile() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with pytest.raises(KeyboardInterrupt), reliable_ctrl_c():
            signal.raise_signal(signal.SIGINT)
            time.sleep(1.0)  # the handler runs before this ends
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
