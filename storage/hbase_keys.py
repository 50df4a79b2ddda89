"""HBase's row keys: what can be one (bytes, not empty, at most ``MAX_ROW_KEY`` bytes, HBase's
Short.MAX_VALUE) and the scan bounds and resume points that stay within that limit, so that the
store never sends HBase a key it refuses; and the largest cell HBase takes (``check_cell``).
Pure functions; no I/O."""

from __future__ import annotations

from metastore_server.storage.codec import prefix_successor
from metastore_server.storage.port import MAX_ROW_KEY, ValueTooLargeError

#: HBase's default hbase.client.keyvalue.maxsize: the longest KeyValue a put may carry.
MAX_CELL_BYTES = 10_485_760
#: A KeyValue's bytes beyond its row, family, qualifier and value (lengths, timestamp, type).
CELL_OVERHEAD = 20


def cell_size(key: bytes, column: bytes, value: bytes) -> int:
    """The length of the KeyValue HBase makes of a put of ``value`` at ``key``, ``column``."""
    family, _, qualifier = column.partition(b":")
    return len(key) + len(family) + len(qualifier) + len(value) + CELL_OVERHEAD


def check_cell(table: bytes, key: bytes, column: bytes, value: bytes, limit: int) -> None:
    """ValueTooLargeError (a ValueError) naming the table, column and size when HBase would
    refuse the cell (``java.lang.IllegalArgumentException: KeyValue size too large``)."""
    size = cell_size(key, column, value)
    if size > limit:
        raise ValueTooLargeError(
            f"HBase cannot store a cell of {size:,} bytes in table {table.decode()}, column "
            f"{column.decode('latin-1')} (value of {len(value):,} bytes): its KeyValue limit is "
            f"{limit:,} bytes (hbase.client.keyvalue.maxsize; the storage URL's max_cell_bytes)"
        )


def too_long(key: bytes) -> bool:
    """Whether ``key`` is longer than any row key can be (a read of it finds nothing)."""
    return isinstance(key, bytes) and len(key) > MAX_ROW_KEY


def above_long(bound: bytes) -> bytes | None:
    """For a scan bound longer than a row key can be: a bound at most ``MAX_ROW_KEY`` long that
    splits the keys that can exist the same way (every key of at most ``MAX_ROW_KEY`` bytes is
    below ``bound`` exactly when it is below the result); None when every such key is below."""
    return prefix_successor(bound[:MAX_ROW_KEY])


def after(key: bytes) -> bytes:
    """The start row resuming a forward scan after ``key``: the next key that can exist."""
    if len(key) < MAX_ROW_KEY:
        return key + b"\x00"
    return prefix_successor(key) or key + b"\x00"  # an all-0xFF key: the scan is over anyway


def below(start: bytes) -> bytes | None:
    """A reverse scan's exclusive lower bound at or below every key >= ``start``: exact when
    ``start`` ends in 0x00, else the caller cuts the extra rows (``hbase_scans.Query.place``)."""
    if not start:
        return None
    if start[-1] == 0:
        return start[:-1] or None
    return start[:-1] + bytes([start[-1] - 1])


def check_key(key: bytes) -> None:
    """Refuse what cannot be an HBase row key (not bytes, empty, too long)."""
    if not isinstance(key, bytes):
        raise TypeError(f"row keys are bytes, not {type(key).__name__}")
    if not key:
        raise ValueError("a row key must not be empty")
    if len(key) > MAX_ROW_KEY:
        raise ValueError(f"a row key of {len(key)} bytes is over HBase's {MAX_ROW_KEY}")


def within_limit(start: bytes, stop: bytes | None) -> tuple[bytes, bytes | None] | None:
    """A scan's ``[start, stop)`` with bounds longer than a row key can be replaced by
    equivalent ones HBase takes; None when no key that can exist lies between them."""
    if len(start) > MAX_ROW_KEY:
        cut = above_long(start)
        if cut is None:
            return None
        start = cut
    if stop is not None and len(stop) > MAX_ROW_KEY:
        stop = above_long(stop)
    if stop is not None and stop <= start:
        return None
    return start, stop
