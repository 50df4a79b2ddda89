"""The calls of transactional tables' write ids (HMS 3+): allocating them to transactions,
reading which are valid in a snapshot, seeding them, the write notification log and the
transactional row counts. See ``docs/hms-api.md#write-ids``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class WriteIdCalls(Area):
    """Write ids and the write notification log. Raises NoSuchTxnException or
    TxnAbortedException for a transaction that is not open (HMS's messages), MetaException for a
    bad request (an internal error where the call declares none)."""

    @thrift(since="3", rule=auth.on_tables("QUERY", (auth.INSERT,), auth.RQST))
    def allocate_table_write_ids(
        self, rqst: hms.AllocateTableWriteIdsRequest
    ) -> hms.AllocateTableWriteIdsResponse:
        """A write id in the table for each open transaction: the one it has, else the next."""
        return self.catalog.write_ids.allocate(rqst)

    @thrift(
        since="3",
        rule=auth.on_tables("QUERY", (auth.SELECT,), auth.full_names("rqst", "fullTableNames")),
    )
    def get_valid_write_ids(
        self, rqst: hms.GetValidWriteIdsRequest
    ) -> hms.GetValidWriteIdsResponse:
        """Each table's high watermark and invalid (open or aborted) write ids in a snapshot."""
        rqst = required(rqst, "GetValidWriteIdsRequest")
        return self.catalog.write_ids.valid_write_ids(rqst)

    @thrift(since="3", rule=auth.on_tables("QUERY", (auth.SELECT,), auth.RQST))
    def get_max_allocated_table_write_id(
        self, rqst: hms.MaxAllocatedTableWriteIdRequest
    ) -> hms.MaxAllocatedTableWriteIdResponse:
        """The highest write id allocated in a table (0: none)."""
        rqst = required(rqst, "MaxAllocatedTableWriteIdRequest")
        maximum = self.catalog.write_ids.max_allocated(rqst.dbName, rqst.tableName)
        return hms.MaxAllocatedTableWriteIdResponse(maxWriteId=maximum)

    @thrift(since="3", rule=auth.admin_operation("REPLLOAD"))
    def seed_write_id(self, rqst: hms.SeedTableWriteIdsRequest) -> None:
        """Set a table's next write id (never below one allocated)."""
        rqst = required(rqst, "SeedTableWriteIdsRequest")
        self.catalog.write_ids.seed_write_id(rqst.dbName, rqst.tableName, rqst.seedWriteId)

    @thrift(since="3", rule=auth.admin_operation("REPLLOAD"))
    def seed_txn_id(self, rqst: hms.SeedTxnIdRequest) -> None:
        """Set the next transaction id (never at or below one handed out)."""
        rqst = required(rqst, "SeedTxnIdRequest")
        self.catalog.write_ids.seed_txn_id(rqst.seedTxnId)

    @thrift(since="3", rule=auth.OPEN)
    def add_write_ids_to_min_history(self, txnId: int, writeIds: dict[str, int]) -> None:  # noqa: N803
        """Record the write ids an open transaction holds, per table."""
        self.catalog.write_ids.add_to_min_history(txnId, writeIds)

    @thrift(since="3", rule=auth.OPEN)
    def get_latest_txnid_in_conflict(self, txnId: int) -> int:  # noqa: N803
        """The latest transaction committed after this one began on a table it wrote; 0."""
        return self.catalog.write_ids.latest_txnid_in_conflict(txnId)

    @thrift(since="3", rule=auth.OPEN)
    def get_open_txns_req(
        self, getOpenTxnsRequest: hms.GetOpenTxnsRequest
    ) -> hms.GetOpenTxnsResponse:  # noqa: N803
        """``get_open_txns`` without the transactions of the types left out."""
        exclude = getOpenTxnsRequest.excludeTxnTypes if getOpenTxnsRequest else None
        return self.catalog.write_ids.open_txns_excluding(exclude)

    @thrift(since="3", rule=auth.admin_operation("REPLLOAD"))
    def repl_tbl_writeid_state(self, rqst: hms.ReplTblWriteIdStateRequest) -> None:
        """Set a table's write ids from a replication source's ValidWriteIdList."""
        rqst = required(rqst, "ReplTblWriteIdStateRequest")
        self.catalog.write_ids.repl_table_state(rqst)

    @thrift(since="3", rule=auth.on_tables("QUERY", (auth.INSERT,), auth.RQST))
    def add_write_notification_log(
        self, rqst: hms.WriteNotificationLogRequest
    ) -> hms.WriteNotificationLogResponse:
        """Record the files a transaction wrote to a table or partition."""
        self.catalog.write_ids.add_write_notification(rqst)
        return hms.WriteNotificationLogResponse()

    @thrift(since="3", rule=auth.on_tables("QUERY", (auth.INSERT,), auth.RQST))
    def add_write_notification_log_in_batch(
        self, rqst: hms.WriteNotificationLogBatchRequest
    ) -> hms.WriteNotificationLogBatchResponse:
        """``add_write_notification_log`` for each request of the batch."""
        rqst = required(rqst, "WriteNotificationLogBatchRequest")
        for one in rqst.requestList or []:
            self.catalog.write_ids.add_write_notification(one)
        return hms.WriteNotificationLogBatchResponse()

    @thrift(since="3", rule=auth.admin_operation("REPLDUMP"))
    def get_all_write_event_info(
        self, request: hms.GetAllWriteEventInfoRequest
    ) -> list[hms.WriteEventInfo]:
        """A transaction's write notification records (of one database and table if given)."""
        request = required(request, "GetAllWriteEventInfoRequest")
        return self.catalog.write_ids.write_event_info(request)

    @thrift(since="3", rule=auth.API)
    def update_transaction_statistics(self, req: hms.UpdateTransactionalStatsRequest) -> None:
        """Add a transaction's inserted, updated and deleted row counts to its table's."""
        req = required(req, "UpdateTransactionalStatsRequest")
        self.catalog.write_ids.update_transaction_statistics(req)
