"""The intents table (``storage.intents``): its rows, and how one entry's rows are put back.

An intent is one row keyed by a random id (``STATE``, entries ``i:e<seq>``, notes ``i:n<seq>``,
voided entries ``i:v<seq>``), with the entries too large for a cell in chunk rows
``<id>/<seq><n>``. ``IntentRows`` reads and writes them over a store's reads and its unlogged
write, and undoes entries' rows with ``intent_entries.restore``: many entries at once
(``undo_all``: one read and one write per batch of entries that touch distinct rows, so a
rollback of thousands of entries is a handful of round trips, not two an entry).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

import structlog
from metastore_server.storage import deflating, intent_entries
from metastore_server.storage.intent_entries import RowImage
from metastore_server.storage.port import Condition, Delete, Put, Row, StorageError, TableSpec

log = structlog.get_logger(__name__)

#: The table of intents, and its column family.
INTENTS = "intents"
SPEC = TableSpec(INTENTS, ("i",))
STATE = b"i:state"
ENTRY = b"i:e"
VOID = b"i:v"
NOTE = b"i:n"
#: The number of the intent's newest entry or note, written with it (readers read an intent's
#: entries again only when it grew: ``storage.committed_reads``).
SEQ = b"i:seq"
#: When (wall-clock ms) an intent left in ``undo`` had its rows put back (``mark_restored``):
#: readers then read its rows as they are (``storage.committed_reads``).
RESTORED = b"i:restored"
_CHUNK = b"i:c"
OPEN, UNDO, DONE = b"open", b"undo", b"done"
#: The state of an intent rolled back. Like ``DONE`` (committed), it is written with the
#: wall-clock millisecond it ended (``ended``) and lingers for the writer lease, so that reads
#: that began before it ended still find its entries (``storage.committed_reads``); then
#: whoever finds it deletes it.
UNDONE = b"undone"
#: Rows of entries undone together (one read, one write).
UNDO_BATCH_ROWS = 1000
#: The first byte of an entry's cell: the entry inline or in chunk rows, as it is or deflated
#: (a deflated inline entry has a count of no chunks before its bytes).
_INLINE, _CHUNKED, _DEFLATED_INLINE, _DEFLATED_CHUNKED = b"\x00", b"\x01", b"\x02", b"\x03"
#: Entries larger than this (deflated) go to chunk rows of at most ``CHUNK_BYTES`` (HBase
#: refuses cells over 10 MB).
INLINE_BYTES = 256 * 1024
CHUNK_BYTES = 4 * 1024 * 1024
#: Entries are deflated where that pays (``storage.deflating``): the before-images of a batch
#: of partitions are much alike (their storage descriptors, columns and parameters), and they
#: are written by every change and read by every reader that meets the change open.
#: Most chunk rows an entry may have (64 GiB: no write comes near it); a cell naming more is
#: damaged.
MAX_CHUNKS = 16 * 1024
_SEQ = struct.Struct(">I")

Write = Callable[[Sequence[Put | Delete], Condition | None], bool]


class Reads(Protocol):
    """What the intents read of the store (their own writes go through ``Write``, unlogged)."""

    def get(self, table: str, key: bytes) -> Row | None: ...

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]: ...

    def scan(self, table: str, start: bytes = b"", stop: bytes | None = None, *,
             limit: int | None = None, columns: Sequence[bytes] | None = None,
             filter: bytes | None = None) -> Iterator[tuple[bytes, Row]]: ...  # fmt: skip

    def ensure_tables(self, specs: Sequence[TableSpec]) -> None: ...


def column(prefix: bytes, seq: int) -> bytes:
    """The column of entry, note or void ``seq``."""
    return prefix + b"%08d" % seq


def seq_value(seq: int) -> bytes:
    """``SEQ``'s value for entry ``seq``."""
    return b"%08d" % seq


def state(kind: bytes, writer: bytes) -> bytes:
    """An ``open`` or ``undo`` state, beating now."""
    return b"%s %d %s" % (kind, time.time() * 1000, writer)


def ended(kind: bytes) -> bytes:
    """A ``done`` or ``undone`` state, ending now (13 digits: states compare as bytes)."""
    return b"%s %013d" % (kind, time.time() * 1000)


def ended_at(value: bytes) -> float | None:
    """When (wall-clock ms) a ``done`` or ``undone`` state ended (0 for one written without
    it), or None when ``value`` is another state."""
    kind, _, when = value.partition(b" ")
    if kind not in (DONE, UNDONE):
        return None
    try:
        return float(when) if when else 0.0
    except ValueError:
        return 0.0


