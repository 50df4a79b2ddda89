"""A TEST DOUBLE of an HBase Thrift (1) server. It is NOT HBase.

It stands in for a real HBase Thrift gateway in CI, where no HBase runs: a thriftpy2 server of
the ``Hbase`` service loaded from happybase's own ``Hbase.thrift`` (the IDL happybase speaks),
listening on 127.0.0.1, its tables kept in an embedded ``SqliteStore``. It answers the calls
happybase and ``storage.hbase`` make, with HBase's semantics where they matter to a client:

* tables: getTableNames, createTable (AlreadyExists; families from the descriptors, ``c:``
  or ``c``), deleteTable (only when disabled), enable/disable/isTableEnabled,
  getColumnDescriptors, getTableRegions (one region); a ``ns:table`` name needs a namespace
  the double knows (``default``, ``hbase``, or ``add_namespace``).
* reads: get, getRow(s), getRow(s)WithColumns (missing rows left out, columns as
  ``family:qualifier`` or a whole ``family``).
* writes: mutateRow(s) (per row the deletes land first, then the puts, as two steps, as the
  HBase gateway does; mutateRows applies every row's deletes, then every row's puts),
  deleteAll, deleteAllRow, atomicIncrement (8-byte big-endian longs, wrapping like Java),
  checkAndPut (an absent expected value, or an empty one, holds for a missing or empty cell,
  as in HBase). Unknown families are IOError (NoSuchColumnFamilyException).
* scans: scannerOpenWithScan (TScan startRow / stopRow / reversed / columns / filterString /
  batchSize / sortColumns; caching is the client's business), scannerOpen, scannerOpenWithStop,
  scannerOpenWithPrefix, scannerGet, scannerGetList, scannerClose. Scanner ids are global to
  the server (any connection may use one), as in the HBase gateway; a scanner left alone for
  ``scanner_lease_s`` is dropped. A reversed scan walks from startRow (inclusive) down to
  stopRow (exclusive). The filter sees only the columns the scan selects (HBase's
  SingleColumnValueFilter gotcha). Filters: ``hbase_filter_language`` (the subset
  ``storage.filters`` emits). An unknown filter fails the call the way HBase's gateway does:
  scannerOpenWithScan declares only IOError, so HBase's IllegalArgumentException reaches the
  client as a TApplicationException (INTERNAL_ERROR) naming it.

Row keys: a row key (put, get, or a scan's start / stop row) longer than ``MAX_ROW_KEY``
(32,767 bytes, Short.MAX_VALUE) is refused as HBase's client classes refuse it
(``java.lang.IllegalArgumentException: Row length ... is > 32767``): IllegalArgument from the
writes that declare it, IOError from the reads and scans (which declare only IOError).

Scanner RPC timeout: a real region server answers one scannerGetList by walking rows until it
has ``nbRows`` the filter accepts, and a call that passes over too many rows the filter rejects
outlives the scanner RPC timeout. The double counts that time in rows: a scannerGetList (or
scannerGet) that would pass over more than ``scan_rows_per_call`` rejected rows (default
``DEFAULT_SCAN_ROWS_PER_CALL`` = 100, as test tables hold hundreds of rows where real ones hold
millions; None: no limit) fails with IOError ``org.apache.hadoop.hbase.DoNotRetryIOException:
Failed after retry of OutOfOrderScannerNextException: was there a rpc timeout?``
(``SCAN_TIMEOUT_MESSAGE``), and the scanner fails every later call the same way. A scan
without a filter never hits it.
``scan_rows_examined`` lists the rows each call examined, ``scan_timeouts`` counts failures.

Cell size: a put (mutateRow(s), checkAndPut) of a cell whose KeyValue (row + family +
qualifier + value + ``CELL_OVERHEAD`` bytes) is longer than ``max_cell_bytes`` (default
``MAX_CELL_BYTES``, 10,485,760, hbase.client.keyvalue.maxsize) is refused as HBase's client
refuses it: IllegalArgument ``java.lang.IllegalArgumentException: KeyValue size too large``.

Not emulated: versions and timestamps (one version per cell; TCell timestamps are the write
clock), TTLs, regions and splits, same-millisecond delete/put masking.

Hooks for tests: ``fail_writes_after(n)`` (the next n row writes succeed, later ones raise
IOError until ``heal()``), ``drop_connection(method, when=..., count=...)`` (close the client's
connection before or after doing a call, without answering), ``crash_before_write(n, crash)``
(call ``crash``, which kills the writing process, when the n-th write call arrives; ``writes``
counts them), ``restart_gateway(down_s)``, ``pause_regions(seconds, give_up_s=...)`` (a region
server restarting), ``calls`` (a Counter of method names), ``scans`` (the TScan objects received)
and ``scanner_batches`` (the nbRows asked for).

Use: ``with HBaseDouble() as double: url = double.url(prefix="t_")``, or
``with running_double() as (host, port): url = storage_url(host, port)``.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import happybase
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.thrift import TApplicationException, TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from storage.embedded import SqliteStore
from storage.port import Delete, Put, Row, TableSpec
from support.hbase_filter_language import FilterLanguageError, RowTest, parse_filter

log = logging.getLogger(__name__)

HBASE_IDL = Path(happybase.__file__).with_name("Hbase.thrift")
hbase_thrift = thriftpy2.load(str(HBASE_IDL), module_name="hbase_double_thrift")

_LONG = struct.Struct(">q")
_TRANSPORTS = {"buffered": TBufferedTransportFactory, "framed": TFramedTransportFactory}
_PROTOCOLS = {"binary": TBinaryProtocolFactory, "compact": TCompactProtocolFactory}
_WRITE_CALLS = frozenset({"mutateRow", "mutateRows", "mutateRowTs", "mutateRowsTs", "checkAndPut",
                          "atomicIncrement", "deleteAll", "deleteAllRow", "deleteAllTs",
                          "deleteAllRowTs"})  # fmt: skip
#: Calls the gateway answers without a region server.
_GATEWAY_CALLS = frozenset({"getTableNames", "getColumnDescriptors", "isTableEnabled",
                            "getTableRegions"})  # fmt: skip
_TABLE_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


class _Drop(Exception):
    """Raised by a hook: close the client's connection without answering."""


