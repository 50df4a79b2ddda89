"""``store.transaction()``: every write of a thread inside lands, or none.

On every backend: a transaction that ends with an exception leaves every row it touched as it
was, one that ends keeps them all, an inner one undoes only its own writes. On HBase (an intent
log, ``storage.intents``): a writer killed mid-change (``kill -9`` of a real process) has its
change rolled back by the next store that reads once the writer lease ran out; a live writer
that outlasts the lease keeps it; a writer whose intent was taken learns it; a commit whose
answer was lost is found out; a row another writer changed meanwhile is left as they left it;
a change cut by a failing HBase is undone by the writer's next call once HBase is back.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest
from metastore_server.storage import intents
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.intent_rows import INLINE_BYTES, INTENTS, STATE, ended_at
from metastore_server.storage.intents import IntentLost
from metastore_server.storage.port import (
    Condition,
    Delete,
    PartialWriteError,
    Put,
    StoragePort,
    TableSpec,
)

Backend = Any  # tests/storage/conftest.py Backend (a conftest is not imported)


T = "t"
LEASE_S = 0.5


class Undo(Exception):
    """Ends a transaction with an exception."""


def _fill(store: StoragePort) -> dict[bytes, dict[bytes, bytes]]:
    store.ensure_tables([TableSpec(T)])
    rows = {
        b"a": {b"c:x": b"1", b"c:y": b"2"},
        b"b": {b"c:x": b"1"},
        b"d": {b"c:x": b"old", b"c:z": b"gone after a replace"},
    }
    for key, columns in rows.items():
        store.mutate([Put(T, key, columns)])
    return rows


def _rows(store: StoragePort) -> dict[bytes, dict[bytes, bytes]]:
    return dict(store.scan(T))


def _change_everything(store: StoragePort) -> None:
    store.mutate([Put(T, b"a", {b"c:x": b"9"}), Delete(T, b"b")])
    store.mutate([Put(T, b"c", {b"c:x": b"new"})])
    store.mutate([Delete(T, b"d"), Put(T, b"d", {b"c:x": b"replaced"})])
    store.mutate([Delete(T, b"a", [b"c:y"])])


def test_a_transaction_that_fails_leaves_every_row_as_it_was(store: StoragePort) -> None:
    before = _fill(store)
    with pytest.raises(Undo), store.transaction():  # type: ignore[attr-defined]
        _change_everything(store)
        assert store.get(T, b"c") == {b"c:x": b"new"}  # its own writes are seen inside
        raise Undo
    assert _rows(store) == before


def test_a_transaction_that_ends_keeps_everything(store: StoragePort) -> None:
    _fill(store)
    with store.transaction():  # type: ignore[attr-defined]
        _change_everything(store)
    assert _rows(store) == {
        b"a": {b"c:x": b"9"},
        b"c": {b"c:x": b"new"},
        b"d": {b"c:x": b"replaced"},
    }


def test_an_inner_transaction_undoes_only_its_own_writes(store: StoragePort) -> None:
    before = _fill(store)
    with store.transaction():  # type: ignore[attr-defined]
        store.mutate([Put(T, b"outer", {b"c:x": b"kept"})])
        with pytest.raises(Undo), store.transaction():  # type: ignore[attr-defined]
            _change_everything(store)
            raise Undo
    assert _rows(store) == {**before, b"outer": {b"c:x": b"kept"}}


def test_a_failed_compare_and_set_inside_wrote_nothing_to_undo(store: StoragePort) -> None:
    before = _fill(store)
    with pytest.raises(Undo), store.transaction():  # type: ignore[attr-defined]
        # The same value the row holds, under a condition that fails: nothing is written, and
        # the rollback must not take the row's value for this write's and delete it.
        assert not store.mutate([Put(T, b"b", {b"c:x": b"1"})], Condition(T, b"a", b"c:x", b"7"))
        raise Undo
    assert _rows(store) == before


# -- HBase: the intent log ---------------------------------------------------------------------


@pytest.fixture()
def hbase(hbase_backend: Backend) -> Iterator[tuple[Backend, HBaseStore]]:
    """The HBase backend and a store on it with a short writer lease."""
    assert hbase_backend.url is not None
    store = HBaseStore.from_url(hbase_backend.url, writer_lease_s=LEASE_S)
    try:
        yield hbase_backend, store
    finally:
        store.close()


def _intents(store: HBaseStore) -> list[bytes]:
    """The intents' rows still in the table (ended ones linger for the lease)."""
    return [key for key, _ in store.raw.scan(INTENTS)]


