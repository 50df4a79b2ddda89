"""The server's one retry policy, on tenacity: how often a call is tried and the pauses
between its tries, every limit named here.

Two kinds of retries share it. A lost race (a compare-and-set another server process won, a
claim it holds) is tried again after a random pause below a bound that doubles from
``first_s`` up to ``cap_s``, so that processes racing for one row drift apart (``race``). A
call to HBase that lost its connection is tried again after pauses that double from the
storage URL's ``retry_backoff_ms`` (``hbase_opening``, ``hbase_resending``, run by
``policy``); with a time limit (``policy``'s ``left``), no retry starts whose pause would
outlast it."""

from __future__ import annotations

import enum
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity
from tenacity.retry import retry_base
from tenacity.stop import stop_base
from tenacity.wait import wait_base

R = TypeVar("R")


@dataclass(frozen=True)
class Limits:
    """How many tries, and the pauses between them.

    The pause after the ``n``-th failed try has a bound that starts at ``first_s`` and doubles
    (at least ``floor_s`` from the second on, at most ``cap_s``); with ``jitter`` the pause is
    random below it, else the bound itself (to the millisecond). ``at_once``: the first retry
    comes without a pause, the doubling starts from the second."""

    #: Tries in all; None: bounded by time only (``within_s`` of ``race`` or ``policy``).
    attempts: int | None
    first_s: float
    cap_s: float
    floor_s: float = 0.0
    jitter: bool = True
    at_once: bool = False

    def pause(self, failed: int) -> float:
        """Seconds to wait after the ``failed``-th try (1 for the first) before the next."""
        n = failed - 1 if self.at_once else failed
        if n <= 0:
            return 0.0
        bound = self.first_s
        for _ in range(n - 1):
            if bound >= self.cap_s:
                break
            bound = min(max(bound * 2, self.floor_s), self.cap_s)
        bound = min(bound, self.cap_s)
        return random.uniform(0, bound) if self.jitter else round(bound, 3)


# -- the limits -----------------------------------------------------------------------------

#: Adding partitions while other server processes create the same ones (``partitions.adding``).
ADD_PARTITIONS_ATTEMPTS = 10
ADD_PARTITIONS = Limits(attempts=ADD_PARTITIONS_ATTEMPTS, first_s=0.02, cap_s=1.0)
#: Writing a table's timelines while other server processes change its row
#: (``timelines.keeper``).
TIMELINES_ATTEMPTS = 30
TIMELINES = Limits(attempts=TIMELINES_ATTEMPTS, first_s=0.004, cap_s=0.05)
#: A compare-and-set on one shared value (locks, transactions, the compaction queue) lost to
#: another change (``core.shared_value``).
SHARED_VALUE_ATTEMPTS = 200
SHARED_VALUE = Limits(attempts=SHARED_VALUE_ATTEMPTS, first_s=0.001, cap_s=0.05)
#: Claims other live writers hold (``core.claims``): bounded by the caller's wait, not a count.
CLAIMS = Limits(attempts=None, first_s=0.002, cap_s=0.05)
#: A table row whose stamp and definition disagree (a write in flight on a store without
#: atomic batches), read again until it settles; then taken as it is (its writer died).
SETTLING_ROW = Limits(attempts=7, first_s=0.005, cap_s=0.16, jitter=False)
#: The REST catalog's wait for an HMS lock (``rest.locks``): bounded by its own wait.
REST_LOCK = Limits(attempts=None, first_s=0.005, cap_s=0.2, jitter=False)
#: Compare-and-set tried again at once (no pause; most run under the process's write lock, so
#: only another server process can win the race): altering a table, an index; revoking a role
#: or a grant; taking the next notification event id, with a change or for an ACID write.
TABLE_ALTER_ATTEMPTS = 10
TABLE_ALTER = Limits(attempts=TABLE_ALTER_ATTEMPTS, first_s=0.0, cap_s=0.0)
INDEX_ALTER = Limits(attempts=20, first_s=0.0, cap_s=0.0)
GRANTS = Limits(attempts=10, first_s=0.0, cap_s=0.0)
EVENT_ID_ATTEMPTS = 1000
EVENT_ID = Limits(attempts=EVENT_ID_ATTEMPTS, first_s=0.0, cap_s=0.0)
ACID_WRITE_EVENT = Limits(attempts=SHARED_VALUE_ATTEMPTS, first_s=0.0, cap_s=0.0)
#: Making a local directory while a drop finishing removes an empty parent: again at once.
MAKEDIRS = Limits(attempts=5, first_s=0.0, cap_s=0.0)
#: HBase: the longest pause between two tries of a call or of opening the store.
HBASE_MAX_PAUSE_S = 5.0
#: HBase: the shortest pause from the second retry on when opening the store.
HBASE_MIN_PAUSE_S = 0.05


