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
from metastore_server.storage import hbase_keys, hbase_scans, intents
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
from metastore_server.storage.hbase_settings import DEFAULT_PORT as DEFAULT_PORT  # re-exported
from metastore_server.storage.hbase_settings import HBaseSettings
from metastore_server.storage.hbase_settings import shell_script as shell_script  # re-exported
from metastore_server.storage.hbase_settings import (
    table_id_split_keys as table_id_split_keys,  # re-exported
)
from metastore_server.storage.hbase_tables import HBaseTables, check_column
from metastore_server.storage.hbase_writes import Writer
from metastore_server.storage.port import Condition, Delete, Put, Row, TableSpec

log = structlog.get_logger(__name__)

_GET_BATCH = 1000


class HBaseStore:
    """The storage port on HBase (see the module docstring)."""

    atomic_batches: ClassVar[bool] = False
    snapshot_scans: ClassVar[bool] = False
    filters_scans: ClassVar[bool] = True
    #: Transactions through an intent log (``storage.intents``), notes in them, and writes
    #: outside them.
    offers: ClassVar[frozenset[str]] = frozenset({"transaction", "undo_note", "untracked"})

    def __init__(
        self,
        settings: HBaseSettings | None = None,
        *,
        writer_lease_s: float = intents.DEFAULT_LEASE_S,
        undoers: Mapping[str, intents.Undoer] | None = None,
        **overrides: Any,
    ) -> None:
        self.settings = replace(settings or HBaseSettings(), **overrides)
        #: The gateway's connections, the store's tables, and its writes over both.
        self.connection = HBaseConnection(self.settings)
        self.tables = HBaseTables(self.connection)
        self.writer = Writer(self.connection, self.tables, self.get)
        #: The intents of this store's transactions; an unfinished one older than
        #: ``writer_lease_s`` is a dead server process's and is rolled back.
        self.intents = intents.IntentLog(
            self, self.writer.mutate, lease_s=writer_lease_s, undoers=undoers
        )
        log.info("storage.opened", backend="hbase", where=self.settings.describe())

    @classmethod
    def from_url(cls, url: str, **options: Any) -> HBaseStore:
        """The store a ``hbase://`` URL names."""
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

    def ensure_tables(self, specs: Iterable[TableSpec]) -> None:
        """Create missing tables with their families (idempotent). A table that exists but
        lacks a family is an error: the Thrift gateway cannot add one (see the message)."""
        self.tables.ensure(specs)

    # -- reads ------------------------------------------------------------------------------

    def get(self, table: str, key: bytes) -> Row | None:
        """The row at ``key``, or None. One round trip."""
        self.intents.maybe_recover()
        name, _ = self.tables.lookup(table)
        if hbase_keys.too_long(key):
            return None  # no row has it, and HBase would refuse the Get
        hbase_keys.check_key(key)
        found = self.connection.call(
            "get", lambda c: c.getRowWithColumns(name, key, None, {}), idempotent=True
        )
        rows = [row_of(result) for result in found]
        return rows[0] if rows and rows[0] else None

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        """The rows that exist among ``keys``, in the order of ``keys`` (a key listed twice
        comes twice). One round trip per 1000 distinct keys; not one snapshot."""
        self.intents.maybe_recover()
        name, _ = self.tables.lookup(table)
        for key in keys:
            if not hbase_keys.too_long(key):
                hbase_keys.check_key(key)
        unique = [key for key in dict.fromkeys(keys) if not hbase_keys.too_long(key)]
        found: dict[bytes, Row] = {}
        for first in range(0, len(unique), _GET_BATCH):
            chunk = unique[first : first + _GET_BATCH]
            results = self.connection.call(
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
        query = hbase_scans.query(
            self.tables, table, start, stop, reverse=reverse, limit=limit, columns=columns,
            filter=filter, batch_size=batch_size, key_filter=key_filter,
            default_batch=self.settings.scan_batch,
        )  # fmt: skip
        if query is None:
            return iter(())
        return hbase_scans.scan_rows(self.connection, query)

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
