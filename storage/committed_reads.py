"""Read committed on HBase: a reader sees rows as the changes that had committed when its read
began left them, never a row of a change that has not committed (``storage.intents``).

Every change writes through (its rows land at once; its intent, created before its first row
lands, lists each row it touches with the touched columns as they were before and digests of
what it wrote). A read outside a transaction resolves those intents, as Percolator and Omid
readers do:

1. Before it reads rows (``Snapshot.start``), it reads the register: the state of every intent
   not committed long ago (one small scan of the intents table, filtered on the region
   server). Intents that had ended then (``done``, or ``undone``: rolled back, their rows put
   back) are the read's past: their rows are read as they are.
2. After each batch of rows (``Snapshot.refresh``, the register read again), every other
   intent seen (open, being undone, or ended since the read began) is the read's future:
   each row it touched is shown as it was before it (``view``), a row it made
   is left out, a row it deleted comes back. An intent's entries are read once and kept
   (``Register``): they never change once written.

So a read never returns a row of a change that has not committed, nor misses a row such a
change deleted, and a change that commits while a read runs is seen whole or not at all. The
register read after the batch sees every change that touched the batch's rows before they were
read (its intent was written first). Committed and rolled-back intents linger (10 s, or the
writer lease when shorter: ``intents.LINGER_S``) before they are deleted, so that a read that
began before they ended still finds their entries; a single read longer than that may see a
change that ended during it in part. The register reads only intents that ended less than
``allowance_s`` (2 s, ``intents.CLOCK_ALLOWANCE_S``) before the read began, by the reader's
clock: a writer's clock running more than that behind could let a change begun and ended
within one batch be seen in part.

``view`` follows each column back through the images of the read's future: while the value a
column holds is what one of them wrote (its digest), the column takes that image's before
value. A column changed since by someone else is left as it is, so an intent rolled back long
ago takes nothing back.
"""

from __future__ import annotations

import bisect
import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from metastore_server.storage import intent_entries
from metastore_server.storage.intent_entries import RowImage
from metastore_server.storage.intent_rows import DONE, ENTRY, INTENTS, column, ended_at
from metastore_server.storage.port import Row

#: Entries asked for in one request when an intent's new entries are read.
_ENTRY_PROBE = 256
#: Intents whose entries the register keeps (the least recently seen go first).
_KEPT_INTENTS = 4096


class RawReads(Protocol):
    """The store's reads as they land (no intent resolved)."""

    def scan_states(self, filter: bytes) -> list[tuple[bytes, bytes, int]]: ...

    def get_columns(self, table: str, key: bytes, columns: Sequence[bytes]) -> Row | None: ...

    def entry_bytes(self, key: bytes, seq: int, value: bytes) -> bytes: ...


def done_since_filter(threshold_ms: int) -> bytes:
    """The register's filter: every intent not committed before ``threshold_ms``."""
    value = b"%s %013d" % (DONE, max(threshold_ms, 0))
    return (b"SingleColumnValueFilter('i', 'state', >=, 'binary:" + value + b"', true, true)")


@dataclass
class _Intent:
    """What a reader knows of one intent's entries."""

    next_seq: int = 1
    rows: dict[tuple[str, bytes], list[RowImage]] = field(default_factory=dict)


class Register:
    """The intents of the store as readers see them (one per store, shared by its threads)."""

    def __init__(self, raw: RawReads, allowance_s: float) -> None:
        self._raw = raw
        #: How far back the register looks for committed intents (clock skew allowed).
        self.allowance_s = allowance_s
        self._intents: dict[bytes, _Intent] = {}
        self._lock = threading.Lock()
        #: Register reads made (tests and benchmarks).
        self.reads = 0

    def states(self, threshold_ms: int) -> dict[bytes, tuple[bytes, int]]:
        """Every intent's state and newest entry, but those ended before ``threshold_ms``."""
        self.reads += 1
        found = self._raw.scan_states(done_since_filter(threshold_ms))
        return {key: (state, seq) for key, state, seq in found}

    def rows_of(self, key: bytes, seq: int | None = None,
                ) -> Mapping[tuple[str, bytes], list[RowImage]]:  # fmt: skip
        """The rows intent ``key`` touched, with their images in write order; its entries
        up to ``seq`` (None: all it has) that were not read yet are read now."""
        with self._lock:
            known = self._intents.pop(key, None) or _Intent()
            self._intents[key] = known  # (the most recently seen last)
            while len(self._intents) > _KEPT_INTENTS:
                del self._intents[next(iter(self._intents))]
        if seq is None or seq >= known.next_seq:
            self._read_new(key, known)
            if seq is not None:  # (written with its entry: the numbers up to it are read)
                known.next_seq = max(known.next_seq, seq + 1)
        return known.rows

    def _read_new(self, key: bytes, known: _Intent) -> None:
        while True:
            first = known.next_seq
            names = [column(ENTRY, seq) for seq in range(first, first + _ENTRY_PROBE)]
            found = self._raw.get_columns(INTENTS, key, names) or {}
            seqs = sorted(int(name[len(ENTRY):]) for name in found if name.startswith(ENTRY))
            for seq in seqs:
                data = self._raw.entry_bytes(key, seq, found[column(ENTRY, seq)])
                for image in intent_entries.decode(data):
                    known.rows.setdefault((image.table, image.key), []).append(image)
                known.next_seq = seq + 1
            if len(seqs) < _ENTRY_PROBE:
                return

    def forget(self, keys: Iterable[bytes]) -> None:
        """Drop what is kept of intents that are gone."""
        with self._lock:
            for key in keys:
                self._intents.pop(key, None)


