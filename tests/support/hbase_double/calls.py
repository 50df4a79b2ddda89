"""The ``Hbase`` service calls of the HBase test double: tables, reads and writes here, the
scanner calls in ``scanners``; and ``Guard``, the handler as the Thrift processor sees it (fault
hooks first, then the call)."""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from metastore_server.storage.port import Delete, Put, TableSpec
from thriftpy2.thrift import TApplicationException

from support.hbase_double.faults import Drop
from support.hbase_double.idl import hbase_thrift, illegal_argument, io_error
from support.hbase_double.limits import check_cell, check_read_row, check_write_row
from support.hbase_double.scanners import ScannerCalls
from support.hbase_double.tables import (
    Table,
    check_column,
    check_table_name,
    row_result,
    selector,
)

if TYPE_CHECKING:
    from support.hbase_double.server import HBaseDouble

log = logging.getLogger(__name__)

_LONG = struct.Struct(">q")


class _Handler(ScannerCalls):
    """The Hbase service calls, on the double's state."""

    def __init__(self, double: HBaseDouble) -> None:
        self.d = double

    # -- tables ---------------------------------------------------------------------------

    def getTableNames(self) -> list[bytes]:
        return sorted(self.d._tables)

    def createTable(self, tableName: bytes, columnFamilies: Sequence[Any]) -> None:
        name = check_table_name(tableName, self.d._namespaces)
        families = set()
        for descriptor in columnFamilies or ():
            family = (descriptor.name or b"").rstrip(b":")
            if not family or b":" in family:
                raise illegal_argument(f"bad column family name {descriptor.name!r}")
            families.add(family)
        if not families:
            raise illegal_argument("Table should have at least one column family.")
        self.d._table_ddl()
        with self.d._lock:
            if name in self.d._tables:
                raise hbase_thrift.AlreadyExists(message="table name already in use")
            store_name = f"g{next(self.d._generation)}"
            self.d._store.ensure_tables(
                [TableSpec(store_name, tuple(f.decode() for f in families))]
            )
            self.d._tables[name] = Table(store_name, frozenset(families))
            self.d.tables_created.append(name)

    def deleteTable(self, tableName: bytes) -> None:
        self.d._table_ddl()
        with self.d._lock:
            table = self.d._tables.get(tableName)
            if table is None:
                raise io_error("java.io.IOException: table does not exist")
            if table.enabled:
                raise io_error(f"org.apache.hadoop.hbase.TableNotDisabledException: {tableName!r}")
            del self.d._tables[tableName]

    def enableTable(self, tableName: bytes) -> None:
        table = self.d._table(tableName, enabled=None)
        self.d._table_ddl()
        table.enabled = True

    def disableTable(self, tableName: bytes) -> None:
        table = self.d._table(tableName, enabled=None)
        self.d._table_ddl()
        table.enabled = False

    def isTableEnabled(self, tableName: bytes) -> bool:
        return self.d._table(tableName, enabled=None).enabled

    def getColumnDescriptors(self, tableName: bytes) -> dict[bytes, Any]:
        table = self.d._table(tableName, enabled=None)
        return {
            family + b":": hbase_thrift.ColumnDescriptor(name=family + b":", maxVersions=1)
            for family in sorted(table.families)
        }

    def getTableRegions(self, tableName: bytes) -> list[Any]:
        self.d._table(tableName, enabled=None)
        region = hbase_thrift.TRegionInfo(
            startKey=b"",
            endKey=b"",
            id=1,
            name=tableName + b",,1",
            version=1,
            serverName=b"127.0.0.1",
            port=self.d.port,
        )
        return [region]

    # -- reads ----------------------------------------------------------------------------

    def get(self, tableName: bytes, row: bytes, column: bytes, attributes: Any) -> list[Any]:
        found = self.getRowWithColumns(tableName, row, [column], attributes)
        return [cell for result in found for cell in result.columns.values()]

    def getRow(self, tableName: bytes, row: bytes, attributes: Any) -> list[Any]:
        return self.getRowWithColumns(tableName, row, None, attributes)

    def getRowWithColumns(
        self, tableName: bytes, row: bytes, columns: Sequence[bytes] | None, attributes: Any
    ) -> list[Any]:
        return self.getRowsWithColumns(tableName, [row], columns, attributes)

    def getRows(self, tableName: bytes, rows: Sequence[bytes], attributes: Any) -> list[Any]:
        return self.getRowsWithColumns(tableName, rows, None, attributes)

    def getRowsWithColumns(
        self,
        tableName: bytes,
        rows: Sequence[bytes],
        columns: Sequence[bytes] | None,
        attributes: Any,
    ) -> list[Any]:
        table = self.d._table(tableName)
        for key in rows:
            check_read_row(key)
        select = selector(table, columns)
        results = []
        for key in rows:
            stored = self.d._read(table, key)
            chosen = select(stored) if stored else {}
            if chosen:
                results.append(row_result(key, chosen, sort_columns=False))
        return results

    # -- writes ---------------------------------------------------------------------------

    def mutateRow(
        self, tableName: bytes, row: bytes, mutations: Sequence[Any], attributes: Any
    ) -> None:
        table = self.d._table(tableName)
        deletes, puts = _split_mutations(
            table, row, mutations, strict=False, max_cell=self.d.max_cell_bytes
        )
        with self.d._lock:
            if deletes:
                self.d._write_deletes(table, row, deletes)
            if puts:
                self.d._write_puts(table, row, puts)

    def mutateRows(self, tableName: bytes, rowBatches: Sequence[Any], attributes: Any) -> None:
        table = self.d._table(tableName)
        limit = self.d.max_cell_bytes
        split = [
            (b.row, *_split_mutations(table, b.row, b.mutations, strict=True, max_cell=limit))
            for b in rowBatches
        ]
        errors = []
        with self.d._lock:  # every row's deletes, then every row's puts
            errors += self.d._write_many_deletes(table, [(r, d) for r, d, _ in split if d])
            errors += self.d._write_many_puts(table, [(r, puts) for r, _, puts in split if puts])
        if errors:
            raise io_error(
                "org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException: "
                f"Failed {len(errors)} actions: " + "; ".join(errors)
            )

    def deleteAll(self, tableName: bytes, row: bytes, column: bytes, attributes: Any) -> None:
        self.mutateRow(
            tableName, row, [hbase_thrift.Mutation(isDelete=True, column=column)], attributes
        )

    def deleteAllRow(self, tableName: bytes, row: bytes, attributes: Any) -> None:
        table = self.d._table(tableName)
        check_read_row(row)  # declares only IOError
        with self.d._lock:
            self.d._spend()
            self.d._store.mutate([Delete(table.store_name, row)])

    def atomicIncrement(self, tableName: bytes, row: bytes, column: bytes, value: int) -> int:
        table = self.d._table(tableName)
        check_write_row(row)
        check_column(table, column)
        with self.d._lock:
            self.d._spend()
            current = self.d._read(table, row).get(column)
            if current is not None and len(current) != _LONG.size:
                raise io_error(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, "
                    f"it's {len(current)} bytes wide"
                )
            old = 0 if current is None else _LONG.unpack(current)[0]
            new = (old + value + 2**63) % 2**64 - 2**63  # a Java long wraps around
            self.d._store.mutate([Put(table.store_name, row, {column: _LONG.pack(new)})])
            return new

    def checkAndPut(
        self,
        tableName: bytes,
        row: bytes,
        column: bytes,
        value: bytes | None,
        mput: Any,
        attributes: Any,
    ) -> bool:
        table = self.d._table(tableName)
        check_write_row(row)
        check_column(table, column)
        family, colon, _ = (mput.column or b"").partition(b":")
        if not colon:
            raise illegal_argument(
                f"java.lang.IllegalArgumentException: bad column {mput.column!r}"
            )
        check_column(table, mput.column)
        check_cell(row, mput.column, mput.value, self.d.max_cell_bytes)
        with self.d._lock:
            current = self.d._read(table, row).get(column)
            # HBase: an empty expected value holds for a missing or empty cell
            holds = not current if not value else current == value
            if not holds:
                return False
            self.d._spend()
            self.d._store.mutate([Put(table.store_name, row, {mput.column: mput.value or b""})])
            return True


