"""Rows and tables of the embedded store as SQLite holds them: a row packed into one blob
(``pack_row``), read back whole or for some of its columns (``unpack_row``, and a fast slice of
two leading columns), scanned rows unpacked lazily (``unpacked``); a port table's SQLite name
and families (``StoredTable``), and a write applied to a row (``apply_op``). See
:mod:`storage.embedded`."""

from __future__ import annotations

import functools
import sqlite3
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import structlog
from metastore_server.storage.port import Condition, Delete, Put, Row
from metastore_server.storage.row_scan import packed_row

log = structlog.get_logger(__name__)

ROW_VERSION = 1
ROW_HEADER = struct.Struct(">BI")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def pack_row(row: Mapping[bytes, bytes]) -> bytes:
    """A row as bytes: version, column count, all lengths, then names and values. O(size)."""
    return packed_row(row)


def unpack_row(blob: bytes, wanted: frozenset[bytes] | None = None) -> Row:
    """The row ``pack_row`` packed, keeping only ``wanted`` columns when given. O(size).

    Columns are packed in name order, so with ``wanted`` the walk stops at the last one found.
    """
    version, count = ROW_HEADER.unpack_from(blob)
    if version != ROW_VERSION:
        raise ValueError(f"row format {version} is not supported")
    lengths = _lengths_struct(count).unpack_from(blob, ROW_HEADER.size)
    pos = ROW_HEADER.size + 8 * count
    row: Row = {}
    missing = len(wanted) if wanted is not None else -1
    for i in range(0, 2 * count, 2):
        name_end = pos + lengths[i]
        name = blob[pos:name_end]
        pos = name_end + lengths[i + 1]
        if wanted is None or name in wanted:
            row[name] = blob[name_end:pos]
            missing -= 1
            if missing == 0:
                break  # every wanted column found: skip the rest of the row
    return row


@functools.lru_cache(maxsize=64)
def _lengths_struct(count: int) -> struct.Struct:
    """The struct of a packed row's ``2 * count`` big-endian lengths."""
    return struct.Struct(f">{2 * count}I")


def unpacked(
    pairs: Iterable[tuple[bytes, bytes]],
    limit: int | None,
    wanted: frozenset[bytes] | None,
    key_filter: Callable[[bytes], bool] | None,
) -> Iterator[tuple[bytes, Row]]:
    """The rows of (key, packed row) pairs that pass ``key_filter`` and hold a wanted column,
    up to ``limit``."""
    returned = 0
    leading = _leading_columns(wanted)
    for key, blob in pairs:
        if key_filter is not None and not key_filter(key):
            continue
        row = (leading(blob) if leading is not None else None) or unpack_row(blob, wanted)
        if not row:
            continue
        yield key, row
        returned += 1
        if returned == limit:
            return


_TWO_LEADING = struct.Struct(">BI4I")


@functools.lru_cache(maxsize=64)
def _leading_columns(wanted: frozenset[bytes] | None) -> Callable[[bytes], Row | None] | None:
    """For two wanted columns, a reader of rows whose first two packed columns are exactly
    those (a partition's name and object, say): it slices them without walking the row, and
    answers None for any other row (read by ``unpack_row`` then). None for other wants."""
    if wanted is None or len(wanted) != 2:
        return None
    first, second = sorted(wanted)
    head = _TWO_LEADING

    def read(blob: bytes) -> Row | None:
        if len(blob) < head.size:
            return None
        version, count, first_len, first_size, second_len, second_size = head.unpack_from(blob)
        if version != ROW_VERSION or count < 2:
            return None
        pos = ROW_HEADER.size + 8 * count
        if first_len != len(first) or not blob.startswith(first, pos):
            return None
        pos += first_len
        first_value = blob[pos : pos + first_size]
        pos += first_size
        if second_len != len(second) or not blob.startswith(second, pos):
            return None
        pos += second_len
        return {first: first_value, second: blob[pos : pos + second_size]}

    return read


def sql_name(table: str) -> str:
    """The SQLite name of a port table: injective, case-safe, needs no quoting. O(len)."""
    if not table:
        raise ValueError("a table name must not be empty")
    out = ["t_"]
    for char in table:
        if char in _PLAIN:
            out.append(char)
        elif char == "_":
            out.append("__")
        else:
            out.extend(f"_{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


#: A port table's SQLite table: rows held in the B-tree of their keys (one lookup a row).
_ROWS_IN_KEYS = "(k BLOB PRIMARY KEY, row BLOB NOT NULL) WITHOUT ROWID"
#: That of a port table of large rows: rows apart, found through an index of the keys.
_ROWS_APART = "(k BLOB PRIMARY KEY, row BLOB NOT NULL)"


def ensure_table(conn: sqlite3.Connection, sql: str, large_rows: bool) -> bool:
    """Create the SQLite table ``sql`` of a port table when missing (inside the caller's write
    transaction). Rows are held in the B-tree of their keys, but for a table of large rows
    (``TableSpec.large_rows``): SQLite reads an entry of a key's B-tree whole, overflow pages
    and all, each time a search compares a key with it, so a few events of 700 KB made every
    lookup in their table take 0.4 ms. Such a table keeps its rows apart, found through an
    index of the keys; one made before with its rows in the keys' B-tree is rebuilt so (True
    then)."""
    conn.execute(f"CREATE TABLE IF NOT EXISTS {sql} {_ROWS_APART if large_rows else _ROWS_IN_KEYS}")
    if not large_rows:
        return False
    found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                         (sql,)).fetchone()  # fmt: skip
    if found is None or "WITHOUT ROWID" not in str(found[0]).upper():
        return False
    rebuilt = f"{sql}_r"  # no port table's name (``sql_name`` writes "_" then hex or "_")
    conn.execute("SAVEPOINT rows_apart")
    try:
        conn.execute(f"DROP TABLE IF EXISTS {rebuilt}")
        conn.execute(f"CREATE TABLE {rebuilt} {_ROWS_APART}")
        conn.execute(f"INSERT INTO {rebuilt} (k, row) SELECT k, row FROM {sql} ORDER BY k")
        conn.execute(f"DROP TABLE {sql}")
        conn.execute(f"ALTER TABLE {rebuilt} RENAME TO {sql}")
    except sqlite3.Error as exc:  # a full disk, say: the table stays as it was, only slower
        conn.execute("ROLLBACK TO rows_apart")
        log.warning("storage.rows_not_kept_apart", table=sql, error=f"{type(exc).__name__}: {exc}")
        return False
    finally:
        conn.execute("RELEASE rows_apart")
    return True


