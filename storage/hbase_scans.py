"""Scans of the HBase store (``storage.hbase``): one port scan as HBase scanners.

``query`` checks a port scan's arguments and makes its ``Query``: start/stop rows, ``reversed``
(from ``stop`` down, the row at ``stop`` skipped, and rows below ``start`` cut off on the
client), ``caching`` = the batch size, the selected columns (plus the columns the filter tests,
which HBase's SingleColumnValueFilter needs to see; they are stripped again), and the filter
string. ``scan_rows`` reads it over the store's connection (``scannerOpenWithScan``).

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

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from operator import methodcaller
from typing import Any

import structlog
from metastore_server.storage import hbase_keys
from metastore_server.storage.hbase_connection import (
    THRIFT,
    HBaseConnection,
    HBaseUnavailableError,
    row_of,
)
from metastore_server.storage.hbase_tables import HBaseTables, check_column
from metastore_server.storage.port import Row, StorageError, check_scan_arguments

log = structlog.get_logger(__name__)

_SCVF_COLUMN = re.compile(
    rb"SingleColumnValueFilter\s*\(\s*'((?:[^']|'')*)'\s*,\s*'((?:[^']|'')*)'"
)


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

    def tscan(self, resume: bytes | None) -> Any:
        """The TScan reading this query's rows after ``resume`` (None: from the start)."""
        if not self.reverse:
            start_row: bytes | None = self.start if resume is None else hbase_keys.after(resume)
            stop_row: bytes | None = self.stop
        else:  # HBase walks from startRow (inclusive) down to stopRow (exclusive)
            start_row = self.stop if resume is None else resume
            stop_row = hbase_keys.below(self.start)
        return THRIFT.TScan(
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


def query(
    tables: HBaseTables,
    table: str,
    start: bytes,
    stop: bytes | None,
    *,
    reverse: bool,
    limit: int | None,
    columns: Sequence[bytes] | None,
    filter: bytes | None,
    batch_size: int | None,
    key_filter: Callable[[bytes], bool] | None,
    default_batch: int,
) -> Query | None:
    """The checked query of a port scan (see ``HBaseStore.scan``); None when it reads
    nothing. KeyError for a table that does not exist, before any other check."""
    name, families = tables.lookup(table)
    check_scan_arguments(start, stop, limit, filter, batch_size)
    wanted: frozenset[bytes] | None = None
    request: list[bytes] | None = None
    if columns is not None:
        for column in columns:
            check_column(column, families, table)
        wanted = frozenset(columns)
        tested = _filter_columns(filter) if filter else set()
        request = sorted(wanted | {c for c in tested if c.partition(b":")[0] in families})
    if limit == 0 or (stop is not None and stop <= start) or wanted == frozenset():
        return None
    bounds = hbase_keys.within_limit(start, stop)
    if bounds is None:
        return None
    start, stop = bounds
    return Query(name, start, stop, reverse, limit, wanted, request, filter or None,
                 batch_size or default_batch, key_filter)  # fmt: skip


def _filter_columns(text: bytes) -> set[bytes]:
    """The columns a filter string's SingleColumnValueFilters test."""
    return {
        family.replace(b"''", b"'") + b":" + qualifier.replace(b"''", b"'")
        for family, qualifier in _SCVF_COLUMN.findall(text)
    }


def scan_rows(host: HBaseConnection, q: Query) -> Iterator[tuple[bytes, Row]]:
    """The rows of a query, read lazily (see the module docstring)."""
    cur = _Cursor(q, upper=q.stop)
    clean = False
    try:
        while True:
            if cur.scanner is None:
                tscan = cur.query.tscan(cur.resume)
                cur.upper = q.stop if cur.resume is None else cur.resume
                cur.scanner = host.call(
                    "scan",
                    methodcaller("scannerOpenWithScan", cur.query.name, tscan, {}),
                    idempotent=True,
                )
            want = q.caching if q.limit is None else min(q.caching, q.limit - cur.returned)
            try:
                items = host.call(
                    "scan",
                    methodcaller("scannerGetList", cur.scanner, want),
                    idempotent=False,
                )
            except (StorageError, ValueError) as error:
                _recover(host, cur, error)
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


def _recover(host: HBaseConnection, cur: _Cursor, error: Exception) -> None:
    """After a failed scanner call: go on without the filter, or resume once; else raise."""
    lost = isinstance(error, HBaseUnavailableError)
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
        host.abandon_scanner(cur.scanner)
    cur.scanner = None


def _finish(host: HBaseConnection, scanner: int | None, clean: bool) -> None:
    """Close a scan's scanner: now when it ended, else at the store's next call (an abandoned
    scan may be finalized from a garbage collector, where no request may be sent)."""
    if scanner is None:
        return
    if clean:
        host.close_scanner(scanner)
    else:
        host.abandon_scanner(scanner)
