"""The cover of a time range by the partitions of a fact's storage tables.

The layouts of the design note this follows (its query range [2015-01-29T06:00, 2015-03-01T06:00)
with monthly, daily and hourly data) with their exact covers; both remainders of every level
(the note's pseudo code recursed into the left one twice and never into the right one); validity
windows; several tables; missing data as uncovered ranges; the lookup count against the note's
534,738 for an empty year; and a property test against a brute-force oracle: for periods that
nest, the cover is exactly the maximal available units, each from the first table that has it.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.timeline import Cover, CoverPart, StorageTimelines, cover_range
from metastore_server.timeline.partitions import TimePartition
from metastore_server.timeline.periods import UpdatePeriod
from metastore_server.timeline.timelines import (
    EndsAndHolesTimeline,
    PartitionTimeline,
    RangesTimeline,
    StoreAllTimeline,
)

P = UpdatePeriod
IMPLEMENTATIONS = [StoreAllTimeline, EndsAndHolesTimeline, RangesTimeline]

#: The design note's query range.
START, END = datetime(2015, 1, 29, 6), datetime(2015, 3, 1, 6)
#: Where its example data lies (well around the range).
DATA_START, DATA_END = datetime(2015, 1, 1), datetime(2015, 4, 1)


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda k: k.__name__)
def kind(request) -> type[PartitionTimeline]:
    return request.param


def units(period: UpdatePeriod, start: datetime, end: datetime) -> list[TimePartition]:
    """The partitions of ``period`` starting in [start, end)."""
    parts, part = [], TimePartition.of(period, period.ceil(start))
    while part.start < end:
        parts.append(part)
        part = part.next()
    return parts


def timeline(
    kind: type[PartitionTimeline],
    period: UpdatePeriod,
    start: datetime = DATA_START,
    end: datetime = DATA_END,
    missing: tuple[str, ...] = (),
) -> PartitionTimeline:
    """A timeline holding every unit in [start, end) except the ``missing`` names."""
    result = kind("db.fact_storage", period, "dt")
    result.add_all(p for p in units(period, start, end) if p.name not in missing)
    return result


def parts(table: str, period: UpdatePeriod, start: datetime, end: datetime) -> list[CoverPart]:
    return [CoverPart(table, p) for p in units(period, start, end)]


def dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


def check_cover(cover: Cover, tables: list[StorageTimelines], start: datetime, end: datetime):
    """What every cover satisfies: sorted disjoint parts inside the range, each available from
    its table, tiling [start, end) with the merged uncovered ranges."""
    by_name = {table.name: table for table in tables}
    for part in cover.parts:
        table = by_name[part.storage_table]
        assert table.timelines[part.period].exists(part.partition)
        assert table.start is None or table.start <= part.start
        assert table.end is None or part.end <= table.end
    pieces = [(p.start, p.end, "part") for p in cover.parts]
    pieces += [(a, b, "gap") for a, b in cover.uncovered]
    pieces.sort()
    if start >= end:
        assert not pieces
        return
    assert pieces[0][0] == start and pieces[-1][1] == end
    for (_, before_end, _), (after_start, _, _) in zip(pieces, pieces[1:], strict=False):
        assert before_end == after_start
    assert all(a < b for a, b, _ in pieces)
    assert [p.start for p in cover.parts] == sorted(p.start for p in cover.parts)
    for (_, first_end), (second_start, _) in zip(
        cover.uncovered, cover.uncovered[1:], strict=False
    ):
        assert first_end < second_start  # merged: never touching
    assert cover.complete == (not cover.uncovered)


def run(tables: list[StorageTimelines], start: datetime = START, end: datetime = END) -> Cover:
    cover = cover_range(tables, start, end)
    check_cover(cover, tables, start, end)
    return cover


# --- the design note's layouts -------------------------------------------------------------------

LEFT_HOURS = ("s", P.HOURLY, START, dt("2015-01-30"))  # [2015-01-29-06, 2015-01-30-00)
RIGHT_HOURS = ("s", P.HOURLY, dt("2015-03-01"), END)  # [2015-03-01-00, 2015-03-01-06)


def expected(*spans: tuple) -> list[CoverPart]:
    return sorted(
        (part for span in spans for part in parts(*span)),
        key=lambda part: part.start,
    )


def test_best_case_all_rollups_present(kind) -> None:
    tables = [StorageTimelines("s", {p: timeline(kind, p) for p in (P.MONTHLY, P.DAILY, P.HOURLY)})]
    cover = run(tables)
    assert cover.complete
    assert list(cover.parts) == expected(
        LEFT_HOURS,
        ("s", P.DAILY, dt("2015-01-30"), dt("2015-02-01")),
        ("s", P.MONTHLY, dt("2015-02-01"), dt("2015-03-01")),
        RIGHT_HOURS,
    )
    assert [str(p.partition) for p in cover.parts][17:22] == [
        "2015-01-29-23",
        "2015-01-30",
        "2015-01-31",
        "2015-02",
        "2015-03-01-00",
    ]
    assert len(cover.parts) == 18 + 2 + 1 + 6


@pytest.mark.parametrize("absent", ["no timelines", "empty timelines"])
def test_worst_case_only_hourly(kind, absent) -> None:
    timelines = {P.HOURLY: timeline(kind, P.HOURLY)}
    if absent == "empty timelines":
        timelines[P.MONTHLY] = kind("db.fact_storage", P.MONTHLY, "dt")
        timelines[P.DAILY] = kind("db.fact_storage", P.DAILY, "dt")
    cover = run([StorageTimelines("s", timelines)])
    assert cover.complete
    assert list(cover.parts) == parts("s", P.HOURLY, START, END)
    assert len(cover.parts) == 18 + 30 * 24 + 6


def test_no_daily_rollups(kind) -> None:
    tables = [StorageTimelines("s", {p: timeline(kind, p) for p in (P.MONTHLY, P.HOURLY)})]
    cover = run(tables)
    assert cover.complete
    assert list(cover.parts) == expected(
        ("s", P.HOURLY, START, dt("2015-02-01")),
        ("s", P.MONTHLY, dt("2015-02-01"), dt("2015-03-01")),
        RIGHT_HOURS,
    )


def test_no_monthly_rollups(kind) -> None:
    tables = [StorageTimelines("s", {p: timeline(kind, p) for p in (P.DAILY, P.HOURLY)})]
    cover = run(tables)
    assert cover.complete
    assert list(cover.parts) == expected(
        LEFT_HOURS, ("s", P.DAILY, dt("2015-01-30"), dt("2015-03-01")), RIGHT_HOURS
    )


def test_one_day_missing_falls_back_to_hourly(kind) -> None:
    timelines = {
        P.MONTHLY: kind("db.fact_storage", P.MONTHLY, "dt"),  # no monthly rollups
        P.DAILY: timeline(kind, P.DAILY, missing=("2015-02-10",)),
        P.HOURLY: timeline(kind, P.HOURLY),
    }
    cover = run([StorageTimelines("s", timelines)])
    assert cover.complete
    assert list(cover.parts) == expected(
        LEFT_HOURS,
        ("s", P.DAILY, dt("2015-01-30"), dt("2015-02-10")),
        ("s", P.HOURLY, dt("2015-02-10"), dt("2015-02-11")),
        ("s", P.DAILY, dt("2015-02-11"), dt("2015-03-01")),
        RIGHT_HOURS,
    )


def test_missing_month_is_covered_by_days_and_hours(kind) -> None:
    timelines = {
        P.MONTHLY: timeline(kind, P.MONTHLY, missing=("2015-02",)),
        P.DAILY: timeline(kind, P.DAILY, missing=("2015-02-10",)),
        P.HOURLY: timeline(kind, P.HOURLY),
    }
    cover = run([StorageTimelines("s", timelines)])
    assert cover.complete
    assert list(cover.parts) == expected(
        LEFT_HOURS,
        ("s", P.DAILY, dt("2015-01-30"), dt("2015-02-10")),
        ("s", P.HOURLY, dt("2015-02-10"), dt("2015-02-11")),
        ("s", P.DAILY, dt("2015-02-11"), dt("2015-03-01")),
        RIGHT_HOURS,
    )


# --- remainders ----------------------------------------------------------------------------------


def test_both_remainders_of_every_level_are_covered(kind) -> None:
    """With the design note's bug (left remainder twice, right one never) the hours of
    2015-03-01 would be missing; here each remainder is covered exactly once."""
    timelines = {p: timeline(kind, p) for p in (P.YEARLY, P.MONTHLY, P.DAILY, P.HOURLY)}
    minutes = timeline(kind, P.MINUTELY, dt("2015-01-29"), dt("2015-01-30"))
    minutes.add_all(units(P.MINUTELY, dt("2015-03-02"), dt("2015-03-03")))
    tables = [StorageTimelines("s", {**timelines, P.MINUTELY: minutes})]
    start, end = dt("2015-01-29T06:30"), dt("2015-03-02T06:45")
    cover = run(tables, start, end)
    assert cover.complete
    assert list(cover.parts) == expected(
        ("s", P.MINUTELY, start, dt("2015-01-29T07:00")),
        ("s", P.HOURLY, dt("2015-01-29T07:00"), dt("2015-01-30")),
        ("s", P.DAILY, dt("2015-01-30"), dt("2015-02-01")),
        ("s", P.MONTHLY, dt("2015-02-01"), dt("2015-03-01")),
        ("s", P.DAILY, dt("2015-03-01"), dt("2015-03-02")),
        ("s", P.HOURLY, dt("2015-03-02"), dt("2015-03-02T06:00")),
        ("s", P.MINUTELY, dt("2015-03-02T06:00"), end),
    )
    right = [p for p in cover.parts if p.start >= dt("2015-03-01")]
    assert len(right) == 1 + 6 + 45
    assert len({p.partition for p in cover.parts}) == len(cover.parts)  # nothing twice


@pytest.mark.parametrize(
    ("start", "end", "names"),
    [
        (
            "2015-02-01",
            "2015-03-01T03:00",
            ["2015-02", "2015-03-01-00", "2015-03-01-01", "2015-03-01-02"],
        ),
        ("2015-01-31T22:00", "2015-03-01", ["2015-01-31-22", "2015-01-31-23", "2015-02"]),
        ("2015-02-27T23:00", "2015-03-01T01:00", ["2015-02-27-23", "2015-02-28", "2015-03-01-00"]),
        ("2015-02-10T05:00", "2015-02-10T07:00", ["2015-02-10-05", "2015-02-10-06"]),
    ],
)
def test_only_one_remainder_or_none(kind, start, end, names) -> None:
    tables = [StorageTimelines("s", {p: timeline(kind, p) for p in (P.MONTHLY, P.DAILY, P.HOURLY)})]
    cover = run(tables, dt(start), dt(end))
    assert cover.complete
    assert [p.partition.name for p in cover.parts] == names


def test_years_and_quarters(kind) -> None:
    periods = (P.YEARLY, P.QUARTERLY, P.MONTHLY, P.DAILY)
    start, end = dt("2013-11-15"), dt("2016-05-10")
    tables = [
        StorageTimelines(
            "s",
            {
                P.YEARLY: timeline(kind, P.YEARLY, dt("2010-01-01"), dt("2020-01-01"), ("2014",)),
                **{p: timeline(kind, p, dt("2013-01-01"), dt("2017-01-01")) for p in periods[1:]},
            },
        )
    ]
    cover = run(tables, start, end)
    assert cover.complete
    assert [p.partition.name for p in cover.parts if p.period > P.DAILY] == [
        "2013-12",  # month; quarter 2013-10 starts before the range
        "2014-01",  # the year 2014 is missing: its quarters
        "2014-04",
        "2014-07",
        "2014-10",
        "2015",
        "2016-01",  # quarter
        "2016-04",  # month; quarter 2016-04 ends after the range
    ]
    days = [p for p in cover.parts if p.period is P.DAILY]
    assert days == parts("s", P.DAILY, start, dt("2013-12-01")) + parts(
        "s", P.DAILY, dt("2016-05-01"), end
    )


def test_weeks_do_not_straddle_a_month_in_the_cover(kind) -> None:
    # 2015-01-26 is a Monday: weeks W05 (Jan 26 - Feb 1) and W06 (Feb 2 - 8).
    timelines = {p: timeline(kind, p) for p in (P.MONTHLY, P.WEEKLY, P.DAILY)}
    tables = [StorageTimelines("s", timelines)]
    cover = run(tables, dt("2015-01-26"), dt("2015-02-09"))
    assert [p.partition.name for p in cover.parts] == ["2015-W05", "2015-W06"]
    cover = run(tables, dt("2015-01-26"), dt("2015-03-02"))
    # February is used; W05 overlaps it, so its January days come from DAILY.
    assert [p.partition.name for p in cover.parts] == [
        "2015-01-26",
        "2015-01-27",
        "2015-01-28",
        "2015-01-29",
        "2015-01-30",
        "2015-01-31",
        "2015-02",
        "2015-03-01",
    ]


# --- validity windows ----------------------------------------------------------------------------


def test_partitions_outside_the_validity_window_are_not_used(kind) -> None:
    timelines = {p: timeline(kind, p) for p in (P.MONTHLY, P.DAILY, P.HOURLY)}
    tables = [StorageTimelines("s", timelines, start=dt("2015-01-30T12:00"), end=dt("2015-02-20"))]
    cover = run(tables)
    # The month ends after the window and the day 2015-01-30 starts before it.
    assert list(cover.parts) == expected(
        ("s", P.HOURLY, dt("2015-01-30T12:00"), dt("2015-01-31")),
        ("s", P.DAILY, dt("2015-01-31"), dt("2015-02-20")),
    )
    assert cover.uncovered == ((START, dt("2015-01-30T12:00")), (dt("2015-02-20"), END))
    assert not cover.complete


def test_another_table_fills_in_outside_a_validity_window(kind) -> None:
    old = {p: timeline(kind, p) for p in (P.MONTHLY, P.DAILY)}
    new = {P.HOURLY: timeline(kind, P.HOURLY)}
    tables = [
        StorageTimelines("old", old, end=dt("2015-02-20")),
        StorageTimelines("new", new, start=dt("2015-01-29T06:00")),
    ]
    cover = run(tables)
    assert cover.complete
    assert list(cover.parts) == expected(
        ("new", P.HOURLY, START, dt("2015-01-30")),
        ("old", P.DAILY, dt("2015-01-30"), dt("2015-02-20")),
        ("new", P.HOURLY, dt("2015-02-20"), END),
    )


def test_a_window_outside_the_range_costs_no_lookups(kind) -> None:
    timelines = {p: timeline(kind, p) for p in (P.MONTHLY, P.DAILY, P.HOURLY)}
    tables = [StorageTimelines("s", timelines, end=dt("2015-01-01"))]
    cover = run(tables)
    assert cover.parts == () and cover.uncovered == ((START, END),)
    assert cover.lookups == 0


# --- several storage tables ----------------------------------------------------------------------


def test_the_first_table_that_has_a_unit_supplies_it(kind) -> None:
    a = {P.DAILY: timeline(kind, P.DAILY, missing=("2015-02-10", "2015-02-11"))}
    b = {P.DAILY: timeline(kind, P.DAILY), P.HOURLY: timeline(kind, P.HOURLY)}
    tables = [StorageTimelines("a", a), StorageTimelines("b", b)]
    cover = run(tables)
    assert cover.complete
    assert list(cover.parts) == expected(
        ("b", P.HOURLY, START, dt("2015-01-30")),
        ("a", P.DAILY, dt("2015-01-30"), dt("2015-02-10")),
        ("b", P.DAILY, dt("2015-02-10"), dt("2015-02-12")),
        ("a", P.DAILY, dt("2015-02-12"), dt("2015-03-01")),
        ("b", P.HOURLY, dt("2015-03-01"), END),
    )
    swapped = run(tables[::-1])
    assert [p.partition for p in swapped.parts] == [p.partition for p in cover.parts]
    assert {p.storage_table for p in swapped.parts} == {"b"}


def test_a_coarser_unit_of_a_later_table_beats_finer_ones_of_an_earlier_table(kind) -> None:
    a = {P.DAILY: timeline(kind, P.DAILY), P.HOURLY: timeline(kind, P.HOURLY)}
    b = {P.MONTHLY: timeline(kind, P.MONTHLY)}
    cover = run([StorageTimelines("a", a), StorageTimelines("b", b)])
    assert cover.complete
    assert list(cover.parts) == expected(
        ("a", P.HOURLY, START, dt("2015-01-30")),
        ("a", P.DAILY, dt("2015-01-30"), dt("2015-02-01")),
        ("b", P.MONTHLY, dt("2015-02-01"), dt("2015-03-01")),
        ("a", P.HOURLY, dt("2015-03-01"), END),
    )


def test_tables_with_different_periods_and_data(kind) -> None:
    daily = {P.DAILY: timeline(kind, P.DAILY, dt("2015-02-01"), dt("2015-02-15"))}
    hourly = {P.HOURLY: timeline(kind, P.HOURLY, dt("2015-02-10"), dt("2015-02-20"))}
    cover = run([StorageTimelines("d", daily), StorageTimelines("h", hourly)])
    assert list(cover.parts) == expected(
        ("d", P.DAILY, dt("2015-02-01"), dt("2015-02-15")),
        ("h", P.HOURLY, dt("2015-02-15"), dt("2015-02-20")),
    )
    assert cover.uncovered == ((START, dt("2015-02-01")), (dt("2015-02-20"), END))


# --- missing data --------------------------------------------------------------------------------


def test_missing_data_is_reported_as_merged_uncovered_ranges(kind) -> None:
    daily = timeline(kind, P.DAILY, missing=("2015-02-10", "2015-02-11", "2015-02-20"))
    cover = run([StorageTimelines("s", {P.DAILY: daily})])
    assert not cover.complete
    assert cover.uncovered == (
        (START, dt("2015-01-30")),
        (dt("2015-02-10"), dt("2015-02-12")),
        (dt("2015-02-20"), dt("2015-02-21")),
        (dt("2015-03-01"), END),
    )
    assert len(cover.parts) == 30 - 3


def test_sub_second_slivers_are_uncovered(kind) -> None:
    start, end = datetime(2015, 2, 1, 0, 0, 0, 250_000), datetime(2015, 2, 1, 0, 0, 3, 500)
    seconds = timeline(kind, P.SECONDLY, dt("2015-02-01"), dt("2015-02-01T00:01"))
    cover = run([StorageTimelines("s", {P.SECONDLY: seconds})], start, end)
    assert [p.partition.name for p in cover.parts] == ["2015-02-01-00-00-01", "2015-02-01-00-00-02"]
    assert cover.uncovered == ((start, dt("2015-02-01T00:00:01")), (dt("2015-02-01T00:00:03"), end))


def test_no_tables_or_no_periods() -> None:
    assert run([]) == Cover((), ((START, END),), 0)
    assert run([StorageTimelines("s", {})]) == Cover((), ((START, END),), 0)


def test_empty_range_is_an_empty_complete_cover() -> None:
    tables = [StorageTimelines("s", {P.DAILY: timeline(StoreAllTimeline, P.DAILY)})]
    for start, end in ((START, START), (END, START)):
        cover = cover_range(tables, start, end)
        assert cover == Cover() and cover.complete and cover.lookups == 0


def test_bad_arguments() -> None:
    daily = timeline(StoreAllTimeline, P.DAILY)
    with pytest.raises(ValueError):
        StorageTimelines("s", {P.HOURLY: daily})
    with pytest.raises(TypeError):
        StorageTimelines("s", {"DAILY": daily})
    with pytest.raises(ValueError):
        StorageTimelines("s", {P.DAILY: daily}, start=END, end=START)
    aware = datetime.fromisoformat("2015-02-01T00:00:00+00:00")
    with pytest.raises(ValueError):
        StorageTimelines("s", {P.DAILY: daily}, start=aware)
    with pytest.raises(ValueError):
        cover_range([], aware, END)
    with pytest.raises(TypeError):
        cover_range([], "2015-01-01", END)


def test_storage_timelines_is_a_read_only_snapshot() -> None:
    timelines = {P.DAILY: timeline(StoreAllTimeline, P.DAILY)}
    table = StorageTimelines("s", timelines)
    timelines[P.HOURLY] = timeline(StoreAllTimeline, P.HOURLY)
    assert list(table.timelines) == [P.DAILY]
    with pytest.raises(TypeError):
        table.timelines[P.HOURLY] = timelines[P.HOURLY]  # type: ignore[index]


# --- lookups -------------------------------------------------------------------------------------

NAIVE_EMPTY_YEAR = 1 + 12 + 365 + 365 * 24 + 365 * 24 * 60  # the design note's count
YEAR_PERIODS = (P.YEARLY, P.MONTHLY, P.DAILY, P.HOURLY, P.MINUTELY)


def test_an_empty_year_costs_one_lookup_per_period(kind) -> None:
    assert NAIVE_EMPTY_YEAR == 534_738
    timelines = {p: kind("db.fact_storage", p, "dt") for p in YEAR_PERIODS}
    cover = run([StorageTimelines("s", timelines)], dt("2015-01-01"), dt("2016-01-01"))
    assert cover.parts == () and cover.uncovered == ((dt("2015-01-01"), dt("2016-01-01")),)
    assert cover.lookups < 100
    assert cover.lookups == len(YEAR_PERIODS)  # first() of each timeline, nothing else


def test_data_only_outside_the_range_costs_few_lookups(kind) -> None:
    # Minutes on either side of 2015 (for ends and holes: hours, or it would hold a year of
    # holes): [first, latest] spans the whole range but nothing in it exists.
    fine = P.HOURLY if kind is EndsAndHolesTimeline else P.MINUTELY
    timelines = {p: kind("db.fact_storage", p, "dt") for p in YEAR_PERIODS}
    timelines[fine].add(TimePartition.of(fine, dt("2014-12-31T23:59")))
    timelines[fine].add(TimePartition.of(fine, dt("2016-01-01")))
    timelines[P.DAILY].add_all(units(P.DAILY, dt("2014-12-01"), dt("2015-01-01")))
    cover = run([StorageTimelines("s", timelines)], dt("2015-01-01"), dt("2016-01-01"))
    assert cover.parts == ()
    assert cover.lookups < 100


def test_a_present_year_is_one_probe(kind) -> None:
    timelines = {p: timeline(kind, p, dt("2015-01-01"), dt("2016-01-01")) for p in YEAR_PERIODS[:4]}
    cover = run([StorageTimelines("s", timelines)], dt("2015-01-01"), dt("2016-01-01"))
    assert [p.partition.name for p in cover.parts] == ["2015"]
    assert cover.lookups == 3  # first, latest, exists


def test_dense_fine_data_under_missing_rollups_is_probed_per_needed_unit(kind) -> None:
    timelines = {
        P.MONTHLY: timeline(kind, P.MONTHLY, missing=("2015-02",)),
        P.DAILY: timeline(kind, P.DAILY, missing=("2015-02-10",)),
        P.HOURLY: timeline(kind, P.HOURLY),
    }
    cover = run([StorageTimelines("s", timelines)], dt("2015-01-01"), dt("2015-04-01"))
    assert cover.complete and len(cover.parts) == 2 + 27 + 24
    # months: 2 + 3 probes; days of February: 2 + 1 + 28; hours of 2015-02-10: 2 + 1 + 24.
    assert cover.lookups == 5 + 31 + 27


# --- against a brute-force oracle ----------------------------------------------------------------

#: Chains of periods that nest, each with a base instant and a span in units of its finest period.
CHAINS = [
    ((P.MINUTELY, P.HOURLY, P.DAILY), datetime(2015, 12, 30, 21, 17), 2 * 24 * 60),
    ((P.SECONDLY, P.MINUTELY, P.HOURLY), datetime(2015, 12, 31, 22, 58, 30), 4000),
    ((P.HOURLY, P.DAILY, P.WEEKLY), datetime(2015, 12, 20, 22), 3 * 7 * 24),
    ((P.DAILY, P.MONTHLY, P.QUARTERLY, P.YEARLY), datetime(2014, 11, 20), 800),
]
JITTERS = [timedelta(0)] * 4 + [
    timedelta(microseconds=500),
    timedelta(seconds=30),
    timedelta(hours=5),
]


@st.composite
def scenarios(draw):
    chain, base, span = draw(st.sampled_from(CHAINS))
    finest = chain[0]
    origin = TimePartition.of(finest, base)

    def instant(low: int, high: int) -> datetime:
        offset = draw(st.integers(low, high))
        return origin.offset(offset).start + draw(st.sampled_from(JITTERS))

    begin = draw(st.integers(-3, span // 2))
    start = origin.offset(begin).start + draw(st.sampled_from(JITTERS))
    end = instant(begin - 1 if draw(st.integers(0, 9)) == 0 else begin, span)
    tables = []
    for number in range(draw(st.integers(1, 3))):
        periods = draw(st.sets(st.sampled_from(chain), min_size=1))
        timelines = {}
        for period in periods:
            first = TimePartition.of(period, base)
            count = period.units_between(base, origin.offset(span).start) + 1
            result = draw(st.sampled_from(IMPLEMENTATIONS))("db.t", period, "dt")
            mode = draw(st.sampled_from(["full", "runs", "scattered"]))
            if mode == "full":  # all of it (holes below)
                runs = [(-2, count + 5)]
            elif mode == "runs":
                runs = draw(st.lists(st.tuples(st.integers(-2, count + 2), st.integers(1, count))))
            else:  # a few lone units: reading the timeline beats probing the range
                runs = [(i, 1) for i in draw(st.sets(st.integers(-2, count + 2), max_size=6))]
            for begin, length in runs:
                result.add_all(first.offset(begin + i) for i in range(length))
            for hole in draw(st.lists(st.integers(-2, count + 2), max_size=5)):
                result.drop(first.offset(hole))
            timelines[period] = result
        window = {}
        if draw(st.integers(0, 3)) == 0:
            window["start"] = instant(-3, span)
        if draw(st.integers(0, 3)) == 0:
            window["end"] = max(window.get("start", base), instant(-3, span))
        tables.append(StorageTimelines(f"t{number}", timelines, **window))
    return chain, tables, start, end


def oracle(tables: list[StorageTimelines], start: datetime, end: datetime) -> Cover:
    """The maximal available units (each from the first table that has it) and the rest."""
    available: dict[TimePartition, str] = {}
    for table in tables:
        low = start if table.start is None else max(start, table.start)
        high = end if table.end is None else min(end, table.end)
        for timeline in table.timelines.values():
            for partition in timeline.partitions():
                if low <= partition.start and partition.end <= high:
                    available.setdefault(partition, table.name)
    periods = {p.period for p in available}
    maximal = [
        CoverPart(name, partition)
        for partition, name in available.items()
        if not any(
            TimePartition.of(coarser, partition.start) in available
            for coarser in periods
            if coarser > partition.period
        )
    ]
    maximal.sort(key=lambda part: part.start)
    uncovered, cursor = [], start
    for part in maximal:
        if cursor < part.start:
            uncovered.append((cursor, part.start))
        cursor = part.end
    if cursor < end:
        uncovered.append((cursor, end))
    if start >= end:
        return Cover()
    return Cover(tuple(maximal), tuple(uncovered))


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_cover_is_the_maximal_available_units(scenario) -> None:
    chain, tables, start, end = scenario
    cover = run(tables, start, end)
    truth = oracle(tables, start, end)
    assert cover.parts == truth.parts
    assert cover.uncovered == truth.uncovered
    # Coarsest first, spelled out: every available unit in the range is a part or lies inside a
    # coarser part; so no uncovered instant is covered by any available partition.
    starts = [part.start for part in cover.parts]
    for table in tables:
        for timeline in table.timelines.values():
            for partition in timeline.partitions():
                if not (start <= partition.start and partition.end <= end):
                    continue
                if table.start is not None and partition.start < table.start:
                    continue
                if table.end is not None and partition.end > table.end:
                    continue
                at = bisect_right(starts, partition.start) - 1
                assert at >= 0, partition
                part = cover.parts[at]
                assert partition.end <= part.end and part.period >= partition.period, partition
    # Never more than first/latest/len per timeline plus twice the units of its period in range.
    if start < end:
        bound = 0
        for table in tables:
            for period in table.timelines:
                bound += 3 + 2 * (period.units_between(start, end) + 1)
        assert cover.lookups <= bound
