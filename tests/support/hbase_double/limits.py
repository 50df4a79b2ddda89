"""The HBase test double's size limits (see the package docstring): row keys longer than
``MAX_ROW_KEY`` and cells whose KeyValue is longer than the double's ``max_cell_bytes`` are
refused as HBase's client classes refuse them."""

from __future__ import annotations

from support.hbase_double.idl import illegal_argument, io_error

#: HBase's largest cell (hbase.client.keyvalue.maxsize's default), as a KeyValue's length.
MAX_CELL_BYTES = 10_485_760
#: A KeyValue's bytes beyond its row, family, qualifier and value (lengths, timestamp, type).
CELL_OVERHEAD = 20

#: HBase's longest row key (HConstants.MAX_ROW_LENGTH, Short.MAX_VALUE).
MAX_ROW_KEY = 32767


def _row_length_message(row: bytes) -> str:
    return f"java.lang.IllegalArgumentException: Row length {len(row)} is > {MAX_ROW_KEY}"


def check_write_row(row: bytes) -> None:
    """A write's row key: IllegalArgument when HBase's Mutation.checkRow refuses it."""
    if row is not None and len(row) > MAX_ROW_KEY:
        raise illegal_argument(_row_length_message(row))


def check_read_row(row: bytes | None) -> None:
    """A get's row or a scan's start/stop row: IOError when HBase refuses it (the read calls
    declare only IOError)."""
    if row is not None and len(row) > MAX_ROW_KEY:
        raise io_error(_row_length_message(row))


def check_cell(row: bytes, column: bytes, value: bytes | None, limit: int | None) -> None:
    """A put's cell: IllegalArgument when its KeyValue is longer than ``limit``."""
    family, _, qualifier = column.partition(b":")
    size = len(row) + len(family) + len(qualifier) + len(value or b"") + CELL_OVERHEAD
    if limit is not None and size > limit:
        raise illegal_argument("java.lang.IllegalArgumentException: KeyValue size too large")
