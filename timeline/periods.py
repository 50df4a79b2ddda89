"""Update periods: the granularities at which time-partitioned data is registered.

Times are naive ``datetime.datetime`` values read as UTC. (Lens uses the JVM's default time
zone; a server that keeps one zone everywhere cannot do better than pick one, and UTC is the
only choice that does not depend on where the server runs.) An aware datetime is a ValueError.

Each period has Lens's name, unit name, weight and partition-name format:

==========  ========  ===========================  =================================
period      unit      weight                       name format (example)
==========  ========  ===========================  =================================
SECONDLY    second    1 s                          ``yyyy-MM-dd-HH-mm-ss`` 2015-01-02-03-04-05
MINUTELY    minute    60 s                         ``yyyy-MM-dd-HH-mm``    2015-01-02-03-04
HOURLY      hour      60 min                       ``yyyy-MM-dd-HH``       2015-01-02-03
DAILY       day       24 h                         ``yyyy-MM-dd``          2015-01-02
WEEKLY      week      7 days                       ``YYYY-'W'ww``          2015-W01
MONTHLY     month     30 days                      ``yyyy-MM``             2015-01
QUARTERLY   quarter   3 months (90 days)           ``yyyy-MM``             2015-04
YEARLY      year      12 months (360 days)         ``yyyy``                2015
==========  ========  ===========================  =================================

Weeks are ISO 8601 weeks: they start on Monday and the week-year is the ISO year (so
2020-12-31 is in 2020-W53 and 2021-01-03 still in 2020-W53). Lens's weeks follow the JVM locale
(Sunday-first in the US); ISO is the choice that does not depend on it. A quarter is named by its
first month (2015-01, 2015-04, 2015-07, 2015-10). Weights are Lens's nominal lengths, used only
to order periods; calendar arithmetic (``add``) uses real month lengths.
"""

from __future__ import annotations

import calendar
import enum
import re
from collections.abc import Callable
from datetime import datetime, timedelta

_SECOND_MS = 1000
_DAY_MS = 24 * 3600 * _SECOND_MS
_MONTH_MS = 30 * _DAY_MS

#: The earliest datetime; a Monday, so it also anchors week numbering for ``units_between``.
_ORIGIN = datetime.min


class UpdatePeriod(enum.Enum):
    """A partition granularity; members order by ``weight_ms`` (SECONDLY smallest)."""

    SECONDLY = "second"
    MINUTELY = "minute"
    HOURLY = "hour"
    DAILY = "day"
    WEEKLY = "week"
    MONTHLY = "month"
    QUARTERLY = "quarter"
    YEARLY = "year"

    # Members are singletons: identity hashing is right and much cheaper than Enum's.
    __hash__ = object.__hash__

    @property
    def unit_name(self) -> str:
        """Lens's unit name: "second", "minute", ..., "year"."""
        return self.value

    @property
    def weight_ms(self) -> int:
        """Nominal length in milliseconds (a month is 30 days, a year 12 months)."""
        return _RULES[self].weight_ms

    @classmethod
    def by_weight(cls) -> list[UpdatePeriod]:
        """All periods, finest first."""
        return sorted(cls, key=lambda p: p.weight_ms)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, UpdatePeriod):
            return NotImplemented
        return self.weight_ms < other.weight_ms

    def __le__(self, other: object) -> bool:
        if not isinstance(other, UpdatePeriod):
            return NotImplemented
        return self.weight_ms <= other.weight_ms

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, UpdatePeriod):
            return NotImplemented
        return self.weight_ms > other.weight_ms

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, UpdatePeriod):
            return NotImplemented
        return self.weight_ms >= other.weight_ms

    def format(self, dt: datetime) -> str:
        """The partition name of the unit containing ``dt`` (Lens's date string)."""
        return _RULES[self].format(self.truncate(dt))

    def parse(self, text: str) -> datetime:
        """The datetime a partition name stands for; ValueError unless ``text`` is exactly in
        this period's format (same length, ASCII digits, a real date).

        The result is the start of what the text names, except for QUARTERLY, where any month is
        accepted (as Lens does) and the first day of that month is returned.
        """
        rule = _RULES[self]
        match = rule.pattern.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise ValueError(f"not a {self.name} partition name: {text!r}")
        try:
            return rule.build(tuple(map(int, match.groups())))
        except ValueError as error:
            raise ValueError(f"not a {self.name} partition name: {text!r} ({error})") from None

    def truncate(self, dt: datetime) -> datetime:
        """The start of the unit containing ``dt``."""
        _check(dt)
        return _RULES[self].truncate(dt)

    def ceil(self, dt: datetime) -> datetime:
        """``dt`` if it starts a unit, else the start of the next unit."""
        start = self.truncate(dt)
        return start if start == dt else self.add(start, 1)

    def add(self, dt: datetime, n: int) -> datetime:
        """``dt`` moved by ``n`` units (months, quarters and years by the calendar, the day of
        month clamped to the target month's length). OverflowError past year 1 or 9999."""
        _check(dt)
        return _RULES[self].add(dt, n)

    def units_between(self, start: datetime, end: datetime) -> int:
        """How many units lie from the unit of ``start`` to the unit of ``end`` (negative when
        ``end`` is earlier); for unit starts, ``add(start, units_between(start, end)) == end``."""
        index = _RULES[self].index
        return index(self.truncate(end)) - index(self.truncate(start))


def _check(dt: datetime) -> None:
    if not isinstance(dt, datetime):
        raise TypeError(f"expected a datetime, got {type(dt).__name__}")
    if dt.tzinfo is not None:
        raise ValueError(f"expected a naive UTC datetime, got {dt.isoformat()}")


