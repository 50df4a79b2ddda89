"""Change logs of the embedded store (``storage/embedded_changes.py``): every write of a narrow
table's rows, by the store or by any other writer of the file, is logged; a reader's position
tells it which keys changed since, and a position that can no longer tell (its entry pruned,
or read inside a transaction that rolled back) says so instead of answering wrongly."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage import embedded_changes
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.embedded_rows import pack_row, sql_name
from metastore_server.storage.port import Delete, Put, TableSpec

NARROW = "narrow"


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(str(tmp_path / "s.db")) as opened:
        opened.ensure_tables([TableSpec(NARROW, ("c",), narrow=True), TableSpec("wide", ("c",))])
        yield opened


def _put(store: SqliteStore, *keys: bytes) -> None:
    store.mutate([Put(NARROW, key, {b"c:a": b"v"}) for key in keys])


def test_keys_changed_since_a_position(store: SqliteStore, tmp_path: Path) -> None:
    assert store.changed_keys(NARROW, None) == (None, None)  # nothing logged yet
    _put(store, b"a", b"b")
    position, keys = store.changed_keys(NARROW, None)
    assert position is not None and keys is None  # no position given: read everything
    assert store.changed_keys(NARROW, position) == (position, [])
    _put(store, b"c", b"a")
    store.mutate([Delete(NARROW, b"b")])
    later, keys = store.changed_keys(NARROW, position)
    assert keys == [b"a", b"b", b"c"] and later != position
    # another writer of the file that knows nothing of the log
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    table = sql_name(NARROW)
    conn.execute(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", (b"d", pack_row({b"c:a": b"x"})))
    conn.execute(f"UPDATE {table} SET k = ? WHERE k = ?", (b"e", b"c"))
    conn.execute(f"DELETE FROM {table} WHERE k = ?", (b"a",))
    conn.close()
    assert store.changed_keys(NARROW, later)[1] == [b"a", b"c", b"d", b"e"]
    assert store.changed_keys("wide", None) == (None, None)  # not narrow: no log


def test_a_pruned_position_tells_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_changes, "KEPT_ENTRIES", 5)  # the triggers made with it
    store = SqliteStore(str(tmp_path / "small.db"))
    store.ensure_tables([TableSpec(NARROW, ("c",), narrow=True)])
    _put(store, b"a")
    position, _ = store.changed_keys(NARROW, None)
    for i in range(embedded_changes.KEPT_ENTRIES - 1):
        _put(store, b"k%d" % (i % 3))
    kept, keys = store.changed_keys(NARROW, position)
    assert keys == [b"k0", b"k1", b"k2"]  # the position's entry is still kept
    _put(store, b"z")  # the log moves past the position
    assert store.changed_keys(NARROW, position)[1] is None
    assert store.changed_keys(NARROW, kept)[1] == [b"z"]
    conn = sqlite3.connect(store._path)
    logged = conn.execute(f"SELECT count(*) FROM g{sql_name(NARROW)[1:]}").fetchone()[0]
    conn.close()
    store.close()
    assert logged == 5


def test_a_position_read_in_a_rolled_back_transaction_tells_nothing(store: SqliteStore) -> None:
    _put(store, b"a")
    committed, _ = store.changed_keys(NARROW, None)
    with pytest.raises(RuntimeError), store.transaction():
        _put(store, b"gone")
        inside, keys = store.changed_keys(NARROW, committed)
        assert keys == [b"gone"]
        raise RuntimeError
    assert store.changed_keys(NARROW, inside)[1] is None  # its entry was rolled back
    _put(store, b"b")  # given the rolled-back entry's number again
    assert store.changed_keys(NARROW, inside)[1] is None
    assert store.changed_keys(NARROW, committed)[1] == [b"b"]
