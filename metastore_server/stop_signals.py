"""The signals that stop a server (SIGTERM; SIGINT: Ctrl-C, sent to every process of the
terminal's process group) in the processes ``serve`` starts (workers, the REST catalog's).
They start with these signals blocked (:func:`blocked` around their start: a signal mask is
inherited), so one sent while they are still a copy of their parent, or importing, is not lost
nor a KeyboardInterrupt: :func:`take_at_start`, first thing in ``python -m metastore_server``,
unblocks them; until the process serves, one ends its start (:class:`StoppedAtStart`), exit
code 0. A raise from a signal handler can be swallowed (in a finalizer, say, or a library's
``except BaseException``), so the signal is also remembered (:func:`taken_at_start`): the code
that takes over the signals stops at once if one came. Only ``signal`` is imported here: this
runs before the program's imports."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator, Sequence

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})
#: The options that make ``serve`` one of the processes a server starts.
_CHILD_OPTIONS = ("--worker-channel-fd", "--rest-process")
#: The name of the stop signal that ended the start, once one did.
_taken: str | None = None


class StoppedAtStart(BaseException):
    """SIGTERM or SIGINT while a worker or the REST catalog's process starts."""


@contextlib.contextmanager
def blocked() -> Iterator[None]:
    """Block the stop signals in this thread meanwhile: a process started meanwhile begins with
    them blocked. Signals sent to this process meanwhile reach another of its threads, or
    wait until the block ends."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def started_by_serve(argv: Sequence[str]) -> bool:
    """Whether this command line is that of a worker or of the REST catalog's process."""
    return any(word.split("=", 1)[0] in _CHILD_OPTIONS for word in argv)


def take_at_start() -> None:
    """Until the process serves (when the server installs its own handlers), a stop signal
    raises :class:`StoppedAtStart`; one that came while they were blocked is taken now."""
    signal.signal(signal.SIGTERM, _end_start)
    signal.signal(signal.SIGINT, _end_start)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def taken_at_start() -> str | None:
    """The stop signal (its name) that came while the process started, if one did: whoever
    installs the serving handlers stops at once on it, as the start's raise may have been
    swallowed."""
    return _taken


def ignore() -> None:
    """Once stopped, a process ignores the stop signals: one more while it exits (Ctrl-C's
    SIGINT and then its parent's SIGTERM) would otherwise kill it as the interpreter
    finalizes, which restores their default actions."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _end_start(signum: int, _frame: object) -> None:
    # The first ends the start: one more must not interrupt its ending. (A Python handler that
    # does nothing: SIG_IGN set here would make CPython report one already taken.)
    global _taken
    signal.signal(signal.SIGTERM, _already_stopping)
    signal.signal(signal.SIGINT, _already_stopping)
    _taken = signal.Signals(signum).name
    raise StoppedAtStart(_taken)


def _already_stopping(_signum: int, _frame: object) -> None:
    """A stop signal while a stop is under way: nothing more to do."""
