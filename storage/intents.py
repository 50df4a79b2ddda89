"""All-or-nothing over many rows on a store that is atomic per row only (HBase), with nothing
installed on the store's servers: an intent log, in the manner of Percolator and Omid, whose
unfinished intents are rolled back.

A transaction (``IntentLog.transaction``) writes through: each ``mutate`` lands in the store
at once, so the transaction's own reads see it and its compare-and-sets decide at once. Before
a mutate writes, its entry (``intent_entries``: every row it touches, with the touched columns
as they were and digests of what it writes) is added to the transaction's intent, one row of
the ``intents`` table keyed by a random id:

* ``i:state``: ``open <beat> <writer>``, ``undo <beat> <writer>``, ``done`` or ``undone``
  (rolled back, its rows about to go); ``<beat>`` is the wall-clock millisecond its holder
  last showed it was alive;
* ``i:e<seq>``: entry ``seq``, inline, or in chunk rows ``<id>/<seq><n>`` when it is large;
  ``i:v<seq>``: entry ``seq`` wrote nothing (its compare-and-set failed);
* ``i:n<seq>``: a note (``note``): something done outside the store (a directory moved) and
  how to undo it, carried out by whoever rolls back a dead writer's intent (the writer itself
  undoes such things in its own way when its transaction fails).

The row is created with the first entry in one row write (its id is new: nobody else can hold
it). Every later entry, every heartbeat and the commit are compare-and-sets on ``i:state``
holding what the writer last put there, so once anyone else changed the state the writer can
add nothing more. A writer beats (rewrites its state) every third of the writer lease from a
background thread, and writes a row only while its last beat is younger than half the lease.

Commit: ``state := done <ms>``, the commit point; the row is deleted in the background once
it lingered (``LINGER_S``).
Rollback (the writer's transaction ends with an exception, or any process finds an intent
whose beat is older than the lease: ``recover``): ``state := undo <now> <who>``, then every
entry, newest first, is undone with ``intent_entries.restore``, in batches of entries that
touch distinct rows (a row changed by someone else since is left as it is, and logged), the
undoer rewriting its state every third of the lease so nobody takes the intent while it works
(``intent_rows.Holding``); then ``state := undone`` and the intent's rows go. Whoever loses
one of these compare-and-sets stops quietly: another process finishes. When one of the
writes had failed (its outcome unknown: a gateway may still hold it and apply it later), the
writer leaves the intent in ``undo``, so that it is undone once more after the lease.

Why back, not forward: a call's writes are made one after another, with reads and
compare-and-sets between them that decide what comes next (a row must still be absent, an id
still free), so what an unfinished call would have written cannot be known, let alone
replayed; and the client of a call that did not commit was never told it succeeded, so undoing
it loses nothing acknowledged (HMS's database rolls back an uncommitted transaction alike).

Readers outside a transaction see only committed changes: they resolve the intents
(``storage.committed_reads``), for which ``done`` and ``undone`` states carry the millisecond
they ended and linger (``LINGER_S``) before they are deleted. A transaction's own reads see
rows as they land (its own, and other open changes', whose compare-and-sets decide).

What is not covered: ``increment`` (a counter bumped is never taken back, like a database
sequence) and writes made outside a transaction. Clocks of the server processes must agree
within half the lease.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import structlog
from metastore_server.storage import deadline, intent_entries, telemetry
from metastore_server.storage.intent_entries import RowChange, RowImage
from metastore_server.storage.intent_recovery import Recovery, Undoer
from metastore_server.storage.intent_rows import (
    DONE,
    ENTRY,
    INTENTS,
    NOTE,
    OPEN,
    SEQ,
    STATE,
    UNDO,
    VOID,
    Holding,
    IntentRows,
    Reads,
    TakenOver,
    Write,
    column,
    ended,
    held_by,
    seq_value,
    state,
)
from metastore_server.storage.port import Condition, Delete, Put, StorageError

log = structlog.get_logger(__name__)

#: Bytes of entries a transaction keeps in memory for its own rollback (beyond: read back).
MEMORY_BYTES = 32 * 1024 * 1024
#: The writer lease when none is given (the server's ``--writer-lease``).
DEFAULT_LEASE_S = 30.0
#: How long at most an ended (committed or rolled back) intent stays before it is deleted, for
#: reads that began before it ended (``storage.committed_reads``); the lease when shorter.
LINGER_S = 10.0
#: How far readers' clocks may run ahead of writers' (``storage.committed_reads``); half the
#: lease when shorter.
CLOCK_ALLOWANCE_S = 2.0
_RETRY_S = 0.2  # between tries of a rollback that failed

class IntentLost(StorageError):
    """A transaction's intent was rolled back by another process (its writer lease ran out):
    its writes are undone, and it can write nothing more."""


@dataclass(eq=False)
class _Transaction:
    """One thread's open transaction."""

    key: bytes
    state: bytes | None = None  # what the writer last put in i:state (None: no row yet)
    seq: int = 0
    entries: list[list[RowImage]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    beaten: float = 0.0  # time.monotonic() of the last beat that held
    lost: bool = False
    in_doubt: bool = False  # a write failed: it may still land (a gateway holding it)
    held: int = 0  # bytes of the entries written
    spilled: bool = False  # too many to keep in memory: undone from the intent itself
    ended: bool = False
    depth: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class IntentLog:
    """Transactions over a store that is atomic per row only (see the module docstring)."""

    def __init__(self, reads: Reads, write: Write, *, lease_s: float = DEFAULT_LEASE_S,
                 writer: str | None = None, undoers: Mapping[str, Undoer] | None = None,
                 ) -> None:  # fmt: skip
        if lease_s <= 0:
            raise ValueError("the writer lease must be positive")
        self._reads = reads
        self._write = write
        self.rows = IntentRows(reads, write)
        self.lease_s = lease_s
        #: How long an ended intent stays for readers that began before it ended.
        self.linger_s = min(lease_s, LINGER_S)
        self._undoers = dict(undoers or {})
        self.writer = (writer or os.urandom(8).hex()).encode()
        self._local = threading.local()
        self._open: dict[bytes, _Transaction] = {}
        self._open_lock = threading.Lock()
        #: Rows of ended intents to delete, each once its time (``time.monotonic()``) comes:
        #: they linger for the lease, for reads that began before they ended.
        self._cleanup: list[tuple[float, list[bytes]]] = []
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._beater: threading.Thread | None = None
        self._sweep_lock = threading.Lock()
        self._next_sweep = 0.0
        #: This process's rollbacks that failed (HBase down), retried before its next call.
        self._unfinished: list[_Transaction] = []
        self._next_retry = 0.0
        self._recovery = Recovery(reads, write, self.rows, writer=self.writer,
                                  lease_s=lease_s, linger_s=self.linger_s,
                                  undoers=self._undoers, later_delete=self._later_delete)

    # -- transactions -----------------------------------------------------------------------

    def active(self) -> _Transaction | None:
        """This thread's open transaction, if any."""
        return getattr(self._local, "transaction", None)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Every ``mutate`` of this thread inside is kept, or undone when the block ends with
        an exception (or its commit fails, which raises). Reentrant: an inner block that ends
        with an exception undoes only its own writes."""
        current = self.active()
        if current is not None:
            with self._nested(current):
                yield
            return
        current = _Transaction(os.urandom(16))
        self._local.transaction = current
        try:
            yield
        except BaseException:
            self._local.transaction = None
            self._rollback(current)
            raise
        self._local.transaction = None
        self._commit(current)

    @contextlib.contextmanager
    def untracked(self) -> Iterator[None]:
        """This thread's writes inside are not part of its transaction (if any)."""
        current = self.active()
        self._local.transaction = None
        try:
            yield
        finally:
            self._local.transaction = current

    @contextlib.contextmanager
    def _nested(self, current: _Transaction) -> Iterator[None]:
        savepoint = len(current.entries)
        try:
            yield
        except BaseException:
            undone, current.entries = current.entries[savepoint:], current.entries[:savepoint]
            for images in reversed(undone):
                self.rows.undo(images)
            raise

    def logged(self, changes: Sequence[RowChange], apply: Callable[[], bool],
               condition: Condition | None = None) -> bool:  # fmt: skip
        """Record ``changes`` in this thread's intent, then ``apply`` them (the store's own
        write, under ``condition``); ``apply``'s answer. Without an open transaction: just
        ``apply``."""
        current = self.active()
        if current is None or not changes:
            return apply()
        if current.lost:
            raise IntentLost(self._lost_message())
        images = self._known_images(changes, condition) or self._images(changes)
        entry = intent_entries.encode(images)
        with current.lock:
            seq = self._append(current, entry)
            self._keep_fresh(current)
        try:
            applied = apply()
        except BaseException:
            self._keep(current, images, len(entry))  # it may have landed, in part, or later
            current.in_doubt = True
            raise
        if applied:
            self._keep(current, images, len(entry))
        else:
            self._void(current, seq)
        return applied

    @staticmethod
    def _keep(current: _Transaction, images: list[RowImage], size: int) -> None:
        """Keep an entry in memory for the writer's own rollback, up to ``MEMORY_BYTES`` a
        transaction; past that the rollback reads the entries back from the intent."""
        current.held += size
        if current.held > MEMORY_BYTES:
            current.spilled = True
            current.entries.clear()
        else:
            current.entries.append(images)

    def note(self, kind: str, payload: bytes) -> None:
        """Record in this thread's transaction something done outside the store, to be undone
        by ``undoers[kind](payload)`` if the transaction's writer dies before it commits.
        Nothing without an open transaction."""
        current = self.active()
        if current is None:
            return
        if current.lost:
            raise IntentLost(self._lost_message())
        with current.lock:
            self._append(current, kind.encode() + b"\x00" + payload, NOTE)
            self._keep_fresh(current)

    @staticmethod
    def _known_images(
        changes: Sequence[RowChange], condition: Condition | None
    ) -> list[RowImage] | None:
        """The image of a write whose compare-and-set, if it holds, shows all the write
        touches (nothing else: None, to be read): one row, and only the checked column, or a
        row its caller vouches is new (``Condition.creates``)."""
        if condition is None or len(changes) != 1:
            return None
        change = changes[0]
        if (change.table, change.key) != (condition.table, condition.key) or change.whole:
            return None
        touched = set(change.puts) | change.deletes
        if condition.creates and condition.expected is None:
            return [intent_entries.image(change, None)]
        if touched <= {condition.column}:
            known = {} if condition.expected is None else {condition.column: condition.expected}
            return [intent_entries.image(change, known)]
        return None

    def _images(self, changes: Sequence[RowChange]) -> list[RowImage]:
        found = self.rows.current_rows([(c.table, c.key) for c in changes])
        return [intent_entries.image(c, found.get((c.table, c.key))) for c in changes]

    def _append(self, current: _Transaction, entry: bytes, prefix: bytes = ENTRY) -> int:
        """Add an entry (or a note) to the intent (creating its row with the first); its
        number."""
        self.rows.ensure()
        seq = current.seq + 1
        if prefix == NOTE:
            value = entry
        else:
            value, chunks = self.rows.entry_value(current.key, seq, entry)
            current.chunks += chunks
        name = column(prefix, seq)
        if current.state is None:
            fresh = self._state(OPEN)
            first = {STATE: fresh, name: value, SEQ: seq_value(seq)}
            self._write([Put(INTENTS, current.key, first)], None)
            current.state, current.beaten = fresh, time.monotonic()
            self._register(current)
        elif not self._write([Put(INTENTS, current.key, {name: value, SEQ: seq_value(seq)})],
                             Condition(INTENTS, current.key, STATE, current.state)):  # fmt: skip
            current.lost = True
            raise IntentLost(self._lost_message())
        current.seq = seq
        return seq

    def _void(self, current: _Transaction, seq: int) -> None:
        """Mark an entry whose compare-and-set failed (it wrote nothing)."""
        with current.lock, contextlib.suppress(StorageError):
            self._write([Put(INTENTS, current.key, {column(VOID, seq): b"1"})],
                        Condition(INTENTS, current.key, STATE, current.state))  # fmt: skip

    def _keep_fresh(self, current: _Transaction) -> None:
        """Beat now unless the last beat is younger than half the lease (called holding
        ``current.lock``): a row written now lands well before anyone may take the intent."""
        if time.monotonic() - current.beaten > self.lease_s / 2 and not self._beat(current):
            raise IntentLost(self._lost_message())

    def _lost_message(self) -> str:
        return (
            f"this change was rolled back by another server process: it could not show it was "
            f"alive for {self.lease_s:g} s (the writer lease); nothing of it is kept"
        )

    def _commit(self, current: _Transaction) -> None:
        """Make the transaction's writes final (the commit point), or raise."""
        if current.state is None:
            return  # it wrote nothing
        with current.lock:
            current.ended = True
            self._unregister(current)
            if current.lost:
                raise IntentLost(self._lost_message())
            try:
                held = self._finish(current)
            except StorageError as error:
                held = self._commit_outcome(current, error)
            if not held:
                raise IntentLost(self._lost_message())
        telemetry.intent("commit")
        self._later(current)

    def _finish(self, current: _Transaction) -> bool:
        """The commit point: ``state := done`` if the state is still the writer's."""
        done = Put(INTENTS, current.key, {STATE: ended(DONE)})
        return self._write([done], Condition(INTENTS, current.key, STATE, current.state))

    def _commit_outcome(self, current: _Transaction, error: StorageError) -> bool:
        """Whether a commit whose answer was lost took effect (read back; tried once more
        when it did not); raises when that cannot be found out."""
        try:
            found = self.rows.state_of(current.key)
            if found == current.state:
                return self._finish(current)
        except StorageError:
            raise StorageError(
                f"the commit of this change could not be confirmed ({error}); if it did not "
                f"land, the change is rolled back {self.lease_s:g} s (the writer lease) after "
                f"its last write"
            ) from error
        return found is not None and found.partition(b" ")[0] == DONE

    def _rollback(self, current: _Transaction) -> None:
        """Undo the transaction's writes; when that fails (HBase down), it is tried again
        before this process's next read or write (and by ``recover`` after the lease)."""
        if current.state is None:
            return
        telemetry.intent("rollback")
        with current.lock:
            current.ended = True
            self._unregister(current)
            try:
                with deadline.grace():  # a call out of time still tries its rollback
                    self._undo_own(current)
            except (StorageError, ValueError) as error:
                log.warning("storage.intent_rollback_unfinished", intent=current.key.hex(),
                            error=str(error), left_to="this process's next call")  # fmt: skip
                with self._open_lock:
                    self._unfinished.append(current)

    def _undo_own(self, current: _Transaction) -> None:
        """Take the intent for undoing and undo it, unless it committed after all (a lost
        commit answer) or another process took it (it rolls it back)."""
        found = current.state
        for _ in range(3):  # (a state of ours other than the one known: a lost answer landed)
            if held_by(found, self.writer):
                break
            if not held_by(found, self.writer, OPEN):
                return
            taken = self._state(UNDO)
            if self._write([Put(INTENTS, current.key, {STATE: taken})],
                           Condition(INTENTS, current.key, STATE, found)):  # fmt: skip
                found = taken
                break
            found = self.rows.state_of(current.key)
        else:
            return  # (its state keeps changing: left to a recoverer after the lease)
        assert found is not None
        current.state = found
        holding = Holding(self.rows, current.key, current.state, self.writer, self.lease_s)
        try:
            if current.spilled:
                self._recovery.undo_stored(current.key, notes=False, between=holding)
            self.rows.undo_all(reversed(current.entries), holding)
            current.entries.clear()
            if not current.in_doubt:  # else undone again after the lease, by a recoverer
                holding.finish()
                self._later_delete([*current.chunks, current.key])
            else:  # (readers may read its rows as they are: put back, but for a late write)
                holding.mark_restored()
        except TakenOver:
            log.info("storage.intent_rollback_taken_over", intent=current.key.hex())
        finally:
            current.state = holding.held

    def _retry_unfinished(self) -> None:
        """Finish this process's rollbacks that failed (called before its reads and writes)."""
        with self._open_lock:
            waiting, self._unfinished = self._unfinished, []
        for index, current in enumerate(waiting):
            try:
                self._undo_own(current)
            except (StorageError, ValueError):
                with self._open_lock:
                    self._unfinished = waiting[index:] + self._unfinished
                self._next_retry = time.monotonic() + _RETRY_S
                return
            log.info("storage.intent_rollback_finished", intent=current.key.hex())

    # -- recovery ---------------------------------------------------------------------------

    def maybe_recover(self) -> None:
        """Run ``recover`` when it is due (cheap when it is not; never raises). Called by the
        store before each read and write, so the next call of any process after a writer's
        lease ran out finishes or undoes its change first."""
        now = time.monotonic()
        retry = self._unfinished and now >= self._next_retry
        if (now < self._next_sweep and not retry) or getattr(self._local, "sweeping", False):
            return
        if not self._sweep_lock.acquire(blocking=False):
            return
        self._local.sweeping = True
        try:
            if retry:
                self._retry_unfinished()
            if now >= self._next_sweep:
                self._next_sweep = time.monotonic() + self.recover()
        except (StorageError, ValueError) as error:
            self._next_sweep = time.monotonic() + min(self.lease_s / 2, 5.0)
            log.warning("storage.intent_recovery_failed", error=str(error))
        finally:
            self._local.sweeping = False
            self._sweep_lock.release()

    def recover(self) -> float:
        """Finish what dead writers left (``intent_recovery.Recovery.sweep``). Seconds until
        the next recovery is due."""
        self.rows.ensure()
        with self._open_lock:
            mine = {*self._open, *(t.key for t in self._unfinished)}
        return self._recovery.sweep(mine)

    @property
    def recovered(self) -> int:
        """Intents this process rolled back for writers that died (for tests and logs)."""
        return self._recovery.recovered

    @property
    def sweeps(self) -> int:
        """This process's recovery passes (for tests and logs)."""
        return self._recovery.sweeps

    # -- beats and cleaning -----------------------------------------------------------------

    def _state(self, kind: bytes) -> bytes:
        return state(kind, self.writer)

    def _beat(self, current: _Transaction) -> bool:
        """Rewrite the state (called holding ``current.lock``); False when it was taken."""
        fresh = self._state(OPEN)
        held = self._write([Put(INTENTS, current.key, {STATE: fresh})],
                           Condition(INTENTS, current.key, STATE, current.state))  # fmt: skip
        if held:
            current.state, current.beaten = fresh, time.monotonic()
        else:
            current.lost = True
        return held

    def _register(self, current: _Transaction) -> None:
        with self._open_lock:
            self._open[current.key] = current
        self._ensure_beater()

    def _ensure_beater(self) -> None:
        with self._open_lock:
            if self._beater is None:
                self._beater = threading.Thread(target=self._beats, name="intent-beats",
                                                daemon=True)  # fmt: skip
                self._beater.start()

    def _unregister(self, current: _Transaction) -> None:
        with self._open_lock:
            self._open.pop(current.key, None)

    def _later(self, current: _Transaction) -> None:
        """Delete a committed intent's rows in the background, once they lingered."""
        self._later_delete([*current.chunks, current.key])

    def _later_delete(self, keys: list[bytes]) -> None:
        """Delete an ended intent's rows after the lease (by the background thread)."""
        with self._open_lock:
            self._cleanup.append((time.monotonic() + self.linger_s, keys))
        self._ensure_beater()

    def _beats(self) -> None:
        """The background thread: beats open intents, deletes committed ones."""
        while not self._stopped.is_set():
            self._wake.wait(self.lease_s / 3)
            self._wake.clear()
            now = time.monotonic()
            with self._open_lock:
                due = [item for item in self._cleanup if item[0] <= now]
                self._cleanup = [item for item in self._cleanup if item[0] > now]
                beating = list(self._open.values())
            doomed = [key for _, keys in due for key in keys]
            try:
                if doomed:
                    try:
                        self._write([Delete(INTENTS, k) for k in doomed], None)
                    except (StorageError, ValueError):
                        with self._open_lock:
                            self._cleanup += due
                        raise
                for current in beating:
                    with current.lock:
                        old = time.monotonic() - current.beaten > self.lease_s / 3
                        if old and not current.ended:
                            self._beat(current)
            except (StorageError, ValueError) as error:  # the next round tries again
                log.warning("storage.intent_beat_failed", error=str(error))

    def close(self) -> None:
        """Stop the background thread, then delete what committed intents are left (best
        effort: ``recover`` deletes any that remain)."""
        self._stopped.set()
        self._wake.set()
        if self._beater is not None:
            self._beater.join(timeout=5)
        with self._open_lock:
            doomed = [key for _, keys in self._cleanup for key in keys]
            self._cleanup = []
        if doomed:
            with contextlib.suppress(StorageError, ValueError, RuntimeError):
                self._write([Delete(INTENTS, k) for k in doomed], None)