def beat_of(value: bytes) -> float:
    """The beat (wall-clock ms) of an ``open`` or ``undo`` state (0 for anything else)."""
    parts = value.split(b" ")
    try:
        return float(parts[1]) if len(parts) == 3 and parts[0] in (OPEN, UNDO) else 0.0
    except ValueError:
        return 0.0


def steps(row: Row) -> list[tuple[int, bytes]]:
    """An intent row's entries and notes that stand (not voided): (seq, column), oldest first."""
    voids = {c[3:] for c in row if c.startswith(VOID)}
    found = [(c[3:], c) for c in row if c[:3] in (ENTRY, NOTE) and c[3:] not in voids]
    return [(int(seq), name) for seq, name in sorted(found)]


class TakenOver(StorageError):
    """Another process took the intent this one was undoing (it finishes the rollback)."""


class Holding:
    """An ``undo`` state a process holds on an intent while it rolls it back: rewritten (a
    compare-and-set) when a third of the lease has passed since, between batches, so that no
    other process takes the intent while it works; ``TakenOver`` once another did."""

    def __init__(self, rows: IntentRows, key: bytes, held: bytes, writer: bytes,
                 lease_s: float) -> None:  # fmt: skip
        self._rows, self.key, self.held = rows, key, held
        self._writer, self._lease_s = writer, lease_s
        self._since = time.monotonic()

    def __call__(self) -> None:
        """Rewrite the state if it is due (``between`` of ``IntentRows.undo_all``)."""
        if time.monotonic() - self._since < self._lease_s / 3:
            return
        fresh = state(UNDO, self._writer)
        if not self._cas(fresh):
            raise TakenOver(self.key.hex())
        self.held, self._since = fresh, time.monotonic()

    def finish(self) -> None:
        """Mark the intent undone (nobody undoes it again; it lingers for readers and is
        deleted later); ``TakenOver`` when another process holds it."""
        undone = ended(UNDONE)
        if not self._cas(undone):
            raise TakenOver(self.key.hex())
        self.held = undone

    def mark_restored(self) -> None:
        """Record that the intent's rows are put back, while it stays in ``undo`` (to be
        undone again after the lease: a write whose outcome is unknown may still land)."""
        self._rows.write([Put(INTENTS, self.key, {RESTORED: b"%013d" % (time.time() * 1000)})],
                         Condition(INTENTS, self.key, STATE, self.held))  # fmt: skip

    def _cas(self, value: bytes) -> bool:
        return self._rows.write([Put(INTENTS, self.key, {STATE: value})],
                                Condition(INTENTS, self.key, STATE, self.held))  # fmt: skip


def held_by(value: bytes | None, writer: bytes, kind: bytes = UNDO) -> bool:
    """Whether ``value`` is a state of ``kind`` (``undo`` or ``open``) ``writer`` put there."""
    parts = (value or b"").split(b" ")
    return len(parts) == 3 and parts[0] == kind and parts[2] == writer


