"""Scans of the HBase store (``storage.hbase``): one port scan as HBase scanners.

A port scan opens a scanner (``scannerOpenWithScan``) and reads it ``caching`` rows per
``scannerGetList``. One such call makes the region server walk rows until it has that many
rows its filter accepts: with a selective filter over a long range it walks past many rows
between two results and outlives the scanner RPC timeout (HBase then fails the call with
``DoNotRetryIOException: Failed after retry of OutOfOrderScannerNextException``, and the
scanner is gone). So when a call of a filtered scan fails for any reason but a lost
connection, the rest of the scan is read WITHOUT the filter, from after the last row the
server returned: each call then examines at most ``caching`` rows (the port lets a backend
return rejected rows; callers re-check every row). A lost connection resumes the scan as it
was, once in a row (a second failure in a row is the error).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import structlog
from metastore_server.storage import hbase_keys
from metastore_server.storage.port import Row, StorageError

log = structlog.get_logger(__name__)

T = TypeVar("T")


class ScanHost(Protocol):
    """What a scan needs of its store (``storage.hbase.HBaseStore``)."""

    def _call(self, what: str, request: Callable[[Any], T], *, idempotent: bool) -> T: ...

    def _request(self, what: str, request: Callable[[Any], T], *, idempotent: bool) -> T: ...

    def _abandon_scanner(self, scanner: int) -> None: ...


@dataclass(frozen=True)
class Query:
    """One port scan, as HBase scans (reopened from ``resume`` after a failure)."""

    name: bytes
    start: bytes
    stop: bytes | None
    reverse: bool
    limit: int | None
    wanted: frozenset[bytes] | None
    request: list[bytes] | None
    filter: bytes | None
    caching: int
    key_filter: Callable[[bytes], bool] | None = None

    def unfiltered(self) -> Query:
        """The same scan without the server-side filter (nor the columns only it tests)."""
        request = None if self.wanted is None else sorted(self.wanted)
        return replace(self, filter=None, request=request)

    def tscan(self, resume: bytes | None, thrift: Any) -> Any:
        """The TScan reading this query's rows after ``resume`` (None: from the start)."""
        if not self.reverse:
            start_row = self.start if resume is None else hbase_keys.after(resume)
            stop_row = self.stop
        else:  # HBase walks from startRow (inclusive) down to stopRow (exclusive)
            start_row = self.stop if resume is None else resume
            stop_row = hbase_keys.below(self.start)
        return thrift.TScan(
            startRow=start_row,
            stopRow=stop_row,
            columns=self.request,
            caching=self.caching,
            filterString=self.filter,
            reversed=True if self.reverse else None,
        )

    def place(self, key: bytes, upper: bytes | None) -> int:
        """0: a row of the range; 1: skip it (a reverse scanner's inclusive start row
        ``upper``); -1: past the range (a reverse scan below ``start``)."""
        if not self.reverse:
            return 0
        if key < self.start:
            return -1
        return 1 if upper is not None and key >= upper else 0


@dataclass
class _Cursor:
    """Where a scan is: its query (filtered or not), scanner, last key the server gave."""

    query: Query
    scanner: int | None = None
    resume: bytes | None = None
    upper: bytes | None = None
    returned: int = 0
    lost: int = 0  # lost connections in a row


def scan_rows(
    host: ScanHost,
    q: Query,
    *,
    thrift: Any,
    row_of: Callable[[Any], Row],
    connection_lost: type[BaseException],
) -> Iterator[tuple[bytes, Row]]:
    """The rows of a query, read lazily (see the module docstring)."""
    cur = _Cursor(q, upper=q.stop)
    clean = False
    try:
        while True:
            if cur.scanner is None:
                tscan = cur.query.tscan(cur.resume, thrift)
                cur.upper = q.stop if cur.resume is None else cur.resume
                cur.scanner = host._call(
                    "scan",
                    lambda c, t=tscan, n=cur.query.name: c.scannerOpenWithScan(n, t, {}),
                    idempotent=True,
                )
            want = q.caching if q.limit is None else min(q.caching, q.limit - cur.returned)
            try:
                items = host._call(
                    "scan",
                    lambda c, i=cur.scanner, n=want: c.scannerGetList(i, n),
                    idempotent=False,
                )
            except (StorageError, ValueError) as error:
                _recover(host, cur, error, connection_lost)
                continue
            cur.lost = 0
            done = len(items) < want
            for item in items:
                key = item.row
                cur.resume = key
                verdict = q.place(key, cur.upper)
                if verdict < 0:
                    done = True
                    break
                if verdict > 0 or (q.key_filter is not None and not q.key_filter(key)):
                    continue
                row = row_of(item)
                if q.wanted is not None:
                    row = {c: v for c, v in row.items() if c in q.wanted}
                if not row:
                    continue
                yield key, row
                cur.returned += 1
                if q.limit is not None and cur.returned >= q.limit:
                    done = True
                    break
            if done:
                clean = True
                return
    finally:
        _finish(host, cur.scanner, clean)


def _recover(
    host: ScanHost, cur: _Cursor, error: Exception, connection_lost: type[BaseException]
) -> None:
    """After a failed scanner call: go on without the filter, or resume once; else raise."""
    lost = isinstance(error, connection_lost)
    if cur.query.filter is not None and not lost:
        log.warning(
            "storage.hbase_scan_unfiltered",
            table=cur.query.name.decode(),
            after=cur.resume,
            caching=cur.query.caching,
            error=str(error),
        )
        cur.query = cur.query.unfiltered()
    elif cur.lost:  # the reopened scanner failed too
        raise error
    else:
        cur.lost += 1
        log.warning(
            "storage.hbase_scan_resumed",
            table=cur.query.name.decode(),
            after=cur.resume,
            error=str(error),
        )
    if cur.scanner is not None:
        host._abandon_scanner(cur.scanner)
    cur.scanner = None


def _finish(host: ScanHost, scanner: int | None, clean: bool) -> None:
    """Close a scan's scanner: now when it ended, else at the store's next call (an abandoned
    scan may be finalized from a garbage collector, where no request may be sent)."""
    if scanner is None:
        return
    if clean:
        with contextlib.suppress(StorageError, ValueError, RuntimeError):
            host._request("scannerClose", lambda c: c.scannerClose(scanner), idempotent=False)
    else:
        host._abandon_scanner(scanner)
