"""The cover of a time range: which registered partitions answer a query over [start, end).

A fact has storage tables; each has, per update period, a timeline of the partitions it holds
for the fact's time column. ``cover_range`` picks partitions of those timelines that together
cover as much of [start, end) as possible, preferring large partitions, as Apache Lens does when
it resolves a query's time range:

* The coarsest period that has a whole unit inside the span goes first (YEARLY, QUARTERLY,
  MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY, SECONDLY, restricted to the periods some table has).
  Each of its units that lies wholly inside the span and is available is used.
* Everything else in the span — the left remainder [start, ceil(start)), the right remainder
  [floor(end), end) and the units nobody has — is covered the same way with the strictly finer
  periods, each remainder exactly once (the design note this follows recursed into the left
  remainder twice and never into the right one).
* What no period can cover is reported in ``Cover.uncovered``.

**Availability and the choice between tables.** A unit of period P is available from a table
when the table has a timeline for P, the timeline holds the partition, and the unit lies wholly
inside the table's validity window [start, end) (an open side is unbounded). Coarseness comes
first across tables: an available year of a later table beats the months of an earlier one. For
one unit, the *first table in the given order* from which it is available supplies it.

For periods that nest (every unit of a period lies inside one unit of each coarser period: all
of them except WEEKLY next to MONTHLY, QUARTERLY or YEARLY) the result is exactly the set of
maximal available units, each from the first table that has it, and it is complete wherever any
available partition exists. Weeks straddle month boundaries: a week that overlaps a month in the
cover is not used, and its days are taken from finer periods (Lens behaves the same).

Differences from Lens (``StorageCandidate.getPartitions``), besides spanning several tables:
consecutive missing units of a period are handed to the finer periods as one span (the same
result when periods nest; for weeks it can only allow more of them), nothing is added for
missing data (no "non-existing parts", no look-ahead partitions), and missing data is not an
error but reported as uncovered ranges.

**Lookups.** Lens probes every unit of every period it reaches; a one-year range over
YEARLY..MINUTELY with no data costs it 534,738 existence checks. Here a timeline is asked only
about units inside its usable window: the query range clipped to its validity window and to
[first, latest], so an empty timeline costs one question and one with nothing in the range two.
Inside the window the units the current span still needs are probed with ``exists``, unless that
would cost more than reading the timeline's partitions in order once (``len``): then it is read
up to the end of the window and answered from that list. ``Cover.lookups`` counts every question
asked of a timeline: ``exists``, ``first``, ``latest``, ``len`` and each partition read.

Pure: no I/O. Datetimes are naive UTC, as everywhere in the package.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from metastore_server.timeline.base import PartitionTimeline
from metastore_server.timeline.partitions import TimePartition
from metastore_server.timeline.periods import UpdatePeriod

__all__ = ["Cover", "CoverPart", "StorageTimelines", "cover_range"]

#: Spans of at most this many units are probed without asking the timeline for its size.
_SMALL = 16


@dataclass(frozen=True)
class StorageTimelines:
    """One storage table of a fact: its timelines for the fact's time column, per period.

    ``start``/``end``: the table's validity window [start, end); a partition not wholly inside
    it is not used (None: unbounded). ``timelines`` is copied into a read-only mapping; each
    timeline must be of the period it is filed under (ValueError otherwise).
    """

    name: str
    timelines: Mapping[UpdatePeriod, PartitionTimeline] = field(hash=False)
    start: datetime | None = None
    end: datetime | None = None

    def __post_init__(self) -> None:
        timelines = dict(self.timelines)
        for period, timeline in timelines.items():
            if not isinstance(period, UpdatePeriod):
                raise TypeError(f"expected an UpdatePeriod key, got {period!r}")
            if not isinstance(timeline, PartitionTimeline):
                raise TypeError(f"expected a PartitionTimeline, got {type(timeline).__name__}")
            if timeline.period is not period:
                raise ValueError(f"{timeline!r} filed under {period.name}")
        for bound in (self.start, self.end):
            if bound is not None:
                _check(bound)
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError(f"validity window ends before it starts: {self.start} > {self.end}")
        object.__setattr__(self, "timelines", MappingProxyType(timelines))


@dataclass(frozen=True)
class CoverPart:
    """One partition of the cover and the storage table that supplies it."""

    storage_table: str
    partition: TimePartition

    @property
    def period(self) -> UpdatePeriod:
        return self.partition.period

    @property
    def start(self) -> datetime:
        return self.partition.start

    @property
    def end(self) -> datetime:
        return self.partition.end


@dataclass(frozen=True)
class Cover:
    """The cover of a range.

    ``parts``: disjoint, sorted by start (then coarsest first). ``uncovered``: the maximal
    sub-ranges [a, b) no part covers, sorted and merged. Together they tile the range exactly.
    ``lookups``: how many questions were asked of timelines (see the module docstring).
    """

    parts: tuple[CoverPart, ...] = ()
    uncovered: tuple[tuple[datetime, datetime], ...] = ()
    lookups: int = 0

    @property
    def complete(self) -> bool:
        """Whether the parts cover the whole range."""
        return not self.uncovered


def cover_range(tables: Sequence[StorageTimelines], start: datetime, end: datetime) -> Cover:
    """The best cover of [start, end) by the partitions of ``tables`` (see the module docstring):
    coarsest periods first, finer ones for the remainders and the gaps, the first table in the
    given order for each unit. ``start >= end`` gives an empty, complete cover."""
    _check(start)
    _check(end)
    if start >= end:
        return Cover()
    search = _Search(tables, start, end)
    search.cover(start, end, 0)
    parts = sorted(search.parts, key=lambda part: (part.start, -part.period.weight_ms))
    return Cover(tuple(parts), _merged(search.uncovered), search.lookups)


# --- the search ----------------------------------------------------------------------------------


class _Search:
    """One ``cover_range`` call: the periods, coarsest first, and per period the tables' sources."""

    def __init__(self, tables: Sequence[StorageTimelines], start: datetime, end: datetime) -> None:
        periods = {period for table in tables for period in table.timelines}
        self.levels = sorted(periods, key=lambda period: period.weight_ms, reverse=True)
        self.sources = [
            [
                _Source(self, table, period, start, end)
                for table in tables
                if period in table.timelines
            ]
            for period in self.levels
        ]
        self.parts: list[CoverPart] = []
        self.uncovered: list[tuple[datetime, datetime]] = []
        self.lookups = 0

    def cover(self, start: datetime, end: datetime, level: int) -> None:
        """Cover [start, end) (non-empty) with the periods ``levels[level:]``."""
        while level < len(self.levels):
            period = self.levels[level]
            low, high = _ceil(period, start), period.truncate(end)
            if low is not None and low < high:
                break
            level += 1
        else:
            self.uncovered.append((start, end))
            return
        found: dict[datetime, CoverPart] = {}
        for source in self.sources[level]:
            for partition in source.available(low, high, found):
                found[partition.start] = CoverPart(source.name, partition)
        cursor = start
        for unit_start in sorted(found):
            part = found[unit_start]
            self.parts.append(part)
            if cursor < unit_start:
                self.cover(cursor, unit_start, level + 1)
            cursor = part.end
        if cursor < end:
            self.cover(cursor, end, level + 1)


