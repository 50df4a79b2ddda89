"""A call's time limit, as the store's requests see it: the server sets one per client call
(``limit``, a share of ``--call-timeout``), and a backend bounds each request and its retries
by what is left of it (``remaining``), so a call on a sick store answers an error before its
worker would be replaced. A rollback of the call's own writes may run a little longer
(``grace``). Per thread; a thread with no limit (a background one) has none."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

#: The share of the call timeout a call's store requests may use...
CALL_SHARE = 0.8
#: ...and a rollback of its writes after them.
GRACE_SHARE = 0.9


@dataclass(frozen=True)
class _Limit:
    end: float  # time.monotonic() when the requests must have ended
    grace_end: float  # the same for a rollback
    seconds: float  # the limit as set (for messages)


_local = threading.local()


@contextlib.contextmanager
def limit(seconds: float, *, grace_s: float = 0.0) -> Iterator[None]:
    """This thread's store requests inside end within ``seconds`` from now (a rollback inside
    ``grace`` within ``grace_s`` more). Nested: the tighter limit holds."""
    now = time.monotonic()
    outer: _Limit | None = getattr(_local, "limit", None)
    mine = _Limit(now + seconds, now + seconds + grace_s, seconds)
    if outer is not None and outer.end <= mine.end:
        mine = outer
    _local.limit = mine
    try:
        yield
    finally:
        _local.limit = outer


@contextlib.contextmanager
def for_call(call_timeout_s: float) -> Iterator[None]:
    """The limit of a client call under ``call_timeout_s`` (none when it is 0)."""
    if call_timeout_s <= 0:
        yield
        return
    with limit(call_timeout_s * CALL_SHARE, grace_s=call_timeout_s * (GRACE_SHARE - CALL_SHARE)):
        yield


@contextlib.contextmanager
def grace() -> Iterator[None]:
    """Inside, the limit is the rollback's (``grace_s`` later): a call undoing its writes
    after its requests ran out of time still gets to try."""
    outer: _Limit | None = getattr(_local, "limit", None)
    if outer is None:
        yield
        return
    _local.limit = _Limit(outer.grace_end, outer.grace_end, outer.seconds)
    try:
        yield
    finally:
        _local.limit = outer


def remaining() -> float | None:
    """Seconds left of this thread's limit (at most 0 once it ran out; None: no limit)."""
    current: _Limit | None = getattr(_local, "limit", None)
    return None if current is None else current.end - time.monotonic()


def seconds() -> float | None:
    """This thread's limit as set (None: none), for messages."""
    current: _Limit | None = getattr(_local, "limit", None)
    return None if current is None else current.seconds
