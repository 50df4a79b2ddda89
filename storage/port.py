"""The storage port: the one small, HBase-shaped interface every backend implements.

A backend holds named tables. A table maps a binary row key to a row: a dict of columns, each
column named ``b"family:qualifier"`` and holding bytes. Rows are kept in unsigned byte order of
their keys, so a scan over ``[start, stop)`` returns them in that order. The catalog is the only
user; it never sees SQL, HBase or happybase.

Guarantees that differ between backends are flags on the backend (read them with
``getattr(store, name, True)``; a backend without them has the strong form):

* ``atomic_batches``: ``mutate`` applies all its ops as one transaction. Without it (HBase, which
  is atomic per row only) see ``StoragePort.mutate`` for exactly what holds.
* ``snapshot_scans``: a scan sees one snapshot of the table. Without it each row comes out
  whole (as one atomic read of that row), but rows written while the scan runs may or may not be
  seen, and a batch written meanwhile may be seen in part.

A backend may also offer ``writers_lock()``: a context manager that keeps writers in other
processes sharing the store out while it is held (the embedded store locks its file). The
catalog holds it around each metadata change, so that changes of several server processes on
one store do not interleave. Without it (HBase) changes of different processes interleave and
compare-and-set guards what must not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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


class StorageError(Exception):
    """A store could not do what it was asked (unreachable, refused, failed part-way)."""


class PartialWriteError(StorageError):
    """A ``mutate`` over several rows failed part-way on a backend without atomic batches.

    ``applied``: the rows (table, key) known to hold their new contents.
    ``failed``: every other row the ops touch; these are not known to have been written, and
    some of them may have been written in part or in full (an acknowledgement lost with the
    connection). Both lists are in write order: a conditioned row first, then the rows in the
    order the ops first touch them. ``__cause__`` is the error that stopped the batch.
    """

    def __init__(
        self,
        message: str,
        applied: Sequence[tuple[str, bytes]],
        failed: Sequence[tuple[str, bytes]],
    ) -> None:
        super().__init__(message)
        self.applied = list(applied)
        self.failed = list(failed)


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
        filter: bytes | None = None,
        batch_size: int | None = None,
        key_filter: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[bytes, Row]]:
        """Rows with ``start <= key < stop`` (stop None: to the end) in key order.

        ``reverse`` walks the same range from the highest key down; ``limit`` stops after that
        many rows; ``columns`` restricts the columns returned (rows keep only those present;
        a row holding none of them is skipped, as HBase does, and does not count to ``limit``).
        The iterator may be consumed lazily; it sees a consistent snapshot (unless the backend
        says ``snapshot_scans = False``, see the module docstring).

        ``filter``: an HBase filter-language string as raw bytes, one byte per character of its
        Latin-1 text (``storage.filters.hbase_filter_bytes``; never UTF-8-encode the text). A
        backend may apply it (HBase, on the region servers) or ignore it (embedded). Either way
        the rows returned are a SUPERSET of the rows in the range the filter accepts: no accepted
        row is dropped, rejected rows may come too, so callers re-check every row. With
        ``limit``, the limit counts rows returned, and every accepted row up to the last row
        returned (in scan order) is among them: to get n accepted rows, keep scanning from the
        last key. The filter tests the whole row, even where ``columns`` narrows what comes
        back.

        ``batch_size``: a hint, rows fetched per round trip (HBase scanner caching); backends
        without round trips ignore it. Never changes which rows come out.

        ``key_filter``: a test of the row key, applied exactly in this process: a row whose key
        fails it is left out (before its columns are decoded, where the backend can) and does
        not count to ``limit``. It is called once per row of the range that reaches the client
        (after ``filter``, where the backend applies that), in scan order.
        """

    def mutate(
        self, ops: Sequence[Put | Delete], condition: Condition | Sequence[Condition] | None = None
    ) -> bool:
        """Apply all ``ops`` atomically, if ``condition`` (when given) holds. True if applied.

        ``condition`` may be several conditions, all of which must hold (checked with the ops in
        one transaction); a backend without atomic batches takes at most one (ValueError).

        The ops apply in order, so a later op sees the row an earlier one left; a row left with
        no columns no longer exists. Nothing is written when an argument is invalid (unknown
        table or family, bad key) or the condition fails.

        A backend with ``atomic_batches = False`` (HBase: atomic per row only) keeps this weaker
        promise instead:

        * The ops are folded into one change per row (table, key), in the order each row first
          appears. A change that only puts columns, or only deletes (columns or the whole row),
          lands all or nothing. A row whose change both puts and deletes columns (a whole-row
          delete followed by puts, say) lands in two atomic steps: its puts, then its deletes.
        * Rows land group by group in that order; a group is consecutive rows of one table whose
          changes are all puts or all deletes. A group starts once the groups before it have
          landed; rows inside one group land in any order. (So put a renamed row's new key
          before deleting the old one.)
        * With a ``condition``, the check and the first write of the conditioned row are one
          atomic compare-and-set: that write is the conditioned column itself when the ops put
          it, else the first column they put on that row, else (no put on that row) the
          expected value written back unchanged; with ``expected=None`` and no put on that row
          the check is a plain read (not atomic against concurrent writers). Then the rest of
          the conditioned row's change lands, then the other rows as above. A failed check
          writes nothing.
        * ``expected=b""`` is refused (ValueError): HBase does not tell an empty value from an
          absent column in a check, so ``expected=None`` also holds for a column holding b"".
        * When a mutate that touches more than one row (or one row in two steps) fails while
          writing, ``PartialWriteError`` says which rows landed (maybe none). A mutate of one
          row in one step, or a compare-and-set that fails, raises the backend's
          ``StorageError`` instead: nothing landed, unless the error says the outcome is
          unknown (a lost connection during a call that is not retried).
        """

    def increment(self, table: str, key: bytes, column: bytes, amount: int = 1) -> int:
        """Atomically add ``amount`` to the signed 8-byte big-endian counter in ``column``
        (absent: 0); the new value. ValueError when the column holds no 8-byte counter. Leaving
        64 bits raises OverflowError where the backend can tell (embedded); HBase wraps around
        like a Java long. Never retried on a lost connection (the error says so)."""

    def change_token(self) -> int | None:
        """Optional (read it with ``getattr``): a number that changes whenever anything is
        committed to the store, by this process or any other; None or absent when the backend
        cannot tell. Readers may cache what they read while the token stays the same."""

    def close(self) -> None:
        """Release connections and files. The port is unusable afterwards."""