class _Source:
    """One table's timeline of one period during a search, with its usable window."""

    def __init__(
        self,
        search: _Search,
        table: StorageTimelines,
        period: UpdatePeriod,
        start: datetime,
        end: datetime,
    ) -> None:
        self.search = search
        self.name = table.name
        self.period = period
        self.timeline = table.timelines[period]
        # Units wholly inside the range and the validity window: starts in [low, high).
        low = _ceil(period, start if table.start is None else max(start, table.start))
        high = period.truncate(end if table.end is None else min(end, table.end))
        self.low: datetime | None = low
        self.high: datetime = high
        self.ready = low is None or low >= high  # nothing to ask the timeline then
        if self.ready:
            self.low = None
        self.size: int | None = None
        self.probed = 0
        self.starts: list[datetime] | None = None  # the partitions read, when read
        self.read: list[TimePartition] = []

    def _prepare(self) -> None:
        """Clip the window to the timeline's [first, latest] (once, on first need)."""
        self.ready = True
        search, low, high = self.search, self.low, self.high
        assert low is not None
        first = self.timeline.first()
        search.lookups += 1
        if first is None:
            self.low = None
            return
        latest = self.timeline.latest()
        search.lookups += 1
        assert latest is not None
        low = max(low, first.start)
        if latest.start < high:  # then latest.end <= high: high is a unit start
            high = latest.end
        if low >= high:
            self.low = None
        else:
            self.low, self.high = low, high

    def available(
        self, low: datetime, high: datetime, taken: Mapping[datetime, object]
    ) -> Iterator[TimePartition]:
        """The partitions of the timeline starting in [low, high) (unit starts), in order,
        except those whose start is in ``taken``."""
        if not self.ready:
            self._prepare()
        if self.low is None:
            return
        low, high = max(low, self.low), min(high, self.high)
        if low >= high:
            return
        if self.starts is None:
            units = self.period.units_between(low, high)
            if self.probed + units > _SMALL:
                if self.size is None:
                    self.size = len(self.timeline)
                    self.search.lookups += 1
                if self.probed + units > self.size:
                    self._read()
        if self.starts is not None:
            first, last = bisect_left(self.starts, low), bisect_left(self.starts, high)
            for partition in self.read[first:last]:
                if partition.start not in taken:
                    yield partition
            return
        partition = TimePartition.of(self.period, low)
        exists = self.timeline.exists
        while partition.start < high:
            if partition.start not in taken:
                self.probed += 1
                self.search.lookups += 1
                if exists(partition):
                    yield partition
            partition = partition.next()

    def _read(self) -> None:
        """Read the timeline's partitions in order up to the end of the window."""
        low, high = self.low, self.high
        assert low is not None
        starts: list[datetime] = []
        for partition in self.timeline.partitions():
            self.search.lookups += 1
            if partition.start >= high:
                break
            if partition.start >= low:
                starts.append(partition.start)
                self.read.append(partition)
        self.starts = starts


# --- helpers -------------------------------------------------------------------------------------


def _check(dt: datetime) -> None:
    if not isinstance(dt, datetime):
        raise TypeError(f"expected a datetime, got {type(dt).__name__}")
    if dt.tzinfo is not None:
        raise ValueError(f"expected a naive UTC datetime, got {dt.isoformat()}")


def _ceil(period: UpdatePeriod, dt: datetime) -> datetime | None:
    """The first unit start at or after ``dt``; None past the last representable unit."""
    try:
        return period.ceil(dt)
    except OverflowError:
        return None


def _merged(ranges: list[tuple[datetime, datetime]]) -> tuple[tuple[datetime, datetime], ...]:
    """Sorted, with overlapping or touching ranges joined."""
    merged: list[tuple[datetime, datetime]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return tuple(merged)
