"""EndsAndHolesTimeline: the first and latest partitions and the missing ones in between."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from operator import attrgetter

from metastore_server.timeline.base import PartitionTimeline
from metastore_server.timeline.chunked import decode_list, encode_list
from metastore_server.timeline.partitions import TimePartition
from metastore_server.timeline.periods import UpdatePeriod
from sortedcontainers import SortedSet

#: Sort key of partitions of one period (datetimes compare much faster than partitions).
_START = attrgetter("start")


class EndsAndHolesTimeline(PartitionTimeline):
    """Stores ``first``, ``latest`` and the holes strictly between them (Lens's default).

    Cheap for mostly dense data: space is the number of holes. Adding a partition far beyond an
    end records every unit in between as a hole. Lookups and changes are O(log holes), except
    that dropping an end walks over the holes next to it.

    Properties: ``first`` and ``latest`` (names, ``""`` when empty), ``holes.size`` and
    ``holes0..`` (chunked names).
    """

    def __init__(self, storage_table: str, period: UpdatePeriod, column: str) -> None:
        super().__init__(storage_table, period, column)
        self._first: TimePartition | None = None
        self._latest: TimePartition | None = None
        self._holes: SortedSet = SortedSet(key=_START)

    def _add(self, partition: TimePartition) -> bool:
        if self._first is None or self._latest is None:
            self._first = self._latest = partition
        elif partition < self._first:
            self._holes.update(_between(partition, self._first))
            self._first = partition
        elif partition > self._latest:
            self._holes.update(_between(self._latest, partition))
            self._latest = partition
        elif partition in self._holes:
            self._holes.remove(partition)
        else:
            return False
        return True

    def _drop(self, partition: TimePartition) -> bool:
        if not self._exists(partition):
            return False
        if self._first == self._latest:
            self._first = self._latest = None
        elif partition == self._first:
            self._first = self._present_from(partition.next(), step=1)
        elif partition == self._latest:
            self._latest = self._present_from(partition.previous(), step=-1)
        else:
            self._holes.add(partition)
        return True

    def _present_from(self, partition: TimePartition, step: int) -> TimePartition:
        """The first partition from ``partition`` on (in direction ``step``) that is not a hole,
        removing the holes passed. One exists: the other end is never a hole."""
        while partition in self._holes:
            self._holes.remove(partition)
            partition = partition.offset(step)
        return partition

    def _exists(self, partition: TimePartition) -> bool:
        return (
            self._first is not None
            and self._latest is not None
            and self._first <= partition <= self._latest
            and partition not in self._holes
        )

    def first(self) -> TimePartition | None:
        return self._first

    def latest(self) -> TimePartition | None:
        return self._latest

    def is_consistent(self) -> bool:
        first, latest, holes = self._first, self._latest, self._holes
        if first is None or latest is None:
            return first is None and latest is None and not holes
        return (
            first.period is self.period
            and latest.period is self.period
            and first <= latest
            and (not holes or (first < holes[0] and holes[-1] < latest))
            and all(hole.period is self.period for hole in holes)
        )

    def partitions(self) -> Iterator[TimePartition]:
        if self._first is None or self._latest is None:
            return
        current, latest = self._first, self._latest
        while current <= latest:
            if current not in self._holes:
                yield current
            current = current.next()

    def __len__(self) -> int:
        if self._first is None or self._latest is None:
            return 0
        span = self.period.units_between(self._first.start, self._latest.start) + 1
        return span - len(self._holes)

    def to_properties(self) -> dict[str, str]:
        props = {
            "first": self._first.name if self._first is not None else "",
            "latest": self._latest.name if self._latest is not None else "",
        }
        props.update(encode_list("holes", (hole.name for hole in self._holes)))
        return props

    def load_properties(self, props: Mapping[str, str]) -> None:
        first_name, latest_name = props.get("first", ""), props.get("latest", "")
        loaded = EndsAndHolesTimeline(self.storage_table, self.period, self.column)
        loaded._first = self._parse(first_name) if first_name else None
        loaded._latest = self._parse(latest_name) if latest_name else None
        holes = (self._parse(name) for name in decode_list(props, "holes"))
        loaded._holes = SortedSet(holes, key=_START)
        if not loaded.is_consistent():
            raise ValueError(
                f"inconsistent ends and holes: first={first_name!r}, latest={latest_name!r}, "
                f"{len(loaded._holes)} holes (holes must lie strictly between first and latest)"
            )
        self._first, self._latest, self._holes = loaded._first, loaded._latest, loaded._holes


def _between(before: TimePartition, after: TimePartition) -> Iterator[TimePartition]:
    """The partitions strictly between two partitions."""
    current = before.next()
    while current < after:
        yield current
        current = current.next()
