"""Materialized-view state kept in the same stored value as the locks and transactions
(``transactions.LockTable.views``), so that it changes in the same compare-and-set as the
transaction it belongs to:

* ``l``: the rebuild lock of each view (``db.table`` -> ``[transaction, last heartbeat ms]``;
  a bare transaction id as older servers kept it), as HMS's MATERIALIZATION_REBUILD_LOCKS: one
  rebuild of a view at a time; the lock goes when its transaction commits, aborts or expires.
  As HMS, taking it does not check the transaction: a lock of a transaction this server does
  not know goes when its heartbeats stop for the transaction timeout.
* ``u``: per table (``db.table``), the newest :data:`MAX_KEPT` transactions that committed an
  update or a delete to it (HMS's COMPLETED_TXN_COMPONENTS with ``ctc_update_delete``): a view
  built from a snapshot that does not hold one of them cannot be brought up to date by
  inserts alone.

Pure functions of the lock table as read; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from metastore_server.catalog.txn.valid_lists import ValidTxnList
from metastore_server.catalog.txn.write_id_state import full_name
from metastore_server.thrift_api import hms

LOCKS, UPDATES = "l", "u"
#: Update/delete transactions remembered per table (older ones are taken as in every snapshot).
MAX_KEPT = 100
#: The TXN_COMPONENTS operation letters of an update and a delete.
_CHANGING = ("u", "d")


def settle(table: Any, txnid: int, components: Iterable[list[Any]], committed: bool) -> None:  # noqa: ANN401
    """A transaction ended: the rebuild locks it held go; committed, the tables it updated or
    deleted from remember it."""
    views = table.views
    locks = views.get(LOCKS, {})
    for name in [name for name, entry in locks.items() if _holder(entry) == txnid]:
        del locks[name]
        table.changed = True
    if not committed:
        return
    for component in components:
        if len(component) < 4 or component[3] not in _CHANGING:
            continue
        kept = views.setdefault(UPDATES, {}).setdefault(full_name(component[0], component[1]), [])
        if txnid not in kept:
            kept.append(txnid)
            del kept[:-MAX_KEPT]
            table.changed = True


def lock_rebuild(table: Any, name: str, txnid: int, now: int, timeout_ms: int) -> bool:  # noqa: ANN401
    """Take view ``name``'s rebuild lock for transaction ``txnid`` (not checked, as HMS):
    False while a lock of the view stands, whichever transaction holds it."""
    locks = table.views.setdefault(LOCKS, {})
    if _standing(table, locks.get(name), now, timeout_ms) is not None:
        return False
    locks[name] = [txnid, now]
    table.changed = True
    return True


def heartbeat_rebuild(table: Any, name: str, txnid: int, now: int, timeout_ms: int) -> bool:  # noqa: ANN401
    """Renew view ``name``'s rebuild lock held by ``txnid``: whether such a lock stands."""
    locks = table.views.get(LOCKS, {})
    if _standing(table, locks.get(name), now, timeout_ms) != txnid:
        return False
    locks[name] = [txnid, now]
    table.changed = True
    return True


def _standing(table: Any, entry: Any, now: int, timeout_ms: int) -> int | None:  # noqa: ANN401
    """The transaction holding a stored lock entry, or None when the lock no longer stands:
    its transaction ended, or is unknown here and its last heartbeat is older than the
    timeout."""
    if entry is None:
        return None
    txnid, heartbeat = (entry, None) if isinstance(entry, int) else (entry[0], entry[1])
    txn = table.txns.get(txnid)
    if txn is not None:
        return txnid if txn.state == hms.TxnState.OPEN else None
    return txnid if heartbeat is not None and now - heartbeat < timeout_ms else None


def _holder(entry: Any) -> int:  # noqa: ANN401
    return entry if isinstance(entry, int) else entry[0]


def changed_outside(table: Any, names: Iterable[str], snapshot: ValidTxnList) -> bool:  # noqa: ANN401
    """Whether a transaction that the snapshot does not hold as committed has committed an
    update or delete to one of the tables ``names`` (``db.table``)."""
    updates = table.views.get(UPDATES, {})
    return any(
        not snapshot.is_valid(txnid)
        for name in names
        for txnid in updates.get(full_name(*_split(name)), [])
    )


def _split(name: str) -> tuple[str, str]:
    db, _, tbl = name.partition(".")
    return db, tbl
