"""The storage port on Apache HBase, through its Thrift (1) gateway with happybase.

Opened from a storage URL (``HBaseSettings.from_url``, in ``storage.hbase_settings``)::

    hbase://host[:port]?prefix=hms_&namespace=&pool_size=8&timeout_ms=60000&transport=buffered
        &protocol=binary&connect_retries=5&retry_backoff_ms=200&scan_batch=1000&write_batch=200
        &max_cell_bytes=10485760

A port table ``t`` is the HBase table ``[namespace:]prefix + t`` (the namespace must exist).
Its column families are created with one version, block cache and a row bloom filter.

Calls go through a ``happybase.ConnectionPool``; each call borrows a connection only for the
duration of one Thrift request, so a lazily consumed scan holds none between batches (its
scanner id is global to the gateway). A pooled connection the server has closed is replaced
before use. On a connection lost mid-call (a gateway restarting, say), idempotent calls (gets,
scans, puts of known values, deletes, table metadata), and any call not yet sent, are tried
again on a fresh connection, at once and then backing off (``connect_retries`` more tries,
``retry_backoff_ms`` doubling up to 5 s: about 6 s in all by default); a scan resumes after the last
row it returned. Compare-and-set (``checkAndPut``) and ``atomicIncrement`` are never retried
once sent: the error then says the outcome is unknown (the intent of the call's transaction
then rolls back whatever landed). A server that cannot be reached when the store opens is
retried the same way before ``HBaseUnavailableError`` names the address.

Writes (``storage.hbase_writes``): one ``mutateRow`` per row, or a ``mutateRows`` group of up
to ``write_batch`` rows; a condition is ``checkAndPut``; a cell over ``max_cell_bytes`` is refused
before anything is sent; ``PartialWriteError`` tells which rows of a failed write landed.

Scans map to ``scannerOpenWithScan``: start/stop rows, ``reversed`` (from ``stop`` down, the
row at ``stop`` skipped, and rows below ``start`` cut off on the client), ``caching`` = the
batch size, the selected columns (plus the columns the filter tests, which HBase's
SingleColumnValueFilter needs to see; they are stripped again), and the filter string.

What the Thrift (1) gateway cannot do, and so this backend does not: create pre-split tables
or add families to an existing table (``shell_script`` prints the HBase shell commands to
create the tables pre-split, for an operator to run before the first start), multi-row
transactions, and telling an empty value from an absent one in a check. HBase also masks a put
that lands in the same millisecond as an earlier delete of the same cell; setting
``NEW_VERSION_BEHAVIOR => true`` on the families (in ``shell_script``) avoids that.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import re
import select
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import happybase
import structlog
from metastore_server.storage import hbase_keys, hbase_scans, hbase_writes, intents, telemetry
from metastore_server.storage.hbase_settings import DEFAULT_PORT as DEFAULT_PORT  # re-exported
from metastore_server.storage.hbase_settings import HBaseSettings
from metastore_server.storage.hbase_settings import shell_script as shell_script  # re-exported
from metastore_server.storage.hbase_settings import (
    table_id_split_keys as table_id_split_keys,  # re-exported
)
from metastore_server.storage.port import (
    Condition,
    Delete,
    Put,
    Row,
    StorageError,
    TableSpec,
)
from thriftpy2.protocol.exc import TProtocolException
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

log = structlog.get_logger(__name__)

_thrift: Any = importlib.import_module("Hbase_thrift")  # loaded by happybase from its IDL

T = TypeVar("T")

_GET_BATCH = 1000
_MAX_BACKOFF_S = 5.0
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    TTransportException,
    TProtocolException,
    OSError,
    EOFError,
)
try:  # the compiled binary protocol's own error (a reply that is no Thrift at all)
    from thriftpy2.protocol.cybin import ProtocolError as _CyProtocolError

    _CONNECTION_ERRORS += (_CyProtocolError,)
except ImportError:  # pragma: no cover - pure-Python thriftpy2
    pass
_SCVF_COLUMN = re.compile(
    rb"SingleColumnValueFilter\s*\(\s*'((?:[^']|'')*)'\s*,\s*'((?:[^']|'')*)'"
)


class HBaseError(StorageError):
    """HBase refused a call, or answered in a way the store cannot use."""


class HBaseUnavailableError(HBaseError):
    """The HBase Thrift gateway could not be reached, or the connection was lost."""


class HBaseStore:
    """The storage port on HBase (see the module docstring)."""

    atomic_batches = False
    snapshot_scans = False
    filters_scans = True
    #: Transactions through an intent log (``storage.intents``), notes in them, and writes
    #: outside them.
    offers: frozenset[str] = frozenset({"transaction", "undo_note", "untracked"})

    def __init__(
        self,
        settings: HBaseSettings | None = None,
        *,
        writer_lease_s: float = intents.DEFAULT_LEASE_S,
        undoers: Mapping[str, intents.Undoer] | None = None,
        **overrides: Any,
    ) -> None:
        self.settings = replace(settings or HBaseSettings(), **overrides)
        self._families: dict[str, frozenset[bytes]] = {}
        self._doomed_scanners: collections.deque[int] = collections.deque()
        self._closed = False
        self._pool = self._open_pool()
        #: The intents of this store's transactions; an unfinished one older than
        #: ``writer_lease_s`` is a dead server process's and is rolled back.
        self.intents = intents.IntentLog(
            self, self._mutate_unlogged, lease_s=writer_lease_s, undoers=undoers
        )
        log.info("storage.opened", backend="hbase", where=self.settings.describe())

    @classmethod
    def from_url(cls, url: str, **options: Any) -> HBaseStore:
        return cls(HBaseSettings.from_url(url), **options)

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """Every ``mutate`` of this thread inside lands, or none (``storage.intents``)."""
        return self.intents.transaction()

    def untracked(self) -> contextlib.AbstractContextManager[None]:
        """This thread's writes inside are not part of its transaction (marks that expire on
        their own)."""
        return self.intents.untracked()

    def undo_note(self, kind: str, payload: bytes) -> None:
        """Record in this thread's transaction how to undo something done outside the store,
        should its process die before the commit (``storage.intents``: ``undoers``)."""
        self.intents.note(kind, payload)

    def __enter__(self) -> HBaseStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- connections ------------------------------------------------------------------------

    def _open_pool(self) -> happybase.ConnectionPool:
        """A pool whose first connection answered; retried with backoff while unreachable."""
        s = self.settings
        delay = s.retry_backoff_ms / 1000
        started = time.monotonic()
        last: BaseException | None = None
        for attempt in range(1, s.connect_retries + 2):
            try:
                pool = happybase.ConnectionPool(
                    s.pool_size,
                    host=s.host,
                    port=s.port,
                    timeout=s.timeout_ms,
                    transport=s.transport,
                    protocol=s.protocol,
                )
                with pool.connection(timeout=s.timeout_ms / 1000) as connection:
                    connection.client.getTableNames()
                return pool
            except (*_CONNECTION_ERRORS, TApplicationException) as error:
                last = error
            if attempt > s.connect_retries:
                break
            log.warning(
                "storage.hbase_unreachable",
                address=s.address,
                attempt=attempt,
                retry_in_s=round(delay, 3),
                error=str(last),
            )
            time.sleep(delay)
            delay = min(max(delay * 2, 0.05), _MAX_BACKOFF_S)
        raise HBaseUnavailableError(
            f"cannot reach the HBase Thrift gateway at {s.address} ({s.connect_retries + 1} "
            f"attempts in {time.monotonic() - started:.1f} s; last error: {last}). Is the HBase "
            f"Thrift server running there ('hbase thrift start -p {s.port}', {s.transport} "
            f"transport, {s.protocol} protocol)?"
        ) from last

    def _call(self, what: str, request: Callable[[Any], T], *, idempotent: bool) -> T:
        """Run one Thrift request on a pooled connection, mapping errors (see the module)."""
        self._close_doomed_scanners()
        started = time.perf_counter()
        try:
            return self._request(what, request, idempotent=idempotent)
        finally:
            telemetry.store_operation(what, time.perf_counter() - started)

    def _request(self, what: str, request: Callable[[Any], T], *, idempotent: bool) -> T:
        if self._closed:
            raise RuntimeError("the store is closed")
        s = self.settings
        tries = 0
        while True:
            tries += 1
            sent = False
            try:
                with self._pool.connection(timeout=s.timeout_ms / 1000) as connection:
                    if _peer_closed(connection):
                        _reconnect(connection)
                    sent = True
                    return request(connection.client)
            except _thrift.IOError as error:
                raise HBaseError(f"HBase failed {what}: {_text(error.message)}") from error
            except _thrift.IllegalArgument as error:
                raise ValueError(f"HBase refused {what}: {_text(error.message)}") from error
            except _thrift.AlreadyExists as error:
                raise HBaseError(f"HBase refused {what}: {_text(error.message)}") from error
            except TApplicationException as error:
                raise HBaseError(
                    f"the HBase Thrift gateway failed {what}: {_text(error.message)}"
                ) from error
            except happybase.NoConnectionsAvailable as error:
                raise HBaseError(
                    f"no pooled HBase connection came free for {what} within "
                    f"{s.timeout_ms} ms (pool_size={s.pool_size})"
                ) from error
            except _CONNECTION_ERRORS as error:
                # Again on a fresh connection: at once, then backing off, as long as the call
                # cannot have taken effect or may take effect twice (a gateway restarting).
                if tries <= 1 + s.connect_retries and (idempotent or not sent):
                    pause = _backoff(tries, s.retry_backoff_ms)
                    log.warning("storage.hbase_retry", call=what, address=s.address,
                                error=str(error), retry_in_s=pause)  # fmt: skip
                    time.sleep(pause)
                    continue
                where = f"the HBase Thrift gateway at {s.address}"
                if not sent:
                    message = f"cannot reach {where} for {what}: {error}"
                elif idempotent:
                    message = (
                        f"lost the connection to {where} during {what}, and again on "
                        f"{tries - 1} fresh connections: {error}"
                    )
                else:
                    message = (
                        f"lost the connection to {where} during {what}; not retried, so "
                        f"whether it took effect is unknown: {error}"
                    )
                raise HBaseUnavailableError(message) from error

    def _close_doomed_scanners(self) -> None:
        """Close the scanners of scans abandoned since the last call (best effort)."""
        while True:
            try:
                scanner = self._doomed_scanners.popleft()
            except IndexError:
                return
            with contextlib.suppress(StorageError, ValueError):
                self._request(
                    "scannerClose", lambda c, i=scanner: c.scannerClose(i), idempotent=False
                )

    # -- tables -----------------------------------------------------------------------------

    def ensure_tables(self, specs: Iterable[TableSpec]) -> None:
        """Create missing tables with their families (idempotent). A table that exists but
        lacks a family is an error: the Thrift gateway cannot add one (see the message)."""
        specs = list(specs)
        for spec in specs:
            for family in spec.families:
                if not family or ":" in family:
                    raise ValueError(f"bad column family {family!r} for table {spec.name}")
        existing = set(self._call("getTableNames", lambda c: c.getTableNames(), idempotent=True))
        for spec in specs:
            name = self.settings.table_name(spec.name)
            if name not in existing:
                descriptors = [
                    _thrift.ColumnDescriptor(
                        name=f.encode() + b":",
                        maxVersions=1,
                        bloomFilterType="ROW",
                        blockCacheEnabled=True,
                    )
                    for f in spec.families
                ]
                try:
                    self._call(
                        "createTable",
                        lambda c, n=name, d=descriptors: c.createTable(n, d),
                        idempotent=True,
                    )
                    log.info(
                        "storage.hbase_table_created",
                        table=name.decode(),
                        families=list(spec.families),
                    )
                except HBaseError as error:
                    if not isinstance(error.__cause__, _thrift.AlreadyExists):
                        raise  # (AlreadyExists: created meanwhile, by us or another process)
            families = self._load_families(spec.name)
            missing = sorted(set(spec.families) - {f.decode() for f in families})
            if missing:
                adds = ", ".join(f"{{NAME => '{f}', VERSIONS => 1}}" for f in missing)
                raise HBaseError(
                    f"HBase table {name.decode()} lacks column families {missing}, and the Thrift "
                    f"gateway cannot add them; in the HBase shell run: alter '{name.decode()}', "
                    f"{adds}"
                )

    def _load_families(self, table: str) -> frozenset[bytes]:
        name = self.settings.table_name(table)
        try:
            descriptors = self._call(
                "getColumnDescriptors", lambda c: c.getColumnDescriptors(name), idempotent=True
            )
        except HBaseError as error:
            if "TableNotFound" in str(error) or "does not exist" in str(error):
                raise KeyError(
                    f"no table {table!r} ({name.decode()}); create it with ensure_tables"
                ) from error
            raise
        families = frozenset(bytes(d).rstrip(b":") for d in descriptors)
        self._families[table] = families
        return families

    def _table(self, table: str) -> tuple[bytes, frozenset[bytes]]:
        """(HBase name, families) of a port table; KeyError when it does not exist."""
        families = self._families.get(table)
        if families is None:
            families = self._load_families(table)
        return self.settings.table_name(table), families

    # -- reads ------------------------------------------------------------------------------

    def get(self, table: str, key: bytes) -> Row | None:
        """The row at ``key``, or None. One round trip."""
        self.intents.maybe_recover()
        name, _ = self._table(table)
        if hbase_keys.too_long(key):
            return None  # no row has it, and HBase would refuse the Get
        hbase_keys.check_key(key)
        found = self._call(
            "get", lambda c: c.getRowWithColumns(name, key, None, {}), idempotent=True
        )
        rows = [_row_of(result) for result in found]
        return rows[0] if rows and rows[0] else None

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """The rows that exist among ``keys``, in the order of ``keys`` (a key listed twice
        comes twice). One round trip per 1000 distinct keys; not one snapshot."""
        self.intents.maybe_recover()
        name, _ = self._table(table)
        for key in keys:
            if not hbase_keys.too_long(key):
                hbase_keys.check_key(key)
        unique = [key for key in dict.fromkeys(keys) if not hbase_keys.too_long(key)]
        found: dict[bytes, Row] = {}
        for first in range(0, len(unique), _GET_BATCH):
            chunk = unique[first : first + _GET_BATCH]
            results = self._call(
                "get_many",
                lambda c, k=chunk: c.getRowsWithColumns(name, k, None, {}),
                idempotent=True,
            )
            for result in results:
                row = _row_of(result)
                if row:
                    found[result.row] = row
        return [(key, found[key]) for key in keys if key in found]

    def scan(
        self,
        table: str,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        reverse: bool = False,
        limit: int | None = None,
        columns: Sequence[bytes] | None = None,
        filter: bytes | None = None,
        batch_size: int | None = None,
        key_filter: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[bytes, Row]]:
        """Rows with ``start <= key < stop`` (see the port); the filter runs on the region
        servers, ``key_filter`` here on each row they return. Arguments are checked now; rows
        are fetched lazily, ``batch_size`` (default ``scan_batch``) per round trip. Not one
        snapshot (``snapshot_scans = False``)."""
        self.intents.maybe_recover()
        name, families = self._table(table)
        if not isinstance(start, bytes) or not isinstance(stop, bytes | None):
            raise TypeError("scan bounds are bytes")
        if limit is not None and limit < 0:
            raise ValueError("a scan limit must not be negative")
        if not isinstance(filter, bytes | None):
            raise TypeError("a scan filter is bytes (storage.filters.hbase_filter_bytes)")
        if batch_size is not None and batch_size < 1:
            raise ValueError("a scan batch size must be positive")
        wanted: frozenset[bytes] | None = None
        request: list[bytes] | None = None
        if columns is not None:
            for column in columns:
                _check_column(column, families, table)
            wanted = frozenset(columns)
            tested = _filter_columns(filter) if filter else set()
            request = sorted(wanted | {c for c in tested if c.partition(b":")[0] in families})
        if limit == 0 or (stop is not None and stop <= start) or wanted == frozenset():
            return iter(())
        bounds = hbase_keys.within_limit(start, stop)
        if bounds is None:
            return iter(())
        start, stop = bounds
        query = hbase_scans.Query(
            name,
            start,
            stop,
            reverse,
            limit,
            wanted,
            request,
            filter or None,
            batch_size or self.settings.scan_batch,
            key_filter,
        )
        return self._scan_rows(query)

    def _scan_rows(self, q: hbase_scans.Query) -> Iterator[tuple[bytes, Row]]:
        return hbase_scans.scan_rows(
            self, q, thrift=_thrift, row_of=_row_of, connection_lost=HBaseUnavailableError
        )

    def _abandon_scanner(self, scanner: int) -> None:
        """Close a scanner at the next call (best effort; see ``_close_doomed_scanners``)."""
        self._doomed_scanners.append(scanner)

    # -- writes -----------------------------------------------------------------------------

    def mutate(
        self, ops: Sequence[Put | Delete], condition: Condition | Sequence[Condition] | None = None
    ) -> bool:
        """Apply ``ops`` if ``condition`` holds (see the port for what is atomic here; HBase
        checks one condition at a time, so several are refused). Inside a ``transaction``, the
        rows are first recorded in its intent."""
        self.intents.maybe_recover()
        plan = self._plan(ops, condition)
        return self.intents.logged(plan.order, lambda: self._carry_out(plan), plan.condition)

    def _mutate_unlogged(self, ops: Sequence[Put | Delete], condition: Condition | None) -> bool:
        """``mutate`` outside any intent (the intent log's own writes)."""
        return self._carry_out(self._plan(ops, condition))

    def _plan(
        self, ops: Sequence[Put | Delete], condition: Condition | Sequence[Condition] | None
    ) -> hbase_writes.Plan:
        """The checked, folded changes of a mutate (nothing is sent)."""
        return hbase_writes.plan(self, ops, condition, check_column=_check_column)

    def _carry_out(self, plan: hbase_writes.Plan) -> bool:
        """Send a planned mutate (see ``mutate``)."""
        return hbase_writes.carry_out(self, plan, thrift=_thrift)

    def increment(self, table: str, key: bytes, column: bytes, amount: int = 1) -> int:
        """``atomicIncrement``: add ``amount`` to the 8-byte counter; the new value (HBase
        wraps past 64 bits). Never retried once sent."""
        self.intents.maybe_recover()
        name, families = self._table(table)
        hbase_keys.check_key(key)
        _check_column(column, families, table)
        if not -(2**63) <= amount < 2**63:
            raise OverflowError(f"increment {amount} does not fit in 64 bits")
        try:
            return self._call(
                "atomicIncrement",
                lambda c: c.atomicIncrement(name, key, column, amount),
                idempotent=False,
            )
        except HBaseError as error:
            if "not a long" in str(error):
                raise ValueError(f"column {column!r} of {key!r} holds no 8-byte counter") from error
            raise

    def close(self) -> None:
        """Close the pooled connections (after closing abandoned scanners). Idempotent."""
        if self._closed:
            return
        self.intents.close()
        with contextlib.suppress(StorageError, ValueError, RuntimeError):
            self._close_doomed_scanners()
        self._closed = True
        queue = getattr(self._pool, "_queue", None)
        for connection in list(getattr(queue, "queue", ())):
            with contextlib.suppress(Exception):
                connection.close()
        log.info("storage.closed", backend="hbase", address=self.settings.address)


def _row_of(result: Any) -> Row:
    if result.columns is not None:
        return {name: cell.value for name, cell in result.columns.items()}
    return {column.columnName: column.cell.value for column in result.sortedColumns or ()}


def _check_column(column: bytes, families: frozenset[bytes], table: str) -> None:
    if not isinstance(column, bytes):
        raise TypeError(f"column names are bytes, not {type(column).__name__}")
    family, colon, _ = column.partition(b":")
    if not colon or family not in families:
        raise ValueError(
            f"column {column!r} is not family:qualifier of families "
            f"{sorted(families)} of table {table}"
        )


def _filter_columns(text: bytes) -> set[bytes]:
    """The columns a filter string's SingleColumnValueFilters test."""
    return {
        family.replace(b"''", b"'") + b":" + qualifier.replace(b"''", b"'")
        for family, qualifier in _SCVF_COLUMN.findall(text)
    }


def _text(message: str | bytes | None) -> str:
    """The first line of a Thrift error message (happybase leaves it as bytes)."""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    lines = (message or "").strip().splitlines()
    return lines[0] if lines else "(no message)"


def _backoff(tries: int, backoff_ms: int) -> float:
    """Seconds before retry ``tries`` of a call: none before the first, then ``backoff_ms``
    doubling up to 5 s."""
    if tries <= 1:
        return 0.0
    return round(min(backoff_ms / 1000 * 2 ** (tries - 2), _MAX_BACKOFF_S), 3)


def _peer_closed(connection: Any) -> bool:
    """Whether the server closed this idle pooled connection (or left bytes on it): then it
    must be replaced before a request is sent on it. No round trip."""
    sock = getattr(getattr(connection, "transport", None), "sock", None)
    if sock is not None and not isinstance(sock, socket.socket):  # a TSocket (pure Python)
        sock = getattr(sock, "sock", None)
    if not isinstance(sock, socket.socket):
        return False
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


def _reconnect(connection: Any) -> None:
    refresh = getattr(connection, "_refresh_thrift_client", None)
    connection.close()
    if refresh is not None:
        refresh()
    connection.open()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m metastore_server.storage.hbase URL [REGIONS [TABLE_IDS]]``: print the HBase
    shell commands that create the catalog's tables for a storage URL, the partitions table
    pre-split into REGIONS (default 16) ranges of table ids below TABLE_IDS (default 4096)."""
    import sys

    from metastore_server.storage import layout

    args = list(sys.argv[1:] if argv is None else argv)
    if not 1 <= len(args) <= 3:
        print(main.__doc__, file=sys.stderr)
        return 2
    settings = HBaseSettings.from_url(args[0])
    regions = int(args[1]) if len(args) > 1 else 16
    table_ids = int(args[2]) if len(args) > 2 else 4096
    splits = {layout.PARTITIONS: table_id_split_keys(regions, table_ids)}
    sys.stdout.write(shell_script(settings, layout.TABLE_SPECS, splits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
