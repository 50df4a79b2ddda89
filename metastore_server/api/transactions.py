"""The lock and transaction calls: locks taken whole or not at all, transactions holding
them, a transaction's dynamic partitions (the compaction calls: ``api/compactions.py``). See
``docs/hms-api.md#locks``."""

from __future__ import annotations

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.arguments import internal_error, required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class TransactionCalls(Area):
    """Locks and transactions. Raises NoSuchLockException, NoSuchTxnException,
    TxnAbortedException and TxnOpenException where a call declares them (an unknown lock or
    transaction, one aborted, one still open). These calls declare no MetaException: the
    catalog's (a bad request), and ``add_dynamic_partitions`` without a request, reach the
    client as an internal error (TApplicationException)."""

    # -- locks -------------------------------------------------------------------------------

    @thrift(stamp=caller_fields.request_user, rule=auth.OPEN)
    def lock(self, rqst: hms.LockRequest) -> hms.LockResponse:
        """Take a set of locks whole (ACQUIRED) when nothing earlier blocks it, else WAITING."""
        return self.catalog.transactions.lock(rqst)

    @thrift(rule=auth.OPEN)
    def check_lock(self, rqst: hms.CheckLockRequest) -> hms.LockResponse:
        """Look at a lock again (and heartbeat it): ACQUIRED once nothing blocks it."""
        return self.catalog.transactions.check_lock(rqst)

    @thrift(rule=auth.OPEN)
    def unlock(self, rqst: hms.UnlockRequest) -> None:
        """Release a lock not held by a transaction (an unknown one: nothing to do)."""
        self.catalog.transactions.unlock(rqst)

    @thrift(rule=auth.OPEN)
    def show_locks(self, rqst: hms.ShowLocksRequest) -> hms.ShowLocksResponse:
        """Every lock component, filtered by database, table and partition name."""
        return self.catalog.transactions.show_locks(rqst)

    @thrift(rule=auth.OPEN)
    def heartbeat(self, ids: hms.HeartbeatRequest) -> None:
        """Keep a lock or transaction from expiring."""
        self.catalog.transactions.heartbeat(ids)

    @thrift(rule=auth.OPEN)
    def heartbeat_txn_range(
        self, txns: hms.HeartbeatTxnRangeRequest
    ) -> hms.HeartbeatTxnRangeResponse:
        """Heartbeat the open transactions of a range; the others are answered as aborted or
        unknown."""
        txns = required(txns, "HeartbeatTxnRangeRequest")
        return self.catalog.transactions.heartbeat_txn_range(txns)

    # -- transactions ------------------------------------------------------------------------

    @thrift(rule=auth.OPEN)
    def get_open_txns(self) -> hms.GetOpenTxnsResponse:
        """Open and aborted transactions, and the highest id handed out."""
        return self.catalog.transactions.get_open_txns()

    @thrift(rule=auth.OPEN)
    def get_open_txns_info(self) -> hms.GetOpenTxnsInfoResponse:
        """``get_open_txns`` with who opened each and when."""
        return self.catalog.transactions.get_open_txns_info()

    @thrift(stamp=caller_fields.request_user, rule=auth.OPEN)
    def open_txns(self, rqst: hms.OpenTxnRequest) -> hms.OpenTxnsResponse:
        """Open transactions; their ids."""
        return self.catalog.transactions.open_txns(rqst)

    @thrift(rule=auth.OPEN)
    def abort_txn(self, rqst: hms.AbortTxnRequest) -> None:
        """Abort a transaction and release its locks (an unknown one is an error)."""
        self.catalog.transactions.abort_txns([rqst.txnid if rqst else 0], strict=True)

    @thrift(rule=auth.OPEN)
    def abort_txns(self, rqst: hms.AbortTxnsRequest) -> None:
        """Abort transactions, skipping the unknown ones."""
        txn_ids = list((rqst.txn_ids if rqst else None) or [])
        self.catalog.transactions.abort_txns(txn_ids, strict=False)

    @thrift(rule=auth.OPEN)
    def commit_txn(self, rqst: hms.CommitTxnRequest) -> None:
        """Commit an open transaction: it and its locks are gone."""
        self.catalog.transactions.commit_txn(rqst)

    @thrift(
        decode="either_layout",
        rule=auth.on_tables("QUERY", (auth.INSERT,), auth.RQST),
        storage=st.not_checked("records what an open transaction wrote; adds no partition"),
    )
    def add_dynamic_partitions(self, rqst: hms.AddDynamicPartitions) -> None:
        """Record the partitions an open transaction wrote; they go with it."""
        if rqst is None:
            raise internal_error("add_dynamic_partitions")
        self.catalog.transactions.add_dynamic_partitions(rqst)
