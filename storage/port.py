"""The storage port: the one small, HBase-shaped interface every backend implements.

A backend holds named tables. A table maps a binary row key to a row: a dict of columns, each
column named ``b"family:qualifier"`` and holding bytes. Rows are kept in unsigned byte order of
their keys, so a scan over ``[start, stop)`` returns them in that order. The catalog is the only
user; it never sees SQL, HBase or happybase.

Guarantees that differ between backends are flags every backend sets (``StoragePort``):

* ``atomic_batches``: ``mutate`` applies all its ops as one transaction. Without it (HBase, which
  is atomic per row only) see ``StoragePort.mutate`` for exactly what holds.
* ``snapshot_scans``: a scan sees one snapshot of the table. Without it each row comes out
  whole (as one atomic read of that row), but rows written while the scan runs may or may not be
  seen, and a batch written meanwhile may be seen in part.
* ``filters_scans``: the backend runs a scan's ``filter`` itself (HBase, on the region servers);
  without it the filter is ignored and every row of the range comes back (embedded).

Beyond the port a backend may offer optional capabilities, each a method of its own: it names
the ones it has in ``offers``, and callers ask for them through ``Capabilities.of(store)`` (the
one place they are looked up by name), which gives each as the bound method or None:

* ``change_token`` (``ChangeToken``): a number that changes with every commit, so readers may
  cache. Without it nothing read from the store is cached across calls.
* ``changed_keys`` (``ChangedKeys``): the keys of a narrow table's rows changed since a
  position, so that a reader keeping something of every row reads again only those. Without it
  such a reader reads every row each time.
* ``count_range`` (``CountRange``): rows in a key range counted without reading them. Without it
  the catalog does not size a table before caching its listing (so it caches none) and a skip
  scan stops seeking after ``MAX_SKIPS`` first values.
* ``last_key`` (``LastKey``): the highest key of a range, found without reading its row.
  Without it the catalog reads the last row of the range (the newest notification event, a
  row as large as the batch of partitions it records).
* ``scan_columns`` (``ScanColumns``): the columns of a range's rows read in one compiled loop,
  with key needles tested below it. Without it big reads go through ``scan``, row by row.
* ``scan_until_pending`` (``ScanUntilPending``): a scan that ends before the first row a change
  not yet committed made (a store whose changes commit in another order than they take their
  keys: a follower of the notification log waits for such an event instead of passing it).
  Without it the store's changes become visible in the order of their keys (embedded: one
  writer at a time).
* ``transaction`` (``Transaction``): writes of one thread commit together or not at all. The
  catalog needs it (each of its changes is one transaction).
* ``untracked`` (``Untracked``): inside this thread's transaction, writes that are not part of
  it (marks that expire on their own, such as the catalog's claims): they land at once and stay
  when the transaction rolls back, and cost it nothing. Without it such writes are part of the
  transaction like any other.
* ``undo_note`` (``UndoNote``): record, in this thread's transaction, how to undo something done
  outside the store (a directory moved), carried out if the transaction's process dies before
  it commits. Without it (the embedded store, whose transactions a dead process leaves
  uncommitted with no one to finish them) such things are undone only by the writer itself.
* ``writers_lock`` (``WritersLock``): writers of other processes sharing the store are kept out
  while it is held (the embedded store locks its file). The catalog holds it around each
  metadata change, so that changes of several server processes on one store do not interleave.
  Without it (HBase) changes of different processes interleave and compare-and-set claims guard
  what must not.

The embedded store offers all but ``undo_note``, ``untracked`` and ``scan_until_pending``; HBase
offers ``transaction`` (an intent log, ``storage.intents``: other readers see only committed
changes, ``storage.committed_reads``, and a dead process's are rolled back by the next process
after the writer lease), ``undo_note``, ``untracked`` and ``scan_until_pending``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields
from typing import ClassVar, Protocol

Row = dict[bytes, bytes]
"""A row: column name (``b"family:qualifier"``) -> value."""

#: The longest row key, in bytes, of every store: HBase refuses longer ones (Short.MAX_VALUE).
#: No row is ever written with a longer key, so a read of a longer key finds nothing.
MAX_ROW_KEY = 32767


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
    """A compare-and-set guard: ``column`` of row ``key`` must hold ``expected`` (None: absent).

    ``creates``: with ``expected=None``, the caller vouches that the row holds nothing at all
    when the column is absent (a row always written whole with that column, never reused), so
    a store need not read what it held before (HBase's intents, ``storage.intents``). Never
    checked: a wrong promise makes a rolled-back write delete columns it found."""

    table: str
    key: bytes
    column: bytes
    expected: bytes | None
    creates: bool = False


class StorageError(Exception):
    """A store could not do what it was asked (unreachable, refused, failed part-way)."""


class ValueTooLargeError(ValueError):
    """A backend cannot store a value that large (HBase: a cell over its KeyValue limit); the
    message names the table, column and size. Raised before anything of the call is written."""


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
    """A table a layout needs: its name and column families.

    ``narrow``: its listings read only small columns that sort before its big ones (a table
    row's id and index column before its definition); a backend may keep a narrow copy of the
    head of each row for them (the embedded store does: ``storage.embedded_heads``).
    ``large_rows``: some of its rows may be very large (a notification event holding every
    partition of an add); a backend may keep its rows apart from the index of its keys, so that
    finding a key never reads such a row (the embedded store does: ``ensure_table`` of
    ``storage.embedded_rows``)."""

    name: str
    families: Sequence[str] = field(default_factory=lambda: ("c",))
    narrow: bool = False
    large_rows: bool = False


class StoragePort(Protocol):
    """What the catalog needs from a store. Every method is safe to call from many threads."""

    #: ``mutate`` applies all its ops as one transaction (see the module docstring).
    atomic_batches: ClassVar[bool]
    #: A scan sees one snapshot of the table (see the module docstring).
    snapshot_scans: ClassVar[bool]
    #: A scan's ``filter`` is run by the backend, not ignored (see the module docstring).
    filters_scans: ClassVar[bool]
    #: The names of the optional capabilities the backend has (fields of ``Capabilities``).
    offers: ClassVar[frozenset[str]]

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

    def close(self) -> None:
        """Release connections and files. The port is unusable afterwards."""


# --- optional capabilities --------------------------------------------------------------------


class ChangeToken(Protocol):
    """``store.change_token()``: a number that changes whenever anything is committed to the
    store, by this process or any other; None when the backend cannot tell right now (inside a
    transaction, say). Readers may cache what they read while the token stays the same. O(1)."""

    def __call__(self) -> int | None: ...


class ChangedKeys(Protocol):
    """``store.changed_keys(table, since)``: the position of the last change of a narrow table's
    rows, and the keys (sorted, distinct) of the rows inserted, changed or deleted after
    ``since`` (a position an earlier call gave), in one snapshot; the keys are None when
    ``since`` is None or too old (read every row then), the position None when there is none
    to give."""

    def __call__(
        self, table: str, since: tuple[int, bytes] | None
    ) -> tuple[tuple[int, bytes] | None, list[bytes] | None]: ...


class CountRange(Protocol):
    """``store.count_range(table, start, stop, limit)``: how many rows have ``start <= key <
    stop`` (stop None: to the end), counting no further than ``limit``, without reading them
    out: a fraction of a scan's cost a row."""

    def __call__(
        self, table: str, start: bytes = b"", stop: bytes | None = None, limit: int | None = None
    ) -> int: ...


class LastKey(Protocol):
    """``store.last_key(table, start, stop)``: the highest key with ``start <= key < stop``
    (stop None: to the end), None when the range is empty, its row not read. O(log n)."""

    def __call__(
        self, table: str, start: bytes = b"", stop: bytes | None = None
    ) -> bytes | None: ...


class ScanColumns(Protocol):
    """``store.scan_columns(table, start, stop, columns, ...)``: the rows ``scan`` would give
    for these arguments, read in one compiled loop (``storage.row_scan``), as a list of tuples
    ``(value of each column..., key)`` (None for a column the row lacks); how many rows of the
    range were read; and how many of the tuples lack a column (``keys=False``: the key only in
    those, None in the others). ``needles``: groups of byte strings every wanted key holds one
    of each (``storage.filters.key_needles``), tested below the loop; a superset test only."""

    def __call__(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes | None = None,
        columns: Sequence[bytes] = (),
        *,
        limit: int | None = None,
        key_filter: Callable[[bytes], bool] | None = None,
        keys: bool = True,
        needles: Sequence[Sequence[bytes]] = (),
    ) -> tuple[list[tuple[bytes | None, ...]], int, int]: ...


class ScanUntilPending(Protocol):
    """``store.scan_until_pending(table, start, stop, limit=, columns=)``: the rows ``scan``
    would give, ending before the first row that a change not yet committed made, so that a
    reader following an ordered log never passes a row still to come."""

    def __call__(
        self, table: str, start: bytes = b"", stop: bytes | None = None, *,
        limit: int | None = None, columns: Sequence[bytes] | None = None,
    ) -> Iterator[tuple[bytes, Row]]: ...  # fmt: skip


class Transaction(Protocol):
    """``with store.transaction():`` every write this thread makes inside commits at the end,
    together, or none when it ends with an exception. Reentrant: an inner one that ends with an
    exception undoes only its own writes."""

    def __call__(self) -> AbstractContextManager[None]: ...


class Untracked(Protocol):
    """``with store.untracked():`` this thread's writes inside are not part of its transaction
    (they land at once, and stay whatever becomes of it)."""

    def __call__(self) -> AbstractContextManager[None]: ...


class UndoNote(Protocol):
    """``store.undo_note(kind, payload)``: inside a transaction, record that something was done
    outside the store that ``payload`` describes; if the process dies before the commit, the
    process that rolls the transaction back calls its undoer of ``kind`` (given when it opened
    the store) with ``payload``. Nothing outside a transaction."""

    def __call__(self, kind: str, payload: bytes) -> None: ...


class WritersLock(Protocol):
    """``with store.writers_lock():`` writers in other processes sharing the store wait until
    it is released. Not reentrant, and not a lock between this process's threads."""

    def __call__(self) -> AbstractContextManager[None]: ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """The optional capabilities of one store, each its bound method or None (the store does not
    offer it; see the module docstring for what the catalog does then). Build it once per store
    with ``Capabilities.of``; an unknown name is an AttributeError, never a silent None."""

    change_token: ChangeToken | None = None
    changed_keys: ChangedKeys | None = None
    count_range: CountRange | None = None
    last_key: LastKey | None = None
    scan_columns: ScanColumns | None = None
    scan_until_pending: ScanUntilPending | None = None
    transaction: Transaction | None = None
    undo_note: UndoNote | None = None
    untracked: Untracked | None = None
    writers_lock: WritersLock | None = None

    @classmethod
    def of(cls, store: StoragePort) -> Capabilities:
        """The capabilities ``store`` names in its ``offers``. ValueError when it names one that
        is not a capability, TypeError when it names one it lacks the method of."""
        offered = frozenset(store.offers)
        backend = type(store).__name__
        unknown = offered - CAPABILITY_NAMES
        if unknown:
            raise ValueError(f"{backend} offers unknown capabilities {sorted(unknown)}")
        found = {}
        for name in offered:
            method = getattr(store, name, None)
            if not callable(method):
                raise TypeError(f"{backend} offers {name} but has no such method")
            found[name] = method
        return cls(**found)

    def offered(self) -> frozenset[str]:
        """The names of the capabilities present."""
        return frozenset(f.name for f in fields(self) if getattr(self, f.name) is not None)


def check_scan_arguments(
    start: object, stop: object, limit: int | None, filter: object, batch_size: int | None
) -> None:
    """The checks every backend makes of a scan's arguments, before it reads: TypeError or
    ValueError naming the argument."""
    if not isinstance(start, bytes) or not isinstance(stop, bytes | None):
        raise TypeError("scan bounds are bytes")
    if limit is not None and limit < 0:
        raise ValueError("a scan limit must not be negative")
    if not isinstance(filter, bytes | None):
        raise TypeError("a scan filter is bytes (storage.filters.hbase_filter_bytes)")
    if batch_size is not None and batch_size < 1:
        raise ValueError("a scan batch size must be positive")


#: Every optional capability's name.
CAPABILITY_NAMES = frozenset(f.name for f in fields(Capabilities))
