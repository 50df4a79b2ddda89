"""The HBase test double's server: ``HBaseDouble`` (listening, serving connections, its
tables kept in an embedded ``SqliteStore``), ``storage_url`` and ``running_double``."""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.port import Delete, Put, Row
from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.thrift import TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from support.hbase_double.calls import Guard
from support.hbase_double.faults import Drop, FaultHooks
from support.hbase_double.idl import hbase_thrift, io_error
from support.hbase_double.limits import MAX_CELL_BYTES
from support.hbase_double.scanners import DEFAULT_SCAN_ROWS_PER_CALL, Scanning
from support.hbase_double.tables import Table

log = logging.getLogger(__name__)

_TRANSPORTS = {"buffered": TBufferedTransportFactory, "framed": TFramedTransportFactory}
_PROTOCOLS = {"binary": TBinaryProtocolFactory, "compact": TCompactProtocolFactory}


class HBaseDouble(FaultHooks, Scanning):
    """A running test double of the HBase Thrift gateway (see the package docstring)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        transport: str = "buffered",
        protocol: str = "binary",
        scanner_lease_s: float = 60.0,
        scan_rows_per_call: int | None = DEFAULT_SCAN_ROWS_PER_CALL,
        max_cell_bytes: int | None = MAX_CELL_BYTES,
        table_ddl_s: float = 0.0,
        reverse_filter_bug: bool = False,
    ) -> None:
        self.host = host
        self._requested_port = port
        self.port = 0
        self._transport = _TRANSPORTS[transport]()
        self._protocol = _PROTOCOLS[protocol]()
        self.max_cell_bytes = max_cell_bytes
        #: Seconds each createTable, disableTable, enableTable and deleteTable takes (a real
        #: HBase master takes about a second); 0 by default, to keep the suite fast.
        self.table_ddl_s = table_ddl_s
        #: HBase 1.2.x's bug: a reversed scan with a filter fails on the region server.
        self.reverse_filter_bug = reverse_filter_bug
        #: The names of the tables createTable made, in order (the table-creation counter).
        self.tables_created: list[bytes] = []
        self._store: SqliteStore | None = None
        self._tables: dict[bytes, Table] = {}
        self._namespaces = {b"default", b"hbase"}
        self._generation = itertools.count(1)
        self._lock = threading.RLock()
        self._listener: socket.socket | None = None
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        self._closed = threading.Event()
        self._acceptor: threading.Thread | None = None
        self._processor = TProcessor(hbase_thrift.Hbase, Guard(self))
        self.calls: collections.Counter[str] = collections.Counter()
        self._init_scanning(scanner_lease_s, scan_rows_per_call)
        self._init_faults()

    # -- life -----------------------------------------------------------------------------

    def start(self) -> HBaseDouble:
        """Listen and serve in background threads."""
        self._store = SqliteStore(":memory:")
        self._listen(self._requested_port)
        return self

    def _listen(self, port: int) -> None:
        listener = socket.create_server((self.host, port))
        listener.settimeout(0.1)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._acceptor = threading.Thread(
            target=self._accept, args=(listener,), name="hbase-double", daemon=True
        )
        self._acceptor.start()

    def stop(self) -> None:
        """Stop listening, cut every connection, drop the data."""
        self._closed.set()
        if self._acceptor is not None:
            self._acceptor.join()
        if self._listener is not None:
            self._listener.close()
        self.disconnect_all()
        for scanner_id in list(self._scanners):
            with contextlib.suppress(Exception):
                self._handler_close(scanner_id)
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> HBaseDouble:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def url(self, prefix: str = "hms_", **params: object) -> str:
        """A storage URL (``hbase://...``) for this double."""
        return storage_url(self.host, self.port, prefix=prefix, **params)

    def disconnect_all(self) -> None:
        """Close every client connection (clients see a lost connection on their next call)."""
        with self._clients_lock:
            clients, self._clients = self._clients, set()
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                client.close()

    def add_namespace(self, name: str) -> None:
        """Let tables be created in namespace ``name``."""
        self._namespaces.add(name.encode())

    def rows(self, table: bytes) -> list[tuple[bytes, Row]]:
        """Every row of a table, straight from the backing store (for assertions)."""
        return list(self._store_().scan(self._tables[table].store_name))

    # -- internals ------------------------------------------------------------------------

    def _store_(self) -> SqliteStore:
        if self._store is None:
            raise RuntimeError("the double is not started")
        return self._store

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            # Replies go out as written (as HBase's Thrift server's do): with Nagle's rule a
            # reply written in parts waited for the client's delayed ack (40 ms a scan).
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._clients_lock:
                self._clients.add(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        transport = self._transport.get_transport(TSocket(sock=client))
        protocol = self._protocol.get_protocol(transport)
        try:
            while not self._closed.is_set():
                self._processor.process(protocol, protocol)
        except (TTransportException, Drop, OSError, EOFError):
            pass
        except Exception:
            log.exception("hbase double: connection failed")
        finally:
            with self._clients_lock:
                self._clients.discard(client)
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                client.close()

    def _table(self, name: bytes, *, enabled: bool | None = True) -> Table:
        table = self._tables.get(name)
        if table is None:
            raise io_error(f"org.apache.hadoop.hbase.TableNotFoundException: {name.decode()}")
        if enabled and not table.enabled:
            raise io_error(f"org.apache.hadoop.hbase.TableNotEnabledException: {name.decode()}")
        return table

    def _table_ddl(self) -> None:
        """The time a table operation of the master takes (``table_ddl_s``), outside the
        double's lock (other calls go on meanwhile, as on HBase)."""
        if self.table_ddl_s > 0:
            time.sleep(self.table_ddl_s)

    def _read(self, table: Table, key: bytes) -> Row:
        if not key:
            return {}
        return self._store_().get(table.store_name, key) or {}

    def _write_deletes(self, table: Table, row: bytes, deletes: Sequence[bytes]) -> None:
        """Delete columns (``f:q``) and whole families (``f``) of one row, as one step."""
        self._spend()
        stored = self._read(table, row)
        doomed = set()
        for column in deletes:
            if b":" in column:
                doomed.add(column)
            else:
                doomed.update(c for c in stored if c.partition(b":")[0] == column)
        if doomed:
            self._store_().mutate([Delete(table.store_name, row, sorted(doomed))])

    def _write_many_deletes(
        self, table: Table, rows: Sequence[tuple[bytes, Sequence[bytes]]]
    ) -> list[str]:
        """The deletes of many rows (as :meth:`_write_deletes` each), those the failure
        budget lets through written together; the errors of the others."""
        errors, writes = [], []
        for row, deletes in rows:
            try:
                self._spend()
            except hbase_thrift.IOError as error:
                errors.append(f"{row!r}: {error.message}")
                continue
            families = [column for column in deletes if b":" not in column]
            doomed = {column for column in deletes if b":" in column}
            if families:
                stored = self._read(table, row)
                doomed.update(c for c in stored if c.partition(b":")[0] in families)
            if doomed:
                writes.append(Delete(table.store_name, row, sorted(doomed)))
        if writes:
            self._store_().mutate(writes)
        return errors

    def _write_puts(self, table: Table, row: bytes, puts: Mapping[bytes, bytes]) -> None:
        self._spend()
        self._store_().mutate([Put(table.store_name, row, dict(puts))])

    def _write_many_puts(
        self, table: Table, rows: Sequence[tuple[bytes, Mapping[bytes, bytes]]]
    ) -> list[str]:
        """The puts of many rows, each counted against the failure budget, those it lets
        through written together (one step of the backing store, not one a row); the
        errors of the others, as ``mutateRows`` reports them."""
        errors, writes = [], []
        for row, puts in rows:
            try:
                self._spend()
            except hbase_thrift.IOError as error:
                errors.append(f"{row!r}: {error.message}")
                continue
            writes.append(Put(table.store_name, row, dict(puts)))
        if writes:
            self._store_().mutate(writes)
        return errors


def storage_url(host: str, port: int, prefix: str = "hms_", **params: object) -> str:
    """The ``hbase://host:port?prefix=...`` storage URL of an HBase Thrift server (or of the
    double); extra ``params`` (pool_size, timeout_ms, ...) are added as given."""
    query = urlencode({"prefix": prefix, **{k: str(v) for k, v in params.items()}})
    return f"hbase://{host}:{port}?{query}"


@contextlib.contextmanager
def running_double(**options: Any) -> Iterator[tuple[str, int]]:
    """A started HBase double for the duration of the block: yields (host, port). ``options``
    go to ``HBaseDouble`` (host, port, transport, protocol, scanner_lease_s, scan_rows_per_call,
    max_cell_bytes, table_ddl_s, reverse_filter_bug)."""
    with HBaseDouble(**options) as double:
        yield double.address