# --- per-period rules ----------------------------------------------------------------------------


class _Rule:
    """How one period formats, parses, truncates, moves and counts."""

    def __init__(
        self,
        weight_ms: int,
        pattern: str,
        format: Callable[[datetime], str],
        build: Callable[[tuple[int, ...]], datetime],
        truncate: Callable[[datetime], datetime],
        add: Callable[[datetime, int], datetime],
        index: Callable[[datetime], int],
    ) -> None:
        self.weight_ms = weight_ms
        self.pattern = re.compile(pattern.replace("D", "[0-9]"))
        self.format = format
        self.build = build
        self.truncate = truncate
        self.add = add
        self.index = index


def _fixed(
    step: timedelta,
) -> tuple[Callable[[datetime, int], datetime], Callable[[datetime], int]]:
    """``add`` and ``index`` of a period of constant length."""

    def add(dt: datetime, n: int) -> datetime:
        return dt + step * n

    def index(start: datetime) -> int:
        return (start - _ORIGIN) // step

    return add, index


def _add_months(dt: datetime, n: int) -> datetime:
    year, month0 = divmod(dt.year * 12 + dt.month - 1 + n, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date value out of range")
    month = month0 + 1
    day = min(dt.day, calendar.monthrange(year, month)[1])
    return dt.replace(year=year, month=month, day=day)


def _month_index(start: datetime) -> int:
    return start.year * 12 + start.month - 1


def _ymd(dt: datetime) -> str:
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}"


def _week_start(dt: datetime) -> datetime:
    day = dt.replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=day.weekday())


def _week_name(dt: datetime) -> str:
    iso = dt.isocalendar()
    return f"{iso.year:04d}-W{iso.week:02d}"


def _build(g: tuple[int, ...]) -> datetime:
    """The datetime of a name's groups: year, month, day, then hour, minute, second if named."""
    year, month, day, hour, minute, second = (*g, 0, 0, 0)[:6]
    return datetime(year, month, day, hour, minute, second)


_SECOND_ADD, _SECOND_INDEX = _fixed(timedelta(seconds=1))
_MINUTE_ADD, _MINUTE_INDEX = _fixed(timedelta(minutes=1))
_HOUR_ADD, _HOUR_INDEX = _fixed(timedelta(hours=1))
_DAY_ADD, _DAY_INDEX = _fixed(timedelta(days=1))
_WEEK_ADD, _WEEK_INDEX = _fixed(timedelta(weeks=1))

_RULES: dict[UpdatePeriod, _Rule] = {
    UpdatePeriod.SECONDLY: _Rule(
        _SECOND_MS,
        r"(DDDD)-(DD)-(DD)-(DD)-(DD)-(DD)",
        lambda d: f"{_ymd(d)}-{d.hour:02d}-{d.minute:02d}-{d.second:02d}",
        _build,
        lambda d: d.replace(microsecond=0),
        _SECOND_ADD,
        _SECOND_INDEX,
    ),
    UpdatePeriod.MINUTELY: _Rule(
        60 * _SECOND_MS,
        r"(DDDD)-(DD)-(DD)-(DD)-(DD)",
        lambda d: f"{_ymd(d)}-{d.hour:02d}-{d.minute:02d}",
        _build,
        lambda d: d.replace(second=0, microsecond=0),
        _MINUTE_ADD,
        _MINUTE_INDEX,
    ),
    UpdatePeriod.HOURLY: _Rule(
        3600 * _SECOND_MS,
        r"(DDDD)-(DD)-(DD)-(DD)",
        lambda d: f"{_ymd(d)}-{d.hour:02d}",
        _build,
        lambda d: d.replace(minute=0, second=0, microsecond=0),
        _HOUR_ADD,
        _HOUR_INDEX,
    ),
    UpdatePeriod.DAILY: _Rule(
        _DAY_MS,
        r"(DDDD)-(DD)-(DD)",
        _ymd,
        _build,
        lambda d: d.replace(hour=0, minute=0, second=0, microsecond=0),
        _DAY_ADD,
        _DAY_INDEX,
    ),
    UpdatePeriod.WEEKLY: _Rule(
        7 * _DAY_MS,
        r"(DDDD)-W(DD)",
        _week_name,
        lambda g: datetime.fromisocalendar(g[0], g[1], 1),
        _week_start,
        _WEEK_ADD,
        _WEEK_INDEX,
    ),
    UpdatePeriod.MONTHLY: _Rule(
        _MONTH_MS,
        r"(DDDD)-(DD)",
        lambda d: f"{d.year:04d}-{d.month:02d}",
        lambda g: datetime(g[0], g[1], 1),
        lambda d: datetime(d.year, d.month, 1),
        _add_months,
        _month_index,
    ),
    UpdatePeriod.QUARTERLY: _Rule(
        3 * _MONTH_MS,
        r"(DDDD)-(DD)",
        lambda d: f"{d.year:04d}-{d.month:02d}",
        lambda g: datetime(g[0], g[1], 1),
        lambda d: datetime(d.year, d.month - (d.month - 1) % 3, 1),
        lambda d, n: _add_months(d, 3 * n),
        lambda d: _month_index(d) // 3,
    ),
    UpdatePeriod.YEARLY: _Rule(
        12 * _MONTH_MS,
        r"(DDDD)",
        lambda d: f"{d.year:04d}",
        lambda g: datetime(g[0], 1, 1),
        lambda d: datetime(d.year, 1, 1),
        lambda d, n: _add_months(d, 12 * n),
        lambda d: d.year,
    ),
}
