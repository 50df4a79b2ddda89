"""The three timelines answer like a plain set of partitions, whatever is done to them.

StoreAll is checked against a Python set, and every implementation against StoreAll, after each
step of random add/drop sequences (including the edge cases Lens gets wrong: drops of absent
partitions, of ends, from an empty timeline; duplicate adds), and across property round trips.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.timeline.partitions import TimePartition
from metastore_server.timeline.periods import UpdatePeriod
from metastore_server.timeline.properties import (
    timeline_from_table_properties,
    timeline_to_table_properties,
)
from metastore_server.timeline.timelines import (
    EndsAndHolesTimeline,
    PartitionTimeline,
    RangesTimeline,
    StoreAllTimeline,
)

P = UpdatePeriod
IMPLEMENTATIONS = [StoreAllTimeline, EndsAndHolesTimeline, RangesTimeline]
BASE = datetime(2015, 12, 20, 22, 58, 30)
SPAN = 24


def make(kind: type[PartitionTimeline], period: UpdatePeriod = P.DAILY) -> PartitionTimeline:
    return kind("db.fact_storage", period, "dt")


def day(text: str) -> TimePartition:
    return TimePartition.parse(P.DAILY, text)


def days(*texts: str) -> list[TimePartition]:
    return [day(t) for t in texts]


def state(timeline: PartitionTimeline) -> tuple:
    """Everything a timeline answers, for comparisons."""
    return (
        list(timeline.partitions()),
        len(timeline),
        timeline.first(),
        timeline.latest(),
        timeline.is_empty(),
        timeline.to_properties(),
    )


def assert_same_answers(timeline: PartitionTimeline, oracle: StoreAllTimeline, universe) -> None:
    assert timeline.is_consistent()
    parts = list(timeline.partitions())
    assert parts == list(oracle.partitions())
    assert len(timeline) == len(oracle) == len(parts)
    assert timeline.first() == oracle.first() and timeline.latest() == oracle.latest()
    assert timeline.is_empty() == oracle.is_empty() == (not parts)
    for part in universe:
        assert timeline.exists(part) == oracle.exists(part) == (part in timeline)


# --- random sequences against the oracle ---------------------------------------------------------

operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "drop", "drop", "add_all", "reload", "exists"]),
        st.lists(st.integers(0, SPAN - 1), min_size=1, max_size=4),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(IMPLEMENTATIONS), st.sampled_from(list(P)), operations)
def test_every_implementation_answers_like_store_all(kind, period, ops) -> None:
    base = TimePartition.of(period, BASE)
    universe = [base.offset(i) for i in range(-2, SPAN + 2)]
    timeline, oracle, truth = make(kind, period), make(StoreAllTimeline, period), set()
    for op, offsets in ops:
        parts = [base.offset(i) for i in offsets]
        if op == "add":
            expected = parts[0] not in truth
            assert timeline.add(parts[0]) is expected
            assert oracle.add(parts[0]) is expected
            truth.add(parts[0])
        elif op == "drop":
            expected = parts[0] in truth
            assert timeline.drop(parts[0]) is expected
            assert oracle.drop(parts[0]) is expected
            truth.discard(parts[0])
        elif op == "add_all":
            expected = len(set(parts) - truth)
            assert timeline.add_all(iter(parts)) == expected
            assert oracle.add_all(parts) == expected
            truth.update(parts)
        elif op == "reload":
            fresh = make(kind, period)
            fresh.load_properties(timeline.to_properties())
            assert state(fresh) == state(timeline)
            timeline = fresh
        else:
            assert timeline.exists(parts[0]) == (parts[0] in truth)
        assert list(oracle.partitions()) == sorted(truth)
        assert_same_answers(timeline, oracle, universe)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(IMPLEMENTATIONS),
    st.sampled_from(list(P)),
    st.sets(st.integers(-500, 500), max_size=40),
)
def test_properties_round_trip(kind, period, offsets) -> None:
    base = TimePartition.of(period, BASE)
    timeline = make(kind, period)
    timeline.add_all(base.offset(i) for i in offsets)
    props = timeline.to_properties()
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())
    loaded = make(kind, period)
    loaded.add(base.offset(1000))  # state that loading must replace
    loaded.load_properties(props)
    assert state(loaded) == state(timeline)
    assert [p.start for p in loaded.partitions()] == sorted(base.offset(i).start for i in offsets)
    table = timeline_to_table_properties(timeline)
    again = timeline_from_table_properties("db.fact_storage", period, "dt", table)
    assert type(again) is kind and state(again) == state(timeline)


# --- edge cases, each implementation -------------------------------------------------------------


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda k: k.__name__)
def kind(request) -> type[PartitionTimeline]:
    return request.param


def filled(kind, *texts: str) -> PartitionTimeline:
    timeline = make(kind)
    timeline.add_all(days(*texts))
    return timeline


def test_empty_timeline(kind) -> None:
    timeline = make(kind)
    assert timeline.is_empty() and timeline.is_consistent() and len(timeline) == 0
    assert timeline.first() is None and timeline.latest() is None
    assert list(timeline.partitions()) == [] and list(timeline) == []
    assert not timeline.exists(day("2015-01-01"))
    assert timeline.drop(day("2015-01-01")) is False
    assert timeline.is_empty() and timeline.is_consistent()
    assert timeline.storage_table == "db.fact_storage" and timeline.column == "dt"
    assert timeline.period is P.DAILY
    assert "0 partitions" in repr(timeline)


def test_duplicate_adds_change_nothing(kind) -> None:
    timeline = filled(kind, "2015-01-01", "2015-01-03", "2015-01-04")
    before = state(timeline)
    for text in ("2015-01-01", "2015-01-03", "2015-01-04"):
        assert timeline.add(day(text)) is False
    assert timeline.add_all(days("2015-01-01", "2015-01-04")) == 0
    assert state(timeline) == before


def test_dropping_absent_partitions_changes_nothing(kind) -> None:
    timeline = filled(kind, "2015-01-03", "2015-01-04", "2015-01-07", "2015-01-09")
    before = state(timeline)
    absent = ["2015-01-01", "2015-01-02"]  # before first
    absent += ["2015-01-05", "2015-01-06", "2015-01-08"]  # holes
    absent += ["2015-01-10", "2015-02-01"]  # after latest
    for text in absent:
        assert timeline.drop(day(text)) is False, text
        assert timeline.is_consistent()
    assert state(timeline) == before


def test_dropping_the_ends(kind) -> None:
    timeline = filled(kind, "2015-01-01", "2015-01-04", "2015-01-05", "2015-01-08", "2015-01-10")
    assert timeline.drop(day("2015-01-01")) is True  # the next present one is three days on
    assert timeline.first() == day("2015-01-04")
    assert timeline.drop(day("2015-01-10")) is True
    assert timeline.latest() == day("2015-01-08")
    assert timeline.drop(day("2015-01-08")) is True
    assert timeline.latest() == day("2015-01-05")
    assert list(timeline) == days("2015-01-04", "2015-01-05")
    assert timeline.drop(day("2015-01-04")) and timeline.drop(day("2015-01-05"))
    assert timeline.is_empty() and timeline.is_consistent()
    assert timeline.drop(day("2015-01-05")) is False
    assert timeline.add(day("2015-03-01")) is True
    assert list(timeline) == days("2015-03-01") and len(timeline) == 1


def test_drop_inside_then_re_add(kind) -> None:
    timeline = filled(kind, "2015-01-01", "2015-01-02", "2015-01-03")
    assert timeline.drop(day("2015-01-02")) is True
    assert list(timeline) == days("2015-01-01", "2015-01-03")
    assert timeline.drop(day("2015-01-02")) is False  # dropping the hole again
    assert timeline.add(day("2015-01-02")) is True
    assert list(timeline) == days("2015-01-01", "2015-01-02", "2015-01-03")


def test_adding_before_and_after(kind) -> None:
    timeline = filled(kind, "2015-01-05")
    assert timeline.add(day("2015-01-01")) and timeline.add(day("2015-01-09"))
    assert list(timeline) == days("2015-01-01", "2015-01-05", "2015-01-09")
    assert len(timeline) == 3 and timeline.exists(day("2015-01-05"))
    assert not timeline.exists(day("2015-01-04")) and not timeline.exists(day("2015-01-10"))


def test_partitions_of_another_period_are_rejected(kind) -> None:
    timeline = filled(kind, "2015-01-01", "2015-01-03")
    before = state(timeline)
    month = TimePartition.parse(P.MONTHLY, "2015-01")
    for call in (timeline.add, timeline.drop, timeline.exists):
        with pytest.raises(ValueError):
            call(month)
    with pytest.raises(ValueError):  # checked before anything is added
        timeline.add_all([day("2015-01-02"), month, day("2015-01-04")])
    with pytest.raises(TypeError):
        timeline.add("2015-01-02")  # type: ignore[arg-type]
    assert month not in timeline and "2015-01-01" not in timeline
    assert state(timeline) == before


def test_load_replaces_state(kind) -> None:
    timeline = filled(kind, "2015-01-01", "2015-01-03")
    timeline.load_properties(make(kind).to_properties())
    assert timeline.is_empty() and timeline.is_consistent()


MALFORMED = {
    StoreAllTimeline: [
        {"partitions.size": "1", "partitions0": "2015-01-01,2015-13-01"},
        {"partitions.size": "1", "partitions0": "2015-01-01,,2015-01-03"},
        {"partitions.size": "2", "partitions0": "2015-01-01,"},
        {"partitions.size": "x", "partitions0": "2015-01-01"},
        {"partitions": "2015-01"},
    ],
    EndsAndHolesTimeline: [
        {"first": "2015-01-01", "latest": "", "holes.size": "0"},
        {"first": "", "latest": "2015-01-01", "holes.size": "0"},
        {"first": "", "latest": "", "holes.size": "1", "holes0": "2015-01-02"},
        {"first": "2015-01-05", "latest": "2015-01-01", "holes.size": "0"},
        {"first": "2015-01-01", "latest": "2015-01-05", "holes.size": "1", "holes0": "2015-01-01"},
        {"first": "2015-01-01", "latest": "2015-01-05", "holes.size": "1", "holes0": "2015-01-05"},
        {"first": "2015-01-01", "latest": "2015-01-05", "holes.size": "1", "holes0": "2015-01-09"},
        {"first": "2015-01-01", "latest": "2015-01-05", "holes.size": "2", "holes0": "2015-01-03"},
        {"first": "2015/01/01", "latest": "2015-01-05", "holes.size": "0"},
        {"first": "2015-01-01", "latest": "2015-01-05", "holes": "2015-01-02,bad"},
    ],
    RangesTimeline: [
        {"ranges.size": "1", "ranges0": "[2015-01-01, 2015-01-05),[2015-01-07"},
        {"ranges.size": "1", "ranges0": "[2015-01-01, 2015-01-05),[2015-01-03, 2015-01-08)"},
        {"ranges.size": "1", "ranges0": "[2015-01-01, 2015-01-05),[2015-01-05, 2015-01-08)"},
        {"ranges.size": "1", "ranges0": "[2015-01-07, 2015-01-08),[2015-01-01, 2015-01-05)"},
        {"ranges.size": "1", "ranges0": "[2015-01-01, 2015-01-01)"},
        {"ranges.size": "1", "ranges0": "[2015-01-05, 2015-01-01)"},
        {"ranges.size": "1", "ranges0": "<2015-01-01, 2015-01-05)"},
        {"ranges.size": "1", "ranges0": "[2015-01, 2015-02)"},
        {"ranges.size": "-1"},
    ],
}


@pytest.mark.parametrize(
    ("kind", "props"),
    [(kind, props) for kind, cases in MALFORMED.items() for props in cases],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_malformed_properties_are_rejected_and_change_nothing(kind, props) -> None:
    timeline = filled(kind, "2015-01-02", "2015-01-04")
    before = state(timeline)
    with pytest.raises(ValueError):
        timeline.load_properties(props)
    assert state(timeline) == before and timeline.is_consistent()


# --- implementation details ----------------------------------------------------------------------


def test_ends_and_holes_keeps_holes_between_the_ends() -> None:
    timeline = filled(EndsAndHolesTimeline, "2015-01-01", "2015-01-02", "2015-01-03", "2015-01-04")
    timeline.add_all(days("2015-01-09", "2015-01-10"))
    assert timeline.to_properties() == {
        "first": "2015-01-01",
        "latest": "2015-01-10",
        "holes.size": "1",
        "holes0": "2015-01-05,2015-01-06,2015-01-07,2015-01-08",
    }
    assert len(timeline) == 6
    timeline.drop(day("2015-01-10"))
    timeline.drop(day("2015-01-09"))  # the holes before it are absorbed
    assert timeline.to_properties() == {
        "first": "2015-01-01",
        "latest": "2015-01-04",
        "holes.size": "0",
    }
    assert make(EndsAndHolesTimeline).to_properties() == {
        "first": "",
        "latest": "",
        "holes.size": "0",
    }


def test_ranges_merge_and_split() -> None:
    # The design page's example: 1,2,3,5,6,9,11,15,16 -> [1,4) [5,7) [9,10) [11,12) [15,17)
    timeline = make(RangesTimeline)
    timeline.add_all(day(f"2015-01-{d:02d}") for d in (16, 1, 3, 2, 5, 9, 6, 11, 15))
    assert timeline.to_properties() == {
        "ranges.size": "1",
        "ranges0": "[2015-01-01, 2015-01-04),[2015-01-05, 2015-01-07),"
        "[2015-01-09, 2015-01-10),[2015-01-11, 2015-01-12),[2015-01-15, 2015-01-17)",
    }
    timeline.add(day("2015-01-04"))  # joins [1,4) and [5,7)
    timeline.add(day("2015-01-10"))  # joins [9,10) and [11,12)
    timeline.drop(day("2015-01-03"))  # splits [1,7)
    assert [str(r) for r in timeline.ranges()] == [
        "[2015-01-01, 2015-01-03)",
        "[2015-01-04, 2015-01-07)",
        "[2015-01-09, 2015-01-12)",
        "[2015-01-15, 2015-01-17)",
    ]
    assert timeline.latest() == day("2015-01-16") and len(timeline) == 10
    assert make(RangesTimeline).to_properties() == {"ranges.size": "0"}


def test_store_all_properties() -> None:
    timeline = filled(StoreAllTimeline, "2015-01-03", "2015-01-01")
    assert timeline.to_properties() == {
        "partitions.size": "1",
        "partitions0": "2015-01-01,2015-01-03",
    }
    assert make(StoreAllTimeline).to_properties() == {"partitions.size": "0"}


def test_big_timelines_chunk_their_lists() -> None:
    hourly = [TimePartition.of(P.HOURLY, BASE).offset(2 * i) for i in range(1000)]
    for kind in IMPLEMENTATIONS:
        timeline = make(kind, P.HOURLY)
        timeline.add_all(hourly)
        props = timeline.to_properties()
        assert all(len(v) <= 3999 for v in props.values())
        assert max(int(v) for k, v in props.items() if k.endswith(".size")) > 1
        loaded = make(kind, P.HOURLY)
        loaded.load_properties(props)
        assert list(loaded) == hourly
