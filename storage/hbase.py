"""The storage port on Apache HBase, through its Thrift (1) gateway with happybase.

Opened from a storage URL (``HBaseSettings.from_url``, in ``storage.hbase_settings``)::

    hbase://host[:port]?prefix=hms_&namespace=&pool_size=8&timeout_ms=60000&transport=buffered
        &protocol=binary&connect_retries=5&retry_backoff_ms=200&scan_batch=1000&write_batch=200
        &max_cell_bytes=10485760

A port table ``t`` is the HBase table ``[namespace:]prefix + t`` (the namespace must exist).
Its column families are created with one version, block cache and a row bloom filter.

The store is made of parts, each a module with a public face:

* ``storage.hbase_connection``: the pooled connections to the gateway and the calls made on
  them (``HBaseConnection.call``: errors mapped, a call whose connection was lost tried again
  when it cannot have taken effect or may take effect twice; a compare-and-set or
  ``atomicIncrement`` never, once sent);
* ``storage.hbase_tables``: each port table's HBase name and families, created when missing;
* ``storage.hbase_writes``: one port mutate as ``mutateRow``/``mutateRows`` requests
  (``Writer``), a condition as ``checkAndPut``, ``PartialWriteError`` telling which rows of a
  failed write landed;
* ``storage.hbase_scans``: one port scan as HBase scanners, resumed after a lost connection;
* ``storage.intents``: the intent log that makes a transaction's writes all or nothing.

What the Thrift (1) gateway cannot do, and so this backend does not: create pre-split tables
or add families to an existing table (``shell_script`` prints the HBase shell commands to
create the tables pre-split, for an operator to run before the first start), multi-row
transactions, and telling an empty value from an absent one in a check. HBase also masks a put
that lands in the same millisecond as an earlier delete of the same cell; setting
``NEW_VERSION_BEHAVIOR => true`` on the families (in ``shell_script``) avoids that.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from operator import methodcaller
from typing import Any, ClassVar

import structlog
from metastore_server.storage import (
    committed_reads,
    hbase_keys,
    hbase_scans,
    intent_rows,
    intents,
)
from metastore_server.storage.committed_reads import Register
from metastore_server.storage.hbase_connection import (
    HBaseConnection,
    row_of,
)
from metastore_server.storage.hbase_connection import (
    HBaseError as HBaseError,  # re-exported
)
from metastore_server.storage.hbase_connection import (
    HBaseUnavailableError as HBaseUnavailableError,  # re-exported
)
from metastore_server.storage.hbase_reads import CommittedReads, ScanRange
from metastore_server.storage.hbase_settings import DEFAULT_PORT as DEFAULT_PORT  # re-exported
from metastore_server.storage.hbase_settings import HBaseSettings
from metastore_server.storage.hbase_settings import shell_script as shell_script  # re-exported
from metastore_server.storage.hbase_settings import (
    table_id_split_keys as table_id_split_keys,  # re-exported
)
from metastore_server.storage.hbase_tables import HBaseTables, check_column
from metastore_server.storage.hbase_writes import Writer
from metastore_server.storage.intent_recovery import Undoer
from metastore_server.storage.port import Condition, Delete, Put, Row, TableSpec

log = structlog.get_logger(__name__)

_GET_BATCH = 1000


class HBaseStore:
    """The storage port on HBase (see the module docstring)."""

    atomic_batches: ClassVar[bool] = False
    snapshot_scans: ClassVar[bool] = False
    filters_scans: ClassVar[bool] = True
    #: Transactions through an intent log (``storage.intents``), notes in them, writes
    #: outside them, and scans of a log that stop before a row still to be committed.
    offers: ClassVar[frozenset[str]] = frozenset(
        {"transaction", "undo_note", "untracked", "scan_until_pending"}
    )

    def __init__(
        self,
        settings: HBaseSettings | None = None,
        *,
        writer_lease_s: float = intents.DEFAULT_LEASE_S,
        undoers: Mapping[str, Undoer] | None = None,
        **overrides: Any,
    ) -> None:
        self.settings = replace(settings or HBaseSettings(), **overrides)
        #: The gateway's connections, the store's tables, and its writes over both.
        self.connection = HBaseConnection(self.settings)
        self.tables = HBaseTables(self.connection)
        #: The store's reads as rows land (the intents' own, and a transaction's).
        self.raw = _RawReads(self)
        self.writer = Writer(self.connection, self.tables, self.raw.get)
        #: The intents of this store's transactions; an unfinished one older than
        #: ``writer_lease_s`` is a dead server process's and is rolled back.
        self.intents = intents.IntentLog(
            self.raw, self.writer.mutate, lease_s=writer_lease_s, undoers=undoers
        )
        #: Reads outside a transaction: committed changes only (``storage.committed_reads``).
        self.committed = CommittedReads(
            Register(self.raw, allowance_s=min(writer_lease_s / 2, intents.CLOCK_ALLOWANCE_S)),
            self.raw.get, self.raw.get_many, self.raw.scan,
        )
        log.info("storage.opened", backend="hbase", where=self.settings.describe())

    @classmethod
    def from_url(cls, url: str, **options: Any) -> HBaseStore:
        """The store a ``hbase://`` URL names."""
        return cls(HBaseSettings.from_url(url), **options)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Every ``mutate`` of this thread inside lands, or none (``storage.intents``)."""
        try:
            with self.intents.transaction():
                yield
        finally:
            committed_reads.forget()  # (the thread's next read sees how it ended)

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

    def ensure_tables(self, specs: Iterable[TableSpec]) -> None:
        """Create missing tables with their families (idempotent). A table that exists but
        lacks a family is an error: the Thrift gateway cannot add one (see the message)."""
        self.tables.ensure(specs)

    # -- reads ------------------------------------------------------------------------------

    def get(self, table: str, key: bytes) -> Row | None:
        """The row at ``key``, or None: as committed changes left it (outside a transaction;
        inside one, as it is). One round trip, and one to the register."""
        self.intents.maybe_recover()
        if self.intents.active() is not None:
            return self.raw.get(table, key)
        self.tables.lookup(table)
        return self.committed.get(table, key)

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """The rows that exist among ``keys``, in the order of ``keys`` (a key listed twice
        comes twice), committed only outside a transaction. One round trip per 1000 distinct
        keys; not one snapshot."""
        self.intents.maybe_recover()
        if self.intents.active() is not None or not keys:
            return self.raw.get_many(table, keys)
        self.tables.lookup(table)
        return self.committed.get_many(table, keys)

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
        snapshot (``snapshot_scans = False``), but committed changes only outside a
        transaction (``storage.hbase_reads``)."""
        self.intents.maybe_recover()
        args = dict(reverse=reverse, limit=limit, columns=columns, filter=filter,
                    batch_size=batch_size, key_filter=key_filter)  # fmt: skip
        if self.intents.active() is not None:
            return self.raw.scan(table, start, stop, **args)  # type: ignore[arg-type]
        return self._committed_scan(table, start, stop, args, until_pending=False)

    def scan_until_pending(
        self, table: str, start: bytes = b"", stop: bytes | None = None, *,
        limit: int | None = None, columns: Sequence[bytes] | None = None,
    ) -> Iterator[tuple[bytes, Row]]:  # fmt: skip
        """``scan``, ending before the first row that a change not yet committed made (a
        reader following a log must not pass a row still to come)."""
        self.intents.maybe_recover()
        args = dict(reverse=False, limit=limit, columns=columns, filter=None,
                    batch_size=None, key_filter=None)  # fmt: skip
        return self._committed_scan(table, start, stop, args, until_pending=True)

    def _committed_scan(self, table: str, start: bytes, stop: bytes | None,
                        args: dict[str, Any], *, until_pending: bool,
                        ) -> Iterator[tuple[bytes, Row]]:  # fmt: skip
        query = hbase_scans.query(
            self.tables, table, start, stop, default_batch=self.settings.scan_batch, **args
        )
        if query is None:
            return iter(())
        asked = ScanRange(table, start, stop, args["reverse"], args["limit"], args["columns"],
                          args["filter"], query.caching, args["key_filter"])  # fmt: skip
        return self.committed.scan(asked, until_pending=until_pending)

    # -- writes -----------------------------------------------------------------------------

    def mutate(
        self, ops: Sequence[Put | Delete], condition: Condition | Sequence[Condition] | None = None
    ) -> bool:
        """Apply ``ops`` if ``condition`` holds (see the port for what is atomic here; HBase
        checks one condition at a time, so several are refused). Inside a ``transaction``, the
        rows are first recorded in its intent."""
        self.intents.maybe_recover()
        plan = self.writer.plan(ops, condition)
        return self.intents.logged(
            plan.order, lambda: self.writer.carry_out(plan), plan.condition
        )

    def increment(self, table: str, key: bytes, column: bytes, amount: int = 1) -> int:
        """``atomicIncrement``: add ``amount`` to the 8-byte counter; the new value (HBase
        wraps past 64 bits). Never retried once sent."""
        self.intents.maybe_recover()
        name, families = self.tables.lookup(table)
        hbase_keys.check_key(key)
        check_column(column, families, table)
        if not -(2**63) <= amount < 2**63:
            raise OverflowError(f"increment {amount} does not fit in 64 bits")
        try:
            value: int = self.connection.call(
                "atomicIncrement",
                lambda c: c.atomicIncrement(name, key, column, amount),
                idempotent=False,
            )
            return value
        except HBaseError as error:
            if "not a long" in str(error):
                raise ValueError(f"column {column!r} of {key!r} holds no 8-byte counter") from error
            raise

    def close(self) -> None:
        """Close the pooled connections (after closing abandoned scanners). Idempotent."""
        if self.connection.closed:
            return
        self.intents.close()
        self.connection.close()
        log.info("storage.closed", backend="hbase", address=self.settings.address)


