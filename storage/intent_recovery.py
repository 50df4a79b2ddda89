"""Recovery of the intents dead writers left (``storage.intents``): a sweep of the ``intents``
table deletes ended intents once they lingered, and takes each open one whose beat is older
than the writer lease to roll it back, entries and notes newest first; and the undoing of an
intent from what it holds in the store (also a live writer's own, when its entries did not fit
in memory)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping

import structlog
from metastore_server.storage import intent_entries, telemetry
from metastore_server.storage.intent_entries import RowImage
from metastore_server.storage.intent_rows import (
    DONE,
    INTENTS,
    NOTE,
    STATE,
    UNDO,
    Holding,
    IntentRows,
    Reads,
    TakenOver,
    Write,
    beat_of,
    ended_at,
    state,
    steps,
)
from metastore_server.storage.port import Condition, Put

log = structlog.get_logger(__name__)

#: Intents read by one recovery pass (the rest wait for the next).
SWEEP_ROWS = 1000

#: Undoes what a note of its kind describes, given the note's payload.
Undoer = Callable[[bytes], None]


def unsettled(ended_before_ms: float) -> bytes:
    """The recovery sweep's filter: intents open or being undone, and those that ended
    before ``ended_before_ms`` (not those still lingering)."""
    when = b"%s %013d" % (DONE, max(ended_before_ms, 0))
    return (b"SingleColumnValueFilter('i', 'state', <, 'binary:" + when + b"', true, true)"
            b" OR SingleColumnValueFilter('i', 'state', >=, 'binary:o', true, true)")


class Recovery:
    """One process's recoverer of dead writers' intents."""

    def __init__(self, reads: Reads, write: Write, rows: IntentRows, *, writer: bytes,
                 lease_s: float, linger_s: float, undoers: Mapping[str, Undoer],
                 later_delete: Callable[[list[bytes]], None]) -> None:  # fmt: skip
        self._reads = reads
        self._write = write
        self._rows = rows
        self._writer = writer
        self._lease_s = lease_s
        self._linger_s = linger_s
        self._undoers = undoers
        self._later_delete = later_delete
        #: Intents rolled back for writers that died, and recovery passes (tests and logs).
        self.recovered = 0
        self.sweeps = 0

    def sweep(self, mine: set[bytes]) -> float:
        """Delete ended intents that lingered, roll back those whose beat is older than the
        lease (not ``mine``: this process's own). Seconds until the next sweep is due."""
        self.sweeps += 1
        now_ms = time.time() * 1000
        due = self._lease_s / 2
        linger_ms = self._linger_s * 1000
        found = list(self._reads.scan(INTENTS, columns=[STATE], limit=SWEEP_ROWS,
                                      filter=unsettled(now_ms - linger_ms)))  # fmt: skip
        for key, row in found:  # (read first: a long rollback would outlive a scanner)
            held = row.get(STATE, b"")
            if key in mine or not held:
                continue
            when = ended_at(held)
            if when is not None:  # ended: deleted once it lingered for the lease
                if now_ms - when > linger_ms:
                    self._rows.delete(key, self._rows.chunk_keys(key))
                continue
            waited_ms = now_ms - beat_of(held)
            if waited_ms <= self._lease_s * 1000:
                due = min(due, (self._lease_s * 1000 - waited_ms) / 1000 + 0.001)
                continue
            taken = state(UNDO, self._writer)
            if self._write([Put(INTENTS, key, {STATE: taken})],
                           Condition(INTENTS, key, STATE, held)):  # fmt: skip
                self._roll_back_dead(Holding(self._rows, key, taken, self._writer,
                                             self._lease_s))  # fmt: skip
        return max(due, 0.001)

    def _roll_back_dead(self, holding: Holding) -> None:
        """Undo every entry and note of a dead writer's intent, newest first, then delete
        it; nothing more once another process took it (it was slow: it finishes)."""
        key = holding.key
        try:
            standing = self.undo_stored(key, notes=True, between=holding)
            holding.finish()
            self._later_delete([*self._rows.chunk_keys(key), key])
        except (TakenOver, ValueError):
            if self._rows.state_of(key) == holding.held:
                raise  # still ours: the intent itself is damaged
            log.info("storage.intent_recovered_elsewhere", intent=key.hex())
            return
        self.recovered += 1
        telemetry.intent("recovery")
        log.warning("storage.intent_rolled_back", intent=key.hex(), steps=standing,
                    reason="its writer's lease ran out")  # fmt: skip

    def undo_stored(self, key: bytes, *, notes: bool, between: Holding) -> int:
        """Undo the entries (and ``notes``) an intent holds, newest first, in batches
        (``IntentRows.undo_all``); how many."""
        row = self._reads.get(INTENTS, key) or {}
        standing = steps(row)

        def newest_first() -> Iterator[list[RowImage] | Callable[[], None]]:
            for seq, name in reversed(standing):
                if not name.startswith(NOTE):
                    yield intent_entries.decode(self._rows.entry_bytes(key, seq, row[name]))
                elif notes:
                    yield functools.partial(self._undo_note, key, row[name])

        self._rows.undo_all(newest_first(), between)
        return len(standing)

    def _undo_note(self, key: bytes, value: bytes) -> None:
        """Undo what a note describes (a failure is logged: the rows are still rolled back)."""
        kind, _, payload = value.partition(b"\x00")
        undoer = self._undoers.get(kind.decode(errors="replace"))
        if undoer is None:
            log.error("storage.intent_note_not_undone", intent=key.hex(), kind=kind.decode(
                errors="replace"), reason="this process has no undoer of that kind")  # fmt: skip
            return
        try:
            undoer(payload)
        except Exception as error:  # noqa: BLE001 - the rows must still be rolled back
            log.error("storage.intent_note_undo_failed", intent=key.hex(),
                      kind=kind.decode(errors="replace"), error=str(error))  # fmt: skip