def io_error(message: str) -> Exception:
    """An HBase IOError (the Thrift exception, not Python's)."""
    return hbase_thrift.IOError(message=message)


def illegal_argument(message: str) -> Exception:
    """An HBase IllegalArgument."""
    return hbase_thrift.IllegalArgument(message=message)


#: Rows one scannerGetList may examine before it fails as an RPC timeout (see the module).
DEFAULT_SCAN_ROWS_PER_CALL = 100

#: HBase's largest cell (hbase.client.keyvalue.maxsize's default), as a KeyValue's length.
MAX_CELL_BYTES = 10_485_760
#: A KeyValue's bytes beyond its row, family, qualifier and value (lengths, timestamp, type).
CELL_OVERHEAD = 20

#: HBase's longest row key (HConstants.MAX_ROW_LENGTH, Short.MAX_VALUE).
MAX_ROW_KEY = 32767


def _row_length_message(row: bytes) -> str:
    return f"java.lang.IllegalArgumentException: Row length {len(row)} is > {MAX_ROW_KEY}"


def _check_write_row(row: bytes) -> None:
    """A write's row key: IllegalArgument when HBase's Mutation.checkRow refuses it."""
    if row is not None and len(row) > MAX_ROW_KEY:
        raise illegal_argument(_row_length_message(row))


def _check_read_row(row: bytes | None) -> None:
    """A get's row or a scan's start/stop row: IOError when HBase refuses it (the read calls
    declare only IOError)."""
    if row is not None and len(row) > MAX_ROW_KEY:
        raise io_error(_row_length_message(row))


def _check_cell(row: bytes, column: bytes, value: bytes | None, limit: int | None) -> None:
    """A put's cell: IllegalArgument when its KeyValue is longer than ``limit``."""
    family, _, qualifier = column.partition(b":")
    size = len(row) + len(family) + len(qualifier) + len(value or b"") + CELL_OVERHEAD
    if limit is not None and size > limit:
        raise illegal_argument("java.lang.IllegalArgumentException: KeyValue size too large")


@dataclass
class _Table:
    store_name: str
    families: frozenset[bytes]
    enabled: bool = True


#: What a scanner call that outlives the region server's scanner RPC timeout fails with.
SCAN_TIMEOUT_MESSAGE = (
    "org.apache.hadoop.hbase.DoNotRetryIOException: Failed after retry of "
    "OutOfOrderScannerNextException: was there a rpc timeout?"
)


@dataclass
class _Scanner:
    rows: Iterator[list[Any]]
    """Per row the scan walks past (in range, accepted or not): its results (maybe none)."""
    pending: collections.deque[Any] = field(default_factory=collections.deque)
    touched: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    broken: bool = False


@dataclass
class _DropRule:
    method: str | None
    when: str
    count: int


