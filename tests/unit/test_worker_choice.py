"""Which worker a new connection goes to: the least busy among those whose reports are
recent, judged against the latest report (so a loaded machine, where every report is late,
still tells a stuck worker from a slow one)."""

from __future__ import annotations

from typing import Any

from metastore_server.server.supervisor import _FRESH_S, _LONG_CALL_S, _Worker, least_busy_fresh


def _worker(last_report: float, connections: int = 0, oldest_call_s: float = 0.0) -> _Worker:
    none: Any = None
    return _Worker(process=none, channel=none, started=0.0, last_report=last_report,
                   connections=connections, oldest_call_s=oldest_call_s, ready=True)  # fmt: skip


def test_the_least_busy_fresh_worker_comes_first() -> None:
    busy, idle = _worker(100.0, connections=5), _worker(100.0, connections=1)
    assert least_busy_fresh([busy, idle]) == [idle, busy]


def test_a_worker_whose_reports_stopped_is_passed_over_even_when_every_report_is_late() -> None:
    stuck = _worker(100.0, connections=0)  # its reports stopped 3 s before the other's
    late = _worker(100.0 + 3.0, connections=4)  # reporting, but late by the clock
    assert least_busy_fresh([stuck, late]) == [late]


def test_workers_equally_late_all_remain_choices() -> None:
    first, second = _worker(100.0, 2), _worker(100.0 + _FRESH_S / 2, 1)
    assert least_busy_fresh([first, second]) == [second, first]
    assert least_busy_fresh([]) == []


def test_a_worker_in_a_long_call_comes_after_busier_ones() -> None:
    # A call stuck in C lets its worker report between two stretches: fresh, one connection.
    stuck = _worker(100.0, connections=1, oldest_call_s=_LONG_CALL_S + 1.0)
    busier = _worker(100.0, connections=3, oldest_call_s=0.01)
    tied = _worker(100.0, connections=1)
    assert least_busy_fresh([stuck, busier, tied]) == [tied, busier, stuck]


def test_when_every_fresh_worker_is_in_a_long_call_the_least_busy_comes_first() -> None:
    one = _worker(100.0, connections=4, oldest_call_s=_LONG_CALL_S)
    two = _worker(100.0, connections=2, oldest_call_s=_LONG_CALL_S * 3)
    assert least_busy_fresh([one, two]) == [two, one]
