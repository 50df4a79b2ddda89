"""The storage port: the one small, HBase-shaped interface every backend implements.

A backend holds named tables. A table maps a binary row key to a row: a dict of columns, each
column named ``b"family:qualifier"`` and holding bytes. Rows are kept in unsigned byte order of
their keys, so a scan over ``[start, stop)`` returns them in that order. The catalog is the only
user; it never sees SQL, HBase or happybase.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

Row = dict[bytes, bytes]
"""A row: column name (``b"family:qualifier"``) -> value."""


@dataclass(frozen=True)
class Put:
    """Set these columns of a row (other columns of the row are kept)."""

    table: str
    key: bytes
    columns: Mapping[bytes, bytes]


@dataclass(frozen=True)
class Delete:
    """Delete a whole row, or only the named columns of it."""

    table: str
    key: bytes
    columns: Sequence[bytes] | None = None


@dataclass(frozen=True)
class Condition:
    """A compare-and-set guard: ``column`` of row ``key`` must hold ``expected`` (None: absent)."""

    table: str
    key: bytes
    column: bytes
    expected: bytes | None


@dataclass
class TableSpec:
    """A table a layout needs: its name and column families."""

    name: str
    families: Sequence[str] = field(default_factory=lambda: ("c",))


class StoragePort(Protocol):
    """What the catalog needs from a store. Every method is safe to call from many threads."""

    def ensure_tables(self, specs: Iterable[TableSpec]) -> None:
        """Create the tables that do not exist yet (idempotent)."""

    def get(self, table: str, key: bytes) -> Row | None:
        """The row at ``key``, or None when there is none. O(log n)."""

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """The rows that exist among ``keys``, in the order of ``keys``."""

    def scan(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
        columns: Sequence[bytes] | None = None,
    ) -> Iterator[tuple[bytes, Row]]:
        """Rows with ``start <= key < stop`` (stop None: to the end) in key order.

        ``reverse`` walks the same range from the highest key down; ``limit`` stops after that
        many rows; ``columns`` restricts the columns returned (rows keep only those present;
        a row holding none of them is skipped, as HBase does, and does not count to ``limit``).
        The iterator may be consumed lazily; it sees a consistent snapshot.
        """

    def mutate(self, ops: Sequence[Put | Delete], condition: Condition | None = None) -> bool:
        """Apply all ``ops`` atomically, if ``condition`` (when given) holds. True if applied.

        The ops apply in order, so a later op sees the row an earlier one left; a row left with
        no columns no longer exists.
        """

    def increment(self, table: str, key: bytes, column: bytes, amount: int = 1) -> int:
        """Atomically add ``amount`` to the signed 8-byte big-endian counter in ``column``
        (absent: 0); the new value."""

    def close(self) -> None:
        """Release connections and files. The port is unusable afterwards."""
