"""StoreAllTimeline: every partition in a sorted set."""

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


class StoreAllTimeline(PartitionTimeline):
    """Keeps every partition; O(log n) changes and lookups, O(n) space.

    Properties: ``partitions.size`` and ``partitions0..`` (all names, comma-joined, chunked).
    Good for few, scattered partitions; large dense timelines are cheaper as ranges or ends and
    holes.
    """

    def __init__(self, storage_table: str, period: UpdatePeriod, column: str) -> None:
        super().__init__(storage_table, period, column)
        self._parts: SortedSet = SortedSet(key=_START)

    def _add(self, partition: TimePartition) -> bool:
        if partition in self._parts:
            return False
        self._parts.add(partition)
        return True

    def _drop(self, partition: TimePartition) -> bool:
        if partition not in self._parts:
            return False
        self._parts.remove(partition)
        return True

    def _exists(self, partition: TimePartition) -> bool:
        return partition in self._parts

    def first(self) -> TimePartition | None:
        return self._parts[0] if self._parts else None

    def latest(self) -> TimePartition | None:
        return self._parts[-1] if self._parts else None

    def is_consistent(self) -> bool:
        return all(p.period is self.period for p in self._parts)

    def partitions(self) -> Iterator[TimePartition]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def to_properties(self) -> dict[str, str]:
        return encode_list("partitions", (p.name for p in self._parts))

    def load_properties(self, props: Mapping[str, str]) -> None:
        parts = (self._parse(name) for name in decode_list(props, "partitions"))
        self._parts = SortedSet(parts, key=_START)