@dataclass(frozen=True)
class StoredTable:
    """A port table as stored: its SQLite name and column families, and the SQLite name of
    its rows' heads when it keeps them (``storage.embedded_heads``)."""

    sql: str
    families: frozenset[bytes]
    head: str | None = None

    def check_column(self, column: bytes) -> None:
        """Raise unless ``column`` is ``family:qualifier`` of one of our families. O(len)."""
        if not isinstance(column, bytes):
            raise TypeError(f"column names are bytes, not {type(column).__name__}")
        family, colon, _ = column.partition(b":")
        if not colon or family not in self.families:
            raise ValueError(
                f"column {column!r} is not family:qualifier of families "
                f"{sorted(self.families)} of table {self.sql}"
            )


def check_key(key: bytes) -> None:
    """Raise unless ``key`` is a non-empty bytes row key."""
    if not isinstance(key, bytes):
        raise TypeError(f"row keys are bytes, not {type(key).__name__}")
    if not key:
        raise ValueError("a row key must not be empty")


def apply_op(row: Row, op: Put | Delete, table: StoredTable) -> Row:
    """``row`` after ``op`` (checked against ``table``); ``row`` may be changed in place."""
    if isinstance(op, Put):
        for column, value in op.columns.items():
            table.check_column(column)
            if not isinstance(value, bytes):
                raise TypeError(f"values are bytes, not {type(value).__name__}")
            row[column] = value
        return row
    if op.columns is None:
        return {}
    for column in op.columns:
        table.check_column(column)
        row.pop(column, None)
    return row


def fresh_rows(
    ops: Sequence[Put | Delete], targets: Sequence[StoredTable], conditions: Sequence[Condition]
) -> tuple[str, list[tuple[bytes, bytes]]] | None:
    """For a write that only creates rows, the rows packed: (SQLite table, [(key, packed
    row)]) when every op puts columns on a row of the same table, each row once, and every
    condition asks one of those rows to lack a column. Such a write, should every row be
    absent, leaves each row holding just its put (and every condition held); None for any
    other write. Checks the columns and values as ``apply_op`` does. O(size)."""
    if not ops or len(ops) != len({op.key for op in ops}):
        return None
    table = targets[0]
    keys = set()
    checked: set[tuple[bytes, ...]] = set()
    pairs = []
    for target, op in zip(targets, ops, strict=True):
        if target is not table or not isinstance(op, Put) or not op.columns:
            return None
        columns = op.columns
        names = tuple(columns)
        if names not in checked:
            for column in names:
                table.check_column(column)
            checked.add(names)
        for value in columns.values():
            if not isinstance(value, bytes):
                raise TypeError(f"values are bytes, not {type(value).__name__}")
        keys.add(op.key)
        pairs.append((op.key, pack_row(columns)))
    for check in conditions:
        if check.expected is not None or check.key not in keys or check.table != ops[0].table:
            return None
    return table.sql, pairs


def rows_at(
    conn: sqlite3.Connection, sql: str, keys: Sequence[bytes], chunk: int
) -> Iterator[tuple[bytes, bytes]]:
    """(key, packed row) of the rows of table ``sql`` at ``keys`` (absent ones left out), as
    ``conn`` sees them: one statement per ``chunk`` keys, not one per key."""
    for first in range(0, len(keys), chunk):
        part = keys[first : first + chunk]
        marks = ",".join("?" * len(part))
        yield from conn.execute(f"SELECT k, row FROM {sql} WHERE k IN ({marks})", part)


def inserted(conn: sqlite3.Connection, sql: str, pairs: list[tuple[bytes, bytes]]) -> bool:
    """Insert rows (``fresh_rows``) if every one is absent: False, nothing written, when one
    is there (the caller then merges and checks as for any write)."""
    conn.execute("SAVEPOINT fresh")  # (any other error: the caller's rollback ends it)
    try:
        conn.executemany(f"INSERT INTO {sql} VALUES (?, ?)", pairs)
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK TO fresh")
        conn.execute("RELEASE fresh")
        return False
    conn.execute("RELEASE fresh")
    return True


def conditions_of(condition: Condition | Sequence[Condition] | None) -> list[Condition]:
    """The conditions of a mutate, as a list."""
    if condition is None:
        return []
    if isinstance(condition, Condition):
        return [condition]
    return list(condition)