class _RawReads:
    """The store's reads as rows land, with no intent resolved: those of the intent log, of a
    transaction (its own rows and its compare-and-sets' view), and under the committed reads."""

    def __init__(self, store: HBaseStore) -> None:
        self._store = store

    def ensure_tables(self, specs: Iterable[TableSpec]) -> None:
        self._store.ensure_tables(specs)

    def get(self, table: str, key: bytes) -> Row | None:
        """The row at ``key`` as it is. One round trip."""
        store = self._store
        name, _ = store.tables.lookup(table)
        if hbase_keys.too_long(key):
            return None  # no row has it, and HBase would refuse the Get
        hbase_keys.check_key(key)
        found = store.connection.call(
            "get", lambda c: c.getRowWithColumns(name, key, None, {}), idempotent=True
        )
        rows = [row_of(result) for result in found]
        return rows[0] if rows and rows[0] else None

    def get_columns(self, table: str, key: bytes, columns: Sequence[bytes]) -> Row | None:
        """The named columns of the row at ``key`` that it holds (None: none)."""
        name, _ = self._store.tables.lookup(table)
        found = self._store.connection.call(
            "get", lambda c: c.getRowWithColumns(name, key, list(columns), {}), idempotent=True
        )
        rows = [row_of(result) for result in found]
        return rows[0] if rows and rows[0] else None

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """The rows that exist among ``keys`` as they are, in the order of ``keys``."""
        store = self._store
        name, _ = store.tables.lookup(table)
        for key in keys:
            if not hbase_keys.too_long(key):
                hbase_keys.check_key(key)
        unique = [key for key in dict.fromkeys(keys) if not hbase_keys.too_long(key)]
        found: dict[bytes, Row] = {}
        for first in range(0, len(unique), _GET_BATCH):
            chunk = unique[first : first + _GET_BATCH]
            results = store.connection.call(
                "get_many",
                methodcaller("getRowsWithColumns", name, chunk, None, {}),
                idempotent=True,
            )
            for result in results:
                row = row_of(result)
                if row:
                    found[result.row] = row
        return [(key, found[key]) for key in keys if key in found]

    def scan(
        self, table: str, start: bytes = b"", stop: bytes | None = None, *,
        reverse: bool = False, limit: int | None = None, columns: Sequence[bytes] | None = None,
        filter: bytes | None = None, batch_size: int | None = None,
        key_filter: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[bytes, Row]]:  # fmt: skip
        """The rows of a port scan as they are (see ``HBaseStore.scan``)."""
        store = self._store
        query = hbase_scans.query(
            store.tables, table, start, stop, reverse=reverse, limit=limit, columns=columns,
            filter=filter, batch_size=batch_size, key_filter=key_filter,
            default_batch=store.settings.scan_batch,
        )  # fmt: skip
        if query is None:
            return iter(())
        return hbase_scans.scan_rows(store.connection, query)

    def scan_states(self, filter: bytes) -> list[tuple[bytes, bytes, int]]:
        """(key, state, newest entry) of the intents ``filter`` lets through; one whose rows
        were put back (``RESTORED``) reads as ``undone`` then."""
        self._store.intents.rows.ensure()
        state, restored, seq = intent_rows.STATE, intent_rows.RESTORED, intent_rows.SEQ
        rows = self.scan(intent_rows.INTENTS, columns=[state, restored, seq], filter=filter)
        return [(key, intent_rows.UNDONE + b" " + row[restored] if restored in row else row[state],
                 int(row.get(seq) or b"0"))
                for key, row in rows if state in row]  # fmt: skip

    def entry_bytes(self, key: bytes, seq: int, value: bytes) -> bytes:
        return self._store.intents.rows.entry_bytes(key, seq, value)


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
