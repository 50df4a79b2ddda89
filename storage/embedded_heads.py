"""Row heads on the embedded store: a narrow copy of the first bytes of each row of a port table
whose listings read only the small columns that sort first (``TableSpec.narrow``).

A table row packs its definition (about a kilobyte, most of it in SQLite overflow pages)
behind its id and index column (``storage.layout``). A listing of 200,000 tables that read the
rows themselves would bring every definition in to read a few dozen bytes of each. Beside
such a port table ``t_x`` the store keeps ``h_x (k, row)``: the same keys, each with the first
``HEAD_BYTES`` bytes of the packed row (the header and the leading columns), a few rows a
hundred per page. SQLite triggers on ``t_x`` keep it: every insert, replace or delete of a
row, by any process and any version of the server, changes its head in the same statement,
so the heads never disagree with the rows. A store made before the heads existed gets them
(copied from the rows) when it is opened.

``scan_columns`` reads the heads; a row whose head ends before its wanted columns are told
(a long comment, say) is read whole, in the same snapshot (``row_scan.packed_columns``'
``cut``), and merged back in key order.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Sequence
from operator import itemgetter

#: Bytes of a packed row kept in its head: the header and, for a table row, its id and its
#: type and comment unless the comment is long (about 100 bytes).
HEAD_BYTES = 192
_KEY_OF = itemgetter(-1)


def head_name(sql: str) -> str:
    """The SQLite name of the heads of port table ``sql`` (``t_x``: ``h_x``; injective)."""
    return "h" + sql[1:]


def existing_heads(conn: sqlite3.Connection) -> frozenset[str]:
    """The names of the head tables in the file."""
    found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'h\\_%'"
                         " ESCAPE '\\'").fetchall()  # fmt: skip
    return frozenset(name for (name,) in found)


def ensure_heads(conn: sqlite3.Connection, sql: str) -> None:
    """Create the heads of port table ``sql`` and the triggers that keep them, filling them
    from the rows when they are new (inside the caller's write transaction). Idempotent."""
    head = head_name(sql)
    new = head not in existing_heads(conn)
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {head} (k BLOB PRIMARY KEY, row BLOB NOT NULL) WITHOUT ROWID"
    )
    copy = f"INSERT OR REPLACE INTO {head} VALUES (new.k, substr(new.row, 1, {HEAD_BYTES}))"
    conn.execute(f"CREATE TRIGGER IF NOT EXISTS {head}_i AFTER INSERT ON {sql} BEGIN {copy}; END")
    conn.execute(
        f"CREATE TRIGGER IF NOT EXISTS {head}_u AFTER UPDATE ON {sql} "
        f"BEGIN DELETE FROM {head} WHERE k = old.k; {copy}; END"
    )
    conn.execute(f"CREATE TRIGGER IF NOT EXISTS {head}_d AFTER DELETE ON {sql} "
                 f"BEGIN DELETE FROM {head} WHERE k = old.k; END")  # fmt: skip
    if new:
        conn.execute(f"INSERT OR REPLACE INTO {head} SELECT k, substr(row, 1, {HEAD_BYTES}) "
                     f"FROM {sql}")  # fmt: skip


def whole_rows(
    conn: sqlite3.Connection, sql: str, keys: Sequence[bytes], chunk: int
) -> list[tuple[bytes, bytes]]:
    """(key, packed row) of the rows at ``keys`` (sorted, distinct) that exist, in key order."""
    found: list[tuple[bytes, bytes]] = []
    for first in range(0, len(keys), chunk):
        part = keys[first : first + chunk]
        marks = ",".join("?" * len(part))
        found += conn.execute(f"SELECT k, row FROM {sql} WHERE k IN ({marks})", part).fetchall()
    found.sort()
    return found


def merged(
    rows: list[tuple[bytes | None, ...]], whole: list[tuple[bytes | None, ...]], limit: int
) -> tuple[list[tuple[bytes | None, ...]], int]:
    """The tuples read from heads and those read from whole rows (each in key order, keys
    last) as one list in key order, at most ``limit`` (-1: all); how many of them lack a
    column."""
    out = list(heapq.merge(rows, whole, key=_KEY_OF))
    if limit >= 0:
        del out[limit:]
    return out, sum(1 for values in out if None in values)


def without_keys(rows: list[tuple[bytes | None, ...]]) -> list[tuple[bytes | None, ...]]:
    """``rows`` with the key left only in the tuples that lack a column (``keys=False``)."""
    return [values if None in values else (*values[:-1], None) for values in rows]