class IntentRows:
    """The intents table over a store's reads and unlogged write."""

    def __init__(self, reads: Reads, write: Write) -> None:
        self.reads = reads
        self.write = write
        self._ready = False

    def ensure(self) -> None:
        """Create the table at first use."""
        if not self._ready:
            self.reads.ensure_tables([SPEC])
            self._ready = True

    def entry_value(self, key: bytes, seq: int, entry: bytes) -> tuple[bytes, list[bytes]]:
        """The cell value of entry ``seq`` of intent ``key``, and the chunk rows written for
        it first when it is too large to be inline."""
        inline, chunked = _INLINE, _CHUNKED
        packed = deflating.deflated(entry)
        if packed is not None:
            entry, inline, chunked = packed, _DEFLATED_INLINE, _DEFLATED_CHUNKED
        if len(entry) <= INLINE_BYTES:
            if inline == _DEFLATED_INLINE:  # a count of no chunks first: older servers that
                return inline + _SEQ.pack(0) + entry, []  # read it as chunked find it empty
            return inline + entry, []
        pieces = intent_entries.split(entry, CHUNK_BYTES)
        keys = [key + b"/" + _SEQ.pack(seq) + _SEQ.pack(n) for n in range(len(pieces))]
        self.write([Put(INTENTS, k, {_CHUNK: p}) for k, p in zip(keys, pieces, strict=True)], None)
        return chunked + _SEQ.pack(len(pieces)), keys

    def entry_bytes(self, key: bytes, seq: int, value: bytes) -> bytes:
        """The bytes of entry ``seq`` of intent ``key`` from its cell value."""
        kind = value[:1]
        if kind == _INLINE:
            data = value[1:]
        elif kind == _DEFLATED_INLINE and value[1:5] == _SEQ.pack(0):
            data = value[5:]
        else:
            if kind not in (_CHUNKED, _DEFLATED_CHUNKED) or len(value) != 5:
                raise ValueError(f"intent {key.hex()} has a damaged entry {seq}: a cell of "
                                 f"{len(value)} bytes of an unknown form")  # fmt: skip
            pieces = _SEQ.unpack(value[1:5])[0]
            if not 0 < pieces <= MAX_CHUNKS:
                raise ValueError(f"intent {key.hex()} has a damaged entry {seq}: "
                                 f"{pieces} chunks")  # fmt: skip
            prefix = key + b"/" + _SEQ.pack(seq)
            names = [prefix + _SEQ.pack(n) for n in range(pieces)]
            found = dict(self.reads.get_many(INTENTS, names))
            if len(found) != pieces:
                raise ValueError(f"intent {key.hex()} lacks chunks of entry {seq}")
            data = b"".join(found[name][_CHUNK] for name in names)
        if kind in (_DEFLATED_INLINE, _DEFLATED_CHUNKED):
            try:
                return deflating.inflated(data)
            except ValueError as error:
                raise ValueError(f"intent {key.hex()} has a damaged entry {seq}: {error}") from None
        return data

    def chunk_keys(self, key: bytes) -> list[bytes]:
        """The chunk rows of intent ``key``."""
        rows = self.reads.scan(INTENTS, key + b"/", key + b"0", columns=[_CHUNK])
        return [k for k, _ in rows]

    def state_of(self, key: bytes) -> bytes | None:
        """What intent ``key`` holds in ``STATE`` (None: no such intent)."""
        return (self.reads.get(INTENTS, key) or {}).get(STATE)

    def delete(self, key: bytes, chunks: Sequence[bytes]) -> None:
        """Delete an intent and its chunk rows."""
        self.write([Delete(INTENTS, k) for k in (*chunks, key)], None)

    def current_rows(self, slots: Sequence[tuple[str, bytes]]) -> dict[tuple[str, bytes], Row]:
        """The rows at ``slots`` (table, key) that exist, read in one request per table."""
        by_table: dict[str, list[bytes]] = {}
        for table, key in slots:
            by_table.setdefault(table, []).append(key)
        return {
            (table, key): found
            for table, keys in by_table.items()
            for key, found in self.reads.get_many(table, keys)
        }

    def undo_all(self, steps: Iterable[Sequence[RowImage] | Callable[[], None]],
                 between: Callable[[], None] | None = None) -> None:  # fmt: skip
        """Undo ``steps``, newest first: entries in batches of entries that touch distinct
        rows (their order within a batch does not matter), a callable (a note's undoing) run
        in its turn; ``between`` is called after each batch (it may raise to stop)."""
        batch: list[RowImage] = []
        slots: set[tuple[str, bytes]] = set()

        def flush() -> None:
            if batch:
                self.undo(batch)
                batch.clear()
                slots.clear()
                if between is not None:
                    between()

        for step in steps:
            if callable(step):
                flush()
                step()
                continue
            touched = {(row.table, row.key) for row in step}
            if touched & slots or len(slots) + len(touched) > UNDO_BATCH_ROWS:
                flush()
            batch.extend(step)
            slots.update(touched)
        flush()

    def undo(self, images: Sequence[RowImage]) -> None:
        """Put the rows of one entry (or of entries touching distinct rows) back as they were
        before it (``restore``); a row another writer changed since is left as they left it,
        and logged."""
        current = self.current_rows([(row.table, row.key) for row in images])
        ops: list[Put | Delete] = []
        for row in images:
            fix = intent_entries.restore(row, current.get((row.table, row.key)))
            if fix is None:
                log.warning("storage.intent_row_changed_since", table=row.table,
                            key=row.key[:64].hex(), kept="the other writer's change")  # fmt: skip
                continue
            puts, deletes = fix
            if puts:
                ops.append(Put(row.table, row.key, puts))
            if deletes:
                ops.append(Delete(row.table, row.key, deletes))
        if ops:
            self.write(ops, None)
