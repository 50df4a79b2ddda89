"""The compaction queue, kept in the store as HMS keeps its compaction queue and history: a
Hive compactor (Initiator, Worker, Cleaner) records and takes its work here. Nothing is ever
compacted by this server.

Every request, active or finished, and the compaction metrics are one value
(``layout.COMPACTION_STATE`` of ``layout.COMPACTIONS_ROW``), and every change is one
compare-and-set of that value against the one it was computed from (atomic on HBase as on the
embedded store): a request is recorded, handed to one worker, or moved on whole or not at all,
by every server process on the store, and it survives restarts. It is a row of its own, not
part of the locks row: no call changes both, and lock polling does not contend with the
compactor.

States (HMS's names, as ``show_compact`` answers them) and the moves between them::

    compact            -> initiated
    find_next_compact  initiated -> working (the worker's id, version, start)
    mark_compacted     working -> ready for cleaning
    submit_for_cleanup -> ready for cleaning
    mark_cleaned       ready for cleaning, cleaning -> succeeded
    mark_failed        initiated, working, ready for cleaning, cleaning -> failed
    mark_refused       initiated, working -> refused
    abort_Compactions  initiated -> aborted

Any other move is refused with a MetaException naming the request and its state. Finished
requests (succeeded, failed, did not initiate, refused, aborted) are history: per table or
partition the newest ``RETAINED[state]`` of each state are kept (HMS's
``metastore.compactor.history.retention.*`` defaults), and at most ``MAX_HISTORY`` in all.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from metastore_server.catalog.core import shared_value
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.storage.port import StoragePort
from metastore_server.thrift_api import hms

R = TypeVar("R")

INITIATED = "initiated"
WORKING = "working"
READY_FOR_CLEANING = "ready for cleaning"
CLEANING = "cleaning"
FAILED = "failed"
SUCCEEDED = "succeeded"
DID_NOT_INITIATE = "did not initiate"
REFUSED = "refused"
ABORTED = "aborted"
#: HMS's one-letter state codes (its COMPACTION_QUEUE.CQ_STATE), accepted by show_compact.
STATE_CODES = {
    "i": INITIATED, "w": WORKING, "r": READY_FOR_CLEANING, "f": FAILED, "s": SUCCEEDED,
    "a": DID_NOT_INITIATE, "c": REFUSED, "x": ABORTED,
}  # fmt: skip
#: Finished requests kept per table or partition and state (HMS's retention defaults).
RETAINED = {SUCCEEDED: 3, FAILED: 3, DID_NOT_INITIATE: 2, REFUSED: 3, ABORTED: 3}
#: Most finished requests kept in all (the oldest go first).
MAX_HISTORY = 2000
#: Most requests waiting or in progress at once (compact beyond it is refused).
MAX_ACTIVE = 10_000
#: Most compaction metrics kept (update_compaction_metrics_data beyond it stores nothing).
MAX_METRICS = 10_000
#: The pool of a request or worker that names none.
DEFAULT_POOL = "default"
_ACTIVE = (INITIATED, WORKING, READY_FOR_CLEANING, CLEANING)
_REQUESTABLE = (hms.CompactionType.MAJOR, hms.CompactionType.MINOR, hms.CompactionType.REBALANCE)


def _ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Compaction:
    """One request of the queue or its history (times in ms since the epoch)."""

    id: int
    db: str
    table: str
    type: int
    state: str
    enqueued: int
    part: str | None = None
    run_as: str | None = None
    properties: dict[str, str] | None = None
    initiator_id: str | None = None
    initiator_version: str | None = None
    pool: str | None = None
    buckets: int | None = None
    order_by: str | None = None
    worker_id: str | None = None
    worker_version: str | None = None
    start: int | None = None
    job_id: str | None = None
    highest_write_id: int | None = None
    txn_id: int | None = None
    next_txn_id: int | None = None
    commit_time: int | None = None
    cleaner_start: int | None = None
    end: int | None = None
    error: str | None = None

    def encode(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def decode(cls, d: dict[str, Any]) -> Compaction:
        return cls(**d)

    @property
    def where(self) -> tuple[str, str, str | None]:
        return self.db, self.table, self.part

    def in_pool(self, pool: str | None) -> bool:
        return (self.pool or DEFAULT_POOL) == (pool or DEFAULT_POOL)

    def info(self) -> hms.CompactionInfoStruct:
        """As the compactor reads it (CompactionInfoStruct)."""
        return hms.CompactionInfoStruct(
            id=self.id, dbname=self.db, tablename=self.table, partitionname=self.part,
            type=self.type, runas=self.run_as, properties=stringable_map(self.properties),
            toomanyaborts=False, state=self.state, workerId=self.worker_id, start=self.start,
            highestWriteId=self.highest_write_id, errorMessage=self.error, hasoldabort=False,
            enqueueTime=self.enqueued, retryRetention=0, poolname=self.pool,
            numberOfBuckets=self.buckets, orderByClause=self.order_by,
        )  # fmt: skip

    def shown(self) -> hms.ShowCompactResponseElement:
        """As show_compact answers it."""
        return hms.ShowCompactResponseElement(
            dbname=self.db, tablename=self.table, partitionname=self.part, type=self.type,
            state=self.state, workerid=self.worker_id, start=self.start, runAs=self.run_as,
            hightestTxnId=self.txn_id, endTime=self.end, hadoopJobId=self.job_id or "None",
            id=self.id, errorMessage=self.error, enqueueTime=self.enqueued,
            workerVersion=self.worker_version, initiatorId=self.initiator_id,
            initiatorVersion=self.initiator_version, cleanerStart=self.cleaner_start,
            poolName=self.pool, nextTxnId=self.next_txn_id, txnId=self.txn_id,
            commitTime=self.commit_time, hightestWriteId=self.highest_write_id,
        )  # fmt: skip


def stringable_map(properties: dict[str, str] | None) -> str | None:
    """Properties in the text form Hive's compactor parses (``StringableMap``): the count, then
    each key and value as ``<length>:<text>`` (a null value as length -1)."""
    if properties is None:
        return None
    out = [f"{len(properties)}:"]
    for key, value in properties.items():
        out.append(f"{len(key)}:{key}")
        out.append("-1:" if value is None else f"{len(value)}:{value}")
    return "".join(out)


@dataclass
class Queue:
    """The queue as read (``stored``: the value it was read from), and whether a call changed
    it."""

    stored: bytes | None
    last_id: int = 0
    entries: dict[int, Compaction] = field(default_factory=dict)
    #: "db\x00table\x00partition\x00type" -> [value, version, threshold].
    metrics: dict[str, list[int]] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def decode(cls, stored: bytes | None) -> Queue:
        queue = cls(stored)
        if stored:
            d = json.loads(stored)
            queue.last_id = d["n"]
            queue.entries = {int(k): Compaction.decode(v) for k, v in d["q"].items()}
            queue.metrics = d.get("m", {})
        return queue

    def encode(self) -> bytes:
        return json.dumps(
            {
                "n": self.last_id,
                "q": {str(k): v.encode() for k, v in sorted(self.entries.items())},
                "m": self.metrics,
            },
            separators=(",", ":"),
        ).encode()

    def next_id(self) -> int:
        self.last_id += 1
        self.changed = True
        return self.last_id

    def put(self, entry: Compaction) -> None:
        self.entries[entry.id] = entry
        self.changed = True

    def active(self) -> list[Compaction]:
        return [e for e in self.entries.values() if e.state in _ACTIVE]

    def get(self, compaction_id: int | None) -> Compaction:
        """The request of that id; MetaException when there is none."""
        entry = self.entries.get(compaction_id or 0)
        if entry is None:
            raise hms.MetaException(message=f"No such compaction request id:{compaction_id}")
        return entry

    def finish(self, entry: Compaction, state: str, now: int) -> None:
        """Move a request into the history, and keep the history within its bounds."""
        entry.state, entry.end = state, now
        self.put(entry)
        finished = sorted(
            (e for e in self.entries.values() if e.state not in _ACTIVE),
            key=lambda e: e.id,
            reverse=True,
        )
        kept: dict[tuple[Any, ...], int] = {}
        for index, old in enumerate(finished):
            key = (*old.where, old.state)
            kept[key] = kept.get(key, 0) + 1
            if index >= MAX_HISTORY or kept[key] > RETAINED.get(old.state, 3):
                del self.entries[old.id]


def _move(entry: Compaction, allowed: tuple[str, ...], call: str) -> None:
    """Refuse ``call`` on a request in a state it does not move from."""
    if entry.state not in allowed:
        raise hms.MetaException(
            message=f"{call}: compaction request id:{entry.id} is '{entry.state}', not "
            + " or ".join(f"'{s}'" for s in allowed)
        )


def by_txn(store: StoragePort, txnid: int) -> Compaction | None:
    """The request being worked on in transaction ``txnid`` (HMS's COMPACTION_QUEUE row whose
    CQ_TXN_ID it is: ``update_compactor_state``); None when there is none."""
    row = store.get(layout.META, layout.COMPACTIONS_ROW) or {}
    stored = row.get(layout.COMPACTION_STATE)
    if not stored or not txnid:
        return None
    for entry in Queue.decode(stored).active():
        if entry.txn_id == txnid:
            return entry
    return None


class Compactions:
    """HMS's compaction queue and history on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self.clock: Callable[[], int] = _ms

    # -- the row ---------------------------------------------------------------------------

    def _read(self) -> Queue:
        row = self._ctx.store.get(layout.META, layout.COMPACTIONS_ROW) or {}
        stored = row.get(layout.COMPACTION_STATE)
        queue = Queue.decode(stored)
        if stored is None:
            self._adopt_legacy(queue)
        return queue

    def entries(self) -> list[Compaction]:
        """Every request of the queue and its history."""
        return list(self._read().entries.values())

    def _adopt_legacy(self, queue: Queue) -> None:
        """Requests recorded one row each by earlier versions, taken into the queue with its
        first change (their rows are left as they are)."""
        counters = self._ctx.store.get(layout.META, layout.COUNTERS_ROW) or {}
        last = counters.get(layout.NEXT_COMPACTION_ID)
        queue.last_id = int.from_bytes(last, "big", signed=True) if last else 0
        for key, row in self._ctx.store.scan(layout.META, *layout.compaction_range()):
            old = json.loads(row[layout.OBJECT])
            compaction_id = layout.compaction_id(key)
            queue.entries[compaction_id] = Compaction(
                compaction_id, old["db"], old["table"], old["type"], old["state"], 0,
                part=old["part"], run_as=old.get("runAs"),
            )  # fmt: skip
            queue.last_id = max(queue.last_id, compaction_id)

    def _change(self, action: Callable[[Queue, int], R]) -> R:
        """Run ``action`` on the queue as read and store the result, compare-and-set on the
        value read (read again and retried when another call changed it meanwhile)."""
        where = (layout.META, layout.COMPACTIONS_ROW, layout.COMPACTION_STATE)
        return shared_value.change(self._ctx.store, where, self._read, action, self.clock,
                                   "Compactions")  # fmt: skip

    # -- the Initiator's side --------------------------------------------------------------

    def compact(self, request: hms.CompactionRequest) -> hms.CompactionResponse:
        """Queue a request ('initiated'); while one for the same table or partition is
        initiated or working, that one is answered instead (not accepted)."""
        entry = _new_entry(request, INITIATED)

        def record(queue: Queue, now: int) -> hms.CompactionResponse:
            for other in queue.active():
                if other.where == entry.where and other.state in (INITIATED, WORKING):
                    return hms.CompactionResponse(
                        id=other.id, state=other.state, accepted=False,
                        errormessage=f"Compaction is already scheduled with state "
                        f"'{other.state}' and id={other.id}",
                    )  # fmt: skip
            self._enqueue(queue, entry, now)
            return hms.CompactionResponse(id=entry.id, state=INITIATED, accepted=True)

        return self._change(record)

    @staticmethod
    def _enqueue(queue: Queue, entry: Compaction, now: int) -> None:
        if len(queue.active()) >= MAX_ACTIVE:
            raise hms.MetaException(
                message=f"Too many compaction requests waiting (at most {MAX_ACTIVE})"
            )
        entry.id, entry.enqueued = queue.next_id(), now
        queue.put(entry)

    def submit_for_cleanup(
        self, request: hms.CompactionRequest, highest_write_id: int, txn_id: int
    ) -> bool:
        """Queue a request straight into 'ready for cleaning' (work done elsewhere, its files
        for the Cleaner), with the highest write id and transaction it covers."""
        entry = _new_entry(request, READY_FOR_CLEANING, any_type=True)
        entry.highest_write_id, entry.txn_id = highest_write_id, txn_id

        def record(queue: Queue, now: int) -> bool:
            self._enqueue(queue, entry, now)
            entry.commit_time = now
            return True

        return self._change(record)

    # -- the Worker's side -----------------------------------------------------------------

    def find_next(
        self, worker_id: str | None, worker_version: str | None, pool: str | None
    ) -> hms.OptionalCompactionInfoStruct:
        """Hand the oldest 'initiated' request of the pool to a worker: it is 'working' for
        that worker from now. Nothing (no ``ci``) when none waits."""

        def take(queue: Queue, now: int) -> hms.CompactionInfoStruct | None:
            waiting = [e for e in queue.entries.values()
                       if e.state == INITIATED and e.in_pool(pool)]  # fmt: skip
            if not waiting:
                return None
            entry = min(waiting, key=lambda e: (e.enqueued, e.id))
            entry.state, entry.start = WORKING, now
            entry.worker_id, entry.worker_version = worker_id, worker_version
            queue.put(entry)
            return entry.info()

        return hms.OptionalCompactionInfoStruct(ci=self._change(take))

    def set_hadoop_jobid(self, job_id: str | None, compaction_id: int) -> None:
        """Record the job running a request (an unknown id: nothing to do)."""

        def record(queue: Queue, now: int) -> None:
            entry = queue.entries.get(compaction_id)
            if entry is not None:
                entry.job_id = job_id
                queue.put(entry)

        self._change(record)

    def update_compactor_state(self, info: hms.CompactionInfoStruct, txn_id: int) -> None:
        """Record the compactor's transaction and the highest write id it compacts on a
        'working' request."""

        def record(queue: Queue, now: int) -> None:
            entry = queue.get(_id_of(info))
            _move(entry, (WORKING,), "update_compactor_state")
            entry.txn_id = txn_id
            if info.highestWriteId is not None:
                entry.highest_write_id = info.highestWriteId
            if info.runas:
                entry.run_as = info.runas
            queue.put(entry)

        self._change(record)

    def mark_compacted(self, info: hms.CompactionInfoStruct) -> None:
        """'working' -> 'ready for cleaning'."""

        def move(queue: Queue, now: int) -> None:
            entry = queue.get(_id_of(info))
            _move(entry, (WORKING,), "mark_compacted")
            entry.state, entry.commit_time = READY_FOR_CLEANING, now
            if info.highestWriteId is not None:
                entry.highest_write_id = info.highestWriteId
            queue.put(entry)

        self._change(move)

    # -- the Cleaner's side, and the ends --------------------------------------------------

    def mark_cleaned(self, info: hms.CompactionInfoStruct) -> None:
        """'ready for cleaning' -> 'succeeded' (history)."""

        def move(queue: Queue, now: int) -> None:
            entry = queue.get(_id_of(info))
            _move(entry, (READY_FOR_CLEANING, CLEANING), "mark_cleaned")
            entry.cleaner_start = entry.cleaner_start or now
            queue.finish(entry, SUCCEEDED, now)

        self._change(move)

    def mark_failed(self, info: hms.CompactionInfoStruct) -> None:
        """An active request -> 'failed' with the compactor's error message (history). Id 0
        with state 'did not initiate' records the Initiator's failed attempt at a table or
        partition (a history entry of its own, as HMS does)."""

        def move(queue: Queue, now: int) -> None:
            if not info.id and info.state == DID_NOT_INITIATE:
                request = hms.CompactionRequest(
                    dbname=info.dbname, tablename=info.tablename, type=info.type,
                    partitionname=info.partitionname, runas=info.runas, poolName=info.poolname,
                )  # fmt: skip
                entry = _new_entry(request, DID_NOT_INITIATE, any_type=True)
                entry.id, entry.enqueued, entry.error = queue.next_id(), now, info.errorMessage
                queue.finish(entry, DID_NOT_INITIATE, now)
                return
            entry = queue.get(_id_of(info))
            _move(entry, _ACTIVE, "mark_failed")
            entry.error = info.errorMessage
            queue.finish(entry, FAILED, now)

        self._change(move)

    def mark_refused(self, info: hms.CompactionInfoStruct) -> None:
        """'initiated' or 'working' -> 'refused' (history), with the reason given."""

        def move(queue: Queue, now: int) -> None:
            entry = queue.get(_id_of(info))
            _move(entry, (INITIATED, WORKING), "mark_refused")
            entry.error = info.errorMessage or entry.error
            queue.finish(entry, REFUSED, now)

        self._change(move)

    def abort(self, request: hms.AbortCompactionRequest) -> hms.AbortCompactResponse:
        """Abort each 'initiated' request named (-> 'aborted', history); each id is answered
        with whether it was."""
        ids = list(request.compactionIds or [])

        def abort(queue: Queue, now: int) -> dict[int, hms.AbortCompactionResponseElement]:
            answers = {}
            for compaction_id in ids:
                entry = queue.entries.get(compaction_id)
                if entry is None:
                    status, message = "Error", "No Such Compaction Id Available"
                elif entry.state != INITIATED:
                    status = "Error"
                    message = (
                        f"Error while aborting compaction as compaction is in state-{entry.state}"
                    )
                else:
                    queue.finish(entry, ABORTED, now)
                    status, message = "Success", "Successfully aborted compaction"
                answers[compaction_id] = hms.AbortCompactionResponseElement(
                    compactionId=compaction_id, status=status, message=message
                )
            return answers

        return hms.AbortCompactResponse(abortedcompacts=self._change(abort))

    # -- reads -----------------------------------------------------------------------------

    def show(self, request: hms.ShowCompactRequest | None) -> hms.ShowCompactResponse:
        """The requests and history, filtered as the request asks, in id order (newest first
        when ``order`` says ``desc``), at most ``limit``."""
        wanted = request or hms.ShowCompactRequest()
        state = STATE_CODES.get(wanted.state or "", wanted.state)
        chosen = []
        for entry in sorted(self._read().entries.values(), key=lambda e: e.id):
            if (
                (wanted.id and entry.id != wanted.id)
                or (wanted.poolName and not entry.in_pool(wanted.poolName))
                or (wanted.dbName and entry.db != wanted.dbName.lower())
                or (wanted.tbName and entry.table != wanted.tbName.lower())
                or (wanted.partName and entry.part != wanted.partName)
                or (wanted.type and entry.type != wanted.type)
                or (state and entry.state != state)
            ):
                continue
            chosen.append(entry)
        if "desc" in (wanted.order or "").lower():
            chosen.reverse()
        if wanted.limit and wanted.limit > 0:
            chosen = chosen[: wanted.limit]
        return hms.ShowCompactResponse(compacts=[e.shown() for e in chosen])

    def latest_committed(
        self, request: hms.GetLatestCommittedCompactionInfoRequest
    ) -> hms.GetLatestCommittedCompactionInfoResponse:
        """Per partition of a table (or the table), its newest compaction that committed
        ('ready for cleaning' or 'succeeded'), above ``lastCompactionId`` when given."""
        db, table = (request.dbname or "").lower(), (request.tablename or "").lower()
        parts = set(request.partitionnames or [])
        latest: dict[str | None, Compaction] = {}
        for entry in self._read().entries.values():
            if (
                entry.db != db
                or entry.table != table
                or entry.state not in (READY_FOR_CLEANING, SUCCEEDED)
                or (parts and entry.part not in parts)
                or (request.lastCompactionId is not None and entry.id <= request.lastCompactionId)
            ):
                continue
            if entry.part not in latest or latest[entry.part].id < entry.id:
                latest[entry.part] = entry
        found = sorted(latest.values(), key=lambda e: e.id)
        return hms.GetLatestCommittedCompactionInfoResponse(compactions=[e.info() for e in found])

    # -- metrics ---------------------------------------------------------------------------

    def update_metrics(self, data: hms.CompactionMetricsDataStruct) -> bool:
        """Store a compaction metric, optimistically: false when the one stored has another
        version than the one sent (or the store of metrics is full). A value under its
        threshold removes the metric."""
        key = _metric_key(data.dbname, data.tblname, data.partitionname, data.type)

        def store(queue: Queue, now: int) -> bool:
            stored = queue.metrics.get(key)
            if stored is not None and stored[1] != data.version:
                return False
            if data.metricvalue < data.threshold:
                if stored is not None:
                    del queue.metrics[key]
                    queue.changed = True
                return True
            if stored is None and len(queue.metrics) >= MAX_METRICS:
                return False
            version = stored[1] + 1 if stored is not None else 1
            queue.metrics[key] = [data.metricvalue, version, data.threshold]
            queue.changed = True
            return True

        return self._change(store)

    def remove_metrics(self, request: hms.CompactionMetricsDataRequest) -> None:
        """Forget a metric (an unknown one: nothing to do)."""
        key = _metric_key(request.dbName, request.tblName, request.partitionName, request.type)

        def remove(queue: Queue, now: int) -> None:
            if queue.metrics.pop(key, None) is not None:
                queue.changed = True

        self._change(remove)


