"""What the SQLite backend promises beyond the port contract: file settings, snapshots released,
several stores on one file, the row packing and table naming."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage.embedded import SqliteStore, pack_row, sql_name, unpack_row
from storage.port import Put, TableSpec

T = "t"


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "a" / "b" / "store.db")


@pytest.fixture
def store(path: str):
    opened = SqliteStore(path)
    opened.ensure_tables([TableSpec(T)])
    yield opened
    opened.close()


def checkpoint_busy(path: str) -> int:
    """1 when some reader still holds a snapshot the WAL cannot be truncated past."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        return conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.close()


def test_creates_parent_directory_and_uses_wal_with_full_sync(store: SqliteStore, path: str):
    assert os.path.isfile(path)
    assert store._writer.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._writer.execute("PRAGMA synchronous").fetchone()[0] == 2
    with store._read() as reader:
        assert reader.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_abandoned_scan_releases_its_snapshot(store: SqliteStore, path: str) -> None:
    assert store.mutate([Put(T, b"%03d" % i, {b"c:v": b"x"}) for i in range(100)])
    scan = store.scan(T)
    next(scan)
    store.mutate([Put(T, b"new", {b"c:v": b"y"})])
    assert checkpoint_busy(path) == 1
    del scan
    assert checkpoint_busy(path) == 0
    for _ in range(50):
        partial = store.scan(T, reverse=True)
        next(partial)
        partial.close()
    assert checkpoint_busy(path) == 0
    assert len(store._idle) <= 16


def test_memory_store_is_private_and_removed_on_close() -> None:
    first, second = SqliteStore(":memory:"), SqliteStore(":memory:")
    for one in (first, second):
        one.ensure_tables([TableSpec(T)])
    first.mutate([Put(T, b"k", {b"c:v": b"1"})])
    assert second.get(T, b"k") is None
    directory = first._tmpdir
    assert directory is not None and os.path.isdir(directory)
    first.close()
    second.close()
    assert not os.path.exists(directory)


def test_closed_store_refuses_work_and_closes_twice(store: SqliteStore) -> None:
    store.close()
    store.close()
    with pytest.raises(RuntimeError):
        store.get(T, b"k")
    with pytest.raises(RuntimeError):
        store.mutate([Put(T, b"k", {b"c:v": b"1"})])


def test_two_stores_on_one_file_share_tables_and_counters(store: SqliteStore, path: str):
    other = SqliteStore(path)
    try:
        other.ensure_tables([TableSpec("late")])
        other.mutate([Put("late", b"k", {b"c:v": b"1"})])
        assert store.get("late", b"k") == {b"c:v": b"1"}

        def bump(target: SqliteStore) -> None:
            for _ in range(100):
                target.increment(T, b"ctr", b"c:n")

        threads = [threading.Thread(target=bump, args=(s,)) for s in (store, other) * 3]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.increment(T, b"ctr", b"c:n", 0) == 600
    finally:
        other.close()


def test_bad_arguments_are_precise_errors(store: SqliteStore) -> None:
    with pytest.raises(TypeError):
        store.get(T, "text key")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        store.mutate([Put(T, b"", {b"c:v": b"1"})])
    with pytest.raises(ValueError):
        store.mutate([Put(T, b"k", {b"nocolon": b"1"})])
    with pytest.raises(TypeError):
        store.mutate([Put(T, b"k", {b"c:v": "text"})])  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        store.scan(T, limit=-1)
    store.mutate([Put(T, b"k", {b"c:v": b"short"})])
    with pytest.raises(ValueError):
        store.increment(T, b"k", b"c:v")


rows = st.dictionaries(st.binary(max_size=20), st.binary(max_size=200), max_size=12)


@given(rows)
def test_rows_pack_and_unpack(row: dict[bytes, bytes]) -> None:
    assert unpack_row(pack_row(row)) == row
    wanted = frozenset(list(row)[::2])
    assert unpack_row(pack_row(row), wanted) == {k: v for k, v in row.items() if k in wanted}


@given(st.text(min_size=1), st.text(min_size=1))
def test_sql_names_are_injective_and_plain(first: str, second: str) -> None:
    assert (sql_name(first) == sql_name(second)) == (first == second)
    assert all(c.isascii() and (c.islower() or c.isdigit() or c == "_") for c in sql_name(first))
    assert sql_name(first).lower() == sql_name(first)
