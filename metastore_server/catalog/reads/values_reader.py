"""Reading get_partition_values rows by a ``planner.values.ValuesPlan``.

Rows are read as encoded key tuples (``storage.codec``): their byte order is the ascending
order of the request's semantics when the order keys lead (see ``planner.values``), so a
stream is a plain scan, forwards or backwards. Two corrections make backwards exact:

* the first key: values that do not parse as its type (the default partition) sort after the
  parsed ones in both directions, so a backwards read takes the parsed span first, then the
  unparsed one (each backwards);
* later keys: inside one block of leading values a backwards read meets the unparsed values
  first; such rows are held back until their block ends, then let out in order.

Other orders sort ``order_key`` bytes: the order parts of the values rearranged into the
request's key order (inverted for descending, unparsed parts marked to stay last), then the
spelling suffix; comparing them compares the partitions exactly as the semantics say.
"""

from __future__ import annotations

import heapq
from collections.abc import Generator, Iterator, Sequence

from metastore_server import audit
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads.scan import (
    KEY_ID_LENGTH,
    NAME_COLUMNS,
    KeyRange,
    matching_rows,
)
from metastore_server.planner.evaluate import Predicate
from metastore_server.planner.types import KeyKind
from metastore_server.planner.values import ValuesPlan
from metastore_server.storage import layout
from metastore_server.storage.codec import (
    decode_values,
    is_unparsed_part,
    prefix_successor,
    split_order_parts,
    typed_span,
    unparsed_span,
)
from metastore_server.storage.port import StoragePort

_INVERT = bytes(range(255, -1, -1))


def read_rows(
    store: StoragePort, ref: TableRef, ranges: Sequence[KeyRange], plan: ValuesPlan
) -> list[list[str]]:
    """The rows of a request whose matching partitions lie in ``ranges`` (a filter plan)."""
    if plan.stream:
        return _streamed_rows(store, ref, ranges, plan)
    return _sorted_rows(store, ref, ranges, plan)


def order_key(
    kinds: Sequence[KeyKind], data: bytes, order: Sequence[int], descending: bool
) -> bytes:
    """Bytes whose order is the requested order of partitions (``data``: an encoded tuple)."""
    parts, suffix = split_order_parts(kinds, data)
    if not descending:
        return b"".join([*(parts[i] for i in order), suffix])
    inverted = [
        (b"\x01" if is_unparsed_part(parts[i]) else b"\x00") + parts[i].translate(_INVERT)
        for i in order
    ]
    return b"".join([*inverted, suffix.translate(_INVERT)])


# -- streams -----------------------------------------------------------------------------------


def _streamed_rows(
    store: StoragePort, ref: TableRef, ranges: Sequence[KeyRange], plan: ValuesPlan
) -> list[list[str]]:
    kinds = ref.kinds
    tuples = _tuples_in_order(store, ref, ranges, plan.descending, plan.prefix)
    if plan.descending and any(kind is not KeyKind.STRING for kind in kinds[1:]):
        tuples = _unparsed_last(tuples, kinds, plan.order)
    rows: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    try:
        for data in tuples:
            values = decode_values(kinds, data)
            row = [values[i] for i in plan.columns]
            if plan.distinct:
                marker = tuple(row)
                if marker in seen:
                    continue
                seen.add(marker)
            rows.append(row)
            if plan.limit is not None and len(rows) >= plan.limit:
                break
    finally:
        tuples.close()
    return rows


def _tuples_in_order(
    store: StoragePort,
    ref: TableRef,
    ranges: Sequence[KeyRange],
    descending: bool,
    prefix: int,
) -> Generator[bytes, None, None]:
    """Encoded tuples of the matching partitions in key order (backwards: the first key's
    parsed values, then its unparsed ones); with ``prefix``, one per distinct prefix."""
    table_prefix = ranges[0].start[:KEY_ID_LENGTH] if ranges else b""
    pieces = list(ranges)
    if descending:
        spans = [typed_span(ref.kinds[0])]
        unparsed = unparsed_span(ref.kinds[0])
        if unparsed is not None:
            spans.append(unparsed)
        pieces = [
            piece
            for start, stop in spans
            for piece in reversed(_clipped(ranges, table_prefix + start, table_prefix + stop))
        ]
    for piece in pieces:
        yield from _piece_tuples(store, ref, piece, descending, prefix)


