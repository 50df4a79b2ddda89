"""Exclusive claims for stores without atomic batches (HBase): on adding partitions to a table,
and on a base table's dependents (``dependency_guard``).

HBase writes one row atomically, but checks a condition on one column only: a partition row
written by compare-and-set on its absence would land in two steps (the checked column, then the
rest), and a server killed between them would leave half a row. So new partitions are created
in four steps instead: claim the table's adding (compare-and-set on its claim row,
``layout.claim_key(layout.adding_key(table id))``: only one writer holds a claim), check in one
read that the rows are still absent, write the whole rows (one atomic row put each, sent in
batches), release the claim. Each partition is then created exactly once across server
processes, no row is ever half written, and a batch of a thousand partitions costs a few round
trips, not one per partition; server processes adding to one table take turns (a claim is held
for one batch's write).

A claim holds the writer's id and the time it was taken. One older than the lease
(``CatalogContext.writer_lease_s``) is a dead writer's and is taken over, compare-and-set on
its old value; a writer still alive after so long could then race the new holder, which the
lease (30 s by default, for a write of one batch) makes remote.

Claims are written outside the change's transaction where the store can (``untracked``): they
expire on their own, so the change's intent need not record them, and a rolled-back change has
released its claims already.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence

import structlog

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Condition, Delete, Put, StorageError
from metastore_server.storage.retrying import LOST, Lost

log = structlog.get_logger(__name__)


class TooSlowToClaim(Exception):
    """Claiming a batch took over half the writer lease (a batch too big for the store)."""

    def __init__(self, count: int, seconds: float, lease: float) -> None:
        super().__init__(
            f"claiming {count} new partitions took {seconds:.1f} s, over half the writer "
            f"lease ({lease:g} s): add fewer partitions per call, or raise --writer-lease"
        )


class Claims:
    """Take and release claims on new partition rows (see the module docstring)."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx

    @contextlib.contextmanager
    def _untracked(self) -> Iterator[None]:
        untracked = self._ctx.capabilities.untracked
        with untracked() if untracked is not None else contextlib.nullcontext():
            yield

    def take(self, keys: Sequence[bytes]) -> list[bytes] | None:
        """Claim the partition rows ``keys`` (in key order, so that two writers claiming
        overlapping sets never hold one each of what the other needs): the keys claimed, or
        None (the claims taken so far released) when another live writer holds one, or when
        claiming took so long (over half the lease) that the first claims could be taken over
        before the rows are written. One round trip per key."""
        taken: list[bytes] = []
        started = time.monotonic()
        try:
            for key in sorted(set(keys)):
                with self._untracked():
                    took = self._take(key)
                if not took:
                    self.release(taken)
                    return None
                taken.append(key)
        except StorageError:
            self.release(taken)
            raise
        if time.monotonic() - started > self._ctx.writer_lease_s / 2:
            self.release(taken)
            raise TooSlowToClaim(len(taken), time.monotonic() - started, self._ctx.writer_lease_s)
        return taken

    def take_waiting(self, keys: Sequence[bytes], wait_s: float) -> list[bytes] | None:
        """``take``, tried again after short random pauses (``retrying.CLAIMS``) while other
        live writers hold one of ``keys``, for up to ``wait_s`` seconds: the keys claimed, or
        None (still held)."""
        tries = 0

        def attempt() -> list[bytes] | Lost:
            nonlocal tries
            tries += 1
            taken = self.take(keys)
            return LOST if taken is None else taken

        answer = retrying.race(retrying.CLAIMS, attempt, within_s=wait_s)
        taken = None if answer is LOST else answer
        if tries > 1:
            log.info("claims_waited", claims=len(keys), attempts=tries - 1,
                     taken=taken is not None)  # fmt: skip
        return taken

    def release(self, keys: Sequence[bytes]) -> None:
        """Give up the claims on ``keys`` (taken by ``take``). Best effort: a claim the store
        fails to remove is taken over later (this process's at once, others' after the lease)."""
        if not keys:
            return
        try:
            with self._untracked():
                self._ctx.store.mutate([Delete(layout.META, layout.claim_key(k)) for k in keys])
        except StorageError as exc:
            log.warning("claims_not_released", claims=len(keys), error=str(exc))

    def _take(self, key: bytes) -> bool:
        store = self._ctx.store
        row_key = layout.claim_key(key)
        held_by = f"{self._ctx.writer} {time.time():.3f}".encode()
        mine = [Put(layout.META, row_key, {layout.CLAIM: held_by})]
        if store.mutate(mine, Condition(layout.META, row_key, layout.CLAIM, None)):
            return True
        row = store.get(layout.META, row_key) or {}
        held = row.get(layout.CLAIM)
        if held is None:  # released meanwhile
            condition = Condition(layout.META, row_key, layout.CLAIM, None)
        elif self._stale(held):  # its writer died: take it over
            condition = Condition(layout.META, row_key, layout.CLAIM, held)
        else:
            return False
        return store.mutate(mine, condition)

    def _stale(self, held: bytes) -> bool:
        """Whether a claim is left over: this process's own (its creations take turns under
        the write lock, so none is in progress), or taken longer than the lease ago."""
        writer, _, began = held.decode("utf-8", "replace").partition(" ")
        if writer == self._ctx.writer:
            return True
        try:
            return float(began) < time.time() - self._ctx.writer_lease_s
        except ValueError:
            return True  # unreadable
