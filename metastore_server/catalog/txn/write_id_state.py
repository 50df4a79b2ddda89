"""Table write ids as HMS's TXN_TO_WRITE_ID and NEXT_WRITE_ID tables keep them, held in the
same stored value as the locks and transactions (``transactions.LockTable.write_ids``), so that
allocating one, and a transaction committing or aborting, are one compare-and-set with the
check that the transaction is open.

Per table (``db.table``, lower-case) the value keeps: ``last``, the highest write id allocated
(seeded ids move it); ``base``, the highest write id forgotten as committed long ago (every
write id up to it not listed is committed); ``t``, per transaction id ``[write id, state,
commit id, commit time]`` with state ``o`` (open), ``c`` (committed) or ``a`` (aborted; kept,
an aborted write stays invalid); ``h``, the write ids a transaction put in its minimum history
(``add_write_ids_to_min_history``), gone when it ends. A committed entry is forgotten once
every open transaction began after it committed and ``KEEP_COMMITTED_MS`` have passed.

Nothing here imports ``transactions`` (which calls :func:`settle`); the lock table is taken
as it is (``write_ids``, ``txns``, ``last_txn_id``).
"""

from __future__ import annotations

import json
from typing import Any

from metastore_server.catalog.txn.valid_lists import ValidTxnList, bit_set
from metastore_server.storage import layout
from metastore_server.storage.codec import prefix_successor
from metastore_server.storage.port import StoragePort
from metastore_server.thrift_api import hms

OPEN, COMMITTED, ABORTED = "o", "c", "a"
#: How long a committed write id's transaction is known at least (for older snapshots).
KEEP_COMMITTED_MS = 300_000


#: Rows of the write notification log (HMS's TXN_WRITE_NOTIFICATION_LOG): key ``wnl \x00 <txn
#: id> \x00 db \x00 table \x00 partition`` (``write_ids``).
LOG_PREFIX = b"wnl\x00"


def log_key(txnid: int, db: str, table: str, partition: str) -> bytes:
    """The key of a transaction's write notification of a table or partition."""
    parts = [b"%020d" % txnid, db.encode(), table.encode(), partition.encode()]
    return LOG_PREFIX + b"\x00".join(parts)


def notifications(store: StoragePort, txnid: int) -> list[dict[str, Any]]:
    """A transaction's write notifications (writeId, db, table, partition, files), in key
    order."""
    start = LOG_PREFIX + b"%020d\x00" % txnid
    return [json.loads(row[layout.OBJECT])
            for _, row in store.scan(layout.META, start, prefix_successor(start))]  # fmt: skip


def full_name(db: str, table: str) -> str:
    """The key of a table's write ids: ``db.table``, lower-case."""
    return f"{(db or '').lower()}.{(table or '').lower()}"


def table_state(write_ids: dict[str, Any], name: str) -> dict[str, Any]:
    """The write-id state of a table, created empty when it has none."""
    state: dict[str, Any] = write_ids.setdefault(name, {"last": 0, "base": 0, "t": {}})
    return state


def allocate(state: dict[str, Any], txnid: int) -> tuple[int, bool]:
    """The write id of an open transaction in a table: the one it has, else the next one;
    (write id, whether it is new)."""
    entry = state["t"].get(str(txnid))
    if entry is not None:
        return entry[0], False
    state["last"] += 1
    state["t"][str(txnid)] = [state["last"], OPEN, None, None]
    return state["last"], True


def settle(table: Any, txnid: int, committed: bool, now: int) -> None:  # noqa: ANN401
    """A transaction ended: its write ids in every table become committed (with the commit
    id, the highest transaction id handed out, and the time) or aborted; its minimum history
    goes; committed entries no snapshot in use needs any more are forgotten."""
    key = str(txnid)
    for state in table.write_ids.values():
        entry = state["t"].get(key)
        if entry is not None and entry[1] == OPEN:
            state["t"][key] = (
                [entry[0], COMMITTED, table.last_txn_id, now]
                if committed
                else [entry[0], ABORTED, None, None]
            )
        state.get("h", {}).pop(key, None)
    prune(table, now)


def prune(table: Any, now: int) -> None:  # noqa: ANN401
    """Forget committed write ids committed before every open transaction began, more than
    ``KEEP_COMMITTED_MS`` ago (``base`` rises to cover them)."""
    open_ids = [t.txnid for t in table.txns.values() if t.state == hms.TxnState.OPEN]
    first_open = min(open_ids) if open_ids else table.last_txn_id + 1
    for state in table.write_ids.values():
        for key, (write_id, status, commit_id, at) in list(state["t"].items()):
            if status == COMMITTED and commit_id < first_open and at < now - KEEP_COMMITTED_MS:
                del state["t"][key]
                state["base"] = max(state["base"], write_id)


def valid_write_ids(
    state: dict[str, Any] | None, name: str, snapshot: ValidTxnList, cap: int | None = None
) -> hms.TableValidWriteIds:
    """A table's write ids as the snapshot sees them (HMS's rules): the high watermark is the
    highest write id of a transaction at or below the snapshot's high watermark (none: the
    highest allocated), capped at ``cap`` when given; invalid are the write ids up to it whose
    transaction is open or aborted in the snapshot, or above its high watermark, or aborted
    since (ascending; ``abortedBits`` marks the aborted ones)."""
    if state is None:
        return hms.TableValidWriteIds(fullTableName=name, writeIdHighWaterMark=0,
                                      invalidWriteIds=[], abortedBits=b"")  # fmt: skip
    entries = sorted((entry[0], int(txn), entry[1]) for txn, entry in state["t"].items())
    below = [write_id for write_id, txnid, _ in entries if txnid <= snapshot.high_watermark]
    hwm = max([*below, state["base"]]) if below else state["last"]
    if cap is not None:
        hwm = min(hwm, cap)
    invalid: list[int] = []
    aborted: list[int] = []
    min_open = None
    for write_id, txnid, status in entries:
        if write_id > hwm or (status != ABORTED and snapshot.is_valid(txnid)):
            continue
        if status == ABORTED or snapshot.is_aborted(txnid):
            aborted.append(len(invalid))
        elif min_open is None:
            min_open = write_id
        invalid.append(write_id)
    return hms.TableValidWriteIds(
        fullTableName=name, writeIdHighWaterMark=hwm, invalidWriteIds=invalid,
        minOpenWriteId=min_open, abortedBits=bit_set(aborted),
    )  # fmt: skip
