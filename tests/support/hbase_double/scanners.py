"""The HBase test double's scanners (see the package docstring): the scanner calls of the
``Hbase`` service (``ScannerCalls``, part of the handler), and the scanners themselves with the
scan budget that fails a call passing over too many rejected rows as a scanner RPC timeout
(``Scanning``, mixed into ``HBaseDouble``)."""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from metastore_server.storage.port import Row
from thriftpy2.thrift import TApplicationException

from support.hbase_double.idl import illegal_argument, io_error
from support.hbase_double.limits import check_read_row
from support.hbase_double.tables import Table, row_result, selector
from support.hbase_filter_language import FilterLanguageError, RowTest, parse_filter

if TYPE_CHECKING:
    from support.hbase_double.server import HBaseDouble

#: Rows one scannerGetList may examine before it fails as an RPC timeout (see the package).
DEFAULT_SCAN_ROWS_PER_CALL = 100

#: What a scanner call that outlives the region server's scanner RPC timeout fails with.
SCAN_TIMEOUT_MESSAGE = (
    "org.apache.hadoop.hbase.DoNotRetryIOException: Failed after retry of "
    "OutOfOrderScannerNextException: was there a rpc timeout?"
)

#: What a reversed scan with a filter fails with on HBase 1.2.x (``reverse_filter_bug``): the
#: region server's IllegalStateException, reached through the client's retries.
REVERSE_SCAN_BUG_MESSAGE = (
    "org.apache.hadoop.hbase.DoNotRetryIOException: Failed after retry of "
    "OutOfOrderScannerNextException: was there a rpc timeout? Caused by: "
    "java.lang.IllegalStateException: requestSeek cannot be called on ReversedKeyValueHeap"
)


@dataclass
class Scanner:
    rows: Iterator[list[Any]]
    """Per row the scan walks past (in range, accepted or not): its results (maybe none)."""
    pending: collections.deque[Any] = field(default_factory=collections.deque)
    touched: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    broken: bool = False
    reversed_filtered: bool = False
    """A reversed scan with a filter (what HBase 1.2.x's region server cannot serve)."""
    counted: bool = True
    """Whether its calls are recorded in ``scans``/``scanner_batches``/``scan_rows_examined``
    (not those of the intents table: its register reads and recovery sweeps, in
    ``intent_scans``)."""


class ScannerCalls:
    """The scanner calls of the ``Hbase`` service, on the double's scanners."""

    d: HBaseDouble

    def scannerOpenWithScan(self, tableName: bytes, scan: Any, attributes: Any) -> int:
        table = self.d._table(tableName)
        counted = not tableName.endswith(b"intents")
        (self.d.scans if counted else self.d.intent_scans).append(scan)
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
        opened = self.d._open_scanner(
            table,
            start=scan.startRow or b"",
            stop=scan.stopRow or b"",
            reverse=bool(scan.reversed),
            columns=scan.columns,
            test=test,
            batch=scan.batchSize,
            sort_columns=bool(scan.sortColumns),
        )
        self.d._scanners[opened].counted = counted
        return opened

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
        scanner = self.d._scanners.get(id)
        if scanner is None or scanner.counted:
            self.d.scanner_batches.append(nbRows)
        if scanner is None:
            raise illegal_argument("scanner ID is invalid")
        with scanner.lock:
            if scanner.broken:
                raise io_error(SCAN_TIMEOUT_MESSAGE)
            if scanner.reversed_filtered and self.d.reverse_filter_bug:
                scanner.broken = True
                self.d.reverse_scan_failures += 1
                raise io_error(REVERSE_SCAN_BUG_MESSAGE)
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


class Scanning:
    """The scanners of ``HBaseDouble`` and their state (``_init_scanning``)."""

    # of the double (``server.HBaseDouble``): _store_()

    def _init_scanning(self, scanner_lease_s: float, scan_rows_per_call: int | None) -> None:
        self.scanner_lease_s = scanner_lease_s
        self.scan_rows_per_call = scan_rows_per_call
        self._scanners: dict[int, Scanner] = {}
        self._scanner_ids = itertools.count(1)
        #: The TScan objects received, the nbRows asked for, the rows each scannerGetList
        #: examined, and the calls that failed as a scanner RPC timeout.
        self.scans: list[Any] = []
        self.intent_scans: list[Any] = []
        self.scanner_batches: list[int] = []
        self.scan_rows_examined: list[int] = []
        self.scan_timeouts = 0
        #: Scanner calls failed by ``reverse_filter_bug``.
        self.reverse_scan_failures = 0

    @property
    def open_scanners(self) -> int:
        return len(self._scanners)

    def _open_scanner(
        self,
        table: Table,
        *,
        start: bytes,
        stop: bytes,
        reverse: bool = False,
        columns: Sequence[bytes] | None = None,
        test: RowTest | None = None,
        batch: int | None = None,
        sort_columns: bool = False,
    ) -> int:
        check_read_row(start)
        check_read_row(stop)
        self._expire_scanners()
        select = selector(table, columns)
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
                        row_result(
                            key, {n: chosen[n] for n in names[first : first + step]}, sort_columns
                        )
                        for first in range(0, len(names), step)
                    ]
            finally:
                close = getattr(raw, "close", None)
                if close is not None:
                    close()

        scanner_id = next(self._scanner_ids)
        self._scanners[scanner_id] = Scanner(
            results(), reversed_filtered=reverse and test is not None
        )
        return scanner_id

    def _next_results(self, scanner: Scanner, wanted: int) -> list[Any]:
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
        if scanner.counted:
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
