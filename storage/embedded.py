"""The embedded backend: the storage port on SQLite (standard library), durable with zero setup.

File layout: one SQLite table per port table, ``(k BLOB PRIMARY KEY, row BLOB) WITHOUT ROWID``,
so rows live in the primary-key B-tree ordered by memcmp of the key, shorter first on a tie:
unsigned byte order, the port's order; a table of large rows keeps them apart from that B-tree
(``embedded_rows.ensure_table``). ``row`` holds the whole row packed by ``pack_row`` (one
B-tree lookup per row, no per-column rows). The table ``port_tables`` records each port
table's SQL name and column families. A port table whose listings read only its rows' first
columns (``TableSpec.narrow``) also has their heads kept beside it (``storage.embedded_heads``),
which ``scan_columns`` reads.

Durability: WAL journal with ``synchronous=FULL``: a transaction is on disk before ``mutate``
or ``increment`` returns, so nothing acknowledged is lost on a crash or power cut. The files
are the server's user's only (``storage.embedded_files``: the store holds keys).

Concurrency: writes go through one connection under a lock, each in ``BEGIN IMMEDIATE`` (which
also orders them against other processes, waiting up to the busy timeout). ``transaction()``
makes every write of one thread inside it commit together at its end, or none when it ends with
an exception: the catalog opens one around each change of metadata, so that a call answering an
error leaves nothing behind; reads of that thread inside it see its own writes. ``writers_lock``
serialises longer sequences of writes among the processes sharing the file (an exclusive
``flock`` on ``<file>-writers.lock``). Reads use pooled
connections of their own; WAL lets them run beside the writer without blocking it. Every read
sees one snapshot: a scan is one SELECT stepped lazily, ``get_many`` one read transaction.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sqlite3
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import ClassVar

import structlog
from metastore_server.storage import (
    embedded_changes,
    embedded_files,
    embedded_heads,
    port,
    telemetry,
)
from metastore_server.storage.embedded_changes import Position
from metastore_server.storage.embedded_rows import (
    StoredTable,
    apply_op,
    check_key,
    conditions_of,
    ensure_table,
    fresh_rows,
    inserted,
    pack_row,
    rows_at,
    sql_name,
    unpack_row,
    unpacked,
)
from metastore_server.storage.port import Condition, Delete, Put, Row, TableSpec
from metastore_server.storage.row_scan import packed_columns

log = structlog.get_logger(__name__)

_BUSY_TIMEOUT_S = 30.0
_MAX_IDLE_READERS = 16
_IN_CHUNK = 500
#: Rows a scan reads at once inside a transaction of its own thread (see ``_paged``).
_PAGE_ROWS = 1000
_META = "port_tables"

_COUNTER = struct.Struct(">q")


class SqliteStore:
    """The storage port on one SQLite file (``":memory:"``: a private temporary file)."""

    atomic_batches: ClassVar[bool] = True
    snapshot_scans: ClassVar[bool] = True
    filters_scans: ClassVar[bool] = False
    offers: ClassVar[frozenset[str]] = frozenset(
        {"change_token", "changed_keys", "count_range", "last_key", "scan_columns",
         "transaction", "writers_lock"}
    )  # fmt: skip

    def __init__(self, path: str) -> None:
        self._tmpdir: str | None = None
        if path == ":memory:":
            self._tmpdir = tempfile.mkdtemp(prefix="metastore-store-")
            path = os.path.join(self._tmpdir, "store.db")
        embedded_files.prepare(path)  # 0600 (it holds keys), its new directories 0700
        self._path = path
        self._write_lock = threading.RLock()
        self._tx_owner: int | None = None  # the thread whose transaction() is open
        self._savepoints = 0
        self._writers_file = open(path + "-writers.lock", "a+b",  # noqa: SIM115 - kept open
                                  opener=embedded_files.private_opener)  # fmt: skip
        self._pool_lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._closed = False
        self._writer = self._connect()
        self._probe = self._connect()
        self._probe_lock = threading.Lock()
        mode = self._writer.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise RuntimeError(f"SQLite refused WAL mode for {path} (got {mode})")
        with self._write() as conn:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {_META} "
                         "(name TEXT PRIMARY KEY, sql TEXT NOT NULL, families TEXT NOT NULL)")
        self._tables = self._load_tables()
        log.info("storage.opened", backend="sqlite", path=path, tables=len(self._tables))

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- connections ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """A new connection: autocommit (we issue BEGIN), FULL sync, busy timeout."""
        conn = sqlite3.connect(self._path, timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    def change_token(self) -> int | None:
        """A number that changes whenever anyone (this process or another) commits to the
        file: SQLite's data_version as seen by a connection that never writes; None inside
        this thread's open transaction (what it reads there may yet be rolled back). O(1)."""
        if self._tx_owner == threading.get_ident():
            return None
        with self._probe_lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            return int(self._probe.execute("PRAGMA data_version").fetchone()[0])

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write this thread makes inside commits at the end, together, or none when it
        ends with an exception (then nothing of it was ever visible). Reentrant: an inner one
        that ends with an exception undoes only its own writes. Other threads' writes wait for
        the end; their reads see the store as it was before."""
        with self._write():
            yield

    def _in_transaction(self) -> bool:
        return self._tx_owner == threading.get_ident()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The writer connection inside BEGIN IMMEDIATE; commits on success, else rolls back.
        Inside this thread's open transaction: a savepoint of it, released or rolled back."""
        with self._write_lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            conn = self._writer
            if self._in_transaction():
                self._savepoints += 1
                name = f"w{self._savepoints}"
                conn.execute(f"SAVEPOINT {name}")
                try:
                    yield conn
                except BaseException:
                    conn.execute(f"ROLLBACK TO {name}")
                    raise
                finally:
                    conn.execute(f"RELEASE {name}")
                    self._savepoints -= 1
                return
            conn.execute("BEGIN IMMEDIATE")
            self._tx_owner = threading.get_ident()
            try:
                yield conn
                started = time.perf_counter()
                conn.execute("COMMIT")
                telemetry.store_operation("commit", time.perf_counter() - started)
            finally:
                self._tx_owner = None
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A pooled reader connection, returned (or closed) afterwards; inside this thread's
        open transaction, the writer's (which sees its writes)."""
        if self._in_transaction():
            with self._write_lock:
                yield self._writer
            return
        with self._pool_lock:
            if self._closed:
                raise RuntimeError("the store is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            with self._pool_lock:
                keep = not self._closed and len(self._idle) < _MAX_IDLE_READERS
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    # -- tables -----------------------------------------------------------------------------

    def _load_tables(self) -> dict[str, StoredTable]:
        """Every port table recorded in the file. O(tables)."""
        with self._read() as conn:
            found = conn.execute(f"SELECT name, sql, families FROM {_META}").fetchall()
            heads = embedded_heads.existing_heads(conn)
        tables = {}
        for name, sql, families in found:
            head = embedded_heads.head_name(sql)
            tables[name] = StoredTable(sql, frozenset(f.encode() for f in json.loads(families)),
                                  head if head in heads else None)  # fmt: skip
        return tables

    def _table(self, name: str) -> StoredTable:
        """The port table ``name`` (re-reading the file once when another store created it)."""
        table = self._tables.get(name)
        if table is None:
            self._tables = self._load_tables()
            table = self._tables.get(name)
        if table is None:
            raise KeyError(f"no table {name!r}; create it with ensure_tables")
        return table

    def ensure_tables(self, specs: Iterable[TableSpec]) -> None:
        """Create missing tables and add missing families (idempotent). O(specs)."""
        with self._write() as conn:
            for spec in specs:
                for family in spec.families:
                    if not family or ":" in family:
                        raise ValueError(f"bad column family {family!r} for table {spec.name}")
                table = sql_name(spec.name)
                found = conn.execute(f"SELECT families FROM {_META} WHERE name = ?",
                                     (spec.name,)).fetchone()
                families = set(spec.families) | set(json.loads(found[0]) if found else ())
                if ensure_table(conn, table, spec.large_rows):
                    log.info("storage.rows_kept_apart", table=spec.name, path=self._path)
                conn.execute(f"INSERT OR REPLACE INTO {_META} VALUES (?, ?, ?)",
                             (spec.name, table, json.dumps(sorted(families))))
                if spec.narrow:
                    embedded_heads.ensure_heads(conn, table)
                    embedded_changes.ensure_log(conn, table)
        self._tables = self._load_tables()

    # -- reads ------------------------------------------------------------------------------

    def changed_keys(
        self, table: str, since: Position | None
    ) -> tuple[Position | None, list[bytes] | None]:
        """An optional capability (``storage.port.ChangedKeys``): the change log's position and
        the keys of the rows of a narrow table changed since ``since`` (``embedded_changes``);
        None for the keys when the log cannot tell."""
        spec = self._table(table)
        if spec.head is None:  # not narrow: no log
            return None, None
        with self._read() as conn:
            return embedded_changes.changed_keys(conn, embedded_changes.log_name(spec.sql), since)

    @telemetry.sampled("get")
    def get(self, table: str, key: bytes) -> Row | None:
        """The row at ``key``, or None. O(log n)."""
        sql = self._table(table).sql
        check_key(key)
        with self._read() as conn:
            found = conn.execute(f"SELECT row FROM {sql} WHERE k = ?", (key,)).fetchall()
        return unpack_row(found[0][0]) if found else None

    @telemetry.sampled("get_many")
    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """The rows that exist among ``keys``, in the order of ``keys`` (a key listed twice
        comes twice), read in one snapshot. O(k log n)."""
        sql = self._table(table).sql
        for key in keys:
            check_key(key)
        unique = list(dict.fromkeys(keys))
        found: dict[bytes, bytes] = {}
        with self._read() as conn:
            own = conn.in_transaction  # this thread's open transaction: already one snapshot
            if not own:
                conn.execute("BEGIN")
            found.update(rows_at(conn, sql, unique, _IN_CHUNK))
            if not own:
                conn.execute("COMMIT")
        return [(key, unpack_row(found[key])) for key in keys if key in found]

    def scan(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
        columns: Sequence[bytes] | None = None,
        filter: bytes | None = None,
        batch_size: int | None = None,
        key_filter: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[bytes, Row]]:
        """Rows with ``start <= key < stop`` in key order (see the port). Arguments are
        checked now; rows are read lazily from one snapshot. ``filter`` and ``batch_size`` are
        accepted and ignored (every row of the range is a superset of the filter's rows); a row
        whose key fails ``key_filter`` is never unpacked. O(log n + rows in the range)."""
        spec = self._table(table)
        port.check_scan_arguments(start, stop, limit, filter, batch_size)
        wanted = None
        if columns is not None:
            for column in columns:
                spec.check_column(column)
            wanted = frozenset(columns)
        sql_limit = limit if wanted is None and key_filter is None else None
        return self._rows(spec.sql, start, stop, reverse, sql_limit, limit, wanted, key_filter)

    def count_range(
        self, table: str, start: bytes = b"", stop: bytes | None = None, limit: int | None = None
    ) -> int:
        """An optional capability (``storage.port.CountRange``): how many rows have ``start <=
        key < stop`` (counting stops at ``limit``), counted by SQLite without reading them out.
        O(log n + rows counted), a fraction of a scan's cost a row."""
        spec = self._table(table)
        if limit is not None and limit < 0:
            raise ValueError("a count limit must not be negative")
        query = f"SELECT 1 FROM {spec.sql} WHERE k >= ?"
        params: list[object] = [start]
        if stop is not None:
            query += " AND k < ?"
            params.append(stop)
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        with self._read() as conn:
            return int(conn.execute(f"SELECT count(*) FROM ({query})", params).fetchone()[0])

    def last_key(self, table: str, start: bytes = b"", stop: bytes | None = None) -> bytes | None:
        """An optional capability (``storage.port.LastKey``): the highest key of the range,
        read from the key alone (the row, however large, is not read). O(log n)."""
        spec = self._table(table)
        query = f"SELECT k FROM {spec.sql} WHERE k >= ?" + ("" if stop is None else " AND k < ?")
        params = [start] if stop is None else [start, stop]
        with self._read() as conn:
            found = conn.execute(query + " ORDER BY k DESC LIMIT 1", params).fetchall()
        return found[0][0] if found else None

    def scan_columns(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes | None = None,
        columns: Sequence[bytes] = (),
        *,
        limit: int | None = None,
        key_filter: Callable[[bytes], bool] | None = None,
        keys: bool = True,
        needles: Sequence[Sequence[bytes]] = (),
    ) -> tuple[list[tuple[bytes | None, ...]], int, int]:
        """An optional capability (``storage.port.ScanColumns``): the rows ``scan`` would
        give for these arguments, read in one compiled loop (``storage.row_scan.packed_columns``),
        as a list of tuples ``(value of each column..., key)`` (None for a column the row
        lacks); how many rows of the range were read; and how many of the tuples lack a column
        (``keys=False``: the key only in those, None in the others)."""
        spec = self._table(table)
        if not isinstance(start, bytes) or not isinstance(stop, bytes | None):
            raise TypeError("scan bounds are bytes")
        if not columns:
            raise ValueError("scan_columns needs at least one column")
        for column in columns:
            spec.check_column(column)
        if limit is not None and limit < 0:
            raise ValueError("a scan limit must not be negative")
        if limit == 0:
            return [], 0, 0
        most = -1 if limit is None else limit
        if spec.head is not None:
            return self._head_columns(spec, start, stop, columns, key_filter, most, keys, needles)
        if self._in_transaction():
            pairs = self._paged(spec.sql, start, stop, False, needles=needles)
            return packed_columns(pairs, columns, key_filter, most, keys)
        query, params = self._select(spec.sql, start, stop, False, None, needles)
        with self._read() as conn:
            cursor = conn.execute(query, params)
            try:
                return packed_columns(cursor, columns, key_filter, most, keys)
            finally:
                cursor.close()

    def _head_columns(
        self, spec: StoredTable, start: bytes, stop: bytes | None, columns: Sequence[bytes],
        key_filter: Callable[[bytes], bool] | None, most: int, keys: bool,
        needles: Sequence[Sequence[bytes]],
    ) -> tuple[list[tuple[bytes | None, ...]], int, int]:
        """``scan_columns`` read from the rows' heads (``storage.embedded_heads``); the rows
        whose heads end before their wanted columns are read whole, in the same snapshot."""
        assert spec.head is not None
        cut: list[bytes] = []
        with self._read() as conn:
            own = conn.in_transaction  # this thread's open transaction: already one snapshot
            if own:
                pairs: Iterable[tuple[bytes, bytes]] = self._paged(
                    spec.head, start, stop, False, needles=needles
                )
            else:
                conn.execute("BEGIN")
                query, params = self._select(spec.head, start, stop, False, None, needles)
                pairs = conn.execute(query, params)
            try:
                rows, read, lacking = packed_columns(pairs, columns, key_filter, most, True, cut)
                if cut:
                    whole = embedded_heads.whole_rows(conn, spec.sql, cut, _IN_CHUNK)
            finally:
                if not own:
                    conn.execute("COMMIT")
        if cut:
            extra, _read, _lacking = packed_columns(whole, columns)
            rows, lacking = embedded_heads.merged(rows, extra, most)
        return (rows if keys else embedded_heads.without_keys(rows)), read, lacking

    @staticmethod
    def _select(sql: str, start: bytes, stop: bytes | None, reverse: bool,
                limit: int | None,
                needles: Sequence[Sequence[bytes]] = ()) -> tuple[str, list[object]]:
        query = f"SELECT k, row FROM {sql} WHERE k >= ?"
        params: list[object] = [start]
        if stop is not None:
            query += " AND k < ?"
            params.append(stop)
        for group in needles:
            if not group:
                raise ValueError("a needle group must hold at least one string")
            for needle in group:
                if not isinstance(needle, bytes) or not needle:
                    raise TypeError("needles are non-empty bytes")
            query += " AND (" + " OR ".join(["instr(k, ?) > 0"] * len(group)) + ")"
            params.extend(group)
        query += " ORDER BY k DESC" if reverse else " ORDER BY k"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        return query, params

    def _rows(self, sql: str, start: bytes, stop: bytes | None, reverse: bool,
              sql_limit: int | None, limit: int | None, wanted: frozenset[bytes] | None,
              key_filter: Callable[[bytes], bool] | None) -> Iterator[tuple[bytes, Row]]:
        """Step the scan lazily; the connection goes back when done, closed or collected."""
        if limit == 0:
            return
        if self._in_transaction():
            pairs = self._paged(sql, start, stop, reverse, limit)
            yield from unpacked(pairs, limit, wanted, key_filter)
            return
        query, params = self._select(sql, start, stop, reverse, sql_limit)
        with self._read() as conn:
            cursor = conn.execute(query, params)
            try:
                yield from unpacked(cursor, limit, wanted, key_filter)
            finally:
                cursor.close()

    def _paged(self, sql: str, start: bytes, stop: bytes | None, reverse: bool,
               limit: int | None = None,
               needles: Sequence[Sequence[bytes]] = ()) -> Iterator[tuple[bytes, bytes]]:
        """The scan inside this thread's transaction: pages each read whole, so that the
        thread may write between them (it then sees its own writes from the next page on).
        A scan that wants ``limit`` rows starts with a page of that many (rows may still be
        passed over by a key filter or for lacking a column: the pages then grow)."""
        size = _PAGE_ROWS if limit is None else max(1, min(limit, _PAGE_ROWS))
        while True:
            query, params = self._select(sql, start, stop, reverse, size, needles)
            with self._read() as conn:
                page = conn.execute(query, params).fetchall()
            yield from page
            if len(page) < size:
                return
            size = min(2 * size, _PAGE_ROWS)
            if reverse:
                stop = page[-1][0]
            else:
                start = page[-1][0] + b"\x00"  # the least key after the last one

    # -- writes -----------------------------------------------------------------------------

    def _stored(self, conn: sqlite3.Connection, table: StoredTable, key: bytes) -> Row:
        """The row at ``key`` as the open transaction sees it ({} when absent). O(log n)."""
        found = conn.execute(f"SELECT row FROM {table.sql} WHERE k = ?", (key,)).fetchall()
        return unpack_row(found[0][0]) if found else {}

    @telemetry.sampled("mutate")
    def mutate(
        self, ops: Sequence[Put | Delete], condition: Condition | Sequence[Condition] | None = None
    ) -> bool:
        """Apply ``ops`` in order in one transaction if ``condition`` (all of them, when several)
        holds; True if applied.
        A row left without columns is removed. O(ops log n)."""
        targets = []
        for op in ops:
            if not isinstance(op, Put | Delete):
                raise TypeError(f"mutate takes Put and Delete, not {type(op).__name__}")
            check_key(op.key)
            targets.append(self._table(op.table))
        conditions = conditions_of(condition)
        guards = []
        for check in conditions:
            guard = self._table(check.table)
            check_key(check.key)
            guard.check_column(check.column)
            guards.append(guard)
        fresh = fresh_rows(ops, targets, conditions)
        with self._write() as conn:
            if fresh is not None and inserted(conn, *fresh):
                return True
            wanted: dict[str, set[bytes]] = {}
            for guard, check in zip(guards, conditions, strict=True):
                wanted.setdefault(guard.sql, set()).add(check.key)
            for table, op in zip(targets, ops, strict=True):
                if not (isinstance(op, Delete) and op.columns is None):
                    wanted.setdefault(table.sql, set()).add(op.key)
            stored = {(sql, key): unpack_row(blob) for sql, keys in wanted.items()
                      for key, blob in rows_at(conn, sql, list(keys), _IN_CHUNK)}  # fmt: skip
            for guard, check in zip(guards, conditions, strict=True):
                row = stored.get((guard.sql, check.key))
                if (None if row is None else row.get(check.column)) != check.expected:
                    return False
            rows: dict[tuple[str, bytes], Row] = {}
            for table, op in zip(targets, ops, strict=True):
                slot = (table.sql, op.key)
                if slot not in rows:
                    whole_delete = isinstance(op, Delete) and op.columns is None
                    rows[slot] = {} if whole_delete else dict(stored.get(slot) or {})
                rows[slot] = apply_op(rows[slot], op, table)
            puts: dict[str, list[tuple[bytes, bytes]]] = {}
            deletes: dict[str, list[tuple[bytes]]] = {}
            for (sql, key), row in rows.items():
                if row:
                    puts.setdefault(sql, []).append((key, pack_row(row)))
                else:
                    deletes.setdefault(sql, []).append((key,))
            for sql, pairs in puts.items():
                conn.executemany(f"INSERT OR REPLACE INTO {sql} VALUES (?, ?)", pairs)
            for sql, keys in deletes.items():
                conn.executemany(f"DELETE FROM {sql} WHERE k = ?", keys)
        return True

    @telemetry.sampled("increment")
    def increment(self, table: str, key: bytes, column: bytes, amount: int = 1) -> int:
        """Atomically add ``amount`` to the signed 8-byte big-endian counter in ``column``
        (absent: 0); the new value. O(log n)."""
        spec = self._table(table)
        check_key(key)
        spec.check_column(column)
        with self._write() as conn:
            row = self._stored(conn, spec, key)
            current = row.get(column)
            if current is not None and len(current) != _COUNTER.size:
                raise ValueError(f"column {column!r} of {key!r} holds no 8-byte counter")
            value = (0 if current is None else _COUNTER.unpack(current)[0]) + amount
            if not -(2**63) <= value < 2**63:
                raise OverflowError(f"counter {column!r} of {key!r} would leave 64 bits")
            row[column] = _COUNTER.pack(value)
            conn.execute(f"INSERT OR REPLACE INTO {spec.sql} VALUES (?, ?)", (key, pack_row(row)))
        return value

    @contextlib.contextmanager
    def writers_lock(self) -> Iterator[None]:
        """Hold the store against writers in other processes (an exclusive ``flock``): for a
        sequence of writes that must not interleave with theirs. Not reentrant, and not a lock
        between this process's threads (the caller holds one of its own)."""
        fcntl.flock(self._writers_file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._writers_file.fileno(), fcntl.LOCK_UN)

    def close(self) -> None:
        """Close every idle connection and the writer; scans still running close theirs when
        they end. Idempotent."""
        with self._write_lock, self._pool_lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
            for conn in idle:
                conn.close()
            self._writer.close()
            self._writers_file.close()
        with self._probe_lock:
            self._probe.close()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
        log.info("storage.closed", backend="sqlite", path=self._path)
