"""Reading partition rows: key ranges with residual predicates, counted for the audit line.

A read is a list of key ranges of one table's partitions, each with an optional residual test
of the partition's raw values; the ranges come from the filter planner (or a partial spec) and
are disjoint and in key order, so rows come out once each, in key order. Rows scanned and rows
matched are added to the audit line of the call being served.

Skip scan: a filter that bounds only later keys (``hr = 7`` on keys ds, hr, region) cannot
narrow the table's key range, but under each distinct first value it can. Such a range is read
by seeking to the next first value, reading only the bounded block under it, and repeating, so
the rows read are about (first values) + (rows returned) instead of the whole table. After
``MAX_SKIPS`` first values the rest is read as a plain scan (many distinct first values: the
plain scan is as cheap), unless the store can count a block's rows cheaply (``count_range``)
and the first blocks hold ``SKIP_PAYS_ROWS`` rows or more on average: a seek then surely costs
less than reading what it jumps over, however many first values there are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import cast

from metastore_server import audit
from metastore_server.catalog.basics import names
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.planner.ast import Expr
from metastore_server.planner.plan import FilterPlan, Get, plan_filter
from metastore_server.planner.types import KeyKind
from metastore_server.storage import layout
from metastore_server.storage.codec import (
    bound_range,
    decode_values,
    encode_id,
    exact_key,
    leading_order_part,
    prefix_successor,
)
from metastore_server.storage.filters import CompiledResidual, compile_residual
from metastore_server.storage.port import Capabilities, Row, StoragePort
from metastore_server.storage.row_scan import PartMemo

Predicate = Callable[[Sequence[str]], bool]
KEY_ID_LENGTH = 8


@dataclass(frozen=True)
class KeyRange:
    """Partition rows with ``start <= key < stop`` (stop None: to the end of the table) that
    pass ``residual`` (None: all of them). With ``point`` the range holds at most that one key,
    read with a get instead of a scan."""

    start: bytes
    stop: bytes | None
    residual: Predicate | None = None
    point: bytes | None = None
    #: The residual as an HBase filter string, for stores that filter server-side.
    server_filter: bytes | None = None
    #: Read as a skip scan (see the module docstring) when set.
    skip: SkipScan | None = None
    #: The indexes of the partition keys ``residual`` reads (None: not known). When known, its
    #: verdicts are kept by those keys' parts, so each distinct value is tested once.
    residual_keys: tuple[int, ...] | None = None
    #: Groups of strings every passing key holds one of each (``storage.filters.key_needles``),
    #: for stores that test them below their row loop (``storage.port.ScanColumns``).
    needles: tuple[tuple[bytes, ...], ...] = ()


@dataclass(frozen=True)
class SkipScan:
    """Under each distinct first value (of kind ``first_kind``) only the ``tails`` blocks are
    read: (start, stop) of the encoded later values, stop None: to the end of the block."""

    first_kind: KeyKind
    tails: tuple[tuple[bytes, bytes | None], ...]


MAX_SKIPS = 2000
#: Rows per first value from which seeking past the others pays whatever their number.
SKIP_PAYS_ROWS = 32
#: First values whose blocks are counted to judge that.
_SAMPLED_BLOCKS = 4


def plan_ranges(ref: TableRef, plan: FilterPlan, *, like: str = "regex") -> list[KeyRange]:
    """The key ranges of a filter plan over one table, each residual compiled once for this
    table (``storage.filters.compile_residual``; scans sharing a residual share it)."""
    table_prefix = encode_id(ref.table_id)
    kinds = ref.kinds
    compiled: dict[int, CompiledResidual] = {}  # by the residual's identity
    ranges = []
    for scan in plan.scans:
        start, stop = bound_range(kinds, scan.lower, scan.upper, table_prefix)
        point = None
        if isinstance(scan, Get):
            exact = exact_key(kinds, scan.values)
            point = None if exact is None else table_prefix + exact
        residual = None
        if scan.residual is not None:
            residual = compiled.get(id(scan.residual))
            if residual is None:
                residual = compile_residual(scan.residual, ref.key_types, like=like)
                compiled[id(scan.residual)] = residual
        ranges.append(_compiled_range(start, stop, point, residual))
    if len(ranges) == 1 and plan.is_full_scan and plan.scans[0].residual is not None:
        skip = _skip_scan(ref, plan.scans[0].residual, compiled[id(plan.scans[0].residual)], like)
        if skip is not None:
            ranges = [replace(ranges[0], skip=skip)]
    return ranges


def _compiled_range(
    start: bytes, stop: bytes | None, point: bytes | None, residual: CompiledResidual | None
) -> KeyRange:
    """A range whose residual (if any) is a compiled filter."""
    if residual is None:
        return KeyRange(start, stop, None, point)
    return KeyRange(
        start,
        stop,
        residual.predicate,
        point,
        residual.hbase_filter,
        residual_keys=residual.keys,
        needles=residual.needles,
    )


def _skip_scan(
    ref: TableRef, residual: Expr, compiled: CompiledResidual, like: str
) -> SkipScan | None:
    """The blocks under each first value a residual on later keys only allows (None: the
    residual names the first key, or bounds nothing, so a skip scan would not help)."""
    keys = ref.key_types
    if len(keys) < 2 or 0 in compiled.keys:
        return None
    tail = plan_filter(residual, keys[1:], like=like)
    if tail.is_full_scan:
        return None
    kinds = ref.kinds[1:]
    tails = tuple(bound_range(kinds, scan.lower, scan.upper) for scan in tail.scans)
    return SkipScan(ref.kinds[0], tails)


def whole_table(
    ref: TableRef,
    residual: Predicate | None = None,
    residual_keys: tuple[int, ...] | None = None,
) -> list[KeyRange]:
    """One range over every partition of the table (``residual_keys``: see KeyRange)."""
    start, stop = layout.partition_range(ref.table_id)
    return [KeyRange(start, stop, residual, residual_keys=residual_keys)]


def prefix(
    ref: TableRef,
    values: Sequence[str],
    residual: Predicate | None = None,
    residual_keys: tuple[int, ...] | None = None,
) -> KeyRange:
    """The range of the partitions whose leading values are ``values``."""
    start, stop = layout.prefix_range(layout.partition_prefix(ref.table_id, ref.kinds, values))
    return KeyRange(start, stop, residual, residual_keys=residual_keys)


#: The columns a listing reads: the partition's name (to sort by) and its stored encoding.
LISTING_COLUMNS = (layout.NAME, layout.OBJECT)
#: The columns a listing of names reads.
NAME_COLUMNS = (layout.NAME,)


def key_test(ref: TableRef, key_range: KeyRange) -> KeyFilter | None:
    """The test of a row key against a range's residual (None: every row passes): the
    residual on the key's decoded values, its verdicts kept by the parts of the keys it reads
    when the range says which those are (``row_scan.PartMemo``)."""
    residual = key_range.residual
    if residual is None:
        return None
    kinds = ref.kinds

    def test(key: bytes) -> bool:
        return residual(decode_values(kinds, key[KEY_ID_LENGTH:]))

    if key_range.residual_keys is None:
        return test
    return PartMemo(test, KEY_ID_LENGTH, key_range.residual_keys, ref.has_spellings)


def _counting(test: KeyFilter, tested: list[int]) -> KeyFilter:
    """``test``, counting its calls in ``tested[0]``."""

    def counted(key: bytes) -> bool:
        tested[0] += 1
        return test(key)

    return counted


def matching_rows(
    store: StoragePort,
    ref: TableRef,
    ranges: Iterable[KeyRange],
    columns: Sequence[bytes] | None = None,
) -> Iterator[tuple[bytes, Row]]:
    """(key, row) of every partition in ``ranges`` that passes its range's residual; the rows
    hold only ``columns`` when given (every partition row has all the layout's columns).

    The residual is the store's ``key_filter``: it is tested on the row key (the partition's
    values) before the rest of the row is decoded."""
    untested = matched = 0
    tested = [0]
    try:
        for key_range in ranges:
            test = key_test(ref, key_range)
            key_filter = None if test is None else _counting(test, tested)
            for key, row in _rows_of(store, key_range, columns, key_filter):
                matched += 1
                if key_filter is None:
                    untested += 1
                yield key, row
    finally:
        audit.count(rows_scanned=tested[0] + untested, rows_matched=matched)


def matching_columns(
    store: StoragePort,
    ref: TableRef,
    ranges: Iterable[KeyRange],
    columns: Sequence[bytes],
    *,
    keys: bool = True,
) -> tuple[list[tuple[bytes | None, ...]], int]:
    """``(value of each column..., key)`` of every partition in ``ranges`` that passes its
    range's residual, in the ranges' order (None: a column the row lacks), and how many of
    them lack a column: ``matching_rows`` as tuples, read by the store's compiled loop where it
    has one (``scan_columns``). With ``keys=False`` the key may be None in a tuple that has
    every column (a big listing then holds no copy of every key)."""
    found: list[tuple[bytes | None, ...]] = []
    incomplete = 0
    for rows, lacking in column_batches(store, ref, ranges, columns, keys=keys):
        if found:
            found.extend(rows)
        else:
            found = rows
        incomplete += lacking
    return found, incomplete


def column_batches(
    store: StoragePort,
    ref: TableRef,
    ranges: Iterable[KeyRange],
    columns: Sequence[bytes],
    *,
    keys: bool = True,
    batch: int | None = None,
) -> Iterator[tuple[list[tuple[bytes | None, ...]], int]]:
    """What ``matching_columns`` finds, in batches of at most ``batch`` tuples (None: a batch
    a range or segment), each with how many of its tuples lack a column; with ``batch`` every
    tuple holds its key."""
    scan_columns = Capabilities.of(store).scan_columns
    keys = keys or batch is not None
    counts = [0, 0]  # rows read, rows matched
    points: list[bytes] = []  # plain point ranges in a row, read together
    try:
        for key_range in ranges:
            if key_range.point is not None and key_range.residual is None:
                points.append(key_range.point)
                if batch is not None and len(points) >= batch:
                    yield _points(store, points, columns, counts)
                continue
            if points:
                yield _points(store, points, columns, counts)
            test = key_test(ref, key_range)
            if scan_columns is None or key_range.point is not None:
                yield from _row_batches(store, key_range, columns, test, batch, counts)
                continue
            for start, stop in _segments(store, key_range):
                while True:
                    rows, read, lacking = scan_columns(
                        layout.PARTITIONS, start, stop, columns, key_filter=test, keys=keys,
                        needles=key_range.needles, limit=batch,
                    )  # fmt: skip
                    counts[0] += read
                    counts[1] += len(rows)
                    yield rows, lacking
                    if batch is None or len(rows) < batch:
                        break
                    start = cast(bytes, rows[-1][-1]) + b"\x00"  # after the last row's key
        if points:
            yield _points(store, points, columns, counts)
    finally:
        audit.count(rows_scanned=counts[0], rows_matched=counts[1])


def _points(
    store: StoragePort, points: list[bytes], columns: Sequence[bytes], counts: list[int]
) -> tuple[list[tuple[bytes | None, ...]], int]:
    """The rows of ``points`` that exist (read together; the list is emptied)."""
    rows: list[tuple[bytes | None, ...]] = []
    lacking = 0
    for key, row in store.get_many(layout.PARTITIONS, points):
        rows.append((*[row.get(column) for column in columns], key))
        lacking += not all(column in row for column in columns)
    points.clear()
    counts[0] += len(rows)
    counts[1] += len(rows)
    return rows, lacking


def _row_batches(
    store: StoragePort,
    key_range: KeyRange,
    columns: Sequence[bytes],
    test: KeyFilter | None,
    batch: int | None,
    counts: list[int],
) -> Iterator[tuple[list[tuple[bytes | None, ...]], int]]:
    """The rows of one range read row by row (a store without ``scan_columns``, a point
    with a residual), in batches."""
    tested = [0]
    if test is not None:
        test = _counting(test, tested)
    rows: list[tuple[bytes | None, ...]] = []
    lacking = matched = 0
    for key, row in _rows_of(store, key_range, columns, test):
        rows.append((*[row.get(column) for column in columns], key))
        lacking += not all(column in row for column in columns)
        if batch is not None and len(rows) >= batch:
            matched += len(rows)
            yield rows, lacking
            rows, lacking = [], 0
    matched += len(rows)
    counts[0] += tested[0] if test is not None else matched
    counts[1] += matched
    yield rows, lacking


def range_counts(store: StoragePort, ref: TableRef, key_range: KeyRange) -> tuple[int, int]:
    """(rows read, rows passing the residual) of one key range (for EXPLAIN ANALYZE)."""
    scanned = matched = 0
    for key, _row in _rows_of(store, key_range, NAME_COLUMNS):
        scanned += 1
        if key_range.residual is None or key_range.residual(values_of(ref, key)):
            matched += 1
    return scanned, matched


KeyFilter = Callable[[bytes], bool]


def _rows_of(
    store: StoragePort,
    key_range: KeyRange,
    columns: Sequence[bytes] | None = None,
    key_filter: KeyFilter | None = None,
) -> Iterator[tuple[bytes, Row]]:
    if key_range.skip is not None:
        return _skipping_rows(store, key_range, key_range.skip, columns, key_filter)
    if key_range.point is not None:
        point = key_range.point
        row = store.get(layout.PARTITIONS, point)
        if row is None or (key_filter is not None and not key_filter(point)):
            return iter(())
        if columns is not None:
            row = {column: row[column] for column in columns if column in row}
        return iter(((point, row),))
    return store.scan(
        layout.PARTITIONS,
        key_range.start,
        key_range.stop,
        columns=columns,
        filter=key_range.server_filter,
        key_filter=key_filter,
    )


def _skipping_rows(
    store: StoragePort,
    key_range: KeyRange,
    skip: SkipScan,
    columns: Sequence[bytes] | None,
    key_filter: KeyFilter | None,
) -> Iterator[tuple[bytes, Row]]:
    """The rows of a skip-scan range (see the module docstring)."""
    for start, stop in _segments(store, key_range):
        yield from store.scan(
            layout.PARTITIONS,
            start,
            stop,
            columns=columns,
            filter=key_range.server_filter,
            key_filter=key_filter,
        )


def _segments(store: StoragePort, key_range: KeyRange) -> Iterator[tuple[bytes, bytes | None]]:
    """The key spans a range is read as: itself, or for a skip scan the blocks it allows under
    each first value, found by seeking as the reading goes (the seeks are counted apart,
    ``seeks`` on the audit line, as they read a row the block scan reads again)."""
    skip = key_range.skip
    if skip is None:
        yield key_range.start, key_range.stop
        return
    cursor, stop = key_range.start, key_range.stop
    table_prefix = key_range.start[:KEY_ID_LENGTH]
    count_range = Capabilities.of(store).count_range
    sampled: list[int] = []
    skips = 0
    while skips < MAX_SKIPS or _skipping_pays(sampled):
        skips += 1
        found = next(
            iter(store.scan(layout.PARTITIONS, cursor, stop, limit=1, columns=NAME_COLUMNS)), None
        )
        if found is None:
            return
        audit.count(seeks=1)
        block = table_prefix + leading_order_part(skip.first_kind, found[0][KEY_ID_LENGTH:])
        block_end = prefix_successor(block)
        if count_range is not None and len(sampled) < _SAMPLED_BLOCKS:
            sampled.append(count_range(layout.PARTITIONS, block, block_end))
        for tail_start, tail_stop in skip.tails:
            yield block + tail_start, block_end if tail_stop is None else block + tail_stop
        if block_end is None:
            return
        cursor = block_end
    yield cursor, stop


def _skipping_pays(sampled: list[int]) -> bool:
    """Whether the blocks counted hold enough rows on average for seeking to pay always."""
    return len(sampled) == _SAMPLED_BLOCKS and sum(sampled) >= SKIP_PAYS_ROWS * _SAMPLED_BLOCKS


def values_of(ref: TableRef, key: bytes) -> list[str]:
    """The raw partition values of a partition row key."""
    return decode_values(ref.kinds, key[KEY_ID_LENGTH:])


def name_of(ref: TableRef, key: bytes, row: Row) -> str:
    """The partition name of a row: stored with it, or made from its key."""
    return name_bytes_of(ref, key, row).decode("utf-8")


def name_bytes_of(ref: TableRef, key: bytes, row: Row) -> bytes:
    """The partition name of a row as UTF-8 (whose byte order is the names' order)."""
    stored = row.get(layout.NAME)
    if stored is not None:
        return stored
    return names.make_partition_name(ref.key_names, values_of(ref, key)).encode("utf-8")