class _Handler:
    """The Hbase service calls, on the double's state."""

    def __init__(self, double: HBaseDouble) -> None:
        self.d = double

    # -- tables ---------------------------------------------------------------------------

    def getTableNames(self) -> list[bytes]:
        return sorted(self.d._tables)

    def createTable(self, tableName: bytes, columnFamilies: Sequence[Any]) -> None:
        name = _check_table_name(tableName, self.d._namespaces)
        families = set()
        for descriptor in columnFamilies or ():
            family = (descriptor.name or b"").rstrip(b":")
            if not family or b":" in family:
                raise illegal_argument(f"bad column family name {descriptor.name!r}")
            families.add(family)
        if not families:
            raise illegal_argument("Table should have at least one column family.")
        with self.d._lock:
            if name in self.d._tables:
                raise hbase_thrift.AlreadyExists(message="table name already in use")
            store_name = f"g{next(self.d._generation)}"
            self.d._store.ensure_tables(
                [TableSpec(store_name, tuple(f.decode() for f in families))]
            )
            self.d._tables[name] = _Table(store_name, frozenset(families))

    def deleteTable(self, tableName: bytes) -> None:
        with self.d._lock:
            table = self.d._tables.get(tableName)
            if table is None:
                raise io_error("java.io.IOException: table does not exist")
            if table.enabled:
                raise io_error(f"org.apache.hadoop.hbase.TableNotDisabledException: {tableName!r}")
            del self.d._tables[tableName]

    def enableTable(self, tableName: bytes) -> None:
        self.d._table(tableName, enabled=None).enabled = True

    def disableTable(self, tableName: bytes) -> None:
        self.d._table(tableName, enabled=None).enabled = False

    def isTableEnabled(self, tableName: bytes) -> bool:
        return self.d._table(tableName, enabled=None).enabled

    def getColumnDescriptors(self, tableName: bytes) -> dict[bytes, Any]:
        table = self.d._table(tableName, enabled=None)
        return {
            family + b":": hbase_thrift.ColumnDescriptor(name=family + b":", maxVersions=1)
            for family in sorted(table.families)
        }

    def getTableRegions(self, tableName: bytes) -> list[Any]:
        self.d._table(tableName, enabled=None)
        region = hbase_thrift.TRegionInfo(
            startKey=b"",
            endKey=b"",
            id=1,
            name=tableName + b",,1",
            version=1,
            serverName=b"127.0.0.1",
            port=self.d.port,
        )
        return [region]

    # -- reads ----------------------------------------------------------------------------

    def get(self, tableName: bytes, row: bytes, column: bytes, attributes: Any) -> list[Any]:
        found = self.getRowWithColumns(tableName, row, [column], attributes)
        return [cell for result in found for cell in result.columns.values()]

    def getRow(self, tableName: bytes, row: bytes, attributes: Any) -> list[Any]:
        return self.getRowWithColumns(tableName, row, None, attributes)

    def getRowWithColumns(
        self, tableName: bytes, row: bytes, columns: Sequence[bytes] | None, attributes: Any
    ) -> list[Any]:
        return self.getRowsWithColumns(tableName, [row], columns, attributes)

    def getRows(self, tableName: bytes, rows: Sequence[bytes], attributes: Any) -> list[Any]:
        return self.getRowsWithColumns(tableName, rows, None, attributes)

    def getRowsWithColumns(
        self,
        tableName: bytes,
        rows: Sequence[bytes],
        columns: Sequence[bytes] | None,
        attributes: Any,
    ) -> list[Any]:
        table = self.d._table(tableName)
        for key in rows:
            _check_read_row(key)
        select = _selector(table, columns)
        results = []
        for key in rows:
            stored = self.d._read(table, key)
            chosen = select(stored) if stored else {}
            if chosen:
                results.append(_row_result(key, chosen, sort_columns=False))
        return results

    # -- writes ---------------------------------------------------------------------------

    def mutateRow(
        self, tableName: bytes, row: bytes, mutations: Sequence[Any], attributes: Any
    ) -> None:
        table = self.d._table(tableName)
        deletes, puts = _split_mutations(
            table, row, mutations, strict=False, max_cell=self.d.max_cell_bytes
        )
        with self.d._lock:
            if deletes:
                self.d._write_deletes(table, row, deletes)
            if puts:
                self.d._write_puts(table, row, puts)

    def mutateRows(self, tableName: bytes, rowBatches: Sequence[Any], attributes: Any) -> None:
        table = self.d._table(tableName)
        limit = self.d.max_cell_bytes
        split = [
            (b.row, *_split_mutations(table, b.row, b.mutations, strict=True, max_cell=limit))
            for b in rowBatches
        ]
        errors = []
        with self.d._lock:
            for phase in (1, 2):  # every row's deletes, then every row's puts
                for row, deletes, puts in split:
                    try:
                        if phase == 1 and deletes:
                            self.d._write_deletes(table, row, deletes)
                        elif phase == 2 and puts:
                            self.d._write_puts(table, row, puts)
                    except hbase_thrift.IOError as error:
                        errors.append(f"{row!r}: {error.message}")
        if errors:
            raise io_error(
                "org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException: "
                f"Failed {len(errors)} actions: " + "; ".join(errors)
            )

    def deleteAll(self, tableName: bytes, row: bytes, column: bytes, attributes: Any) -> None:
        self.mutateRow(
            tableName, row, [hbase_thrift.Mutation(isDelete=True, column=column)], attributes
        )

    def deleteAllRow(self, tableName: bytes, row: bytes, attributes: Any) -> None:
        table = self.d._table(tableName)
        _check_read_row(row)  # declares only IOError
        with self.d._lock:
            self.d._spend()
            self.d._store.mutate([Delete(table.store_name, row)])

    def atomicIncrement(self, tableName: bytes, row: bytes, column: bytes, value: int) -> int:
        table = self.d._table(tableName)
        _check_write_row(row)
        _check_column(table, column)
        with self.d._lock:
            self.d._spend()
            current = self.d._read(table, row).get(column)
            if current is not None and len(current) != _LONG.size:
                raise io_error(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, "
                    f"it's {len(current)} bytes wide"
                )
            old = 0 if current is None else _LONG.unpack(current)[0]
            new = (old + value + 2**63) % 2**64 - 2**63  # a Java long wraps around
            self.d._store.mutate([Put(table.store_name, row, {column: _LONG.pack(new)})])
            return new

    def checkAndPut(
        self,
        tableName: bytes,
        row: bytes,
        column: bytes,
        value: bytes | None,
        mput: Any,
        attributes: Any,
    ) -> bool:
        table = self.d._table(tableName)
        _check_write_row(row)
        _check_column(table, column)
        family, colon, _ = (mput.column or b"").partition(b":")
        if not colon:
            raise illegal_argument(
                f"java.lang.IllegalArgumentException: bad column {mput.column!r}"
            )
        _check_column(table, mput.column)
        _check_cell(row, mput.column, mput.value, self.d.max_cell_bytes)
        with self.d._lock:
            current = self.d._read(table, row).get(column)
            # HBase: an empty expected value holds for a missing or empty cell
            holds = not current if not value else current == value
            if not holds:
                return False
            self.d._spend()
            self.d._store.mutate([Put(table.store_name, row, {mput.column: mput.value or b""})])
            return True

    # -- scans ----------------------------------------------------------------------------

    def scannerOpenWithScan(self, tableName: bytes, scan: Any, attributes: Any) -> int:
        table = self.d._table(tableName)
        self.d.scans.append(scan)
        test = None
        if scan.filterString is not None:
            try:
                test = parse_filter(scan.filterString)
            except FilterLanguageError as error:
                raise TApplicationException(
                    TApplicationException.INTERNAL_ERROR,
                    f"Internal error processing scannerOpenWithScan: "
                    f"java.lang.IllegalArgumentException: {error}",
                ) from error
        return self.d._open_scanner(
            table,
            start=scan.startRow or b"",
            stop=scan.stopRow or b"",
            reverse=bool(scan.reversed),
            columns=scan.columns,
            test=test,
            batch=scan.batchSize,
            sort_columns=bool(scan.sortColumns),
        )

    def scannerOpen(
        self, tableName: bytes, startRow: bytes, columns: Sequence[bytes], attributes: Any
    ) -> int:
        return self.d._open_scanner(
            self.d._table(tableName), start=startRow or b"", stop=b"", columns=columns
        )

    def scannerOpenWithStop(
        self,
        tableName: bytes,
        startRow: bytes,
        stopRow: bytes,
        columns: Sequence[bytes],
        attributes: Any,
    ) -> int:
        return self.d._open_scanner(
            self.d._table(tableName), start=startRow or b"", stop=stopRow or b"", columns=columns
        )

    def scannerOpenWithPrefix(
        self, tableName: bytes, startAndPrefix: bytes, columns: Sequence[bytes], attributes: Any
    ) -> int:
        prefix = startAndPrefix or b""
        stop = prefix.rstrip(b"\xff")
        stop = stop[:-1] + bytes([stop[-1] + 1]) if stop else b""
        return self.d._open_scanner(
            self.d._table(tableName), start=prefix, stop=stop, columns=columns
        )

    def scannerGet(self, id: int) -> list[Any]:
        return self.scannerGetList(id, 1)

    def scannerGetList(self, id: int, nbRows: int) -> list[Any]:
        self.d.scanner_batches.append(nbRows)
        scanner = self.d._scanners.get(id)
        if scanner is None:
            raise illegal_argument("scanner ID is invalid")
        with scanner.lock:
            if scanner.broken:
                raise io_error(SCAN_TIMEOUT_MESSAGE)
            scanner.touched = time.monotonic()
            return self.d._next_results(scanner, max(nbRows, 1))

    def scannerClose(self, id: int) -> None:
        scanner = self.d._scanners.pop(id, None)
        if scanner is None:
            raise illegal_argument("scanner ID is invalid")
        with scanner.lock:
            close = getattr(scanner.rows, "close", None)
            if close is not None:
                close()