def _unfinished(store: HBaseStore) -> list[bytes]:
    """The intents neither committed nor rolled back."""
    return [key for key, row in store.raw.scan(INTENTS, columns=[STATE])
            if ended_at(row[STATE]) is None]  # fmt: skip


def _settled(store: HBaseStore) -> None:
    """Wait out the lease, then read once: the read rolls back what dead writers left; then
    once more, for the ended intents to have lingered (for readers) and be deleted."""
    for _ in range(2):
        time.sleep(LEASE_S * 1.5)
        store.get(T, b"a")


def test_a_killed_writers_change_is_rolled_back_by_the_next_reader(
    hbase: tuple[Backend, HBaseStore],
) -> None:
    backend, store = hbase
    _fill(store)
    big = {b"c:x": random.Random(1).randbytes(INLINE_BYTES)}  # before-images in chunk rows
    store.mutate([Put(T, b"big%d" % i, big) for i in range(3)])
    before = _rows(store)
    script = textwrap.dedent(f"""
        import os, signal
        from metastore_server.storage.hbase import HBaseStore
        from metastore_server.storage.port import Delete, Put
        store = HBaseStore.from_url({backend.url!r}, writer_lease_s={LEASE_S})
        with store.transaction():
            store.mutate([Put("t", b"a", {{b"c:x": b"9"}}), Delete("t", b"b")])
            store.mutate([Delete("t", b"big%d" % i) for i in range(3)])
            store.mutate([Delete("t", b"d"), Put("t", b"d", {{b"c:x": b"replaced"}})])
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert finished.returncode == -9, finished.stderr.decode()[-2000:]
    # Half a change has landed, while the lease runs; readers see none of it.
    assert store.raw.get(T, b"d") == {b"c:x": b"replaced"}
    assert store.raw.get(T, b"big0") is None
    assert store.get(T, b"d") == before[b"d"] and store.get(T, b"big0") == before[b"big0"]
    assert _rows(store) == before
    assert len(list(store.raw.scan(INTENTS))) > 1  # the intent, and chunk rows of an entry
    _settled(store)
    assert _rows(store) == before
    assert _intents(store) == []
    assert store.intents.recovered == 1


def test_a_live_writer_that_outlasts_its_lease_keeps_its_change(
    hbase: tuple[Backend, HBaseStore],
) -> None:
    backend, store = hbase
    _fill(store)
    assert backend.url is not None
    with HBaseStore.from_url(backend.url, writer_lease_s=LEASE_S) as writer:
        with writer.transaction():
            writer.mutate([Put(T, b"slow", {b"c:x": b"1"})])
            for _ in range(4):  # three leases: its beats keep it alive
                time.sleep(LEASE_S * 0.75)
                assert store.raw.get(T, b"slow") == {b"c:x": b"1"}  # (not rolled back)
                assert store.get(T, b"slow") is None  # (not committed)
            writer.mutate([Put(T, b"slow2", {b"c:x": b"2"})])
        assert store.intents.recovered == 0
    assert store.get(T, b"slow") == {b"c:x": b"1"}
    assert store.get(T, b"slow2") == {b"c:x": b"2"}


def test_a_writer_whose_intent_was_taken_learns_it(hbase: tuple[Backend, HBaseStore]) -> None:
    backend, store = hbase
    before = _fill(store)
    assert backend.url is not None
    lost = pytest.raises(IntentLost, match="rolled back by another server process")
    writer = HBaseStore.from_url(backend.url, writer_lease_s=LEASE_S)
    with writer, lost, writer.transaction():
        writer.mutate([Put(T, b"a", {b"c:x": b"paused"})])
        writer.intents.close()  # no more beats: as a process paused past its lease
        _settled(store)  # another process takes the intent and rolls it back
        writer.mutate([Put(T, b"b", {b"c:x": b"after"})])
    assert _rows(store) == before
    assert store.intents.recovered == 1


def test_a_commit_whose_answer_was_lost_is_found_out(hbase: tuple[Backend, HBaseStore]) -> None:
    backend, store = hbase
    if backend.double is None:
        pytest.skip("needs the HBase double to lose an answer")
    _fill(store)
    with store.transaction():
        store.mutate([Put(T, b"a", {b"c:x": b"9"})])
        backend.double.drop_connection("checkAndPut", when="after")  # the commit lands, unheard
    assert store.get(T, b"a") == {b"c:x": b"9", b"c:y": b"2"}
    _settled(store)
    assert store.get(T, b"a") == {b"c:x": b"9", b"c:y": b"2"}


def test_a_committed_intent_left_by_a_dead_writer_is_cleaned_up(
    hbase: tuple[Backend, HBaseStore],
) -> None:
    backend, store = hbase
    _fill(store)
    assert backend.url is not None
    writer = HBaseStore.from_url(backend.url, writer_lease_s=LEASE_S)
    writer.intents.close()  # its background clean-up never runs: as if it died after commit
    with writer.transaction():
        writer.mutate([Put(T, b"kept", {b"c:x": b"1"})])
    assert len(_intents(store)) == 1  # committed, not yet deleted
    _settled(store)
    assert _intents(store) == []
    assert store.get(T, b"kept") == {b"c:x": b"1"}
    assert store.intents.recovered == 0  # (nothing rolled back)
    writer.close()


def test_a_rollback_too_big_to_keep_in_memory_reads_its_entries_back(
    hbase: tuple[Backend, HBaseStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, store = hbase
    before = _fill(store)
    monkeypatch.setattr(intents, "MEMORY_BYTES", 1)
    with pytest.raises(Undo), store.transaction():
        _change_everything(store)
        raise Undo
    assert _rows(store) == before
    assert _unfinished(store) == []


def test_a_row_another_writer_changed_meanwhile_is_left_as_they_left_it(
    hbase: tuple[Backend, HBaseStore],
) -> None:
    backend, store = hbase
    _fill(store)
    assert backend.url is not None
    with HBaseStore.from_url(backend.url) as other, pytest.raises(Undo), store.transaction():
        store.mutate([Put(T, b"a", {b"c:x": b"mine"}), Put(T, b"b", {b"c:x": b"mine"})])
        other.mutate([Put(T, b"a", {b"c:x": b"theirs"})])
        raise Undo
    assert store.get(T, b"a") == {b"c:x": b"theirs", b"c:y": b"2"}
    assert store.get(T, b"b") == {b"c:x": b"1"}


def test_a_change_cut_by_failing_hbase_is_undone_once_hbase_is_back(
    hbase: tuple[Backend, HBaseStore],
) -> None:
    backend, store = hbase
    if backend.double is None:
        pytest.skip("needs the HBase double to fail writes")
    before = _fill(store)
    with pytest.raises(PartialWriteError), store.transaction():
        store.mutate([Put(T, b"a", {b"c:x": b"9"})])
        backend.double.fail_writes_after(2)  # the next entry, then one of the two rows
        store.mutate([Put(T, b"b", {b"c:x": b"9"}), Put(T, b"new", {b"c:x": b"9"})])
    # The rollback failed too (HBase still refuses writes): the change stays half done (not
    # seen by readers)...
    assert store.raw.get(T, b"a") == {b"c:x": b"9", b"c:y": b"2"}
    assert store.get(T, b"a") == before[b"a"]
    backend.double.heal()
    time.sleep(0.3)
    assert _rows(store) == before  # ...until HBase is back: the next call finishes it first
    assert _intents(store) != []  # (kept, to be undone once more: a failed write may land late)
    _settled(store)
    assert _rows(store) == before
    assert _intents(store) == []
