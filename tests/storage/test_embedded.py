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
from metastore_server.storage.embedded import SqliteStore, pack_row, sql_name, unpack_row
from metastore_server.storage.port import Condition, Delete, Put, TableSpec

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


def test_a_refused_insert_inside_a_transaction_leaves_the_rest_of_it(store: SqliteStore) -> None:
    assert store.mutate([Put(T, b"k3", {b"c:o": b"there"})])
    create = [Put(T, b"k%d" % i, {b"c:o": b"new"}) for i in range(6)]
    absent = [Condition(T, op.key, b"c:o", None) for op in create]
    with store.transaction():
        assert store.mutate([Put(T, b"before", {b"c:o": b"1"})])
        assert not store.mutate(create, absent)  # k0..k2 inserted, then undone
        assert store.mutate(create[:3], absent[:3])
    assert [key for key, _ in store.scan(T)] == [b"before", b"k0", b"k1", b"k2", b"k3"]
    assert store.get(T, b"k3") == {b"c:o": b"there"}


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


# -- row heads (storage/embedded_heads.py) ------------------------------------------------------

NARROW = "narrow"
_COLUMNS = (b"c:a", b"c:b")


def _narrow_rows(store: SqliteStore) -> dict[bytes, dict[bytes, bytes]]:
    """Rows of every shape: short, long after the wanted columns, wanted columns cut off by
    the head's end, lacking one or both wanted columns, with many columns."""
    rows: dict[bytes, dict[bytes, bytes]] = {}
    for i in range(60):
        row = {b"c:a": b"a%d" % i, b"c:b": b"b" * (i % 5), b"c:z": b"z" * (i * 13 % 700)}
        if i % 7 == 0:
            row[b"c:a"] = b"long" * (i * 3)  # past the head from some size on
        if i % 11 == 0:
            del row[b"c:a"]
        if i % 13 == 0:
            row = {b"c:z": b"only a later column " * (i % 3)} if i else {b"c:y": b"y"}
        if i % 17 == 0:
            row.update({b"c:%03d" % n: b"x" for n in range(40)})  # a header past the head
        rows[b"k%03d" % i] = row
    store.mutate([Put(NARROW, key, row) for key, row in rows.items()])
    return rows


def _expected(rows: dict[bytes, dict[bytes, bytes]], columns: tuple[bytes, ...]) -> list[tuple]:
    expected = []
    for key in sorted(rows):
        values = tuple(rows[key].get(column) for column in columns)
        if any(value is not None for value in values):
            expected.append((*values, key))
    return expected


def test_narrow_tables_answer_scan_columns_from_heads_as_from_rows(store: SqliteStore) -> None:
    store.ensure_tables([TableSpec(NARROW, ("c",), narrow=True)])
    rows = _narrow_rows(store)
    conn = sqlite3.connect(store._path)
    heads = dict(conn.execute(f"SELECT k, row FROM h{sql_name(NARROW)[1:]}").fetchall())
    conn.close()
    assert set(heads) == set(rows)
    assert any(len(heads[key]) < len(pack_row(row)) for key, row in rows.items())
    for columns in (_COLUMNS, (b"c:b",), (b"c:a", b"c:z")):
        expected = _expected(rows, columns)
        got, read, lacking = store.scan_columns(NARROW, b"", None, columns)
        assert got == expected
        assert read == len(rows)
        assert lacking == sum(1 for values in expected if None in values)
        within = [values for values in expected if b"k010" <= values[-1] < b"k040"]
        assert store.scan_columns(NARROW, b"k010", b"k040", columns, limit=7)[0] == within[:7]
        keyless, _, _ = store.scan_columns(NARROW, b"", None, columns, keys=False)
        assert keyless == [v if None in v else (*v[:-1], None) for v in expected]
        odd = store.scan_columns(NARROW, b"", None, columns, key_filter=lambda k: k[-1] % 2 == 1)
        assert odd[0] == [values for values in expected if values[-1][-1] % 2 == 1]
        with store.transaction():
            assert store.scan_columns(NARROW, b"", None, columns)[0] == expected


def test_heads_follow_every_write_and_come_to_an_existing_store(path: str) -> None:
    first = SqliteStore(path)
    first.ensure_tables([TableSpec(NARROW, ("c",))])  # made before heads existed
    rows = _narrow_rows(first)
    first.close()
    store = SqliteStore(path)
    store.ensure_tables([TableSpec(NARROW, ("c",), narrow=True)])  # heads filled from rows
    assert store.scan_columns(NARROW, b"", None, _COLUMNS)[0] == _expected(rows, _COLUMNS)
    # writes of the store, and of another writer of the file that knows nothing of heads
    store.mutate([Delete(NARROW, b"k001"), Put(NARROW, b"k002", {b"c:a": b"new"})])
    del rows[b"k001"]
    rows[b"k002"][b"c:a"] = b"new"
    conn = sqlite3.connect(path, isolation_level=None)
    table = sql_name(NARROW)
    conn.execute(f"DELETE FROM {table} WHERE k = ?", (b"k003",))
    conn.execute(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)",
                 (b"k004", pack_row({b"c:b": b"theirs"})))  # fmt: skip
    conn.execute(f"UPDATE {table} SET k = ? WHERE k = ?", (b"k999", b"k005"))
    conn.close()
    del rows[b"k003"]
    rows[b"k004"] = {b"c:b": b"theirs"}
    rows[b"k999"] = rows.pop(b"k005")
    assert store.scan_columns(NARROW, b"", None, _COLUMNS)[0] == _expected(rows, _COLUMNS)
    with store.transaction():  # its own writes, seen inside its transaction
        store.mutate([Put(NARROW, b"k000", {b"c:a": b"x" * 500})])
        rows[b"k000"] = {b"c:a": b"x" * 500}
        assert store.scan_columns(NARROW, b"", None, _COLUMNS)[0] == _expected(rows, _COLUMNS)
    store.close()
