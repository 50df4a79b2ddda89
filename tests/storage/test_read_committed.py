"""Read committed on HBase (``storage.committed_reads``): a reader outside a transaction never
sees a row of a change that has not committed, never misses a row such a change deleted, and
sees a change that commits while it reads whole or not at all; the writer sees its own rows.

Each test holds a change open in one store (a writer: another server process) and reads from
another, as rows land (``raw``) and as readers see them, on the HBase double (whose readers see
each row as it lands, as HBase's do) and, with HBASE_THRIFT set, a real HBase.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from metastore_server.storage.committed_reads import call_scope
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.port import Capabilities, Delete, Put, TableSpec

Backend = Any  # tests/storage/conftest.py Backend

T = "t"
LEASE_S = 5.0
ROWS = {b"k%02d" % n: {b"c:x": b"v%d" % n, b"c:y": b"same"} for n in range(0, 20, 2)}


@pytest.fixture()
def pair(hbase_backend: Backend) -> Iterator[tuple[HBaseStore, HBaseStore]]:
    """A writer's store and a reader's store (two processes) on one HBase, with rows."""
    assert hbase_backend.url is not None
    writer = HBaseStore.from_url(hbase_backend.url, writer_lease_s=LEASE_S)
    reader = HBaseStore.from_url(hbase_backend.url, writer_lease_s=LEASE_S)
    writer.ensure_tables([TableSpec(T)])
    writer.mutate([Put(T, key, dict(row)) for key, row in ROWS.items()])
    try:
        yield writer, reader
    finally:
        writer.close()
        reader.close()


class Held:
    """A change made in a thread of the writer's store and held open until released: then it
    commits, or fails (rolled back)."""

    def __init__(self, store: HBaseStore, change: Callable[[HBaseStore], None]) -> None:
        self._store, self._change = store, change
        self._made, self._go = threading.Event(), threading.Event()
        self._fail = False
        self.seen_own: dict[bytes, Any] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._made.wait(30)

    def _run(self) -> None:
        try:
            with self._store.transaction():
                self._change(self._store)
                self.seen_own = dict(self._store.scan(T))  # its own reads see its rows
                self._made.set()
                self._go.wait(30)
                if self._fail:
                    raise RuntimeError("the change fails")
        except RuntimeError:
            pass

    def commit(self) -> None:
        self._go.set()
        self._thread.join(30)

    def fail(self) -> None:
        self._fail = True
        self.commit()


def _change(store: HBaseStore) -> None:
    """Changes a row, deletes one, makes one, in three mutates."""
    store.mutate([Put(T, b"k04", {b"c:x": b"changed"}), Delete(T, b"k06")])
    store.mutate([Put(T, b"k05", {b"c:x": b"made"})])
    store.mutate([Delete(T, b"k10", [b"c:y"])])


def _after() -> dict[bytes, dict[bytes, bytes]]:
    rows = {key: dict(row) for key, row in ROWS.items()}
    rows[b"k04"][b"c:x"] = b"changed"
    del rows[b"k06"]
    rows[b"k05"] = {b"c:x": b"made"}
    del rows[b"k10"][b"c:y"]
    return rows


def _every_read(store: HBaseStore) -> dict[str, Any]:
    """What each kind of read returns, in every shape."""
    keys = [b"k04", b"k05", b"k06", b"k10", b"k99"]
    return {
        "scan": dict(store.scan(T)),
        "reverse": list(store.scan(T, reverse=True)),
        "limit": list(store.scan(T, limit=4)),
        "reverse limit": list(store.scan(T, reverse=True, limit=6)),
        "batches of 2": list(store.scan(T, batch_size=2)),
        "columns": list(store.scan(T, columns=[b"c:y"])),
        "range": list(store.scan(T, b"k05", b"k07")),
        "key filter": list(store.scan(T, key_filter=lambda k: k != b"k02")),
        "gets": [store.get(T, key) for key in keys],
        "get_many": store.get_many(T, keys),
    }


def test_readers_see_no_uncommitted_row_and_miss_no_uncommitted_delete(pair) -> None:
    writer, reader = pair
    before = _every_read(reader)
    held = Held(writer, _change)
    assert dict(reader.raw.scan(T)) == _after()  # the rows have landed...
    assert _every_read(reader) == before  # ...and no reader sees them
    assert held.seen_own == _after()  # but the writer does
    held.commit()
    assert dict(reader.scan(T)) == _after()
    assert reader.get(T, b"k05") == {b"c:x": b"made"} and reader.get(T, b"k06") is None


def test_a_change_rolled_back_was_never_seen(pair) -> None:
    writer, reader = pair
    before = _every_read(reader)
    held = Held(writer, _change)
    assert _every_read(reader) == before
    held.fail()
    assert _every_read(reader) == before
    assert dict(reader.raw.scan(T)) == {k: dict(v) for k, v in ROWS.items()}


def test_the_limit_counts_committed_rows_only(pair) -> None:
    writer, reader = pair
    held = Held(writer, lambda s: s.mutate([Put(T, b"k%02d" % n, {b"c:x": b"new"})
                                            for n in range(1, 12, 2)]))  # fmt: skip
    assert [k for k, _ in reader.scan(T, limit=5, batch_size=2)] == [
        b"k00", b"k02", b"k04", b"k06", b"k08"]
    assert [k for k, _ in reader.scan(T, reverse=True, limit=3, batch_size=1)] == [
        b"k18", b"k16", b"k14"]
    held.commit()
    assert [k for k, _ in reader.scan(T, limit=3)] == [b"k00", b"k01", b"k02"]


def test_a_change_committing_during_a_scan_is_seen_whole_or_not_at_all(pair) -> None:
    writer, reader = pair
    rows = reader.scan(T, batch_size=2)
    first = [next(rows), next(rows)]  # k00, k02: read before the change began
    with writer.transaction():  # the whole change lands and commits, mid-scan
        writer.mutate([Put(T, b"k00", {b"c:x": b"late"})])
        writer.mutate([Put(T, b"k18", {b"c:x": b"late"}), Put(T, b"k13", {b"c:x": b"late"})])
    rest = dict(rows)
    seen = dict(first) | rest
    assert seen == {k: dict(v) for k, v in ROWS.items()}  # none of it: it began after the read
    assert reader.get(T, b"k18") == {b"c:x": b"late", b"c:y": b"same"}  # a new read sees it


def test_a_change_committed_before_a_read_is_seen_by_it(pair) -> None:
    writer, reader = pair
    with writer.transaction():
        writer.mutate([Put(T, b"k01", {b"c:x": b"mine"})])
    assert reader.get(T, b"k01") == {b"c:x": b"mine"}  # (at once: the caller was answered)
    assert dict(reader.scan(T, b"k01", b"k02")) == {b"k01": {b"c:x": b"mine"}}


def test_a_quiet_read_costs_one_register_read_per_batch(pair, hbase_backend) -> None:
    _, reader = pair
    register = reader.committed.register
    before = register.reads
    reader.get(T, b"k00")
    assert register.reads - before == 2  # before the row and after it
    before = register.reads
    assert len(list(reader.scan(T, batch_size=4))) == len(ROWS)
    assert register.reads - before == 1 + 3  # before the first batch, then after each


def test_a_log_follower_stops_before_a_row_still_to_come(pair) -> None:
    writer, reader = pair
    until_pending = Capabilities.of(reader).scan_until_pending
    assert until_pending is not None
    held = Held(writer, lambda s: s.mutate([Put(T, b"k07", {b"c:x": b"first"})]))
    with writer.transaction():  # a later row, committed first
        writer.mutate([Put(T, b"k08", {b"c:x": b"second"})])
    keys = [k for k, _ in until_pending(T, b"k05", b"k99")]
    assert keys == [b"k06"]  # stops before k07, so it does not pass it by
    assert [k for k, _ in reader.scan(T, b"k05", b"k09")] == [b"k06", b"k08"]
    held.commit()
    assert [k for k, _ in until_pending(T, b"k05", b"k09")] == [b"k06", b"k07", b"k08"]


def test_a_dead_writers_rows_are_never_seen(pair, hbase_backend) -> None:
    writer, reader = pair
    before = _every_read(reader)
    dead = HBaseStore.from_url(hbase_backend.url, writer_lease_s=0.5)
    gone = threading.Event()

    def die() -> None:
        with dead.transaction():
            _change(dead)
            dead.intents.close()  # no more beats: as if killed
            gone.set()
            threading.Event().wait(3600)

    threading.Thread(target=die, daemon=True).start()
    assert gone.wait(30)
    assert _every_read(reader) == before  # while its lease runs
    short = HBaseStore.from_url(hbase_backend.url, writer_lease_s=0.5)
    try:
        threading.Event().wait(0.8)
        assert _every_read(short) == before  # rolled back by this read first
        assert short.intents.recovered == 1
        assert dict(short.raw.scan(T)) == {k: dict(v) for k, v in ROWS.items()}
    finally:
        short.close()


def test_a_calls_reads_share_register_reads_and_see_its_own_change(pair) -> None:
    writer, reader = pair
    register = reader.committed.register
    with call_scope():
        before = register.reads
        for _ in range(5):
            reader.get(T, b"k00")
        assert register.reads - before == 6  # one before the first read, then one after each
        held = Held(writer, lambda s: s.mutate([Put(T, b"k01", {b"c:x": b"other's"})]))
        assert reader.get(T, b"k01") is None  # another's change in flight: not seen
        held.commit()
        reader.get(T, b"k00")  # (a read of the call after the other's commit...)
        assert reader.get(T, b"k01") == {b"c:x": b"other's"}  # (...and the next sees it)
        with reader.transaction():  # the call's own change...
            reader.mutate([Put(T, b"k03", {b"c:x": b"mine"})])
        assert reader.get(T, b"k03") == {b"c:x": b"mine"}  # ...is seen by its next read
