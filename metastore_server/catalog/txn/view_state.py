"""Materialized-view state kept in the same stored value as the locks and transactions
(``transactions.LockTable.views``), so that it changes in the same compare-and-set as the
transaction it belongs to:

* ``l``: the rebuild lock of each view (``db.table`` -> the transaction holding it), as HMS's
  MATERIALIZATION_REBUILD_LOCKS: one rebuild of a view at a time; the lock goes when its
  transaction commits, aborts or expires.
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
    for name in [name for name, holder in locks.items() if holder == txnid]:
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


def lock_rebuild(table: Any, name: str, txnid: int) -> bool:  # noqa: ANN401
    """Take view ``name``'s rebuild lock for open transaction ``txnid``: False while another
    open transaction holds it."""
    locks = table.views.setdefault(LOCKS, {})
    holder = locks.get(name)
    if holder is not None and holder != txnid and _is_open(table, holder):
        return False
    if holder != txnid:
        locks[name] = txnid
        table.changed = True
    return True


def holds_rebuild(table: Any, name: str, txnid: int) -> bool:  # noqa: ANN401
    """Whether open transaction ``txnid`` holds view ``name``'s rebuild lock."""
    return table.views.get(LOCKS, {}).get(name) == txnid and _is_open(table, txnid)


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


def _is_open(table: Any, txnid: int) -> bool:  # noqa: ANN401
    txn = table.txns.get(txnid)
    return txn is not None and txn.state == hms.TxnState.OPEN
