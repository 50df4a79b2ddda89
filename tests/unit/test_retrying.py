"""The one retry policy (``storage.retrying``): how many tries, the pauses between them (with
tenacity's sleep replaced), and when it stops."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
import tenacity
from metastore_server.storage import retrying
from metastore_server.storage.retrying import LOST, Limits


class Sleeps(list[float]):
    """A sleep that only records its pauses."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def losing(times: int, answer: object = "won") -> tuple[list[int], object]:
    """An attempt that loses ``times`` times, then answers; and the list counting its calls."""
    calls: list[int] = []

    def attempt() -> object:
        calls.append(1)
        return LOST if len(calls) <= times else answer

    return calls, attempt


# -- pauses -----------------------------------------------------------------------------------


def test_race_pauses_are_random_below_a_doubling_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrying.random, "uniform", lambda low, high: high)  # the bound itself
    limits = Limits(attempts=8, first_s=0.01, cap_s=0.1)
    assert [limits.pause(n) for n in range(1, 7)] == pytest.approx(
        [0.01, 0.02, 0.04, 0.08, 0.1, 0.1]
    )
    monkeypatch.setattr(retrying.random, "uniform", lambda low, high: low)
    assert limits.pause(5) == 0


@pytest.mark.parametrize(
    ("limits", "first", "cap"),
    [
        (retrying.ADD_PARTITIONS, 0.02, 1.0),  # was uniform(0, min(1.0, 0.01 * 2**attempt))
        (retrying.TIMELINES, 0.004, 0.05),  # was uniform(0, min(0.05, 0.002 * 2**attempt))
        (retrying.SHARED_VALUE, 0.001, 0.05),  # was uniform(0, min(0.05, 0.001 * 2**attempt))
        (retrying.CLAIMS, 0.002, 0.05),  # was uniform(0, min(0.05, 0.001 * 2**attempt))
    ],
)
def test_the_races_bounds(
    monkeypatch: pytest.MonkeyPatch, limits: Limits, first: float, cap: float
) -> None:
    monkeypatch.setattr(retrying.random, "uniform", lambda low, high: high)
    for n in range(1, 40):
        assert limits.pause(n) == pytest.approx(min(cap, first * 2 ** (n - 1)))


def test_a_settling_row_and_a_rest_lock_wait_pause_as_before() -> None:
    rows = retrying.SETTLING_ROW  # was (0.005, 0.01, 0.02, 0.04, 0.08, 0.16), 7 reads
    assert rows.attempts == 7
    assert [rows.pause(n) for n in range(1, 7)] == [0.005, 0.01, 0.02, 0.04, 0.08, 0.16]
    lock = retrying.REST_LOCK  # was 0.005, doubling up to 0.2
    assert [lock.pause(n) for n in range(1, 9)] == [
        0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.2, 0.2
    ]


def test_hbase_opening_pauses_double_from_the_backoff_with_a_floor_and_a_cap() -> None:
    limits = retrying.hbase_opening(connect_retries=12, retry_backoff_ms=200)
    assert limits.attempts == 13
    assert [limits.pause(n) for n in range(1, 8)] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    tiny = retrying.hbase_opening(connect_retries=3, retry_backoff_ms=10)
    assert [tiny.pause(n) for n in range(1, 5)] == [0.01, 0.05, 0.1, 0.2]
    none = retrying.hbase_opening(connect_retries=3, retry_backoff_ms=0)
    assert [none.pause(n) for n in range(1, 4)] == [0.0, 0.05, 0.1]


