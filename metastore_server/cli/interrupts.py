"""Ctrl-C that always interrupts a client command, even one waiting on a socket.

Python's C-level handler only notes a SIGINT; the Python handler (raising KeyboardInterrupt)
runs later, in the main thread, between two bytecodes. A wait in progress (a socket read) is cut
short by the signal (EINTR) and runs it then. But a SIGINT noted after the main thread's last
check and before its wait begins (the few instructions between them, or longer when the process
is preempted right there), or taken by another thread, interrupts nothing: the handler stays
pending while the read waits for as long as the server takes to answer (up to the client's
timeout). :func:`reliable_ctrl_c` closes that gap: the C handler also writes the signal to a
pipe (``signal.set_wakeup_fd``), a watching thread reads it and, until the main thread has run
the handler, sends SIGINT to the main thread again every ``RESEND_S``, interrupting its wait.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

__all__ = ["RESEND_S", "reliable_ctrl_c"]

#: How long the main thread may leave a SIGINT unhandled before it is sent to it again.
RESEND_S = 0.05


class _Watch:
    """The handler and the watching thread of one :func:`reliable_ctrl_c`."""

    def __init__(self) -> None:
        self._main = threading.main_thread().ident
        self._read, self.write = os.pipe()
        os.set_blocking(self.write, False)
        # Reentrant: the handler runs in the main thread, maybe while it holds the lock.
        self._lock = threading.RLock()
        self._handled = False
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ctrl-c-watch", daemon=True)

    def handler(self, _signum: int, _frame: object) -> None:
        """KeyboardInterrupt once; further SIGINTs (sent again, or a second Ctrl-C while the
        first is being handled) change nothing."""
        with self._lock:
            first, self._handled = not self._handled, True
        if first:
            raise KeyboardInterrupt

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        # Process-wide SIGINTs go to the main thread, not to this one.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        while True:
            try:
                data = os.read(self._read, 64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                self._resend_until_handled()

    def _resend_until_handled(self) -> None:
        while not self._closed.wait(RESEND_S):
            with self._lock:
                if self._handled or self._closed.is_set() or self._main is None:
                    return
                signal.pthread_kill(self._main, signal.SIGINT)

    def close(self) -> None:
        """Send nothing more, and raise nothing more."""
        with self._lock:
            self._handled = True
            self._closed.set()

    def finish(self) -> None:
        """Close the pipe (the C handler must no longer write to it) and end the thread."""
        os.close(self.write)
        self._thread.join(timeout=5)
        os.close(self._read)

    def discard(self) -> None:
        """Close the pipe of a watch never started."""
        os.close(self.write)
        os.close(self._read)


@contextlib.contextmanager
def reliable_ctrl_c() -> Iterator[None]:
    """Meanwhile, Ctrl-C (SIGINT) raises KeyboardInterrupt in the main thread once, whatever it
    is waiting on (also where the main thread was started with SIGINT blocked). Nothing changes
    outside the main thread, or where SIGINT is ignored (a script's background job) or left to
    the system (it then ends the process anyway)."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    watch = _Watch()
    try:
        previous_fd = signal.set_wakeup_fd(watch.write)
    except ValueError:  # not allowed here: leave things as they are
        watch.discard()
        yield
        return
    signal.signal(signal.SIGINT, watch.handler)
    # A SIGINT blocked in the main thread (inherited so) would stay pending: not meanwhile.
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        watch.start()
        yield
    finally:
        watch.close()
        if blocked:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGINT, previous)
        watch.finish()
