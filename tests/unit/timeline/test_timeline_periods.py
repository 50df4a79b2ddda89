"""Update periods: Lens's names and formats, strict parsing, calendar arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.timeline.periods import UpdatePeriod

P = UpdatePeriod
SECOND = 1000
DAY = 24 * 3600 * SECOND

datetimes = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31))


def test_names_units_and_weights_are_lenss() -> None:
    assert [p.name for p in P] == [
        "SECONDLY",
        "MINUTELY",
        "HOURLY",
        "DAILY",
        "WEEKLY",
        "MONTHLY",
        "QUARTERLY",
        "YEARLY",
    ]
    assert [p.unit_name for p in P] == [
        "second",
        "minute",
        "hour",
        "day",
        "week",
        "month",
        "quarter",
        "year",
    ]
    assert [p.weight_ms for p in P] == [
        SECOND,
        60 * SECOND,
        3600 * SECOND,
        DAY,
        7 * DAY,
        30 * DAY,
        90 * DAY,
        360 * DAY,
    ]


def test_periods_order_by_weight() -> None:
    assert P.by_weight() == list(P)
    assert sorted(reversed(list(P))) == list(P)
    assert P.SECONDLY < P.MINUTELY < P.HOURLY < P.DAILY < P.WEEKLY < P.MONTHLY
    assert P.MONTHLY < P.QUARTERLY < P.YEARLY
    assert P.YEARLY > P.DAILY and P.DAILY >= P.DAILY and P.DAILY <= P.DAILY
    assert max(P) is P.YEARLY and min(P) is P.SECONDLY
    with pytest.raises(TypeError):
        _ = P.DAILY < 3  # noqa: B018


@pytest.mark.parametrize(
    ("period", "dt", "name"),
    [
        (P.SECONDLY, datetime(2015, 1, 2, 3, 4, 5, 678), "2015-01-02-03-04-05"),
        (P.MINUTELY, datetime(2015, 1, 2, 3, 4, 5), "2015-01-02-03-04"),
        (P.HOURLY, datetime(2015, 1, 2, 3, 4, 5), "2015-01-02-03"),
        (P.DAILY, datetime(2015, 1, 2, 3, 4, 5), "2015-01-02"),
        (P.WEEKLY, datetime(2015, 1, 2, 3, 4, 5), "2015-W01"),
        (P.MONTHLY, datetime(2015, 1, 2, 3, 4, 5), "2015-01"),
        (P.QUARTERLY, datetime(2015, 5, 17), "2015-04"),
        (P.QUARTERLY, datetime(2015, 12, 31, 23, 59), "2015-10"),
        (P.YEARLY, datetime(2015, 7, 2), "2015"),
        (P.YEARLY, datetime(987, 7, 2), "0987"),
        (P.DAILY, datetime(9, 1, 2), "0009-01-02"),
    ],
)
def test_format(period: UpdatePeriod, dt: datetime, name: str) -> None:
    assert period.format(dt) == name
    assert period.parse(name) == period.truncate(dt)


@pytest.mark.parametrize(
    ("dt", "name"),
    [
        (datetime(2020, 12, 31), "2020-W53"),
        (datetime(2021, 1, 3, 23), "2020-W53"),  # Sunday: still the week of Monday 2020-12-28
        (datetime(2021, 1, 4), "2021-W01"),
        (datetime(2018, 12, 31), "2019-W01"),  # a Monday in December starting week 1
        (datetime(2016, 1, 3), "2015-W53"),
        (datetime(2015, 12, 28), "2015-W53"),
        (datetime(2026, 1, 1), "2026-W01"),  # Thursday: week 1 is the week with 4 Jan
    ],
)
def test_iso_week_year_boundaries(dt: datetime, name: str) -> None:
    assert P.WEEKLY.format(dt) == name
    monday = P.WEEKLY.parse(name)
    assert monday.weekday() == 0 and monday == P.WEEKLY.truncate(dt)
    assert monday <= dt < monday + timedelta(days=7)


@pytest.mark.parametrize(
    ("period", "text"),
    [
        (P.DAILY, "2015-1-02"),
        (P.DAILY, "2015-01-02 "),
        (P.DAILY, " 2015-01-02"),
        (P.DAILY, "2015-01-0２"),  # a non-ASCII digit
        (P.DAILY, "2015/01/02"),
        (P.DAILY, "2015-13-02"),
        (P.DAILY, "2015-02-29"),  # not a leap year
        (P.DAILY, "2015-00-10"),
        (P.DAILY, "0000-01-01"),
        (P.DAILY, "+015-01-02"),
        (P.DAILY, "2015-01-02-00"),
        (P.HOURLY, "2015-01-02-24"),
        (P.MINUTELY, "2015-01-02-23-60"),
        (P.SECONDLY, "2015-01-02-23-59-60"),
        (P.WEEKLY, "2015-W00"),
        (P.WEEKLY, "2021-W53"),  # 2021 has 52 ISO weeks
        (P.WEEKLY, "2015W01"),
        (P.WEEKLY, "2015-w01"),
        (P.MONTHLY, "2015-13"),
        (P.MONTHLY, "2015-01-01"),
        (P.QUARTERLY, "2015-00"),
        (P.YEARLY, "15"),
        (P.YEARLY, "latest"),
        (P.YEARLY, ""),
    ],
)
def test_parse_is_strict(period: UpdatePeriod, text: str) -> None:
    with pytest.raises(ValueError):
        period.parse(text)


def test_parse_leap_days_and_quarter_months() -> None:
    assert P.DAILY.parse("2016-02-29") == datetime(2016, 2, 29)
    assert P.DAILY.parse("2000-02-29") == datetime(2000, 2, 29)
    with pytest.raises(ValueError):
        P.DAILY.parse("1900-02-29")
    assert P.WEEKLY.parse("2020-W53") == datetime(2020, 12, 28)
    # Lens accepts any month as a quarterly name; the partition is the quarter holding it.
    assert P.QUARTERLY.parse("2015-05") == datetime(2015, 5, 1)
    assert P.QUARTERLY.format(P.QUARTERLY.parse("2015-05")) == "2015-04"


@pytest.mark.parametrize(
    ("period", "dt", "start"),
    [
        (P.SECONDLY, datetime(2015, 3, 4, 5, 6, 7, 8), datetime(2015, 3, 4, 5, 6, 7)),
        (P.MINUTELY, datetime(2015, 3, 4, 5, 6, 7, 8), datetime(2015, 3, 4, 5, 6)),
        (P.HOURLY, datetime(2015, 3, 4, 5, 6, 7, 8), datetime(2015, 3, 4, 5)),
        (P.DAILY, datetime(2015, 3, 4, 5, 6, 7, 8), datetime(2015, 3, 4)),
        (P.WEEKLY, datetime(2015, 3, 4, 5, 6, 7, 8), datetime(2015, 3, 2)),
        (P.WEEKLY, datetime(2015, 3, 2), datetime(2015, 3, 2)),
        (P.WEEKLY, datetime(2015, 3, 8, 23, 59), datetime(2015, 3, 2)),
        (P.MONTHLY, datetime(2015, 3, 31, 5), datetime(2015, 3, 1)),
        (P.QUARTERLY, datetime(2015, 1, 1), datetime(2015, 1, 1)),
        (P.QUARTERLY, datetime(2015, 3, 31, 23), datetime(2015, 1, 1)),
        (P.QUARTERLY, datetime(2015, 4, 1), datetime(2015, 4, 1)),
        (P.QUARTERLY, datetime(2015, 8, 15), datetime(2015, 7, 1)),
        (P.QUARTERLY, datetime(2015, 11, 30), datetime(2015, 10, 1)),
        (P.YEARLY, datetime(2016, 2, 29, 12), datetime(2016, 1, 1)),
    ],
)
def test_truncate(period: UpdatePeriod, dt: datetime, start: datetime) -> None:
    assert period.truncate(dt) == start
    assert period.ceil(start) == start
    assert period.ceil(dt) == (start if dt == start else period.add(start, 1))


@pytest.mark.parametrize(
    ("period", "dt", "n", "expected"),
    [
        (P.SECONDLY, datetime(2015, 12, 31, 23, 59, 59), 1, datetime(2016, 1, 1)),
        (P.MINUTELY, datetime(2015, 1, 1), -1, datetime(2014, 12, 31, 23, 59)),
        (P.HOURLY, datetime(2016, 2, 28, 23), 1, datetime(2016, 2, 29)),
        (P.DAILY, datetime(2016, 2, 28), 1, datetime(2016, 2, 29)),
        (P.DAILY, datetime(2015, 2, 28), 1, datetime(2015, 3, 1)),
        (P.DAILY, datetime(2016, 3, 1), -1, datetime(2016, 2, 29)),
        (P.WEEKLY, datetime(2020, 12, 28), 1, datetime(2021, 1, 4)),
        (P.MONTHLY, datetime(2015, 1, 31), 1, datetime(2015, 2, 28)),
        (P.MONTHLY, datetime(2016, 1, 31), 1, datetime(2016, 2, 29)),
        (P.MONTHLY, datetime(2015, 3, 31), -1, datetime(2015, 2, 28)),
        (P.MONTHLY, datetime(2015, 12, 1), 1, datetime(2016, 1, 1)),
        (P.MONTHLY, datetime(2015, 1, 1), -13, datetime(2013, 12, 1)),
        (P.QUARTERLY, datetime(2015, 10, 1), 1, datetime(2016, 1, 1)),
        (P.QUARTERLY, datetime(2015, 1, 1), -1, datetime(2014, 10, 1)),
        (P.QUARTERLY, datetime(2015, 11, 30), 1, datetime(2016, 2, 29)),
        (P.YEARLY, datetime(2016, 2, 29), 1, datetime(2017, 2, 28)),
        (P.YEARLY, datetime(2016, 2, 29), 4, datetime(2020, 2, 29)),
        (P.YEARLY, datetime(2015, 1, 1), 0, datetime(2015, 1, 1)),
    ],
)
def test_add(period: UpdatePeriod, dt: datetime, n: int, expected: datetime) -> None:
    assert period.add(dt, n) == expected


def test_add_past_the_calendar_overflows() -> None:
    with pytest.raises(OverflowError):
        P.YEARLY.add(datetime(9999, 1, 1), 1)
    with pytest.raises(OverflowError):
        P.MONTHLY.add(datetime(1, 1, 1), -1)
    with pytest.raises(OverflowError):
        P.DAILY.add(datetime(9999, 12, 31), 1)


def test_aware_or_non_datetimes_are_rejected() -> None:
    aware = datetime(2015, 1, 1, tzinfo=UTC)
    for call in (P.DAILY.truncate, P.DAILY.format, P.DAILY.ceil, lambda d: P.DAILY.add(d, 1)):
        with pytest.raises(ValueError):
            call(aware)
    with pytest.raises(TypeError):
        P.DAILY.truncate("2015-01-01")  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(P)), datetimes)
def test_truncate_ceil_and_format_agree(period: UpdatePeriod, dt: datetime) -> None:
    start = period.truncate(dt)
    following = period.add(start, 1)
    assert start <= dt < following
    assert period.truncate(start) == start and period.truncate(following) == following
    assert period.ceil(dt) == (start if dt == start else following)
    name = period.format(dt)
    assert len(name) == len(period.format(start))
    assert period.parse(name) == start
    assert period.format(period.parse(name)) == name


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(P)), datetimes, st.integers(-400, 400))
def test_add_and_units_between_agree(period: UpdatePeriod, dt: datetime, n: int) -> None:
    start = period.truncate(dt)
    moved = period.add(start, n)
    assert period.truncate(moved) == moved
    assert period.units_between(start, moved) == n
    assert period.units_between(moved, start) == -n
    assert period.add(moved, -n) == start
    assert (moved > start) == (n > 0)
