"""The scan plans the REST catalog holds: bounded in plans held, plans running and cache size,
bound to their caller and table, and expiring; and the strict filter parser."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

pytest.importorskip("pyiceberg")
from pyiceberg.expressions import (  # noqa: E402
    AlwaysFalse,
    And,
    EqualTo,
    In,
    IsNaN,
    Not,
    NotStartsWith,
    Or,
)

from metastore_server.rest.errors import RestError  # noqa: E402
from metastore_server.rest.scan_filters import parse_filter  # noqa: E402
from metastore_server.rest.scan_plans import PlanCache, Planner, PlanSettings  # noqa: E402

T = ("db", "t")


def _batches(count: int, size: int = 1) -> list[dict[str, Any]]:
    return [{"file-scan-tasks": [{"data-file": {"file-path": f"f{i}-{j}"}} for j in range(size)]}
            for i in range(count)]  # fmt: skip


def test_plans_running_at_once_are_bounded_and_the_rest_refused_with_503() -> None:
    planner = Planner(PlanSettings(async_files=1, max_running=2, workers=2))
    release = threading.Event()

    def slow() -> list[dict[str, Any]]:
        release.wait(30)
        return _batches(2)

    first = planner.plan("a", T, "k1", 10, slow)
    second = planner.plan("a", T, "k2", 10, slow)
    assert first["status"] == second["status"] == "submitted"
    with pytest.raises(RestError) as refused:
        planner.plan("a", T, "k3", 10, slow)
    assert refused.value.code == 503 and planner.held() == 2
    release.set()
    deadline = time.monotonic() + 30
    while planner.fetch("a", T, first["plan-id"])["status"] == "submitted":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert planner.plan("a", T, "k3", 10, slow)["status"] == "submitted"  # room again
    planner.close()


def test_plans_held_are_bounded_by_dropping_the_oldest_finished() -> None:
    planner = Planner(PlanSettings(async_files=0, max_plans=3, cache_entries=0))
    answers = [planner.plan("a", T, f"k{i}", 0, lambda: _batches(2)) for i in range(5)]
    assert planner.held() == 3
    with pytest.raises(RestError) as gone:  # the oldest two were let go
        planner.tasks("a", T, answers[0]["plan-tasks"][0])
    assert gone.value.code == 404
    batch = planner.tasks("a", T, answers[4]["plan-tasks"][0])
    assert batch["file-scan-tasks"][0]["data-file"]["file-path"] == "f1-0"
    assert planner.held() == 2  # every task fetched: the plan is let go


def test_a_plan_is_its_callers_and_its_tables_only() -> None:
    planner = Planner(PlanSettings(async_files=0))
    answer = planner.plan("alice", T, "k", 0, lambda: _batches(3))
    token = answer["plan-tasks"][0]
    for owner, table in (("bob", T), (None, T), ("alice", ("db", "other"))):
        with pytest.raises(RestError) as refused:
            planner.tasks(owner, table, token)
        assert refused.value.kind == "NoSuchPlanTaskException"
        with pytest.raises(RestError) as refused:
            planner.cancel(owner, table, answer["plan-id"])
        assert refused.value.kind == "NoSuchPlanIdException"
    assert planner.tasks("alice", T, token)["file-scan-tasks"]
    planner.cancel("alice", T, answer["plan-id"])
    assert planner.fetch("alice", T, answer["plan-id"]) == {"status": "cancelled"}
    with pytest.raises(RestError):
        planner.tasks("alice", T, answer["plan-tasks"][1])  # cancelled: its tasks gone


def test_plans_expire() -> None:
    planner = Planner(PlanSettings(async_files=0, lifetime=0.05, cache_entries=0))
    answer = planner.plan("a", T, "k", 0, lambda: _batches(2))
    time.sleep(0.1)
    with pytest.raises(RestError):
        planner.tasks("a", T, answer["plan-tasks"][0])
    assert planner.held() == 0


def test_the_cache_is_bounded_in_entries_and_tasks_and_answers_without_planning() -> None:
    cache = PlanCache(entries=2, tasks=10)
    cache.put("a", _batches(1, 4))
    cache.put("b", _batches(1, 4))
    cache.put("c", _batches(1, 4))
    assert len(cache) == 2 and cache.get("a") is None
    cache.put("big", _batches(1, 11))  # over the whole budget: not kept
    assert cache.get("big") is None
    cache.put("d", _batches(1, 6))  # 4 + 6 = 10 tasks at most: "b" goes
    assert cache.get("b") is None and cache.get("c") and cache.get("d")
    planner, calls = Planner(PlanSettings(async_files=0)), []

    def work() -> list[dict[str, Any]]:
        calls.append(1)
        return _batches(1)

    planner.plan("a", T, "same", 0, work)
    planner.plan("b", T, "same", 0, work)
    assert len(calls) == 1


def test_the_filter_parser_takes_the_spec_shapes_and_nothing_else() -> None:
    assert parse_filter({"type": "and", "left": {"type": "eq", "term": "a", "value": 1},
                         "right": {"type": "not", "child": {"type": "is-nan", "term": "f"}}}) \
        == And(EqualTo("a", 1), Not(IsNaN("f")))  # fmt: skip
    assert parse_filter({"type": "or", "left": {"type": "in", "term": "s", "values": ["x", "y"]},
                         "right": {"type": "not-starts-with", "term": "s", "value": "z"}}) \
        == Or(In("s", {"x", "y"}), NotStartsWith("s", "z"))  # fmt: skip
    assert parse_filter(False) == AlwaysFalse()
    for bad in (None, 1, [], {"type": "eq"}, {"type": "eq", "term": "", "value": 1},
                {"type": "eq", "term": "a", "value": None},
                {"type": "in", "term": "a", "values": [[1]]}, {"type": "true", "x": 1}):
        with pytest.raises(RestError) as refused:
            parse_filter(bad)
        assert refused.value.code == 400
    level: list[Any] = [{"type": "eq", "term": "a", "value": 1}] * 2**13
    while len(level) > 1:  # a balanced tree: 16383 nodes, 14 deep
        level = [{"type": "or", "left": level[i], "right": level[i + 1]}
                 for i in range(0, len(level), 2)]  # fmt: skip
    with pytest.raises(RestError) as refused:
        parse_filter(level[0])
    assert "nodes" in refused.value.message


def test_what_the_planner_cannot_do_is_406_and_what_it_refuses_400() -> None:
    from metastore_server.rest.scan_planning import _planned

    def equality_deletes() -> list[Any]:
        raise ValueError("PyIceberg does not yet support equality deletes: https://...")

    def unrelated() -> list[Any]:
        raise ValueError("Snapshot 1 is not an ancestor of 2")

    with pytest.raises(RestError) as unsupported:
        _planned(equality_deletes)
    assert unsupported.value.code == 406
    assert unsupported.value.kind == "UnsupportedOperationException"
    with pytest.raises(RestError) as refused:
        _planned(unrelated)
    assert refused.value.code == 400
