"""Transactional tables' write ids, as HMS 3+ hands them out and reads them back, and the write
notification log.

Write ids live with the locks and transactions (``write_id_state``, one stored value, every
change one compare-and-set): a write id is allocated only to an open transaction, and a commit
or abort settles its write ids in the same change that ends it. A transaction's write
notification log records (HMS's TXN_WRITE_NOTIFICATION_LOG) are rows of their own, one per
(transaction, database, table, partition): key ``wnl \\x00 <txn id> \\x00 db \\x00 table \\x00
partition``. ``update_transaction_statistics`` counts inserted, updated and deleted rows per
table id (HMS's MV_TABLES_USED counts): key ``txnstats \\x00 <table id>``.

Allocating new write ids records an ALLOC_WRITE_ID_EVENT with the change; each write
notification an ACID_WRITE_EVENT, its row written in the same ``mutate`` as the event (the
event's id check is the compare-and-set, so on HBase the event lands first). A record keeps the
table and the partition written as Thrift JSON (HMS's WNL_TABLE_OBJ, WNL_PARTITION_OBJ), which
``get_all_write_event_info`` answers (Impala builds the tables a COMMIT_TXN wrote from them).
"""

from __future__ import annotations

import json
from typing import Any

from metastore_server.catalog.basics import names
from metastore_server.catalog.core import shared_value
from metastore_server.catalog.events import txn_messages as messages
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.txn import write_id_state as wid
from metastore_server.catalog.txn.transactions import LockTable, Transactions
from metastore_server.catalog.txn.valid_lists import (
    ValidTxnList,
    bit_set,
    parse_valid_txn_list,
    parse_valid_write_id_list,
)
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Put, StoragePort
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes
from metastore_server.wire.thrift_json import to_json

_STATS_PREFIX = b"txnstats\x00"
_INSERTED, _UPDATED, _DELETED = b"c:ins", b"c:upd", b"c:del"


def _snapshot_now(table: LockTable) -> ValidTxnList:
    """The snapshot of the transactions as they are (HMS's, when a call gives none)."""
    txns = sorted(table.txns.values(), key=lambda t: t.txnid)
    open_ids = tuple(t.txnid for t in txns if t.state == hms.TxnState.OPEN)
    aborted = tuple(t.txnid for t in txns if t.state == hms.TxnState.ABORTED)
    first = min(open_ids) if open_ids else ValidTxnList(0).min_open
    return ValidTxnList(table.last_txn_id, first, open_ids, aborted)


def _added_files(info: hms.InsertEventRequestData) -> list[str]:
    """The files of a write notification as its event lists them: ``file#checksum`` where a
    checksum is given (as the INSERT event's)."""
    files, sums = list(info.filesAdded or []), info.filesAddedChecksum or []
    return [f"{name}#{sums[i]}" if i < len(sums) and sums[i] else name
            for i, name in enumerate(files)]  # fmt: skip


def _objects(
    store: StoragePort, ref: TableRef | None, values: list[str]
) -> tuple[str | None, str | None]:
    """The Thrift JSON of a table written and of its partition of ``values`` (None for an
    unknown table, and for no partition or one that does not exist)."""
    if ref is None:
        return None, None
    partition = None
    if values and len(values) == len(ref.key_names):
        row = store.get(layout.PARTITIONS, layout.partition_key(ref.table_id, ref.kinds, values))
        if row is not None:
            partition = from_bytes(hms.Partition, row[layout.OBJECT])
            partition.dbName, partition.tableName = ref.db, ref.name
    return to_json(ref.table), to_json(partition) if partition is not None else None


def _wanted(name: str | None) -> str | None:
    """A request's database or table filter (None: any; HMS takes "*" as any too)."""
    return None if not name or name == "*" else name.lower()


