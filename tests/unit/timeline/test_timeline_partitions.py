"""Time partitions and partition ranges."""

from __future__ import annotations

import pickle
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.timeline.partitions import TimePartition, TimePartitionRange
from metastore_server.timeline.periods import UpdatePeriod

P = UpdatePeriod


def day(text: str) -> TimePartition:
    return TimePartition.parse(P.DAILY, text)


def test_of_truncates_and_names() -> None:
    part = TimePartition.of(P.HOURLY, datetime(2015, 1, 2, 3, 45, 6))
    assert part.start == datetime(2015, 1, 2, 3)
    assert part.period is P.HOURLY
    assert part.name == str(part) == "2015-01-02-03"
    assert part.end == datetime(2015, 1, 2, 4)
    assert repr(part) == "TimePartition(HOURLY 2015-01-02-03)"


def test_constructor_requires_a_unit_start() -> None:
    assert TimePartition(start=datetime(2015, 1, 1), period=P.MONTHLY).name == "2015-01"
    with pytest.raises(ValueError):
        TimePartition(start=datetime(2015, 1, 2), period=P.MONTHLY)
    with pytest.raises(ValueError):
        TimePartition(start=datetime(2015, 2, 1), period=P.QUARTERLY)


def test_parse() -> None:
    assert TimePartition.parse(P.WEEKLY, "2020-W53").start == datetime(2020, 12, 28)
    assert TimePartition.parse(P.QUARTERLY, "2015-07").name == "2015-07"
    assert TimePartition.parse(P.QUARTERLY, "2015-08").name == "2015-07"  # as Lens
    with pytest.raises(ValueError):
        TimePartition.parse(P.DAILY, "2015-01")
    with pytest.raises(ValueError):
        TimePartition.parse(P.DAILY, "latest")


def test_next_previous_offset() -> None:
    feb = TimePartition.parse(P.MONTHLY, "2016-02")
    assert feb.next().name == "2016-03" and feb.previous().name == "2016-01"
    assert feb.offset(11).name == "2017-01" and feb.offset(-2).name == "2015-12"
    assert feb.offset(0) == feb
    quarter = TimePartition.parse(P.QUARTERLY, "2015-10")
    assert quarter.next().name == "2016-01" and quarter.previous().name == "2015-07"
    assert day("2016-02-28").next().name == "2016-02-29"
    assert day("2016-03-01").previous().name == "2016-02-29"
    week = TimePartition.parse(P.WEEKLY, "2020-W53")
    assert week.next().name == "2021-W01" and week.previous().name == "2020-W52"
    assert TimePartition.parse(P.YEARLY, "2015").end == datetime(2016, 1, 1)


def test_order_equality_and_hash() -> None:
    assert day("2015-01-01") < day("2015-01-02") <= day("2015-01-02")
    assert day("2015-01-01") == TimePartition.of(P.DAILY, datetime(2015, 1, 1, 12))
    assert len({day("2015-01-01"), TimePartition.of(P.DAILY, datetime(2015, 1, 1, 5))}) == 1
    month = TimePartition.parse(P.MONTHLY, "2015-01")
    hour = TimePartition.parse(P.HOURLY, "2015-01-01-00")
    # Same start: the finer period first; different starts: by start.
    assert sorted([month, day("2015-01-01"), hour]) == [hour, day("2015-01-01"), month]
    assert month != day("2015-01-01")
    assert sorted([day("2015-01-02"), month]) == [month, day("2015-01-02")]
    assert pickle.loads(pickle.dumps(month)) == month


def test_partitions_are_immutable() -> None:
    part = day("2015-01-01")
    with pytest.raises(AttributeError):
        part.start = datetime(2015, 1, 2)  # type: ignore[misc]


# --- ranges --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "begin", "end"),
    [
        ("[2015-01-01, 2015-01-05)", "2015-01-01", "2015-01-05"),
        ("(2015-01-01, 2015-01-05)", "2015-01-02", "2015-01-05"),
        ("[2015-01-01, 2015-01-05]", "2015-01-01", "2015-01-06"),
        ("(2015-01-01, 2015-01-05]", "2015-01-02", "2015-01-06"),
        ("[2015-01-01,2015-01-05)", "2015-01-01", "2015-01-05"),
        ("  [ 2015-01-01 ,  2015-01-05 )  ", "2015-01-01", "2015-01-05"),
        ("[2015-01-01, 2015-01-01)", "2015-01-01", "2015-01-01"),
        ("(2015-01-01, 2015-01-01]", "2015-01-02", "2015-01-02"),
    ],
)
def test_range_parse_bracket_forms(text: str, begin: str, end: str) -> None:
    parsed = TimePartitionRange.parse(P.DAILY, text)
    assert parsed == TimePartitionRange(day(begin), day(end))
    assert str(parsed) == f"[{begin}, {end})"
    assert TimePartitionRange.parse(P.DAILY, str(parsed)) == parsed


@pytest.mark.parametrize(
    "text",
    [
        "2015-01-01, 2015-01-05",
        "[2015-01-01, 2015-01-05",
        "{2015-01-01, 2015-01-05)",
        "[2015-01-01 2015-01-05)",
        "[2015-01-01, 2015-01-03, 2015-01-05)",
        "[2015-01-05, 2015-01-01)",  # ends before it begins
        "(2015-01-01, 2015-01-01)",  # open on both sides of one name
        "[2015-01, 2015-02)",
        "[, 2015-01-05)",
        "[]",
        "[",
        "",
    ],
)
def test_range_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        TimePartitionRange.parse(P.DAILY, text)


def test_range_construction_checks() -> None:
    with pytest.raises(ValueError):
        TimePartitionRange(day("2015-01-01"), TimePartition.parse(P.MONTHLY, "2015-02"))
    with pytest.raises(ValueError):
        TimePartitionRange(day("2015-01-02"), day("2015-01-01"))


def test_range_iteration_containment_and_size() -> None:
    run = TimePartitionRange.parse(P.DAILY, "[2016-02-27, 2016-03-02)")
    assert [p.name for p in run] == ["2016-02-27", "2016-02-28", "2016-02-29", "2016-03-01"]
    assert len(run) == 4 and not run.is_empty() and run.period is P.DAILY
    assert day("2016-02-27") in run and day("2016-03-01") in run
    assert day("2016-03-02") not in run and day("2016-02-26") not in run
    assert TimePartition.parse(P.MONTHLY, "2016-03") not in run
    assert "2016-02-28" not in run
    empty = TimePartitionRange(day("2015-01-01"), day("2015-01-01"))
    assert empty.is_empty() and len(empty) == 0 and list(empty) == []
    assert day("2015-01-01") not in empty
    quarters = TimePartitionRange.parse(P.QUARTERLY, "[2015-07, 2016-04]")
    assert [p.name for p in quarters] == ["2015-07", "2015-10", "2016-01", "2016-04"]
    assert len(quarters) == 4


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(list(P)),
    st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2030, 1, 1)),
    st.integers(0, 60),
)
def test_range_length_is_the_number_of_partitions(period, dt, n) -> None:
    begin = TimePartition.of(period, dt)
    run = TimePartitionRange(begin, begin.offset(n))
    parts = list(run)
    assert len(run) == len(parts) == n
    assert parts == sorted(set(parts))
    assert all(p in run for p in parts) and begin.offset(n) not in run
    assert all(a.next() == b for a, b in zip(parts, parts[1:], strict=False))
    assert TimePartitionRange.parse(period, str(run)) == run