def _clipped(ranges: Sequence[KeyRange], start: bytes, stop: bytes) -> list[KeyRange]:
    """The parts of ``ranges`` inside ``[start, stop)``."""
    out = []
    for r in ranges:
        if r.point is not None:
            if start <= r.point < stop:
                out.append(r)
            continue
        lo = max(r.start, start)
        hi = stop if r.stop is None else min(r.stop, stop)
        if lo < hi:
            out.append(KeyRange(lo, hi, r.residual, None, r.server_filter))
    return out


def _piece_tuples(
    store: StoragePort, ref: TableRef, piece: KeyRange, descending: bool, prefix: int
) -> Iterator[bytes]:
    """The tuples of one range in scan order, seeking past each prefix when ``prefix``."""
    counter = _Counting(ref, piece.residual)
    try:
        yield from _counted_piece_tuples(store, ref, piece, descending, prefix, counter)
    finally:
        audit.count(rows_scanned=counter.rows, seeks=counter.seeks)


def _counted_piece_tuples(
    store: StoragePort,
    ref: TableRef,
    piece: KeyRange,
    descending: bool,
    prefix: int,
    accept: _Counting,
) -> Iterator[bytes]:
    if piece.point is not None:
        row = store.get(layout.PARTITIONS, piece.point)
        if row is not None and accept(piece.point):
            yield piece.point[KEY_ID_LENGTH:]
        return
    start, stop = piece.start, piece.stop
    while True:
        rows = store.scan(
            layout.PARTITIONS,
            start,
            stop,
            reverse=descending,
            columns=NAME_COLUMNS,
            filter=piece.server_filter,
            key_filter=accept,
            batch_size=SEEKING_BATCH if prefix else None,
        )
        block = None
        try:
            for key, _row in rows:
                if accept.block is not None and key.startswith(accept.block):
                    block = accept.block  # read ahead in vain: seek past the block
                    break
                yield key[KEY_ID_LENGTH:]
                if prefix:
                    accept.enter(key[:KEY_ID_LENGTH] + _leading(ref, key, prefix))
                    if not accept.read_ahead:
                        block = accept.block  # blocks run long: seek past this one now
                        break
        finally:
            close = getattr(rows, "close", None)
            if close is not None:
                close()
        if block is None:
            return
        accept.seeking()
        if descending:
            stop = block
        else:
            following = prefix_successor(block)
            if following is None:
                return
            start = following
        if stop is not None and start >= stop:
            return


def _leading(ref: TableRef, key: bytes, prefix: int) -> bytes:
    """The encoded order parts of the first ``prefix`` values of a row key."""
    parts, _suffix = split_order_parts(ref.kinds, key[KEY_ID_LENGTH:])
    return b"".join(parts[:prefix])


#: Most rows of a block already answered for that are stepped over before seeking past the
#: rest (a seek costs a new scan; a short block is cheaper to step through). The allowance
#: adapts: it halves each time a block outlasts it (long blocks: seek at once, so rows read
#: ~ rows returned) and doubles each time a block ends within it. At 0, every PROBE_EVERY-th
#: block is read ahead by PROBE_READ_AHEAD rows again, to notice blocks getting short.
MAX_READ_AHEAD = 32
PROBE_EVERY = 16
PROBE_READ_AHEAD = 4
#: Rows a seeking read asks a round trip for (on HBase; ``scan_batch`` otherwise): such a read
#: stops after a block's first rows, so the latest value reads tens of rows, not a whole batch.
SEEKING_BATCH = 2 * (MAX_READ_AHEAD + 2)


