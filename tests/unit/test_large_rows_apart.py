"""The embedded store keeps the rows of a table of large rows (``TableSpec.large_rows``: the
metastore's meta table, whose notification events can hold every partition of an add) apart
from the B-tree of its keys: SQLite reads an entry of that B-tree whole, overflow pages and all,
whenever a search compares a key with it. A store made before is rebuilt so when opened, every
row kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from metastore_server.storage import layout
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.embedded_rows import sql_name
from metastore_server.storage.port import Put, TableSpec

BIG = b"x" * 300_000  # far past a page: most of it on overflow pages


def _table_sql(path: Path, table: str) -> str:
    with sqlite3.connect(path) as conn:
        found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                             (sql_name(table),)).fetchone()  # fmt: skip
    assert found is not None
    return str(found[0])


def test_the_meta_table_keeps_its_rows_apart_and_the_others_in_their_keys(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(str(path))
    try:
        store.ensure_tables(layout.TABLE_SPECS)
    finally:
        store.close()
    assert any(spec.large_rows for spec in layout.TABLE_SPECS)
    for spec in layout.TABLE_SPECS:
        apart = "WITHOUT ROWID" not in _table_sql(path, spec.name).upper()
        assert apart == spec.large_rows, spec.name


def test_a_table_made_with_rows_in_its_keys_is_rebuilt_with_every_row(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    rows = {b"a": {b"c:o": b"small"}, b"event\x00\x01": {b"c:o": BIG}, b"z": {b"c:o": b"last"}}
    old = SqliteStore(str(path))  # as a store made before large rows were kept apart
    try:
        old.ensure_tables([TableSpec("m", ("c",))])
        old.mutate([Put("m", key, row) for key, row in rows.items()])
    finally:
        old.close()
    assert "WITHOUT ROWID" in _table_sql(path, "m").upper()

    store = SqliteStore(str(path))
    try:
        store.ensure_tables([TableSpec("m", ("c",), large_rows=True)])
        assert "WITHOUT ROWID" not in _table_sql(path, "m").upper()
        assert dict(store.scan("m")) == rows
        assert [key for key, _row in store.scan("m")] == sorted(rows)
        assert [key for key, _row in store.scan("m", reverse=True)] == sorted(rows, reverse=True)
        assert store.get("m", b"event\x00\x01") == {b"c:o": BIG}
        assert store.last_key("m", b"a", b"y") == b"event\x00\x01"
        store.mutate([Put("m", b"a", {b"c:o": b"changed"})])  # a key stays one row
        assert store.get("m", b"a") == {b"c:o": b"changed"}
        assert len(list(store.scan("m"))) == len(rows)
        store.ensure_tables([TableSpec("m", ("c",), large_rows=True)])  # once rebuilt, kept
        assert dict(store.scan("m"))[b"z"] == {b"c:o": b"last"}
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    assert not any(name.endswith("_r") for name in names)  # the rebuild left nothing behind


def test_a_rebuild_that_fails_leaves_the_table_as_it_was_and_the_store_open(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    old = SqliteStore(str(path))
    try:
        old.ensure_tables([TableSpec("m", ("c",))])
        old.mutate([Put("m", b"k", {b"c:o": BIG})])
    finally:
        old.close()
    with sqlite3.connect(path) as conn:  # in the way of the rebuild (DROP TABLE fails on it)
        conn.execute(f"CREATE VIEW {sql_name('m')}_r AS SELECT 1")
    store = SqliteStore(str(path))
    try:
        store.ensure_tables([TableSpec("m", ("c",), large_rows=True)])
        assert "WITHOUT ROWID" in _table_sql(path, "m").upper()
        assert store.get("m", b"k") == {b"c:o": BIG}
        store.mutate([Put("m", b"k2", {b"c:o": b"v"})])
        assert [key for key, _row in store.scan("m")] == [b"k", b"k2"]
    finally:
        store.close()
