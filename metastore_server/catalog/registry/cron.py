"""The subset of Quartz cron schedules that scheduled queries need: six fields (seconds,
minutes, hours, day of month, month, day of week) and an optional seventh (year), each ``*``,
a number, a range ``a-b``, a list ``a,b``, a step ``*/n``, ``a/n`` or ``a-b/n``; month and
day-of-week names (``JAN``, ``MON``); ``?`` in exactly one of day of month and day of week (as
Quartz). Days of week run 1 (Sunday) to 7 (Saturday). Times are UTC.

Anything else (``L``, ``W``, ``#``, wrapping ranges) is refused with ``CronError``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
#: Each field's bounds and names (a name stands for its position + the lower bound).
_FIELDS = (
    ("seconds", 0, 59, ()),
    ("minutes", 0, 59, ()),
    ("hours", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day-of-week", 1, 7, _DAYS),
    ("year", 1970, 2099, ()),
)
#: How far ahead a next fire time is looked for.
_HORIZON_DAYS = 366 * 8


class CronError(ValueError):
    """A schedule outside the supported Quartz cron syntax."""


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: the allowed values of each field (None: ``?``)."""

    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int] | None
    months: frozenset[int]
    weekdays: frozenset[int] | None
    years: frozenset[int]

    def next_after(self, when: int) -> int | None:
        """The first fire time strictly after ``when`` (epoch seconds), or None if there is
        none within the horizon."""
        start = dt.datetime.fromtimestamp(when + 1, dt.UTC).replace(tzinfo=None)
        day = start.date()
        for _ in range(_HORIZON_DAYS):
            if self._day_matches(day):
                earliest = start.time() if day == start.date() else dt.time(0, 0, 0)
                found = self._time_in_day(earliest)
                if found is not None:
                    moment = dt.datetime.combine(day, found, dt.UTC)
                    return int(moment.timestamp())
            day += dt.timedelta(days=1)
        return None

    def _day_matches(self, day: dt.date) -> bool:
        if day.year not in self.years or day.month not in self.months:
            return False
        if self.days is not None:
            return day.day in self.days
        quartz_weekday = (day.weekday() + 1) % 7 + 1  # Monday is 0 in Python, 2 in Quartz
        return self.weekdays is not None and quartz_weekday in self.weekdays

    def _time_in_day(self, earliest: dt.time) -> dt.time | None:
        for hour in self.hours:
            if hour < earliest.hour:
                continue
            for minute in self.minutes:
                if (hour, minute) < (earliest.hour, earliest.minute):
                    continue
                for second in self.seconds:
                    if (hour, minute, second) >= (earliest.hour, earliest.minute, earliest.second):
                        return dt.time(hour, minute, second)
        return None


def parse(text: str | None) -> Schedule:
    """Parse a Quartz cron schedule; CronError says what is wrong."""
    fields = (text or "").split()
    if len(fields) not in (6, 7):
        raise CronError(f"Unexpected end of expression: {text!r} needs 6 or 7 fields")
    if len(fields) == 6:
        fields.append("*")
    day_q, week_q = fields[3] == "?", fields[5] == "?"
    if day_q == week_q:
        raise CronError(
            "Support for specifying both a day-of-week AND a day-of-month parameter is not "
            "implemented: exactly one of them must be '?'"
        )
    values = [
        None if text_ == "?" and spec[0] in ("day-of-month", "day-of-week") else
        _field(text_, *spec)
        for text_, spec in zip(fields, _FIELDS, strict=True)
    ]  # fmt: skip
    seconds, minutes, hours, days, months, weekdays, years = values
    return Schedule(
        seconds=tuple(sorted(seconds or ())),
        minutes=tuple(sorted(minutes or ())),
        hours=tuple(sorted(hours or ())),
        days=None if days is None else frozenset(days),
        months=frozenset(months or ()),
        weekdays=None if weekdays is None else frozenset(weekdays),
        years=frozenset(years or ()),
    )


def _field(text: str, name: str, low: int, high: int, names: tuple[str, ...]) -> set[int]:
    """The values of one field."""
    found: set[int] = set()
    for item in text.split(","):
        base, _, step_text = item.partition("/")
        step = _number(step_text, name, 1, high - low + 1, ()) if step_text else 1
        if base == "*":
            first, last = low, high
        elif "-" in base:
            left, _, right = base.partition("-")
            first = _number(left, name, low, high, names)
            last = _number(right, name, low, high, names)
            if last < first:
                raise CronError(f"Unsupported {name} range {base!r}: it must not wrap around")
        else:
            first = _number(base, name, low, high, names)
            last = high if step_text else first
        found.update(range(first, last + 1, step))
    return found


def _number(text: str, name: str, low: int, high: int, names: tuple[str, ...]) -> int:
    """One value of a field: a number in bounds, or a name of it."""
    upper = text.upper()
    if upper in names:
        return names.index(upper) + low
    if not text.isdigit():
        raise CronError(f"Unsupported {name} value {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise CronError(f"{name} value {value} is outside {low}-{high}")
    return value
