"""The HBase store's reads outside a transaction, committed only (``storage.committed_reads``):
a point read, a read of many keys and a scan, each read as it lands and then resolved against
the intents of changes not committed when it began.

A scan is read in batches (its ``batch_size``); after each batch the register is read again,
and the batch's rows and the rows the read's future touched in the batch's key range are
shown as they were before those changes: a row they made is left out, a row they deleted or
changed is read whole (one request) and shown as it was. A row left out does not count to
``limit``: the scan reads on. ``until_pending`` stops a scan before the first row that a change
not yet committed made (the notification log: a follower must not pass an event that is still
to come).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from metastore_server.storage import hbase_keys
from metastore_server.storage.committed_reads import Register, Snapshot, merged, view
from metastore_server.storage.port import Row

Get = Callable[[str, bytes], "Row | None"]
GetMany = Callable[[str, Sequence[bytes]], "list[tuple[bytes, Row]]"]
RawScan = Callable[..., Iterator[tuple[bytes, Row]]]


@dataclass(frozen=True)
class ScanRange:
    """What one port scan asks for."""

    table: str
    start: bytes
    stop: bytes | None
    reverse: bool
    limit: int | None
    columns: Sequence[bytes] | None
    filter: bytes | None
    batch: int
    key_filter: Callable[[bytes], bool] | None

    def holds(self, key: bytes) -> bool:
        return key >= self.start and (self.stop is None or key < self.stop)


class CommittedReads:
    """Reads that see committed changes only (see the module docstring)."""

    def __init__(self, register: Register, get: Get, get_many: GetMany, scan: RawScan) -> None:
        self.register = register
        self._get = get
        self._get_many = get_many
        self._scan = scan

    def get(self, table: str, key: bytes) -> Row | None:
        """One row: the register, the row, the register again."""
        snapshot = Snapshot(self.register).start()
        found = self._get(table, key)
        snapshot.refresh()
        if snapshot.quiet:
            return found
        return view(snapshot.images(table, key), found)

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """Rows of ``keys`` that exist, in their order."""
        snapshot = Snapshot(self.register).start()
        found = self._get_many(table, keys)
        snapshot.refresh()
        if snapshot.quiet:
            return found
        rows = dict(found)
        seen: dict[bytes, Row | None] = {}
        for key in dict.fromkeys(keys):
            images = snapshot.images(table, key)
            seen[key] = view(images, rows.get(key)) if images else rows.get(key)
        return [(key, row) for key in keys if (row := seen.get(key)) is not None]

    def scan(self, asked: ScanRange, *, until_pending: bool = False,
             ) -> Iterator[tuple[bytes, Row]]:  # fmt: skip
        """The rows of a scan as committed changes left them, lazily, batch by batch (one
        scanner, read ``batch`` rows at a time; reopened after the last row only when rows
        left out fell short of ``limit``)."""
        snapshot = Snapshot(self.register).start()
        wanted = None if asked.columns is None else frozenset(asked.columns)
        returned = 0
        edge: bytes | None = None  # the last key covered, in scan order
        raw, raw_left = self._raw_from(asked, edge, asked.limit)
        while True:
            want = asked.batch if asked.limit is None else min(asked.batch, asked.limit - returned)
            batch = list(itertools.islice(raw, want))
            if raw_left is not None:
                raw_left -= len(batch)
            ended = len(batch) < want and raw_left != 0  # (0: the raw scan's own limit)
            snapshot.refresh()
            last = batch[-1][0] if batch and not ended else None
            rows: list[tuple[bytes, Row | None]] = list(batch)
            if not snapshot.quiet:
                rows = self._resolved(asked, snapshot, batch, edge, last, wanted)
            for key, row in rows:
                if row is None:  # a row a change not yet committed made
                    if until_pending:
                        return
                    continue
                yield key, row
                returned += 1
                if asked.limit is not None and returned >= asked.limit:
                    return
            if ended:
                return
            edge = last if last is not None else edge
            if raw_left == 0 and asked.limit is not None:  # rows left out: read on after
                raw, raw_left = self._raw_from(asked, edge, asked.limit - returned)

    def _raw_from(self, asked: ScanRange, edge: bytes | None, limit: int | None,
                  ) -> tuple[Iterator[tuple[bytes, Row]], int | None]:  # fmt: skip
        """The rows as they land after ``edge`` in scan order, at most ``limit``."""
        start, stop = asked.start, asked.stop
        if edge is not None:
            if asked.reverse:
                stop = edge
            else:
                start = hbase_keys.after(edge)
        rows = self._scan(asked.table, start, stop, reverse=asked.reverse, limit=limit,
                          columns=asked.columns, filter=asked.filter, batch_size=asked.batch,
                          key_filter=asked.key_filter)  # fmt: skip
        return rows, limit

    def _resolved(self, asked: ScanRange, snapshot: Snapshot, batch: list[tuple[bytes, Row]],
                  edge: bytes | None, last: bytes | None,
                  wanted: frozenset[bytes] | None,
                  ) -> list[tuple[bytes, Row | None]]:  # fmt: skip
        """A batch with the rows the read's future touched in its range as they were (None
        for a row one of those changes made)."""
        touched = _touched_in(snapshot, asked, edge, last)
        if not touched:
            return list(batch)
        rows = dict(batch)
        missing = [key for key in touched if key not in rows]
        whole = dict(self._get_many(asked.table, missing)) if missing else {}
        extra: dict[bytes, Row | None] = {}
        made: set[bytes] = set()
        for key in touched:
            if key not in rows and asked.key_filter is not None and not asked.key_filter(key):
                continue
            current = rows[key] if key in rows else whole.get(key)
            images = snapshot.images(asked.table, key)
            extra[key] = view(images, current, wanted)
            if extra[key] is None and any(not image.before for image in images):
                made.add(key)
        return merged(batch, extra, made, asked.reverse)


def _touched_in(snapshot: Snapshot, asked: ScanRange, edge: bytes | None,
                last: bytes | None) -> list[bytes]:  # fmt: skip
    """Keys the read's future touched in the range a batch covered: after ``edge`` up to
    ``last`` (None: to the end of the scan), in scan order."""
    if not asked.reverse:
        keys = snapshot.keys_between(asked.table, edge, last)
    else:  # (the batch covered ``last <= key < edge``)
        keys = [k for k in snapshot.keys(asked.table)
                if (last is None or k >= last) and (edge is None or k < edge)]  # fmt: skip
    return [key for key in keys if asked.holds(key)]