def hbase_opening(connect_retries: int, retry_backoff_ms: int) -> Limits:
    """Opening the HBase store while its gateway cannot be reached: ``connect_retries`` more
    tries, ``retry_backoff_ms`` first, doubling up to ``HBASE_MAX_PAUSE_S``."""
    return Limits(
        attempts=connect_retries + 1,
        first_s=retry_backoff_ms / 1000,
        cap_s=HBASE_MAX_PAUSE_S,
        floor_s=HBASE_MIN_PAUSE_S,
        jitter=False,
    )


def hbase_resending(connect_retries: int, retry_backoff_ms: int) -> Limits:
    """An HBase call whose connection was lost: again at once on a fresh connection, then
    ``connect_retries`` more tries, ``retry_backoff_ms`` first, doubling up to
    ``HBASE_MAX_PAUSE_S``."""
    return Limits(
        attempts=connect_retries + 2,
        first_s=retry_backoff_ms / 1000,
        cap_s=HBASE_MAX_PAUSE_S,
        jitter=False,
        at_once=True,
    )


# -- running a call under the limits --------------------------------------------------------


class _Pauses(wait_base):
    """tenacity's wait: the pauses of ``Limits``."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        return self._limits.pause(retry_state.attempt_number)


class _OutOfTime(stop_base):
    """tenacity's stop: the pause before the next try would reach the end of the time left."""

    def __init__(self, left: Callable[[], float | None]) -> None:
        self._left = left

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        left = self._left()
        return left is not None and left <= (retry_state.upcoming_sleep or 0.0)


def _stop(
    limits: Limits, within_s: float | None, left: Callable[[], float | None] | None = None
) -> stop_base:
    stops: list[stop_base] = [] if left is None else [_OutOfTime(left)]
    if limits.attempts is not None:
        stops.append(tenacity.stop_after_attempt(limits.attempts))
    if within_s is not None:
        stops.append(tenacity.stop_after_delay(within_s))
    _check_bounded(limits, within_s)
    return tenacity.stop_any(*stops)


def _check_bounded(limits: Limits, within_s: float | None) -> None:
    if limits.attempts is None and within_s is None:
        raise ValueError("retry limits need attempts or a time (within_s)")


def policy(
    limits: Limits,
    *,
    retry: retry_base,
    within_s: float | None = None,
    left: Callable[[], float | None] | None = None,
    before_sleep: Callable[[tenacity.RetryCallState], None] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> tenacity.Retrying:
    """A tenacity ``Retrying`` under ``limits``: tries again while ``retry`` says so, within
    ``within_s`` seconds when given, and while ``left()`` (seconds left of a limit that runs
    on, as ``deadline.remaining``; None: no limit) exceeds the pause; once it gives up, the
    last try's exception is raised (or its result returned) as is. One call at a time per
    thread (tenacity keeps its state in thread-locals), so one may serve a store's calls."""
    return tenacity.Retrying(
        stop=_stop(limits, within_s, left),
        wait=_Pauses(limits),
        retry=retry,
        before_sleep=before_sleep,
        sleep=sleep if sleep is not None else _nap,
        reraise=True,
        retry_error_callback=_last_result,
    )


def _nap(seconds: float) -> None:
    """Sleep, but not at all for no pause (a retry at once)."""
    if seconds > 0:
        time.sleep(seconds)


def _last_result(retry_state: tenacity.RetryCallState) -> object:
    """The last try's result once the tries ran out (its exception, raised)."""
    assert retry_state.outcome is not None
    return retry_state.outcome.result()


class Lost(enum.Enum):
    """A try of ``race`` that lost (to be tried again), and ``race``'s answer when all did."""

    LOST = "lost"


LOST = Lost.LOST


def race(
    limits: Limits,
    attempt: Callable[[], R | Lost],
    *,
    within_s: float | None = None,
    sleep: Callable[[float], None] | None = None,
) -> R | Lost:
    """``attempt()`` until it returns something other than ``LOST``, pausing between tries
    as ``limits`` say: its answer, or ``LOST`` once the tries (or ``within_s``) ran out.
    Exceptions are not retried: they end the race. The first try runs before any policy is
    built (most races are won at once: a policy costs some 20 us); a lost one is the policy's
    first try, so the pauses and limits are those of a race run wholly under it."""
    _check_bounded(limits, within_s)
    started = time.monotonic()
    answer = attempt()
    if answer is not LOST:
        return answer
    tried = [answer]

    def after_the_first() -> R | Lost:
        return tried.pop() if tried else attempt()

    retrying = policy(
        limits,
        retry=tenacity.retry_if_result(lambda answer: answer is LOST),
        within_s=None if within_s is None else within_s - (time.monotonic() - started),
        sleep=sleep,
    )
    return retrying(after_the_first)


def again_on(
    limits: Limits,
    errors: tuple[type[BaseException], ...],
    attempt: Callable[[], R],
    *,
    sleep: Callable[[float], None] | None = None,
) -> R:
    """``attempt()`` again while it raises one of ``errors``, as ``limits`` say: its answer, or
    its last error once the tries ran out. Other exceptions end it at once."""
    retrying = policy(limits, retry=tenacity.retry_if_exception_type(errors), sleep=sleep)
    return retrying(attempt)
