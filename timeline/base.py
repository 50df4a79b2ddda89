"""The partition timeline contract: which partitions of one period exist for one column of one
storage table, kept in memory and persisted as table properties."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping

from metastore_server.timeline.partitions import TimePartition
from metastore_server.timeline.periods import UpdatePeriod


class PartitionTimeline(ABC):
    """A set of partitions of one period, with Lens's property encoding.

    Every operation is checked: a partition of another period is a ValueError, and an
    operation that fails (or finds nothing to do) leaves the timeline unchanged. All
    implementations answer every question the same way for the same set of partitions.
    """

    def __init__(self, storage_table: str, period: UpdatePeriod, column: str) -> None:
        self._storage_table = storage_table
        self._period = period
        self._column = column

    @property
    def storage_table(self) -> str:
        """The storage table the timeline belongs to."""
        return self._storage_table

    @property
    def period(self) -> UpdatePeriod:
        """The update period of every partition in the timeline."""
        return self._period

    @property
    def column(self) -> str:
        """The time partition column."""
        return self._column

    # --- changes ---------------------------------------------------------------------------------

    def add(self, partition: TimePartition) -> bool:
        """Register ``partition``; False if it was already there."""
        return self._add(self._checked(partition))

    def add_all(self, partitions: Iterable[TimePartition]) -> int:
        """Register many partitions (all checked first); how many were new."""
        checked = [self._checked(p) for p in partitions]
        return sum(self._add(p) for p in checked)

    def drop(self, partition: TimePartition) -> bool:
        """Forget ``partition``; False if it was not there."""
        return self._drop(self._checked(partition))

    # --- questions -------------------------------------------------------------------------------

    def exists(self, partition: TimePartition) -> bool:
        """Whether ``partition`` is registered."""
        return self._exists(self._checked(partition))

    def __contains__(self, partition: object) -> bool:
        """``in``: like ``exists``, but False (not an error) for anything else."""
        return (
            isinstance(partition, TimePartition)
            and partition.period is self._period
            and self._exists(partition)
        )

    @abstractmethod
    def first(self) -> TimePartition | None:
        """The earliest partition, None when empty."""

    @abstractmethod
    def latest(self) -> TimePartition | None:
        """The latest partition, None when empty."""

    def is_empty(self) -> bool:
        """Whether no partition is registered."""
        return self.first() is None

    @abstractmethod
    def is_consistent(self) -> bool:
        """Whether the internal state satisfies the implementation's invariants."""

    @abstractmethod
    def partitions(self) -> Iterator[TimePartition]:
        """The registered partitions in order (do not change the timeline while iterating)."""

    def __iter__(self) -> Iterator[TimePartition]:
        return self.partitions()

    @abstractmethod
    def __len__(self) -> int:
        """How many partitions are registered."""

    # --- properties ------------------------------------------------------------------------------

    @abstractmethod
    def to_properties(self) -> dict[str, str]:
        """The implementation's Lens properties, keys without the common timeline prefix."""

    @abstractmethod
    def load_properties(self, props: Mapping[str, str]) -> None:
        """Replace the state with the one ``props`` encodes (keys without the common prefix).
        ValueError if they are malformed or inconsistent; the state is then unchanged."""

    # --- for implementations ---------------------------------------------------------------------

    @abstractmethod
    def _add(self, partition: TimePartition) -> bool: ...

    @abstractmethod
    def _drop(self, partition: TimePartition) -> bool: ...

    @abstractmethod
    def _exists(self, partition: TimePartition) -> bool: ...

    def _checked(self, partition: TimePartition) -> TimePartition:
        if not isinstance(partition, TimePartition):
            raise TypeError(f"expected a TimePartition, got {type(partition).__name__}")
        if partition.period is not self._period:
            raise ValueError(f"{partition!r} is not a {self._period.name} partition")
        return partition

    def _parse(self, name: str) -> TimePartition:
        """A partition of this timeline's period from its name (ValueError if malformed)."""
        return TimePartition.parse(self._period, name)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._storage_table!r}, {self._period.name}, "
            f"{self._column!r}, {len(self)} partitions)"
        )