def _id_of(info: hms.CompactionInfoStruct | None) -> int:
    if info is None:
        raise hms.MetaException(message="CompactionInfoStruct cannot be null")
    return info.id


def _metric_key(db: str | None, table: str | None, part: str | None, type_: int | None) -> str:
    if not db or not table or type_ is None:
        raise hms.MetaException(message="A compaction metric needs dbname, tblname and type")
    return "\x00".join((db.lower(), table.lower(), part or "", str(type_)))


def _new_entry(
    request: hms.CompactionRequest | None, state: str, *, any_type: bool = False
) -> Compaction:
    """A request as queued (its id and time are set when it is recorded); MetaException for
    one without names or of a type that cannot be requested."""
    if request is None or not request.dbname or not request.tablename:
        raise hms.MetaException(message="A compaction request needs dbname and tablename")
    allowed = tuple(hms.CompactionType._VALUES_TO_NAMES) if any_type else _REQUESTABLE
    if request.type not in allowed:
        names = ", ".join(hms.CompactionType._VALUES_TO_NAMES[t] for t in allowed)
        raise hms.MetaException(
            message=f"A compaction request's type is one of {names}, not {request.type}"
        )
    return Compaction(
        0, request.dbname.lower(), request.tablename.lower(), request.type, state, 0,
        part=request.partitionname or None, run_as=request.runas,
        properties=dict(request.properties) if request.properties else None,
        initiator_id=request.initiatorId, initiator_version=request.initiatorVersion,
        pool=request.poolName, buckets=request.numberOfBuckets,
        order_by=request.orderByClause,
    )  # fmt: skip
