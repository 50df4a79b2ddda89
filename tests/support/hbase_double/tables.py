"""The HBase test double's tables: their names and column families as HBase checks them,
the columns a call selects from a row, and rows as Thrift results."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from metastore_server.storage.port import Row

from support.hbase_double.idl import hbase_thrift, illegal_argument, io_error

_TABLE_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


@dataclass
class Table:
    store_name: str
    families: frozenset[bytes]
    enabled: bool = True


def check_table_name(name: bytes, namespaces: set[bytes]) -> bytes:
    namespace, colon, qualifier = name.rpartition(b":")
    if colon and namespace not in namespaces:
        raise io_error(f"org.apache.hadoop.hbase.NamespaceNotFoundException: {namespace!r}")
    if not qualifier or not set(qualifier) <= _TABLE_NAME_CHARS or qualifier[:1] in (b".", b"-"):
        raise illegal_argument(f"java.lang.IllegalArgumentException: Illegal table name {name!r}")
    return name


def check_column(table: Table, column: bytes) -> None:
    family = column.partition(b":")[0]
    if family not in table.families:
        raise io_error(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family "
            f"{family.decode('latin-1')} does not exist"
        )


def selector(table: Table, columns: Sequence[bytes] | None) -> Callable[[Row], Row]:
    """The part of a row a column list selects (``f:q`` columns and whole families ``f``)."""
    if not columns:
        return lambda row: row
    wanted_columns, wanted_families = set(), set()
    for column in columns:
        check_column(table, column)
        family, colon, _ = column.partition(b":")
        (wanted_columns if colon else wanted_families).add(column if colon else family)

    def select(row: Row) -> Row:
        return {
            name: value
            for name, value in row.items()
            if name in wanted_columns or name.partition(b":")[0] in wanted_families
        }

    return select


def row_result(key: bytes, row: Row, sort_columns: bool) -> Any:
    stamp = int(time.time() * 1000)
    cells = {name: hbase_thrift.TCell(value=value, timestamp=stamp) for name, value in row.items()}
    if sort_columns:
        ordered = [
            hbase_thrift.TColumn(columnName=name, cell=cells[name]) for name in sorted(cells)
        ]
        return hbase_thrift.TRowResult(row=key, sortedColumns=ordered)
    return hbase_thrift.TRowResult(row=key, columns=cells)
