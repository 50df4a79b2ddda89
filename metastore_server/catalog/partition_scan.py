"""Reading partition rows: key ranges with residual predicates, counted for the audit line.

A read is a list of key ranges of one table's partitions, each with an optional residual test
of the partition's raw values; the ranges come from the filter planner (or a partial spec) and
are disjoint and in key order, so rows come out once each, in key order. Rows scanned and rows
matched are added to the audit line of the call being served.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from metastore_server import audit
from metastore_server.catalog import names
from metastore_server.catalog.tables import TableRef
from storage import layout
from storage.codec import decode_values
from storage.port import Row, StoragePort

Predicate = Callable[[Sequence[str]], bool]
KEY_ID_LENGTH = 8


@dataclass(frozen=True)
class KeyRange:
    """Partition rows with ``start <= key < stop`` (stop None: to the end of the table) that
    pass ``residual`` (None: all of them)."""

    start: bytes
    stop: bytes | None
    residual: Predicate | None = None


def whole_table(ref: TableRef, residual: Predicate | None = None) -> list[KeyRange]:
    """One range over every partition of the table."""
    start, stop = layout.partition_range(ref.table_id)
    return [KeyRange(start, stop, residual)]


def prefix(ref: TableRef, values: Sequence[str], residual: Predicate | None = None) -> KeyRange:
    """The range of the partitions whose leading values are ``values``."""
    start, stop = layout.prefix_range(layout.partition_prefix(ref.table_id, ref.kinds, values))
    return KeyRange(start, stop, residual)


def matching_rows(
    store: StoragePort, ref: TableRef, ranges: Iterable[KeyRange]
) -> Iterator[tuple[bytes, Row]]:
    """(key, row) of every partition in ``ranges`` that passes its range's residual."""
    scanned = matched = 0
    try:
        for key_range in ranges:
            residual = key_range.residual
            for key, row in store.scan(layout.PARTITIONS, key_range.start, key_range.stop):
                scanned += 1
                if residual is not None and not residual(values_of(ref, key)):
                    continue
                matched += 1
                yield key, row
    finally:
        audit.count(rows_scanned=scanned, rows_matched=matched)


def values_of(ref: TableRef, key: bytes) -> list[str]:
    """The raw partition values of a partition row key."""
    return decode_values(ref.kinds, key[KEY_ID_LENGTH:])


def name_of(ref: TableRef, key: bytes, row: Row) -> str:
    """The partition name of a row: stored with it, or made from its key."""
    stored = row.get(layout.NAME)
    if stored is not None:
        return stored.decode("utf-8")
    return names.make_partition_name(ref.key_names, values_of(ref, key))
