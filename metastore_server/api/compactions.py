"""The compaction calls: HMS's compaction queue as a Hive compactor drives it (the Initiator
queues, Workers take and report, the Cleaner finishes), its history, and the compaction
metrics. Work is recorded and handed out; this server never compacts. See
``docs/hms-api.md#compaction-queue``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class CompactionCalls(Area):
    """The compaction queue. Raises MetaException for a move the queue's state machine does
    not allow (the request's id and state named), an unknown request id, or a malformed
    request; in the calls that declare none (``compact``, ``compact2``,
    ``update_compactor_state``, ``abort_Compactions``, ...) it reaches the client as an
    internal error with the same message."""

    # -- the Initiator ---------------------------------------------------------------------

    @thrift(rule=auth.on_tables("ALTERTABLE_COMPACT", (auth.OWNERSHIP,), auth.RQST))
    def compact(self, rqst: hms.CompactionRequest) -> None:
        """Queue a compaction request ('initiated'); one initiated or working for the same
        table or partition stands instead."""
        self.catalog.compactions.compact(rqst)

    @thrift(rule=auth.on_tables("ALTERTABLE_COMPACT", (auth.OWNERSHIP,), auth.RQST))
    def compact2(self, rqst: hms.CompactionRequest) -> hms.CompactionResponse:
        """``compact``, answering the request queued (or the one standing, not accepted)."""
        return self.catalog.compactions.compact(rqst)

    @thrift(since="3", rule=auth.API)
    def submit_for_cleanup(self, o1: hms.CompactionRequest, o2: int, o3: int) -> bool:
        """Queue a request straight into 'ready for cleaning' with its highest write id
        (``o2``) and transaction (``o3``)."""
        return self.catalog.compactions.submit_for_cleanup(o1, o2, o3)

    # -- Workers ---------------------------------------------------------------------------

    @thrift(since="3", rule=auth.API)
    def find_next_compact(self, workerId: str) -> hms.OptionalCompactionInfoStruct:  # noqa: N803
        """``find_next_compact2`` for a worker of the default pool (the older form)."""
        return self.catalog.compactions.find_next(workerId, None, None)

    @thrift(since="3", rule=auth.API)
    def find_next_compact2(
        self, rqst: hms.FindNextCompactRequest
    ) -> hms.OptionalCompactionInfoStruct:
        """Hand the oldest 'initiated' request of the worker's pool to it ('working')."""
        rqst = required(rqst, "FindNextCompactRequest")
        return self.catalog.compactions.find_next(rqst.workerId, rqst.workerVersion, rqst.poolName)

    @thrift(since="3", rule=auth.API)
    def set_hadoop_jobid(self, jobId: str, cq_id: int) -> None:  # noqa: N803
        """Record the job running a request."""
        self.catalog.compactions.set_hadoop_jobid(jobId, cq_id)

    @thrift(since="3", rule=auth.API)
    def update_compactor_state(self, cr: hms.CompactionInfoStruct, txn_id: int) -> None:
        """Record the compactor's transaction (and highest write id) on a working request."""
        self.catalog.compactions.update_compactor_state(cr, txn_id)

    @thrift(since="3", rule=auth.API)
    def mark_compacted(self, cr: hms.CompactionInfoStruct) -> None:
        """'working' -> 'ready for cleaning'."""
        self.catalog.compactions.mark_compacted(cr)

    @thrift(since="3", rule=auth.API)
    def mark_failed(self, cr: hms.CompactionInfoStruct) -> None:
        """An active request -> 'failed' with its error message (or the Initiator's failed
        attempt, id 0 and state 'did not initiate', recorded)."""
        self.catalog.compactions.mark_failed(cr)

    @thrift(since="3", rule=auth.API)
    def mark_refused(self, cr: hms.CompactionInfoStruct) -> None:
        """'initiated' or 'working' -> 'refused'."""
        self.catalog.compactions.mark_refused(cr)

    # -- the Cleaner and administrators ----------------------------------------------------

    @thrift(since="3", rule=auth.API)
    def mark_cleaned(self, cr: hms.CompactionInfoStruct) -> None:
        """'ready for cleaning' -> 'succeeded'."""
        self.catalog.compactions.mark_cleaned(cr)

    @thrift(since="3", rule=auth.API)
    def abort_Compactions(self, rqst: hms.AbortCompactionRequest) -> hms.AbortCompactResponse:  # noqa: N802
        """Abort the named 'initiated' requests; each id answered with whether it was."""
        rqst = required(rqst, "AbortCompactionRequest")
        return self.catalog.compactions.abort(rqst)

    @thrift(rule=auth.OPEN)
    def show_compact(self, rqst: hms.ShowCompactRequest) -> hms.ShowCompactResponse:
        """The queue and its history, filtered by id, pool, names, type and state."""
        return self.catalog.compactions.show(rqst)

    @thrift(since="3", rule=auth.on_tables("QUERY", (auth.SELECT,), auth.RQST))
    def get_latest_committed_compaction_info(
        self, rqst: hms.GetLatestCommittedCompactionInfoRequest
    ) -> hms.GetLatestCommittedCompactionInfoResponse:
        """The newest committed compaction of each partition of a table."""
        rqst = required(rqst, "GetLatestCommittedCompactionInfoRequest")
        return self.catalog.compactions.latest_committed(rqst)

    # -- metrics ---------------------------------------------------------------------------

    @thrift(since="3", rule=auth.API)
    def update_compaction_metrics_data(self, data: hms.CompactionMetricsDataStruct) -> bool:
        """Store a compaction metric if its version is the one stored; whether it was."""
        data = required(data, "CompactionMetricsDataStruct")
        return self.catalog.compactions.update_metrics(data)

    @thrift(since="3", rule=auth.API)
    def remove_compaction_metrics_data(self, request: hms.CompactionMetricsDataRequest) -> None:
        """Forget a compaction metric."""
        request = required(request, "CompactionMetricsDataRequest")
        self.catalog.compactions.remove_metrics(request)
