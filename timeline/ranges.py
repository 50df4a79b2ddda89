"""RangesTimeline: the runs of present partitions as sorted half-open ranges."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from operator import attrgetter

from metastore_server.timeline.base import PartitionTimeline
from metastore_server.timeline.chunked import decode_list, encode_list
from metastore_server.timeline.partitions import TimePartition, TimePartitionRange
from metastore_server.timeline.periods import UpdatePeriod

_START = attrgetter("start")


class RangesTimeline(PartitionTimeline):
    """Stores sorted, disjoint, non-adjacent, non-empty ranges [begin, end) of partitions.

    Space is the number of runs; lookups are a binary search, changes a binary search plus a
    list insert or delete. Adding a partition next to a range extends it (and joins it with the
    following range when the gap closes); dropping one inside a range splits it.

    Properties: ``ranges.size`` and ``ranges0..``: the ranges as ``[b, e)``, comma-joined and
    chunked, e.g. ``[2015-01-01, 2015-01-05),[2015-01-07, 2015-01-08)``.
    """

    def __init__(self, storage_table: str, period: UpdatePeriod, column: str) -> None:
        super().__init__(storage_table, period, column)
        self._begins: list[TimePartition] = []
        self._ends: list[TimePartition] = []

    def ranges(self) -> Iterator[TimePartitionRange]:
        """The stored ranges in order."""
        for begin, end in zip(self._begins, self._ends, strict=True):
            yield TimePartitionRange(begin, end)

    def _index(self, partition: TimePartition) -> int:
        """How many ranges begin at or before ``partition``."""
        return bisect_right(self._begins, partition.start, key=_START)

    def _add(self, partition: TimePartition) -> bool:
        index = self._index(partition)
        begins, ends = self._begins, self._ends
        if index and partition < ends[index - 1]:
            return False
        after = partition.next()
        joins_left = index > 0 and ends[index - 1] == partition
        joins_right = index < len(begins) and begins[index] == after
        if joins_left and joins_right:
            ends[index - 1] = ends[index]
            del begins[index], ends[index]
        elif joins_left:
            ends[index - 1] = after
        elif joins_right:
            begins[index] = partition
        else:
            begins.insert(index, partition)
            ends.insert(index, after)
        return True

    def _drop(self, partition: TimePartition) -> bool:
        index = self._index(partition) - 1
        begins, ends = self._begins, self._ends
        if index < 0 or partition >= ends[index]:
            return False
        begin, end, after = begins[index], ends[index], partition.next()
        if begin == partition and end == after:
            del begins[index], ends[index]
        elif begin == partition:
            begins[index] = after
        elif end == after:
            ends[index] = partition
        else:
            ends[index] = partition
            begins.insert(index + 1, after)
            ends.insert(index + 1, end)
        return True

    def _exists(self, partition: TimePartition) -> bool:
        index = self._index(partition)
        return index > 0 and partition < self._ends[index - 1]

    def first(self) -> TimePartition | None:
        return self._begins[0] if self._begins else None

    def latest(self) -> TimePartition | None:
        return self._ends[-1].previous() if self._ends else None

    def is_consistent(self) -> bool:
        begins, ends = self._begins, self._ends
        if len(begins) != len(ends):
            return False
        if any(p.period is not self.period for p in (*begins, *ends)):
            return False
        if any(begin >= end for begin, end in zip(begins, ends, strict=True)):
            return False
        return all(end < begin for end, begin in zip(ends, begins[1:], strict=False))

    def partitions(self) -> Iterator[TimePartition]:
        for run in self.ranges():
            yield from run

    def __len__(self) -> int:
        units = self.period.units_between
        pairs = zip(self._begins, self._ends, strict=True)
        return sum(units(begin.start, end.start) for begin, end in pairs)

    def to_properties(self) -> dict[str, str]:
        return encode_list("ranges", (str(run) for run in self.ranges()))

    def load_properties(self, props: Mapping[str, str]) -> None:
        tokens = decode_list(props, "ranges")
        if len(tokens) % 2:
            raise ValueError(f"ranges incomplete: {len(tokens)} range ends")
        loaded = RangesTimeline(self.storage_table, self.period, self.column)
        for at in range(0, len(tokens), 2):
            run = TimePartitionRange.parse(self.period, f"{tokens[at]}, {tokens[at + 1]}")
            loaded._begins.append(run.begin)
            loaded._ends.append(run.end)
        if not loaded.is_consistent():
            raise ValueError(
                "inconsistent ranges (they must be non-empty, sorted, disjoint and not adjacent): "
                + ",".join(str(run) for run in loaded.ranges())
            )
        self._begins, self._ends = loaded._begins, loaded._ends