class _Guard:
    """The handler as the processor sees it: hooks first, then the call; a Python error of the
    double becomes a TApplicationException (what a Java server's runtime error becomes)."""

    _DECLARED = (
        hbase_thrift.IOError,
        hbase_thrift.IllegalArgument,
        hbase_thrift.AlreadyExists,
        TApplicationException,
        _Drop,
    )

    def __init__(self, double: HBaseDouble) -> None:
        self._double = double
        self._handler = _Handler(double)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._handler, name, None)

        def call(*args: Any) -> Any:
            double = self._double
            double.calls[name] += 1
            double._maybe_crash(name)
            double._maybe_drop(name, "before")
            double._wait_for_regions(name)
            if method is None:
                raise TApplicationException(
                    TApplicationException.UNKNOWN_METHOD, f"the HBase double has no {name}"
                )
            try:
                result = method(*args)
            except self._DECLARED:
                raise
            except Exception as error:
                log.exception("hbase double: %s failed", name)
                raise TApplicationException(
                    TApplicationException.INTERNAL_ERROR,
                    f"Internal error processing {name}: {type(error).__name__}: {error}",
                ) from error
            double._maybe_drop(name, "after")
            return result

        return call


class HBaseDouble:
    """A running test double of the HBase Thrift gateway (see the module docstring)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        transport: str = "buffered",
        protocol: str = "binary",
        scanner_lease_s: float = 60.0,
        scan_rows_per_call: int | None = DEFAULT_SCAN_ROWS_PER_CALL,
        max_cell_bytes: int | None = MAX_CELL_BYTES,
    ) -> None:
        self.host = host
        self._requested_port = port
        self.port = 0
        self._transport = _TRANSPORTS[transport]()
        self._protocol = _PROTOCOLS[protocol]()
        self.scanner_lease_s = scanner_lease_s
        self.scan_rows_per_call = scan_rows_per_call
        self.max_cell_bytes = max_cell_bytes
        self._store: SqliteStore | None = None
        self._tables: dict[bytes, _Table] = {}
        self._namespaces = {b"default", b"hbase"}
        self._generation = itertools.count(1)
        self._lock = threading.RLock()
        self._scanners: dict[int, _Scanner] = {}
        self._scanner_ids = itertools.count(1)
        self._listener: socket.socket | None = None
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        self._closed = threading.Event()
        self._acceptor: threading.Thread | None = None
        self._processor = TProcessor(hbase_thrift.Hbase, _Guard(self))
        self.calls: collections.Counter[str] = collections.Counter()
        self.scans: list[Any] = []
        self.scanner_batches: list[int] = []
        self.scan_rows_examined: list[int] = []
        self.scan_timeouts = 0
        self._write_budget: int | None = None
        #: Write calls received since ``count_writes`` (see ``crash_before_write``).
        self.writes = 0
        self._crash: tuple[int, Callable[[], None]] | None = None
        self._regions_back = 0.0
        self._regions_give_up_s: float | None = None
        self._drops: list[_DropRule] = []

    # -- life -----------------------------------------------------------------------------

    def start(self) -> HBaseDouble:
        """Listen and serve in background threads."""
        self._store = SqliteStore(":memory:")
        self._listen(self._requested_port)
        return self

    def _listen(self, port: int) -> None:
        listener = socket.create_server((self.host, port))
        listener.settimeout(0.1)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._acceptor = threading.Thread(
            target=self._accept, args=(listener,), name="hbase-double", daemon=True
        )
        self._acceptor.start()

    def stop(self) -> None:
        """Stop listening, cut every connection, drop the data."""
        self._closed.set()
        if self._acceptor is not None:
            self._acceptor.join()
        if self._listener is not None:
            self._listener.close()
        self.disconnect_all()
        for scanner_id in list(self._scanners):
            with contextlib.suppress(Exception):
                self._handler_close(scanner_id)
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> HBaseDouble:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def url(self, prefix: str = "hms_", **params: object) -> str:
        """A storage URL (``hbase://...``) for this double."""
        return storage_url(self.host, self.port, prefix=prefix, **params)

    def disconnect_all(self) -> None:
        """Close every client connection (clients see a lost connection on their next call)."""
        with self._clients_lock:
            clients, self._clients = self._clients, set()
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                client.close()

    # -- hooks ----------------------------------------------------------------------------

    def fail_writes_after(self, rows: int) -> None:
        """Let ``rows`` more row writes succeed, then fail every write with IOError."""
        with self._lock:
            self._write_budget = rows

    def restart_gateway(self, down_s: float) -> None:
        """A Thrift gateway restart: stop listening and cut every connection at once (a call
        being served may land without its answer), then listen again on the same port after
        ``down_s`` seconds; the data stays."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        if self._acceptor is not None:
            self._acceptor.join()
        self.disconnect_all()

        def back() -> None:
            time.sleep(down_s)
            if not self._closed.is_set():
                self._listen(self.port)

        threading.Thread(target=back, name="hbase-double-restart", daemon=True).start()

    def pause_regions(self, seconds: float, *, give_up_s: float | None = None) -> None:
        """A region server restarting: for ``seconds`` every table call waits (as the
        gateway's HBase client waits for the regions to open again), and one that has waited
        ``give_up_s`` fails as the gateway's client gives up (IOError, RetriesExhausted)."""
        with self._lock:
            self._regions_back = time.monotonic() + seconds
            self._regions_give_up_s = give_up_s

    def _wait_for_regions(self, method: str) -> None:
        if method in _GATEWAY_CALLS:
            return
        with self._lock:
            back, give_up = self._regions_back, self._regions_give_up_s
        waited = 0.0
        while time.monotonic() < back:
            if give_up is not None and waited >= give_up:
                raise io_error(
                    "org.apache.hadoop.hbase.client.RetriesExhaustedException: Failed after "
                    f"attempts=36, exceptions: NotServingRegionException (injected by the HBase "
                    f"double in {method})"
                )
            time.sleep(0.05)
            waited += 0.05

    def count_writes(self) -> None:
        """Start counting write calls afresh (``writes``)."""
        with self._lock:
            self.writes = 0

    def crash_before_write(self, nth: int, crash: Callable[[], None]) -> None:
        """When the ``nth`` write call (counted from now: mutateRow(s), checkAndPut,
        atomicIncrement, deleteAll*) arrives, call ``crash`` (a test kills the writing process
        there) and close that connection without doing the write."""
        with self._lock:
            self.writes = 0
            self._crash = (nth, crash)

    def heal(self) -> None:
        """Undo ``fail_writes_after`` and pending ``drop_connection`` rules."""
        with self._lock:
            self._write_budget = None
            self._drops.clear()

    def drop_connection(
        self, method: str | None = None, *, when: str = "after", count: int = 1
    ) -> None:
        """Close the connection of the next ``count`` calls of ``method`` (None: any call),
        ``before`` doing it or ``after`` (done, but never answered)."""
        if when not in ("before", "after"):
            raise ValueError("when is 'before' or 'after'")
        with self._lock:
            self._drops.append(_DropRule(method, when, count))

    def add_namespace(self, name: str) -> None:
        """Let tables be created in namespace ``name``."""
        self._namespaces.add(name.encode())

    @property
    def open_scanners(self) -> int:
        return len(self._scanners)

    def rows(self, table: bytes) -> list[tuple[bytes, Row]]:
        """Every row of a table, straight from the backing store (for assertions)."""
        return list(self._store_().scan(self._tables[table].store_name))

    # -- internals ------------------------------------------------------------------------

    def _store_(self) -> SqliteStore:
        if self._store is None:
            raise RuntimeError("the double is not started")
        return self._store

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            with self._clients_lock:
                self._clients.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        transport = self._transport.get_transport(TSocket(sock=client))
        protocol = self._protocol.get_protocol(transport)
        try:
            while not self._closed.is_set():
                self._processor.process(protocol, protocol)
        except (TTransportException, _Drop, OSError, EOFError):
            pass
        except Exception:
            log.exception("hbase double: connection failed")
        finally:
            with self._clients_lock:
                self._clients.discard(client)
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                client.close()

    def _maybe_crash(self, method: str) -> None:
        if method not in _WRITE_CALLS:
            return
        with self._lock:
            self.writes += 1
            rule = self._crash
            if rule is None or self.writes != rule[0]:
                return
            self._crash = None
        rule[1]()
        raise _Drop(method)

    def _maybe_drop(self, method: str, when: str) -> None:
        with self._lock:
            for rule in self._drops:
                if rule.when == when and rule.method in (None, method) and rule.count > 0:
                    rule.count -= 1
                    self._drops = [r for r in self._drops if r.count > 0]
                    raise _Drop(method)

    def _spend(self) -> None:
        """Count one row write against the failure budget (IOError once it is spent)."""
        with self._lock:
            if self._write_budget is None:
                return
            if self._write_budget <= 0:
                raise io_error("java.io.IOException: write failed (injected by the HBase double)")
            self._write_budget -= 1

    def _table(self, name: bytes, *, enabled: bool | None = True) -> _Table:
        table = self._tables.get(name)
        if table is None:
            raise io_error(f"org.apache.hadoop.hbase.TableNotFoundException: {name.decode()}")
        if enabled and not table.enabled:
            raise io_error(f"org.apache.hadoop.hbase.TableNotEnabledException: {name.decode()}")
        return table

    def _read(self, table: _Table, key: bytes) -> Row:
        if not key:
            return {}
        return self._store_().get(table.store_name, key) or {}

    def _write_deletes(self, table: _Table, row: bytes, deletes: Sequence[bytes]) -> None:
        """Delete columns (``f:q``) and whole families (``f``) of one row, as one step."""
        self._spend()
        stored = self._read(table, row)
        doomed = set()
        for column in deletes:
            if b":" in column:
                doomed.add(column)
            else:
                doomed.update(c for c in stored if c.partition(b":")[0] == column)
        if doomed:
            self._store_().mutate([Delete(table.store_name, row, sorted(doomed))])

    def _write_puts(self, table: _Table, row: bytes, puts: Mapping[bytes, bytes]) -> None:
        self._spend()
        self._store_().mutate([Put(table.store_name, row, dict(puts))])

    def _open_scanner(
        self,
        table: _Table,
        *,
        start: bytes,
        stop: bytes,
        reverse: bool = False,
        columns: Sequence[bytes] | None = None,
        test: RowTest | None = None,
        batch: int | None = None,
        sort_columns: bool = False,
    ) -> int:
        _check_read_row(start)
        _check_read_row(stop)
        self._expire_scanners()
        select = _selector(table, columns)
        if reverse:  # HBase: startRow >= key > stopRow, empty meaning open-ended
            low, high = (stop + b"\x00" if stop else b""), (start + b"\x00" if start else None)
        else:
            low, high = start, (stop or None)
        if high is not None and high <= low:
            raw: Iterator[tuple[bytes, Row]] = iter(())
        else:
            raw = self._store_().scan(table.store_name, low, high, reverse=reverse)

        def results() -> Iterator[list[Any]]:
            try:
                for key, stored in raw:
                    chosen = select(stored)
                    if not chosen or (test is not None and not test(chosen)):
                        yield []  # examined, not returned
                        continue
                    names = sorted(chosen)
                    step = batch if batch and batch > 0 else len(names)
                    yield [
                        _row_result(
                            key, {n: chosen[n] for n in names[first : first + step]}, sort_columns
                        )
                        for first in range(0, len(names), step)
                    ]
            finally:
                close = getattr(raw, "close", None)
                if close is not None:
                    close()

        scanner_id = next(self._scanner_ids)
        self._scanners[scanner_id] = _Scanner(results())
        return scanner_id

    def _next_results(self, scanner: _Scanner, wanted: int) -> list[Any]:
        """Up to ``wanted`` results of a scanner, passing over at most ``scan_rows_per_call``
        rows the filter rejects; past that the call fails as a scanner RPC timeout and the
        scanner is broken."""
        found: list[Any] = []
        examined = 0
        passed_over = 0
        while len(found) < wanted:
            if scanner.pending:
                found.append(scanner.pending.popleft())
                continue
            step = next(scanner.rows, None)
            if step is None:
                break
            examined += 1
            passed_over += not step
            if self.scan_rows_per_call is not None and passed_over > self.scan_rows_per_call:
                scanner.broken = True
                scanner.rows.close()  # type: ignore[attr-defined]
                self.scan_timeouts += 1
                raise io_error(SCAN_TIMEOUT_MESSAGE)
            scanner.pending.extend(step)
        self.scan_rows_examined.append(examined)
        return found

    def _expire_scanners(self) -> None:
        deadline = time.monotonic() - self.scanner_lease_s
        for scanner_id, scanner in list(self._scanners.items()):
            if scanner.touched < deadline:
                with contextlib.suppress(Exception):
                    self._handler_close(scanner_id)

    def _handler_close(self, scanner_id: int) -> None:
        scanner = self._scanners.pop(scanner_id, None)
        if scanner is not None:
            with scanner.lock:
                scanner.rows.close()  # type: ignore[attr-defined]


def _check_table_name(name: bytes, namespaces: set[bytes]) -> bytes:
    namespace, colon, qualifier = name.rpartition(b":")
    if colon and namespace not in namespaces:
        raise io_error(f"org.apache.hadoop.hbase.NamespaceNotFoundException: {namespace!r}")
    if not qualifier or not set(qualifier) <= _TABLE_NAME_CHARS or qualifier[:1] in (b".", b"-"):
        raise illegal_argument(f"java.lang.IllegalArgumentException: Illegal table name {name!r}")
    return name


def _check_column(table: _Table, column: bytes) -> None:
    family = column.partition(b":")[0]
    if family not in table.families:
        raise io_error(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family "
            f"{family.decode('latin-1')} does not exist"
        )


def _split_mutations(
    table: _Table, row: bytes, mutations: Sequence[Any], *, strict: bool, max_cell: int | None
) -> tuple[list[bytes], dict[bytes, bytes]]:
    """(columns or families to delete, columns to put) of one row's mutations."""
    if not row:
        raise illegal_argument("java.lang.IllegalArgumentException: Row length is 0")
    _check_write_row(row)
    deletes: list[bytes] = []
    puts: dict[bytes, bytes] = {}
    for mutation in mutations or ():
        column = mutation.column or b""
        _check_column(table, column)
        if mutation.isDelete:
            deletes.append(column)
        elif b":" not in column:
            if strict:
                raise illegal_argument(
                    "java.lang.IllegalArgumentException: Invalid famAndQf provided."
                )
            # mutateRow logs "No column qualifier specified" and ignores the put
        else:
            _check_cell(row, column, mutation.value, max_cell)
            puts[column] = mutation.value or b""
    return deletes, puts


def _selector(table: _Table, columns: Sequence[bytes] | None) -> Callable[[Row], Row]:
    """The part of a row a column list selects (``f:q`` columns and whole families ``f``)."""
    if not columns:
        return lambda row: row
    wanted_columns, wanted_families = set(), set()
    for column in columns:
        _check_column(table, column)
        family, colon, _ = column.partition(b":")
        (wanted_columns if colon else wanted_families).add(column if colon else family)

    def select(row: Row) -> Row:
        return {
            name: value
            for name, value in row.items()
            if name in wanted_columns or name.partition(b":")[0] in wanted_families
        }

    return select


def _row_result(key: bytes, row: Row, sort_columns: bool) -> Any:
    stamp = int(time.time() * 1000)
    cells = {name: hbase_thrift.TCell(value=value, timestamp=stamp) for name, value in row.items()}
    if sort_columns:
        ordered = [
            hbase_thrift.TColumn(columnName=name, cell=cells[name]) for name in sorted(cells)
        ]
        return hbase_thrift.TRowResult(row=key, sortedColumns=ordered)
    return hbase_thrift.TRowResult(row=key, columns=cells)


def storage_url(host: str, port: int, prefix: str = "hms_", **params: object) -> str:
    """The ``hbase://host:port?prefix=...`` storage URL of an HBase Thrift server (or of the
    double); extra ``params`` (pool_size, timeout_ms, ...) are added as given."""
    query = urlencode({"prefix": prefix, **{k: str(v) for k, v in params.items()}})
    return f"hbase://{host}:{port}?{query}"


@contextlib.contextmanager
def running_double(**options: Any) -> Iterator[tuple[str, int]]:
    """A started HBase double for the duration of the block: yields (host, port). ``options``
    go to ``HBaseDouble`` (host, port, transport, protocol, scanner_lease_s, scan_rows_per_call,
    max_cell_bytes)."""
    with HBaseDouble(**options) as double:
        yield double.address
