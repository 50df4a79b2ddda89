"""Recovery of a dead writer's intent (``storage.intents``) on HBase: one pass undoes a change
of hundreds of entries in a few batches (one read and one write each), and two processes
recovering one intent restore its rows once and log no failure, when one of them was paused
past the lease mid-rollback (the other takes over and finishes) or when they race."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.intent_rows import INLINE_BYTES, INTENTS, STATE, IntentRows, ended_at
from metastore_server.storage.port import Delete, Put, TableSpec

Backend = Any  # tests/storage/conftest.py Backend

T = "t"
LEASE_S = 0.5
ROWS = 300
BIG = {b"c:x": random.Random(1).randbytes(INLINE_BYTES)}  # before-image in chunk rows


@pytest.fixture()
def url(hbase_backend: Backend) -> str:
    assert hbase_backend.url is not None
    return str(hbase_backend.url)


def _open(url: str) -> HBaseStore:
    store = HBaseStore.from_url(url, writer_lease_s=LEASE_S)
    store.ensure_tables([TableSpec(T, ("c",))])
    return store


def _rows(store: HBaseStore) -> dict[bytes, dict[bytes, bytes]]:
    return dict(store.scan(T))


def _landed(store: HBaseStore) -> dict[bytes, dict[bytes, bytes]]:
    """The rows as they are, uncommitted changes included (readers see ``_rows``)."""
    return dict(store.raw.scan(T))


def _unfinished(store: HBaseStore) -> list[bytes]:
    """The intents neither committed nor rolled back (ended ones linger for the lease)."""
    return [key for key, row in store.raw.scan(INTENTS, columns=[STATE])
            if ended_at(row[STATE]) is None]  # fmt: skip


def _fill(store: HBaseStore) -> dict[bytes, dict[bytes, bytes]]:
    store.mutate([Put(T, b"p%03d" % n, {b"c:x": b"old"}) for n in range(ROWS)])
    store.mutate([Put(T, b"table", {b"c:n": b"0"})])
    store.mutate([Put(T, b"big%d" % n, BIG) for n in range(3)])
    return _rows(store)


def _long_change(store: HBaseStore) -> None:
    """An entry with chunk rows, then one entry a row (as an alter of many partitions), the
    table's row rewritten every 50 rows."""
    store.mutate([Delete(T, b"big%d" % n) for n in range(3)])
    for n in range(ROWS):
        store.mutate([Put(T, b"p%03d" % n, {b"c:x": b"new"})])
        if n % 50 == 49:
            store.mutate([Put(T, b"table", {b"c:n": b"%d" % n})])


class _Ends(Exception):
    """Ends the dead writer's transaction with an exception (its own rollback)."""


class DeadWriter:
    """Makes ``_long_change`` in a transaction whose writer then stops beating and waits (as
    a process killed, or paused, before its commit); once woken, it fails: it rolls back."""

    def __init__(self, url: str) -> None:
        self.store = _open(url)
        self._woken, self._made = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._work, daemon=True)

    def _work(self) -> None:
        with contextlib.suppress(_Ends), self.store.transaction():
            _long_change(self.store)
            self.store.intents.close()  # no more beats
            self._made.set()
            self._woken.wait()
            raise _Ends

    def __call__(self) -> None:
        """Start; return once the change is made."""
        self._thread.start()
        assert self._made.wait(60)

    def wake(self) -> None:
        """Let it go on: it fails, and rolls back what is still its own."""
        self._woken.set()
        self._thread.join(60)


@pytest.fixture()
def dead_writer(url: str) -> Iterator[DeadWriter]:
    writer = DeadWriter(url)
    yield writer
    writer.wake()
    writer.store.close()


def _counting_batches(store: HBaseStore) -> list[int]:
    """The sizes (rows) of the undo batches the store's intent log sends from now on."""
    sizes: list[int] = []
    rows: IntentRows = store.intents.rows
    undo = rows.undo

    def counted(images: Any) -> None:
        sizes.append(len(images))
        undo(images)

    rows.undo = counted  # type: ignore[method-assign]
    return sizes