@dataclass
class _Scope:
    """The register as the last read of a client call left it: (threshold, states)."""

    last: tuple[int, dict[bytes, tuple[bytes, int]]] | None = None


_local = threading.local()


@contextlib.contextmanager
def call_scope() -> Iterator[None]:
    """The reads of one client call: each read begins from the register read that ended the
    read before it (read after that read's rows, so before this one's), one register read a
    read instead of two; a change of the call's own ending starts afresh (``forget``)."""
    outer = getattr(_local, "scope", None)
    _local.scope = _Scope()
    try:
        yield
    finally:
        _local.scope = outer


def forget() -> None:
    """This thread's change ended: its next read reads the register first (to see it)."""
    scope: _Scope | None = getattr(_local, "scope", None)
    if scope is not None:
        scope.last = None


class Snapshot:
    """One read's view of the intents: its past (intents done when it began) and its future
    (every other intent seen while it runs)."""

    def __init__(self, register: Register) -> None:
        self._register = register
        self._threshold_ms = 0
        self._past: set[bytes] = set()
        self._future: dict[bytes, Mapping[tuple[str, bytes], list[RowImage]]] = {}
        self._sorted: dict[str, list[bytes]] | None = None

    def start(self) -> Snapshot:
        """Read the register before the read's first rows (or take the one the call's last
        read ended with)."""
        scope: _Scope | None = getattr(_local, "scope", None)
        if scope is not None and scope.last is not None:
            self._threshold_ms, states = scope.last
        else:
            now_ms = int(time.time() * 1000)
            self._threshold_ms = now_ms - int(self._register.allowance_s * 1000)
            states = self._register.states(self._threshold_ms)
        for key, (state, seq) in states.items():
            if ended_at(state) is not None:  # committed, or rolled back and its rows restored
                self._past.add(key)
            else:
                self._take(key, seq)
        return self

    def refresh(self) -> None:
        """Read the register again, after rows were read: changes begun since join the
        read's future."""
        states = self._register.states(self._threshold_ms)
        for key, (_, seq) in states.items():
            if key not in self._past:  # (new ones, and new entries of those known)
                self._take(key, seq)
        scope: _Scope | None = getattr(_local, "scope", None)
        if scope is not None:
            scope.last = (self._threshold_ms, states)

    def _take(self, key: bytes, seq: int) -> None:
        self._future[key] = self._register.rows_of(key, seq)
        self._sorted = None

    @property
    def quiet(self) -> bool:
        """Whether no change is in the read's future."""
        return not any(self._future.values())

    def images(self, table: str, key: bytes) -> list[RowImage]:
        """The images of row ``key`` in the read's future."""
        found: list[RowImage] = []
        for rows in self._future.values():
            found += rows.get((table, key), ())
        return found

    def keys(self, table: str) -> list[bytes]:
        """The keys of ``table`` the read's future touched, in order."""
        if self._sorted is None:
            by_table: dict[str, set[bytes]] = {}
            for rows in self._future.values():
                for slot_table, key in rows:
                    by_table.setdefault(slot_table, set()).add(key)
            self._sorted = {name: sorted(keys) for name, keys in by_table.items()}
        return self._sorted.get(table, [])

    def keys_between(self, table: str, low: bytes | None, high: bytes | None) -> list[bytes]:
        """The touched keys ``low < key <= high`` (None: unbounded), ascending."""
        keys = self.keys(table)
        first = 0 if low is None else bisect.bisect_right(keys, low)
        last = len(keys) if high is None else bisect.bisect_right(keys, high)
        return keys[first:last]


def view(images: Sequence[RowImage], current: Row | None,
         wanted: frozenset[bytes] | None = None) -> Row | None:  # fmt: skip
    """The row as it was before the changes ``images`` belong to (``current``: as it is; None:
    absent), narrowed to ``wanted``; None when it did not exist (or held none of ``wanted``)."""
    if not images:
        return current
    row = dict(current or {})
    touched: set[bytes] = set()
    for image in images:
        touched |= image.touched
    for name in touched:
        value = _before(name, row.get(name), images)
        if value is None:
            row.pop(name, None)
        else:
            row[name] = value
    if wanted is not None:
        row = {name: value for name, value in row.items() if name in wanted}
    return row or None


def _before(name: bytes, value: bytes | None, images: Sequence[RowImage]) -> bytes | None:
    """Column ``name`` followed back from ``value`` through the images that wrote it."""
    left = [image for image in images if name in image.touched]
    while left:
        now = None if value is None else intent_entries.digest(value)
        for index, image in enumerate(left):
            wrote = image.after.get(name) if name in image.after else _UNTOUCHED
            if wrote is not _UNTOUCHED and wrote == now:
                value = image.before.get(name)
                del left[index]
                break
        else:
            return value
    return value


_UNTOUCHED = b"\xff" * 9  # (no digest is 9 bytes long)


def merged(rows: Iterable[tuple[bytes, Row]], extra: Mapping[bytes, Row | None],
           made: set[bytes], reverse: bool) -> list[tuple[bytes, Row | None]]:  # fmt: skip
    """``rows`` with the keys of ``extra`` put in their place (their row; None: left out, but
    kept as None when in ``made``, a row a change still to come made), in scan order."""
    out: dict[bytes, Row | None] = {key: row for key, row in rows}
    for key, row in extra.items():
        if row is None and key not in made:
            out.pop(key, None)
        else:
            out[key] = row
    return sorted(out.items(), key=lambda item: item[0], reverse=reverse)
