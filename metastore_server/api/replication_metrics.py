"""The replication metrics calls of HMS 4: records of replication runs, stored and read back.
See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class ReplicationMetricsCalls(Area):
    """Replication metrics. Raises MetaException (a record missing its ids)."""

    @thrift(since="3", rule=auth.admin_operation("REPLDUMP"))
    def add_replication_metrics(self, replicationMetricList: hms.ReplicationMetricList) -> None:  # noqa: N803
        """Create or update records by scheduled execution id."""
        self.catalog.replication_metrics.add(replicationMetricList)

    @thrift(since="3", rule=auth.admin_operation("REPLSTATUS"))
    def get_replication_metrics(
        self, rqst: hms.GetReplicationMetricsRequest
    ) -> hms.ReplicationMetricList:
        """Records by scheduled execution id, policy or dump execution id."""
        return self.catalog.replication_metrics.get(rqst)
