"""Time partitions (one unit of one update period) and half-open ranges of them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from metastore_server.timeline.periods import UpdatePeriod


@dataclass(frozen=True, kw_only=True, repr=False)
class TimePartition:
    """One unit of an update period, e.g. the day 2015-01-02 or the hour 2015-01-02-03.

    ``start`` is always the start of the unit (ValueError otherwise); build partitions with
    ``of`` or ``parse``. Partitions order by start, then period; ``str()`` is the name.
    """

    start: datetime
    period: UpdatePeriod

    def __post_init__(self) -> None:
        if self.period.truncate(self.start) != self.start:
            raise ValueError(f"{self.start.isoformat()} does not start a {self.period.unit_name}")

    @classmethod
    def of(cls, period: UpdatePeriod, dt: datetime) -> TimePartition:
        """The partition of ``period`` that contains ``dt``."""
        return _unit(period.truncate(dt), period)

    @classmethod
    def parse(cls, period: UpdatePeriod, text: str) -> TimePartition:
        """The partition named ``text`` (strict format; a quarterly name may give any month of
        the quarter, as Lens allows). ValueError if it is not a name of ``period``."""
        return cls.of(period, period.parse(text))

    @cached_property
    def name(self) -> str:
        """The partition's name in Lens's format (Lens's dateString), e.g. ``2015-01-02``."""
        return self.period.format(self.start)

    @property
    def end(self) -> datetime:
        """The start of the next partition (exclusive end of this one)."""
        return self.period.add(self.start, 1)

    def next(self) -> TimePartition:
        """The partition right after this one."""
        return self.offset(1)

    def previous(self) -> TimePartition:
        """The partition right before this one."""
        return self.offset(-1)

    def offset(self, n: int) -> TimePartition:
        """The partition ``n`` units away (negative: earlier)."""
        return _unit(self.period.add(self.start, n), self.period)

    # Ordering by start, then period (written out: faster than dataclass's tuple comparisons).

    def __lt__(self, other: TimePartition) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        if self.start != other.start:
            return self.start < other.start
        return self.period < other.period

    def __le__(self, other: TimePartition) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        if self.start != other.start:
            return self.start < other.start
        return self.period <= other.period

    def __gt__(self, other: TimePartition) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        return other < self

    def __ge__(self, other: TimePartition) -> bool:
        if not isinstance(other, TimePartition):
            return NotImplemented
        return other <= self

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"TimePartition({self.period.name} {self.name})"


def _unit(start: datetime, period: UpdatePeriod) -> TimePartition:
    """A partition from a known unit start, without checking it again."""
    partition = object.__new__(TimePartition)
    object.__setattr__(partition, "start", start)
    object.__setattr__(partition, "period", period)
    return partition


@dataclass(frozen=True)
class TimePartitionRange:
    """The partitions in [begin, end) of one period; empty when begin == end.

    ``str()`` is Lens's form ``[begin, end)``. ValueError if the periods differ or end < begin.
    """

    begin: TimePartition
    end: TimePartition

    def __post_init__(self) -> None:
        if self.begin.period is not self.end.period:
            raise ValueError(f"range ends of different periods: {self.begin!r}, {self.end!r}")
        if self.end < self.begin:
            raise ValueError(f"range ends before it begins: {self}")

    @property
    def period(self) -> UpdatePeriod:
        """The period of the partitions in the range."""
        return self.begin.period

    @classmethod
    def parse(cls, period: UpdatePeriod, text: str) -> TimePartitionRange:
        """Parse ``[a, b)``, ``(a, b)``, ``[a, b]`` or ``(a, b]`` (spaces around the names are
        ignored): an open start means ``a.next()``, a closed end ``b.next()``. ValueError
        if the text is not such a range of ``period`` names or the range ends before it begins.
        """
        text = text.strip()
        parts = text[1:-1].split(",")
        if len(text) < 2 or text[0] not in "[(" or text[-1] not in "])" or len(parts) != 2:
            raise ValueError(f"not a partition range: {text!r}")
        begin = TimePartition.parse(period, parts[0].strip())
        end = TimePartition.parse(period, parts[1].strip())
        if text[0] == "(":
            begin = begin.next()
        if text[-1] == "]":
            end = end.next()
        return cls(begin, end)

    def is_empty(self) -> bool:
        """Whether the range holds no partition."""
        return self.begin == self.end

    def __iter__(self) -> Iterator[TimePartition]:
        current = self.begin
        while current < self.end:
            yield current
            current = current.next()

    def __contains__(self, item: object) -> bool:
        return (
            isinstance(item, TimePartition)
            and item.period is self.period
            and self.begin <= item < self.end
        )

    def __len__(self) -> int:
        return self.period.units_between(self.begin.start, self.end.start)

    def __str__(self) -> str:
        return f"[{self.begin.name}, {self.end.name})"