class _Counting:
    """The key filter of a read: tests a residual, drops the rows of the block last answered
    for (letting one through after ``read_ahead`` of them, to make the reader seek), and counts
    the rows it sees and the seeks made."""

    def __init__(self, ref: TableRef, residual: Predicate | None) -> None:
        self._kinds = ref.kinds
        self._residual = residual
        self.rows = 0
        self.seeks = 0
        self.block: bytes | None = None
        self._in_block = 0
        self.read_ahead = 2
        self._since_probe = 0

    def enter(self, block: bytes) -> None:
        """Answered for every row starting with ``block``: drop them from now on."""
        if self.block is not None:  # the last block ended within the read-ahead
            self.read_ahead = min(MAX_READ_AHEAD, 2 * self.read_ahead or 1)
        elif not self.read_ahead:
            self._since_probe += 1
            if self._since_probe >= PROBE_EVERY:
                self._since_probe = 0
                self.read_ahead = PROBE_READ_AHEAD
        self.block = block
        self._in_block = 0

    def seeking(self) -> None:
        """The block outlasted the read-ahead: the reader seeks past it."""
        self.seeks += 1
        self.read_ahead //= 2
        self.block = None  # the next scan starts past it

    def __call__(self, key: bytes) -> bool:
        self.rows += 1
        block = self.block
        if block is not None and key.startswith(block):
            self._in_block += 1
            return self._in_block > self.read_ahead
        residual = self._residual
        return residual is None or residual(decode_values(self._kinds, key[KEY_ID_LENGTH:]))


def _unparsed_last(
    tuples: Generator[bytes, None, None], kinds: Sequence[KeyKind], order: Sequence[int]
) -> Generator[bytes, None, None]:
    """A backwards key-order stream with rows whose later keys hold unparsed values moved to
    the end of their block (see the module docstring); ``tuples`` is closed when done."""
    held: dict[int, list[bytes]] = {}
    previous: list[bytes] | None = None

    def release(deeper_than: int) -> Iterator[bytes]:
        for level in sorted((lv for lv in held if lv > deeper_than), reverse=True):
            yield from sorted(held.pop(level), key=lambda d: order_key(kinds, d, order, True))

    try:
        for data in tuples:
            parts, _suffix = split_order_parts(kinds, data)
            if previous is not None:
                differs = next(
                    (i for i, (a, b) in enumerate(zip(parts, previous, strict=True)) if a != b),
                    len(parts),
                )
                yield from release(differs)
            previous = parts
            level = next((i for i in range(1, len(parts)) if is_unparsed_part(parts[i])), None)
            if level is None:
                yield data
            else:
                held.setdefault(level, []).append(data)
        yield from release(-1)
    finally:
        tuples.close()


# -- everything, then ordered ------------------------------------------------------------------


def _sorted_rows(
    store: StoragePort, ref: TableRef, ranges: Sequence[KeyRange], plan: ValuesPlan
) -> list[list[str]]:
    kinds = ref.kinds
    if plan.prefix:
        tuples: Iterator[bytes] = _tuples_in_order(store, ref, ranges, False, plan.prefix)
    else:
        tuples = (key[KEY_ID_LENGTH:] for key, _ in matching_rows(store, ref, ranges, NAME_COLUMNS))
    best: dict[tuple[str, ...], bytes] = {}
    keyed: list[tuple[bytes, tuple[str, ...]]] = []
    any_partition_places = plan.distinct and plan.rows_order_themselves
    for data in tuples:
        values = decode_values(kinds, data)
        row = tuple(values[i] for i in plan.columns)
        if any_partition_places and row in best:
            continue
        sort_key = order_key(kinds, data, plan.order, plan.descending)
        if plan.distinct:
            known = best.get(row)
            if known is None or sort_key < known:
                best[row] = sort_key
        else:
            keyed.append((sort_key, row))
    if plan.distinct:
        keyed = [(sort_key, row) for row, sort_key in best.items()]
    chosen = heapq.nsmallest(plan.limit, keyed) if plan.limit is not None else sorted(keyed)
    return [list(row) for _, row in chosen]