def test_one_pass_undoes_a_long_change_in_a_few_batches(
    url: str, dead_writer: DeadWriter
) -> None:
    with _open(url) as store:
        before = _fill(store)
        dead_writer()
        batches = _counting_batches(store)
        assert _landed(store) != before  # the change, half made...
        assert _rows(store) == before  # ...and not seen by readers
        time.sleep(LEASE_S * 1.05)
        started = time.monotonic()
        store.get(T, b"table")  # the next call after the lease recovers first
        took = time.monotonic() - started
        print(f"{ROWS + 7} entries undone in {len(batches)} batches ({batches}), "
              f"{store.intents.sweeps} recovery passes, {took / LEASE_S:.2f} leases")  # fmt: skip
        assert _rows(store) == before
        assert _unfinished(store) == []
        assert store.intents.recovered == 1
        # Batches break only where a row comes again (the table's row, six times).
        assert len(batches) <= 8 and sum(batches) == ROWS + 9


def _pause_first_batch(store: HBaseStore) -> tuple[threading.Event, threading.Event]:
    """The store's first undo batch waits (a process paused): (paused, resume)."""
    paused, resume = threading.Event(), threading.Event()
    rows: IntentRows = store.intents.rows
    undo = rows.undo

    def pausing(images: Any) -> None:
        if not paused.is_set():
            paused.set()
            assert resume.wait(60)
        undo(images)

    rows.undo = pausing  # type: ignore[method-assign]
    return paused, resume


def test_a_recoverer_paused_past_the_lease_is_taken_over_without_a_failure(
    url: str, dead_writer: DeadWriter
) -> None:
    with _open(url) as first, _open(url) as second:
        before = _fill(first)
        dead_writer()
        paused, resume = _pause_first_batch(first)
        time.sleep(LEASE_S * 1.05)
        with structlog.testing.capture_logs() as logs:
            slow = threading.Thread(target=first.intents.maybe_recover)
            slow.start()
            assert paused.wait(60)
            time.sleep(LEASE_S * 1.2)  # its undo state, never rewritten meanwhile, expires
            second.intents.maybe_recover()  # takes the intent over and finishes it
            assert second.intents.recovered == 1
            assert _rows(second) == before
            resume.set()
            slow.join(60)
        events = [entry["event"] for entry in logs]
        print(events)
        assert "storage.intent_recovery_failed" not in events
        assert "storage.intent_recovered_elsewhere" in events
        assert first.intents.recovered == 0
        assert _rows(first) == before
        assert _unfinished(first) == []


def test_two_recoverers_racing_restore_the_rows_once(
    url: str, dead_writer: DeadWriter
) -> None:
    with _open(url) as first, _open(url) as second:
        before = _fill(first)
        dead_writer()
        time.sleep(LEASE_S * 1.05)
        start = threading.Barrier(2)

        def recover(store: HBaseStore) -> None:
            start.wait()
            store.intents.maybe_recover()

        with structlog.testing.capture_logs() as logs:
            racers = [threading.Thread(target=recover, args=(s,)) for s in (first, second)]
            for racer in racers:
                racer.start()
            for racer in racers:
                racer.join(60)
        events = [entry["event"] for entry in logs]
        assert "storage.intent_recovery_failed" not in events
        assert events.count("storage.intent_rolled_back") == 1
        assert first.intents.recovered + second.intents.recovered == 1
        assert _rows(first) == before
        assert _unfinished(first) == []


def test_a_slow_writer_failing_while_a_recoverer_works_leaves_it_to_the_recoverer(
    url: str, dead_writer: DeadWriter
) -> None:
    with _open(url) as store:
        before = _fill(store)
        dead_writer()
        paused, resume = _pause_first_batch(store)
        time.sleep(LEASE_S * 1.05)
        with structlog.testing.capture_logs() as logs:
            recoverer = threading.Thread(target=store.intents.maybe_recover)
            recoverer.start()
            assert paused.wait(60)  # the recoverer holds the intent, mid-rollback...
            dead_writer.wake()  # ...when its writer wakes, fails and would roll back itself
            resume.set()
            recoverer.join(60)
        events = [entry["event"] for entry in logs]
        assert "storage.intent_recovery_failed" not in events
        assert events.count("storage.intent_rolled_back") == 1
        assert store.intents.recovered == 1
        assert _rows(store) == before
        assert _unfinished(store) == []