def test_hbase_resending_retries_at_once_then_doubles_up_to_the_cap() -> None:
    limits = retrying.hbase_resending(connect_retries=5, retry_backoff_ms=200)
    assert limits.attempts == 7
    assert [limits.pause(n) for n in range(1, 9)] == [0.0, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    tiny = retrying.hbase_resending(connect_retries=3, retry_backoff_ms=10)
    assert [tiny.pause(n) for n in range(1, 5)] == [0.0, 0.01, 0.02, 0.04]


# -- counts and stops --------------------------------------------------------------------------


def test_a_race_is_tried_until_it_is_won() -> None:
    sleeps = Sleeps()
    calls, attempt = losing(3)
    limits = Limits(attempts=5, first_s=0.01, cap_s=1.0)
    assert retrying.race(limits, attempt, sleep=sleeps) == "won"
    assert len(calls) == 4 and len(sleeps) == 3
    assert all(0 <= s <= 0.01 * 2**i for i, s in enumerate(sleeps))


def test_a_race_lost_every_time_ends_after_its_attempts_without_a_last_pause() -> None:
    sleeps = Sleeps()
    calls, attempt = losing(100)
    limits = replace(retrying.TIMELINES, attempts=30)
    assert retrying.race(limits, attempt, sleep=sleeps) is LOST
    assert len(calls) == 30 and len(sleeps) == 29


def test_a_race_answers_none_and_falsy_values_as_won() -> None:
    for answer in (None, [], 0):
        calls, attempt = losing(1, answer)
        assert retrying.race(retrying.SHARED_VALUE, attempt, sleep=Sleeps()) == answer
        assert len(calls) == 2


def test_an_exception_ends_a_race_at_once() -> None:
    calls: list[int] = []

    def attempt() -> object:
        calls.append(1)
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        retrying.race(retrying.SHARED_VALUE, attempt, sleep=Sleeps())
    assert len(calls) == 1


def test_a_race_bounded_by_time_stops_once_the_time_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = itertools.count(0.0, 0.25)  # each look at the clock: a quarter second later
    monkeypatch.setattr(tenacity.time, "monotonic", lambda: next(clock))
    calls, attempt = losing(1000)
    assert retrying.race(retrying.CLAIMS, attempt, within_s=2.0, sleep=Sleeps()) is LOST
    assert 2 <= len(calls) <= 8


def test_limits_without_a_count_need_a_time() -> None:
    with pytest.raises(ValueError, match="within_s"):
        retrying.race(retrying.CLAIMS, lambda: "won")


def test_policy_retries_what_it_is_told_and_reraises_the_last_error() -> None:
    sleeps = Sleeps()
    seen: list[tuple[int, float]] = []
    limits = retrying.hbase_resending(connect_retries=2, retry_backoff_ms=100)
    policy = retrying.policy(
        limits,
        retry=tenacity.retry_if_exception_type(OSError),
        before_sleep=lambda state: seen.append(
            (state.attempt_number, state.upcoming_sleep)
        ),
        sleep=sleeps,
    )
    calls: list[int] = []

    def unreachable() -> None:
        calls.append(1)
        raise OSError(f"refused {len(calls)}")

    with pytest.raises(OSError, match="refused 4"):
        policy(unreachable)
    assert len(calls) == 4 and sleeps == [0.0, 0.1, 0.2]
    assert seen == [(1, 0.0), (2, 0.1), (3, 0.2)]

    calls.clear()

    def refused() -> None:
        calls.append(1)
        raise ValueError("not retried")

    with pytest.raises(ValueError, match="not retried"):
        policy(refused)
    assert len(calls) == 1


def test_again_on_retries_the_errors_it_names_and_gives_the_last_one() -> None:
    sleeps = Sleeps()
    calls: list[int] = []

    def makedirs() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise FileNotFoundError("parent removed")
        return "made"

    assert retrying.again_on(retrying.MAKEDIRS, (FileNotFoundError,), makedirs, sleep=sleeps) == (
        "made"
    )
    assert len(calls) == 3 and sleeps == [0.0, 0.0]
    calls.clear()

    def always() -> str:
        calls.append(1)
        raise FileNotFoundError(f"gone {len(calls)}")

    with pytest.raises(FileNotFoundError, match="gone 5"):
        retrying.again_on(retrying.MAKEDIRS, (FileNotFoundError,), always, sleep=Sleeps())
    calls.clear()

    def refused() -> str:
        calls.append(1)
        raise PermissionError("not writable")

    with pytest.raises(PermissionError):
        retrying.again_on(retrying.MAKEDIRS, (FileNotFoundError,), refused, sleep=Sleeps())
    assert len(calls) == 1


def test_a_retry_at_once_does_not_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(retrying.time, "sleep", slept.append)
    calls, attempt = losing(100)
    assert retrying.race(retrying.GRANTS, attempt) is LOST
    assert len(calls) == 10 and slept == []
    calls, attempt = losing(2)
    assert retrying.race(Limits(attempts=3, first_s=0.01, cap_s=0.01, jitter=False), attempt)
    assert slept == [0.01, 0.01]


def test_a_race_won_at_once_builds_no_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_policy(*args: object, **kwargs: object) -> None:
        raise AssertionError("a policy was built for a race won at once")

    monkeypatch.setattr(retrying, "policy", no_policy)
    assert retrying.race(retrying.TABLE_ALTER, lambda: "won") == "won"


def test_a_race_lost_once_tries_again_after_the_first_pause() -> None:
    answers = iter([retrying.LOST, "won"])
    sleeps = Sleeps()
    assert retrying.race(retrying.CLAIMS, lambda: next(answers), within_s=60.0,
                         sleep=sleeps) == "won"  # fmt: skip
    assert len(sleeps) == 1


def test_no_retry_starts_whose_pause_outlasts_the_time_left() -> None:
    sleeps = Sleeps()
    left = iter([1.0, 0.15, 0.15])  # seconds left after each failed try
    limits = retrying.hbase_resending(connect_retries=5, retry_backoff_ms=100)
    policy = retrying.policy(limits, retry=tenacity.retry_if_exception_type(OSError),
                             left=lambda: next(left), sleep=sleeps)  # fmt: skip
    calls: list[int] = []

    def unreachable() -> None:
        calls.append(1)
        raise OSError(f"refused {len(calls)}")

    with pytest.raises(OSError, match="refused 3"):
        policy(unreachable)
    assert sleeps == [0.0, 0.1]  # the third pause (0.2 s) would pass the 0.15 s left
    no_limit = retrying.policy(limits, retry=tenacity.retry_if_exception_type(OSError),
                               left=lambda: None, sleep=Sleeps())  # fmt: skip
    calls.clear()
    with pytest.raises(OSError, match="refused 7"):
        no_limit(unreachable)
