"""Locks and transactions, kept in the store as HMS keeps them in its database: they survive
restarts and hold across every server process on the store.

All locks and transactions are one value (``layout.LOCK_STATE`` of ``layout.LOCKS_ROW``), and
every change to them is one compare-and-set of that value against the one it was computed from:
atomic on HBase (whose check-and-put writes one column atomically) as on the embedded store.
Lock and transaction ids are taken inside that compare-and-set: lock ids follow the order locks
are recorded in (the compatibility rules rely on it), and no reader ever sees a transaction id
handed out that is not yet open. A ``check_lock`` that changes nothing writes nothing (it
heartbeats only once a tenth of the timeout has passed), so polling clients do not contend.

A lock that is not in a transaction, and a transaction, expire when no call has touched them
(``lock``, ``check_lock``, ``heartbeat``) for ``timeout_s`` (HMS's ``hive.txn.timeout``, 300 s):
an expired lock is gone, an expired transaction aborted (its locks gone). This is applied on
every change, and every read sees it already applied, so a crashed client never blocks a table
for ever. A transaction also keeps the partitions it wrote (``add_dynamic_partitions``) until it
ends. Tables' write ids are part of the same value (``write_id_state``): a commit or abort settles
the transaction's in the same change. The compaction queue is ``compactions.py``.

A change's notification events (OPEN_TXN, COMMIT_TXN, ABORT_TXN, ALLOC_WRITE_ID: collected in
``LockTable.events`` by the change's action, so a retried action rebuilds them) are recorded
with it by ``shared_value.change``: in the same ``mutate`` on the embedded store, right after
the compare-and-set on HBase (docs/hms-api.md#notification-log says what that leaves open).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from thriftpy2.thrift import TApplicationException

from metastore_server.catalog.core import shared_value
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.events import txn_messages as messages
from metastore_server.catalog.events.messages import Event
from metastore_server.catalog.txn import compactions, lock_rules, view_state, write_id_state
from metastore_server.catalog.txn.valid_lists import bit_set
from metastore_server.storage import layout
from metastore_server.thrift_api import hms

#: HMS's hive.txn.timeout.
DEFAULT_TIMEOUT_S = 300.0
#: Most transactions one open_txns call may open (HMS's hive.txn.max.open.batch).
MAX_OPEN_BATCH = 1000
#: How long an aborted transaction is still known as aborted (then: no such transaction).
ABORTED_KEPT_S = 3600.0
#: HMS's TXN_COMPONENTS operation letters of the operations add_dynamic_partitions takes.
_OPERATIONS = {
    hms.DataOperationType.SELECT: "s",
    hms.DataOperationType.INSERT: "i",
    hms.DataOperationType.UPDATE: "u",
    hms.DataOperationType.DELETE: "d",
}
_LEVEL_OF = {
    hms.LockLevel.DB: "db",
    hms.LockLevel.TABLE: "table",
    hms.LockLevel.PARTITION: "partition",
}


def _written(components: list[hms.LockComponent]) -> list[list[str]]:
    """The TXN_COMPONENTS rows a transaction's lock request adds: its update and delete
    components (what a materialized view's invalidation looks for)."""
    letters = {hms.DataOperationType.UPDATE: "u", hms.DataOperationType.DELETE: "d"}
    return [
        [(c.dbname or "").lower(), (c.tablename or "").lower(), c.partitionname or "",
         letters[c.operationType]]
        for c in components
        if c.operationType in letters and c.tablename
    ]  # fmt: skip


def _ms() -> int:
    return int(time.time() * 1000)


@dataclass
class LockEntry:
    """A recorded lock."""

    lockid: int
    txnid: int
    state: int
    user: str
    host: str
    agent: str
    heartbeat_ms: int
    acquired_ms: int | None
    components: list[lock_rules.Component]
    #: (lock id, its component, this lock's component) this lock waits for.
    blocked_by: tuple[int, int, int] | None = None

    def held(self) -> lock_rules.Held:
        return lock_rules.Held(self.lockid, self.txnid, self.state, tuple(self.components))

    def encode(self) -> dict[str, Any]:
        return {
            "txn": self.txnid, "state": self.state, "user": self.user, "host": self.host,
            "agent": self.agent, "hb": self.heartbeat_ms, "acq": self.acquired_ms,
            "by": list(self.blocked_by) if self.blocked_by else None,
            "c": [[c.type, c.db, c.table, c.partition] for c in self.components],
        }  # fmt: skip

    @classmethod
    def decode(cls, lockid: int, d: dict[str, Any]) -> LockEntry:
        return cls(
            lockid, d["txn"], d["state"], d["user"], d["host"], d["agent"], d["hb"], d["acq"],
            [lock_rules.Component(t, db, tb, p) for t, db, tb, p in d["c"]],
            tuple(d["by"]) if d.get("by") else None,
        )  # fmt: skip


@dataclass
class TxnEntry:
    """A recorded transaction (open or aborted; committed ones are gone)."""

    txnid: int
    state: int  # hms.TxnState
    user: str
    host: str
    agent: str
    started_ms: int
    heartbeat_ms: int
    aborted_ms: int | None = None
    #: [db, table, partition, operation] written by the transaction (add_dynamic_partitions),
    #: then its write id (an int) when it has one.
    components: list[list[Any]] = field(default_factory=list)
    #: The hms.TxnType it was opened as (get_open_txns_req leaves some types out).
    txn_type: int = 0

    def encode(self) -> dict[str, Any]:
        encoded = {
            "state": self.state, "user": self.user, "host": self.host, "agent": self.agent,
            "start": self.started_ms, "hb": self.heartbeat_ms, "ab": self.aborted_ms,
        }  # fmt: skip
        if self.components:
            encoded["c"] = self.components
        if self.txn_type:
            encoded["tt"] = self.txn_type
        return encoded

    @classmethod
    def decode(cls, txnid: int, d: dict[str, Any]) -> TxnEntry:
        return cls(txnid, d["state"], d["user"], d["host"], d["agent"], d["start"], d["hb"],
                   d.get("ab"), d.get("c", []), d.get("tt", 0))  # fmt: skip


@dataclass
class LockTable:
    """All locks and transactions as read (``stored``: the value they were read from), with
    whether one call changed them."""

    stored: bytes | None
    last_lock_id: int = 0
    last_txn_id: int = 0
    locks: dict[int, LockEntry] = field(default_factory=dict)
    txns: dict[int, TxnEntry] = field(default_factory=dict)
    #: Table write ids (``write_id_state``), by ``db.table``.
    write_ids: dict[str, Any] = field(default_factory=dict)
    #: Materialized views' rebuild locks and the tables' update/delete commits (``view_state``).
    views: dict[str, Any] = field(default_factory=dict)
    changed: bool = False
    #: The notification events of this change (not stored in the value: recorded with it).
    events: list[Event] = field(default_factory=list)

    @classmethod
    def decode(cls, stored: bytes | None) -> LockTable:
        table = cls(stored)
        if stored:
            d = json.loads(stored)
            table.last_lock_id = d["n"]
            table.last_txn_id = d.get("tn", 0)
            table.locks = {int(k): LockEntry.decode(int(k), v) for k, v in d["locks"].items()}
            table.txns = {int(k): TxnEntry.decode(int(k), v) for k, v in d["txns"].items()}
            table.write_ids = d.get("w", {})
            table.views = d.get("v", {})
        return table

    def encode(self) -> bytes:
        return json.dumps(
            {
                "n": self.last_lock_id,
                "tn": self.last_txn_id,
                "locks": {str(k): v.encode() for k, v in sorted(self.locks.items())},
                "txns": {str(k): v.encode() for k, v in sorted(self.txns.items())},
                **({"w": self.write_ids} if self.write_ids else {}),
                **({"v": self.views} if self.views else {}),
            },
            separators=(",", ":"),
        ).encode()

    def next_lock_id(self) -> int:
        """A new lock id, recorded with this change."""
        self.last_lock_id += 1
        self.changed = True
        return self.last_lock_id

    def put_lock(self, entry: LockEntry) -> None:
        self.locks[entry.lockid] = entry
        self.changed = True

    def drop_lock(self, lockid: int) -> None:
        self.locks.pop(lockid, None)
        self.changed = True

    def put_txn(self, entry: TxnEntry) -> None:
        self.txns[entry.txnid] = entry
        self.changed = True

    def dbs_written(self, txn: TxnEntry) -> list[str]:
        """The databases an open transaction wrote (write ids, dynamic partitions), sorted."""
        key = str(txn.txnid)
        dbs = {name.split(".", 1)[0] for name, state in self.write_ids.items() if key in state["t"]}
        dbs.update(component[0] for component in txn.components if component[0])
        return sorted(dbs)

    def drop_txn(self, txnid: int) -> None:
        self.txns.pop(txnid, None)
        self.changed = True
        for lockid in [i for i, lock in self.locks.items() if lock.txnid == txnid]:
            self.drop_lock(lockid)

    def abort_txn(self, txn: TxnEntry, now: int) -> None:
        if txn.txn_type != hms.TxnType.READ_ONLY:  # HMS 4 records none for read-only ones
            self.events.append(messages.abort_txn(txn.txnid, self.dbs_written(txn), now // 1000))
        txn.state, txn.aborted_ms = hms.TxnState.ABORTED, now
        txn.components = []
        self.put_txn(txn)
        write_id_state.settle(self, txn.txnid, False, now)
        view_state.settle(self, txn.txnid, (), False)
        for lockid in [i for i, lock in self.locks.items() if lock.txnid == txn.txnid]:
            self.drop_lock(lockid)


class Transactions:
    """HMS's lock manager and transaction table on the store."""

    def __init__(self, ctx: CatalogContext, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._ctx = ctx
        self.timeout_s = timeout_s
        self.clock: Callable[[], int] = _ms

    # -- the row ---------------------------------------------------------------------------

    def read_state(self) -> LockTable:
        """The locks and transactions as stored, timeouts applied."""
        row = self._ctx.store.get(layout.META, layout.LOCKS_ROW) or {}
        table = LockTable.decode(row.get(layout.LOCK_STATE))
        self._expire(table, self.clock())
        return table

    def _expire(self, table: LockTable, now: int) -> None:
        """Apply timeouts: stale locks go, stale transactions are aborted, long-aborted ones
        are forgotten."""
        limit = now - int(self.timeout_s * 1000)
        for txn in list(table.txns.values()):
            if txn.state == hms.TxnState.OPEN and txn.heartbeat_ms < limit:
                table.abort_txn(txn, now)
            elif txn.aborted_ms is not None and txn.aborted_ms < now - ABORTED_KEPT_S * 1000:
                table.drop_txn(txn.txnid)
        for lock in list(table.locks.values()):
            stale = lock.heartbeat_ms < limit if lock.txnid == 0 else lock.txnid not in table.txns
            if stale:
                table.drop_lock(lock.lockid)

    def change(self, action: Callable[[LockTable, int], Any]) -> Any:
        """Run ``action`` on the locks as read and store the result, compare-and-set on the
        value read (read again and retried when another call changed it meanwhile)."""
        where = (layout.META, layout.LOCKS_ROW, layout.LOCK_STATE)
        return shared_value.change(self._ctx.store, where, self.read_state, action, self.clock,
                                   "Locks", lambda table: table.events,
                                   self._ctx.events)  # fmt: skip

    # -- locks -----------------------------------------------------------------------------

    def lock(self, request: hms.LockRequest) -> hms.LockResponse:
        """Record a lock request: ACQUIRED when nothing earlier blocks it, else WAITING."""
        if request is None or not request.component:
            raise hms.MetaException(message="A lock request needs at least one component")
        components = [_component(c) for c in request.component]
        txnid = request.txnid or 0

        def record(table: LockTable, now: int) -> tuple[int, int]:
            if txnid:
                txn = self.open_txn(table, txnid, now)
                # HMS records a transaction's writes from its lock requests too (TXN_COMPONENTS)
                txn.components.extend(_written(request.component))
            # The id is taken in the same compare-and-set as the lock is recorded: ids follow
            # the order locks are recorded in, which the rules rely on (earlier ids first).
            lockid = table.next_lock_id()
            entry = LockEntry(lockid, txnid, lock_rules.WAITING, request.user or "",
                              request.hostname or "", request.agentInfo or "Unknown", now,
                              None, components)  # fmt: skip
            self._decide(table, entry, now)
            return lockid, entry.state

        lockid, state = self.change(record)
        return hms.LockResponse(lockid=lockid, state=state)

    @staticmethod
    def _decide(table: LockTable, entry: LockEntry, now: int) -> None:
        others = [lock.held() for lock in table.locks.values() if lock.lockid != entry.lockid]
        entry.blocked_by = lock_rules.blocker(entry.held(), others)
        if entry.blocked_by is None:
            entry.state, entry.acquired_ms = lock_rules.ACQUIRED, now
        entry.heartbeat_ms = now
        table.put_lock(entry)

    def check_lock(self, request: hms.CheckLockRequest) -> hms.LockResponse:
        """Look at a lock again (and heartbeat it): ACQUIRED once nothing blocks it."""
        lockid = request.lockid if request is not None else None

        def check(table: LockTable, now: int) -> int:
            entry = table.locks.get(lockid)
            if entry is None:
                raise hms.NoSuchLockException(message=f"No such lock lockid:{lockid}")
            fresh = now - int(self.timeout_s * 100)  # a tenth of the timeout ago
            if entry.txnid:
                txn = self.open_txn(table, entry.txnid, now)
                if txn.heartbeat_ms < fresh:
                    txn.heartbeat_ms = now
                    table.put_txn(txn)
            if entry.state == lock_rules.WAITING:
                others = [lock.held() for lock in table.locks.values() if lock is not entry]
                if lock_rules.blocker(entry.held(), others) is None or entry.heartbeat_ms < fresh:
                    self._decide(table, entry, now)  # granted now, or its heartbeat is due
            elif entry.heartbeat_ms < fresh:
                entry.heartbeat_ms = now
                table.put_lock(entry)
            return entry.state

        return hms.LockResponse(lockid=lockid, state=self.change(check))

    def unlock(self, request: hms.UnlockRequest) -> None:
        """Release a lock not held by a transaction (an unknown one: nothing to do, as HMS)."""
        lockid = request.lockid if request is not None else None

        def release(table: LockTable, now: int) -> None:
            entry = table.locks.get(lockid)
            if entry is None:
                return
            if entry.txnid and entry.state == lock_rules.ACQUIRED:
                first = entry.components[0]
                raise hms.TxnOpenException(
                    message=(
                        "Unlocking locks associated with transaction not permitted.  "
                        f"lockid:{lockid} intLockId:1 txnid:{entry.txnid} db:{first.db} "
                        f"table:{first.table or 'null'} partition:{first.partition or 'null'} "
                        "state:ACQUIRED "
                        f"type:{hms.LockType._VALUES_TO_NAMES[first.type]}"
                    )
                )
            table.drop_lock(entry.lockid)

        self.change(release)

    def show_locks(self, request: hms.ShowLocksRequest | None) -> hms.ShowLocksResponse:
        """Every lock component, filtered by database, table and partition name."""
        table = self.read_state()
        wanted = request or hms.ShowLocksRequest()
        elements = []
        for lock in sorted(table.locks.values(), key=lambda entry: entry.lockid):
            for index, c in enumerate(lock.components, start=1):
                if wanted.dbname and c.db != wanted.dbname.lower():
                    continue
                if wanted.tablename and c.table != wanted.tablename.lower():
                    continue
                if wanted.partname and c.partition != wanted.partname:
                    continue
                blocked = lock.blocked_by if lock.state == lock_rules.WAITING else None
                if blocked is not None and blocked[2] != index:
                    blocked = None  # another component of this request is the one held up
                elements.append(
                    hms.ShowLocksResponseElement(
                        lockid=lock.lockid, dbname=c.db, tablename=c.table,
                        partname=c.partition, state=lock.state, type=c.type,
                        txnid=lock.txnid, lastheartbeat=0 if lock.txnid else lock.heartbeat_ms,
                        acquiredat=lock.acquired_ms, user=lock.user, hostname=lock.host,
                        heartbeatCount=0, agentInfo=lock.agent,
                        blockedByExtId=blocked[0] if blocked else None,
                        blockedByIntId=blocked[1] if blocked else None, lockIdInternal=index,
                    )  # fmt: skip
                )
        return hms.ShowLocksResponse(locks=elements)

    def heartbeat(self, request: hms.HeartbeatRequest | None) -> None:
        """Keep a lock and/or a transaction alive."""
        request = request or hms.HeartbeatRequest()

        def beat(table: LockTable, now: int) -> None:
            if request.txnid:
                txn = self.open_txn(table, request.txnid, now)
                txn.heartbeat_ms = now
                table.put_txn(txn)
            if request.lockid:
                entry = table.locks.get(request.lockid)
                if entry is None:
                    raise hms.NoSuchLockException(message=f"No such lock: lockid:{request.lockid}")
                entry.heartbeat_ms = now
                table.put_lock(entry)

        self.change(beat)

    # -- transactions ----------------------------------------------------------------------

    @staticmethod
    def open_txn(table: LockTable, txnid: int, now: int) -> TxnEntry:
        """Transaction ``txnid`` of ``table``, which must be open (NoSuchTxnException,
        TxnAbortedException otherwise)."""
        txn = table.txns.get(txnid)
        if txn is None:
            raise hms.NoSuchTxnException(message=f"No such transaction txnid:{txnid}")
        if txn.state == hms.TxnState.ABORTED:
            raise hms.TxnAbortedException(message=f"Transaction txnid:{txnid} already aborted")
        return txn

    def open_txns(self, request: hms.OpenTxnRequest) -> hms.OpenTxnsResponse:
        """Open ``num_txns`` transactions (at most ``MAX_OPEN_BATCH``, HMS's
        hive.txn.max.open.batch); their ids, consecutive, taken in the same compare-and-set
        that records them (a reader never sees an id handed out but not yet open)."""
        count = max(int(request.num_txns or 0), 0) if request is not None else 0
        if count == 0:
            return hms.OpenTxnsResponse(txn_ids=[])
        if count > MAX_OPEN_BATCH:
            raise hms.MetaException(
                message=f"Invalid input for number of txns: {count} (at most {MAX_OPEN_BATCH})"
            )

        def record(table: LockTable, now: int) -> list[int]:
            first = table.last_txn_id + 1
            table.last_txn_id += count
            ids = list(range(first, table.last_txn_id + 1))
            for txnid in ids:
                table.put_txn(TxnEntry(txnid, hms.TxnState.OPEN, request.user or "",
                                       request.hostname or "", request.agentInfo or "Unknown",
                                       now, now, txn_type=request.txn_type or 0))  # fmt: skip
            if request.txn_type != hms.TxnType.READ_ONLY:
                table.events.append(messages.open_txns(ids, now // 1000))
            return ids

        return hms.OpenTxnsResponse(txn_ids=self.change(record))

    def commit_txn(self, request: hms.CommitTxnRequest) -> None:
        """Commit an open transaction: it and its locks are gone."""
        txnid = request.txnid if request is not None else 0
        # A compactor's transaction: HMS records COMMIT_COMPACTION_EVENT after its COMMIT_TXN.
        recording = self._ctx.events.enabled
        compaction = compactions.by_txn(self._ctx.store, txnid or 0) if recording else None

        def commit(table: LockTable, now: int) -> None:
            txn = self.open_txn(table, txnid, now)
            if txn.txn_type != hms.TxnType.READ_ONLY:
                table.events.append(messages.commit_txn(txnid, now // 1000))
            if compaction is not None:
                table.events.append(messages.commit_compaction(
                    txnid, compaction.id, compaction.type, compaction.where, now // 1000))
            table.drop_txn(txnid)
            write_id_state.settle(table, txnid, True, now)
            view_state.settle(table, txnid, txn.components, True)

        self.change(commit)

    def abort_txns(self, txnids: list[int], *, strict: bool) -> None:
        """Abort transactions (their locks go); an unknown one is an error when ``strict``."""

        def abort(table: LockTable, now: int) -> None:
            for txnid in txnids:
                txn = table.txns.get(txnid)
                if txn is None:
                    if strict:
                        raise hms.NoSuchTxnException(message=f"No such transaction txnid:{txnid}")
                    continue
                if txn.state == hms.TxnState.OPEN:
                    table.abort_txn(txn, now)

        self.change(abort)

    def add_dynamic_partitions(self, request: hms.AddDynamicPartitions) -> None:
        """Record the partitions an open transaction wrote (HMS's TXN_COMPONENTS); they go
        with the transaction when it commits or aborts."""
        txnid = request.txnid

        def record(table: LockTable, now: int) -> None:
            txn = self.open_txn(table, txnid, now)
            operation = _OPERATIONS.get(request.operationType)
            if operation is None:  # UNSET, NO_TXN: HMS 2.3 fails (IllegalArgumentException)
                raise TApplicationException(
                    TApplicationException.INTERNAL_ERROR,
                    "Internal error processing add_dynamic_partitions",
                )
            for name in request.partitionnames or []:
                component = [request.dbname, request.tablename, name, operation]
                txn.components.append(component + ([request.writeid] if request.writeid else []))
            table.put_txn(txn)

        self.change(record)

    def heartbeat_txn_range(
        self, request: hms.HeartbeatTxnRangeRequest
    ) -> hms.HeartbeatTxnRangeResponse:
        """Heartbeat every open transaction from ``min`` to ``max``; the others as aborted or
        unknown."""
        aborted: set[int] = set()
        nosuch: set[int] = set()

        def beat(table: LockTable, now: int) -> None:
            aborted.clear()
            nosuch.clear()
            for txnid in range(request.min, request.max + 1):
                txn = table.txns.get(txnid)
                if txn is None:
                    nosuch.add(txnid)
                elif txn.state == hms.TxnState.ABORTED:
                    aborted.add(txnid)
                else:
                    txn.heartbeat_ms = now
                    table.put_txn(txn)

        if request.max - request.min > 100_000:
            raise hms.MetaException(message="heartbeat_txn_range: at most 100000 ids at once")
        self.change(beat)
        return hms.HeartbeatTxnRangeResponse(aborted=aborted, nosuch=nosuch)

    def get_open_txns(self) -> hms.GetOpenTxnsResponse:
        """Open and aborted transactions (in id order, ``abortedBits`` marking the aborted
        ones as Java's ``BitSet.toByteArray`` does), and the highest id handed out."""
        table = self.read_state()
        txns = sorted(table.txns.values(), key=lambda t: t.txnid)
        open_ids = [t.txnid for t in txns if t.state == hms.TxnState.OPEN]
        aborted = [i for i, t in enumerate(txns) if t.state == hms.TxnState.ABORTED]
        return hms.GetOpenTxnsResponse(
            txn_high_water_mark=table.last_txn_id,
            open_txns=[t.txnid for t in txns],
            min_open_txn=min(open_ids) if open_ids else None,
            abortedBits=bit_set(aborted),
        )

    def get_open_txns_info(self) -> hms.GetOpenTxnsInfoResponse:
        """The same, with who opened each and when."""
        table = self.read_state()
        infos = [
            hms.TxnInfo(id=t.txnid, state=t.state, user=t.user, hostname=t.host,
                        agentInfo=t.agent, heartbeatCount=0, startedTime=t.started_ms,
                        lastHeartbeatTime=t.heartbeat_ms)  # fmt: skip
            for t in sorted(table.txns.values(), key=lambda t: t.txnid)
        ]
        return hms.GetOpenTxnsInfoResponse(txn_high_water_mark=table.last_txn_id,
                                           open_txns=infos)  # fmt: skip


def _component(component: hms.LockComponent) -> lock_rules.Component:
    """A lock component as the rules take it; MetaException on a malformed one."""
    if component is None or not component.dbname:
        raise hms.MetaException(message="A lock component needs a database name")
    if component.type not in (lock_rules.SHARED_READ, lock_rules.SHARED_WRITE,
                              lock_rules.EXCLUSIVE):  # fmt: skip
        raise hms.MetaException(message=f"Unknown lock type {component.type}")
    level = _LEVEL_OF.get(component.level)
    table = component.tablename.lower() if component.tablename else None
    partition = component.partitionname or None
    if level == "db":
        table = partition = None
    elif level == "table":
        partition = None
    if level in ("table", "partition") and table is None:
        raise hms.MetaException(message=f"A {level} lock component needs a table name")
    return lock_rules.Component(component.type, component.dbname.lower(), table, partition)