class Guard:
    """The handler as the processor sees it: hooks first, then the call; a Python error of the
    double becomes a TApplicationException (what a Java server's runtime error becomes)."""

    _DECLARED = (
        hbase_thrift.IOError,
        hbase_thrift.IllegalArgument,
        hbase_thrift.AlreadyExists,
        TApplicationException,
        Drop,
    )

    def __init__(self, double: HBaseDouble) -> None:
        self._double = double
        self._handler = _Handler(double)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._handler, name, None)

        def call(*args: Any) -> Any:
            double = self._double
            double.calls[name] += 1
            double._maybe_crash(name)
            double._maybe_drop(name, "before")
            double._maybe_stall(name)
            double._wait_for_regions(name)
            if method is None:
                raise TApplicationException(
                    TApplicationException.UNKNOWN_METHOD, f"the HBase double has no {name}"
                )
            try:
                result = method(*args)
            except self._DECLARED:
                raise
            except Exception as error:
                log.exception("hbase double: %s failed", name)
                raise TApplicationException(
                    TApplicationException.INTERNAL_ERROR,
                    f"Internal error processing {name}: {type(error).__name__}: {error}",
                ) from error
            double._maybe_drop(name, "after")
            return result

        return call


def _split_mutations(
    table: Table, row: bytes, mutations: Sequence[Any], *, strict: bool, max_cell: int | None
) -> tuple[list[bytes], dict[bytes, bytes]]:
    """(columns or families to delete, columns to put) of one row's mutations."""
    if not row:
        raise illegal_argument("java.lang.IllegalArgumentException: Row length is 0")
    check_write_row(row)
    deletes: list[bytes] = []
    puts: dict[bytes, bytes] = {}
    for mutation in mutations or ():
        column = mutation.column or b""
        check_column(table, column)
        if mutation.isDelete:
            deletes.append(column)
        elif b":" not in column:
            if strict:
                raise illegal_argument(
                    "java.lang.IllegalArgumentException: Invalid famAndQf provided."
                )
            # mutateRow logs "No column qualifier specified" and ignores the put
        else:
            check_cell(row, column, mutation.value, max_cell)
            puts[column] = mutation.value or b""
    return deletes, puts