class WriteIds:
    """Write ids of transactional tables over the transactions' stored value."""

    def __init__(self, transactions: Transactions, tables: Tables | None = None) -> None:
        self._txns = transactions
        self._store = transactions._ctx.store
        self._tables = tables

    # -- allocating ------------------------------------------------------------------------

    def allocate(
        self, request: hms.AllocateTableWriteIdsRequest
    ) -> hms.AllocateTableWriteIdsResponse:
        """A write id in the table for each open transaction (the one it has already, else the
        next); NoSuchTxnException / TxnAbortedException for one that is not open."""
        if request is None or not request.dbName or not request.tableName:
            raise hms.MetaException(message="Allocating write ids needs dbName and tableName")
        if request.srcTxnToWriteIdList or request.replPolicy:
            raise hms.MetaException(
                message="Allocating write ids for replication (replPolicy) is not supported"
            )
        if not request.txnIds:
            raise hms.MetaException(message="Allocating write ids needs txnIds")
        name = wid.full_name(request.dbName, request.tableName)

        def allocate(table: LockTable, now: int) -> list[hms.TxnToWriteId]:
            state = wid.table_state(table.write_ids, name)
            answer = []
            allocated = []
            for txnid in request.txnIds:
                self._txns.open_txn(table, txnid, now)
                write_id, new = wid.allocate(state, txnid)
                table.changed = table.changed or new
                answer.append(hms.TxnToWriteId(txnId=txnid, writeId=write_id))
                if new:
                    allocated.append((txnid, write_id))
            if allocated:  # HMS: an event of the write ids allocated by this call only
                db, table_name = name.split(".", 1)
                table.events.append(messages.alloc_write_id(db, table_name, allocated,
                                                            now // 1000))  # fmt: skip
            return answer

        return hms.AllocateTableWriteIdsResponse(txnToWriteIds=self._txns.change(allocate))

    def max_allocated(self, db: str, table_name: str) -> int:
        """The highest write id allocated (or seeded below) in the table; 0 when none."""
        state = self._txns.read_state().write_ids.get(wid.full_name(db, table_name))
        return state["last"] if state else 0

    def seed_write_id(self, db: str, table_name: str, seed: int) -> None:
        """Make ``seed`` the table's next write id; MetaException when write ids at or above
        it are allocated already."""
        name = wid.full_name(db, table_name)

        def seed_it(table: LockTable, now: int) -> None:
            state = wid.table_state(table.write_ids, name)
            if seed is None or seed <= state["last"]:
                raise hms.MetaException(
                    message=f"Invalid write id seed {seed} for {name}: write ids up to "
                    f"{state['last']} are allocated"
                )
            state["last"] = state["base"] = seed - 1
            table.changed = True

        self._txns.change(seed_it)

    def seed_txn_id(self, seed: int) -> None:
        """Make ``seed`` the next transaction id; MetaException when it is not above the
        highest one handed out."""

        def seed_it(table: LockTable, now: int) -> None:
            if seed is None or seed <= table.last_txn_id:
                raise hms.MetaException(
                    message=f"Invalid txnId seed {seed}, the highWaterMark is {table.last_txn_id}"
                )
            table.last_txn_id = seed - 1
            table.changed = True

        self._txns.change(seed_it)

    def add_to_min_history(self, txnid: int, write_ids: dict[str, int]) -> None:
        """Record the write ids an open transaction holds per table (``db.table``) in its
        minimum history; they go when it ends."""

        def record(table: LockTable, now: int) -> None:
            self._txns.open_txn(table, txnid, now)
            for name, write_id in (write_ids or {}).items():
                state = wid.table_state(table.write_ids, name.lower())
                state.setdefault("h", {})[str(txnid)] = write_id
            table.changed = True

        self._txns.change(record)

    def repl_table_state(self, request: hms.ReplTblWriteIdStateRequest) -> None:
        """Set a table's write ids from a replication source's ValidWriteIdList: the next
        write id follows its high watermark; its open and aborted write ids are aborted here
        (each under a transaction id of its own, handed out and aborted)."""
        try:
            _, hwm, _, open_ids, aborted = parse_valid_write_id_list(request.validWriteIdlist)
        except ValueError as error:
            raise hms.MetaException(message=str(error)) from error
        name = wid.full_name(request.dbName, request.tableName)

        def replace(table: LockTable, now: int) -> None:
            state = wid.table_state(table.write_ids, name)
            if state["last"] > 0:
                return  # HMS: a table with write ids keeps them
            state["last"] = state["base"] = hwm
            for write_id in sorted({*open_ids, *aborted}):
                table.last_txn_id += 1
                state["t"][str(table.last_txn_id)] = [write_id, wid.ABORTED, None, None]
            table.changed = True

        self._txns.change(replace)

    # -- reading ---------------------------------------------------------------------------

    def valid_write_ids(self, request: hms.GetValidWriteIdsRequest) -> hms.GetValidWriteIdsResponse:
        """Each table's write ids as the caller's snapshot (``validTxnList``; none: as things
        are) sees them, up to ``writeId`` when given."""
        table = self._txns.read_state()
        if request.validTxnList:
            try:
                snapshot = parse_valid_txn_list(request.validTxnList)
            except ValueError as error:
                raise hms.MetaException(message=str(error)) from error
        else:
            snapshot = _snapshot_now(table)
        answers = []
        for full in request.fullTableNames or []:
            name = full.lower()
            state = table.write_ids.get(name)
            answers.append(wid.valid_write_ids(state, name, snapshot, request.writeId))
        return hms.GetValidWriteIdsResponse(tblValidWriteIds=answers)

    def latest_txnid_in_conflict(self, txnid: int) -> int:
        """The latest transaction that wrote a table this one has a write id in and committed
        after this one began (HMS's write-set conflict); 0 when none."""
        table = self._txns.read_state()
        latest = 0
        for state in table.write_ids.values():
            if str(txnid) not in state["t"]:
                continue
            for other, (_, status, commit_id, _) in state["t"].items():
                if status == wid.COMMITTED and int(other) != txnid and commit_id >= txnid:
                    latest = max(latest, int(other))
        return latest

    def open_txns_excluding(self, exclude: list[int] | None) -> hms.GetOpenTxnsResponse:
        """``get_open_txns`` leaving out transactions of the given types."""
        table = self._txns.read_state()
        left_out = set(exclude or [])
        txns = sorted((t for t in table.txns.values() if t.txn_type not in left_out),
                      key=lambda t: t.txnid)  # fmt: skip
        open_ids = [t.txnid for t in txns if t.state == hms.TxnState.OPEN]
        return hms.GetOpenTxnsResponse(
            txn_high_water_mark=table.last_txn_id,
            open_txns=[t.txnid for t in txns],
            min_open_txn=min(open_ids) if open_ids else None,
            abortedBits=bit_set([i for i, t in enumerate(txns) if t.state != hms.TxnState.OPEN]),
        )

    # -- the write notification log --------------------------------------------------------

    def add_write_notification(self, request: hms.WriteNotificationLogRequest) -> None:
        """Record the files a transaction wrote to a table or partition (merged with the ones
        recorded for it already)."""
        if request is None or not request.db or not request.table or request.fileInfo is None:
            raise hms.MetaException(message="A write notification needs db, table and fileInfo")
        db, table_name = request.db.lower(), request.table.lower()
        ref = self._tables.find(db, table_name) if self._tables is not None else None
        values = request.partitionVals or []
        partition = self._partition_name(ref, values)
        objects = _objects(self._store, ref, values)
        key = wid.log_key(request.txnId, db, table_name, partition)
        row = self._store.get(layout.META, key) or {}
        known: dict[str, Any] = json.loads(row[layout.OBJECT]) if row else {"files": []}
        files = known["files"] + [
            f for f in request.fileInfo.filesAdded or [] if f not in known["files"]
        ]
        record = {"writeId": request.writeId, "db": db, "table": table_name,
                  "partition": partition or None, "files": files,
                  "tableObj": objects[0], "partitionObj": objects[1]}  # fmt: skip
        put = Put(layout.META, key, {layout.OBJECT: json.dumps(record).encode()})
        log = self._txns._ctx.events
        if not log.enabled:
            self._store.mutate([put])
            return
        added = _added_files(request.fileInfo)
        event = messages.acid_write(request.txnId, request.writeId, db, table_name,
                                    partition or None, objects, added,
                                    self._txns._ctx.now())  # fmt: skip
        # The event's row comes first: on HBase it is the compare-and-set (its id's mark
        # free), then the notification's row lands; one store transaction either way.

        def attempt() -> None | Lost:
            puts, conditions = log.rows([event])
            with shared_value.in_transaction(self._store):
                written = self._store.mutate([*puts, put], conditions[0])
            return None if written else LOST

        if retrying.race(retrying.ACID_WRITE_EVENT, attempt) is not LOST:
            log.written()
            return
        raise hms.MetaException(
            message="Could not record the ACID_WRITE_EVENT: other writers kept taking the "
            "next event id; try again"
        )

    @staticmethod
    def _partition_name(ref: TableRef | None, values: list[str]) -> str:
        """The partition's name ``k=v/...`` by the table's keys (values joined by ``/`` when
        the table is unknown or has other keys); "" for none."""
        if not values:
            return ""
        if ref is None or len(ref.key_names) != len(values):
            return "/".join(values)
        return names.make_partition_name(ref.key_names, values)

    def write_event_info(
        self, request: hms.GetAllWriteEventInfoRequest
    ) -> list[hms.WriteEventInfo]:
        """A transaction's write notification records (of one database and table when given,
        "*" meaning any, as HMS), ordered by database and table, each with the table and
        partition written (Thrift JSON; a record kept before objects were: the table as it is
        now)."""
        wanted_db = _wanted(request.dbName)
        wanted_table = _wanted(request.tableName)
        answer = []
        for known in wid.notifications(self._store, request.txnId or 0):
            if wanted_db is not None and known["db"] != wanted_db:
                continue
            if wanted_table is not None and known["table"] != wanted_table:
                continue
            table_obj = known.get("tableObj")
            if table_obj is None and "tableObj" not in known and self._tables is not None:
                table_obj = _objects(self._store, self._tables.find(known["db"],
                                                                    known["table"]), [])[0]
            answer.append(hms.WriteEventInfo(
                writeId=known["writeId"], database=known["db"], table=known["table"],
                files=",".join(known["files"]), partition=known["partition"],
                tableObj=table_obj, partitionObj=known.get("partitionObj"),
            ))  # fmt: skip
        return answer

    # -- statistics ------------------------------------------------------------------------

    def update_transaction_statistics(self, request: hms.UpdateTransactionalStatsRequest) -> None:
        """Add a transaction's inserted, updated and deleted row counts to the table's (by
        table id)."""
        key = _STATS_PREFIX + b"%020d" % request.tableId
        for column, amount in ((_INSERTED, request.insertCount),
                               (_UPDATED, request.updatedCount),
                               (_DELETED, request.deletedCount)):  # fmt: skip
            if amount:
                self._store.increment(layout.META, key, column, amount)
