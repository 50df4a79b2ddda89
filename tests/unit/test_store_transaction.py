"""The embedded store's transaction() and the catalog's WriteLock built on it: the writes of
one thread commit together or not at all, its own reads see them, other threads see nothing
until the commit, and what waits for the commit (deleting dropped data) runs only after it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.port import Condition, Delete, Put, TableSpec

from metastore_server.catalog.core.context import WriteLock

T = "t"
C = b"f:c"


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(str(tmp_path / "s.db")) as opened:
        opened.ensure_tables([TableSpec(T, ("f",))])
        yield opened


def _put(store: SqliteStore, key: bytes, value: bytes = b"v") -> None:
    store.mutate([Put(T, key, {C: value})])


def _keys(store: SqliteStore) -> list[bytes]:
    return [key for key, _ in store.scan(T)]


class Boom(Exception):
    pass


def test_writes_commit_together_or_not_at_all(store: SqliteStore) -> None:
    with store.transaction():
        _put(store, b"a")
        _put(store, b"b")
    assert _keys(store) == [b"a", b"b"]
    with pytest.raises(Boom), store.transaction():
        _put(store, b"c")
        store.increment(T, b"n", b"f:n")
        store.mutate([Delete(T, b"a")])
        raise Boom
    assert _keys(store) == [b"a", b"b"]


def test_own_reads_see_own_writes_and_others_see_nothing_before_the_commit(
    store: SqliteStore,
) -> None:
    seen_by_other: list[object] = []
    with store.transaction():
        _put(store, b"a", b"mine")
        assert store.get(T, b"a") == {C: b"mine"}
        assert store.get_many(T, [b"a", b"z"]) == [(b"a", {C: b"mine"})]
        assert store.change_token() is None  # nothing read here may be cached
        other = threading.Thread(target=lambda: seen_by_other.append(store.get(T, b"a")))
        other.start()
        other.join()
    assert seen_by_other == [None]
    assert store.get(T, b"a") == {C: b"mine"}
    assert store.change_token() is not None


def test_a_failed_mutate_inside_keeps_the_rest(store: SqliteStore) -> None:
    with store.transaction():
        _put(store, b"a")
        with pytest.raises(ValueError):  # an invalid op: nothing of that mutate is written
            store.mutate([Put(T, b"b", {C: b"v"}), Put(T, b"c", {b"nofamily:c": b"v"})])
        assert not store.mutate([Put(T, b"d", {C: b"v"})], Condition(T, b"a", C, None))
        with pytest.raises(Boom), store.transaction():  # an inner one undoes only its own
            _put(store, b"e")
            raise Boom
    assert _keys(store) == [b"a"]


def test_a_scan_may_be_written_under_while_it_is_read(store: SqliteStore) -> None:
    for n in range(2500):
        _put(store, b"k%05d" % n)
    with store.transaction():
        seen = 0
        for key, _row in store.scan(T, b"k", b"l"):
            store.mutate([Delete(T, key), Put(T, b"z" + key, {C: b"moved"})])
            seen += 1
        backwards = [key for key, _ in store.scan(T, b"z", reverse=True, limit=3)]
    assert seen == 2500
    assert backwards == [b"zk02499", b"zk02498", b"zk02497"]
    assert len(_keys(store)) == 2500 and _keys(store)[0] == b"zk00000"


def test_other_threads_writes_wait_for_the_commit(store: SqliteStore) -> None:
    order: list[str] = []
    started = threading.Event()

    def writer() -> None:
        started.set()
        _put(store, b"other")
        order.append("other")

    with store.transaction():
        _put(store, b"mine")
        thread = threading.Thread(target=writer)
        thread.start()
        started.wait()
        thread.join(0.3)
        order.append("mine")
    thread.join()
    assert order == ["mine", "other"]
    assert _keys(store) == [b"mine", b"other"]


def test_write_lock_runs_after_commit_actions_only_once_committed(store: SqliteStore) -> None:
    lock = WriteLock(store)
    done: list[str] = []
    forgotten: list[str] = []
    lock.on_rollback.append(lambda: forgotten.append("memory"))
    with lock:
        _put(store, b"a")
        with lock:  # a nested holder's actions wait for the outermost one
            lock.after_commit(lambda: done.append(f"delete, seeing {_keys(store)}"),
                              undo=lambda: done.append("never"))  # fmt: skip
        assert done == []
    assert done == ["delete, seeing [b'a']"]
    assert forgotten == []
    with pytest.raises(Boom), lock:
        _put(store, b"b")
        lock.after_commit(lambda: done.append("not this"), undo=lambda: done.append("undone"))
        raise Boom
    assert done[-1] == "undone"
    assert forgotten == ["memory"]
    assert _keys(store) == [b"a"]
    lock.after_commit(lambda: done.append("at once"))  # not held: runs now
    assert done[-1] == "at once"


def test_a_limited_scan_inside_reads_no_more_pages_than_it_needs(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest of 3000 rows, inside a transaction, is one row read (the notification log
    asks this on every change; it used to read a page of 1000 rows each time)."""
    store.mutate([Put(T, b"k%05d" % i, {C: b"v"}) for i in range(3000)])
    asked: list[int | None] = []
    select = SqliteStore._select

    def counting(sql: str, start: bytes, stop: bytes | None, reverse: bool,
                 limit: int | None, *rest: object) -> tuple[str, list[object]]:  # fmt: skip
        asked.append(limit)
        return select(sql, start, stop, reverse, limit, *rest)

    monkeypatch.setattr(SqliteStore, "_select", staticmethod(counting))
    with store.transaction():
        _put(store, b"k99999")
        newest = list(store.scan(T, reverse=True, limit=1, columns=[C]))
        first_two = list(store.scan(T, limit=2))
    assert [key for key, _ in newest] == [b"k99999"]
    assert [key for key, _ in first_two] == [b"k00000", b"k00001"]
    assert asked == [1, 2]
