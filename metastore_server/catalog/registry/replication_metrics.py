"""Replication metrics (``add_replication_metrics``, ``get_replication_metrics``), kept as HMS 4
keeps them: one record per scheduled execution id. Adding a record of a known id updates its
metadata, progress and message format (those sent); its policy and dump execution id stay. A
read gives the record of one scheduled execution id, or else those of one policy, or else those
of one dump execution id, newest execution first; a request naming none of them gets none.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import CAS_TRIES, NamedRows
from metastore_server.thrift_api import hms

_UPDATED = ("metadata", "progress", "messageFormat")


def _parts(execution_id: int) -> tuple[str]:
    """Row name of an execution id (signed ids keep their order: offset into unsigned)."""
    return (f"{execution_id + 2**63:020d}",)


class ReplicationMetrics:
    """Replication metrics on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._rows = NamedRows(ctx.store, "replmetric", hms.ReplicationMetrics)

    def add(self, metrics: hms.ReplicationMetricList | None) -> None:
        """Create or update each record of the list."""
        if metrics is None or metrics.replicationMetricList is None:
            raise hms.MetaException(message="A replication metric list is required")
        for metric in metrics.replicationMetricList:
            if metric is None or metric.scheduledExecutionId is None:
                raise hms.MetaException(message="A replication metric needs its execution id")
            self._add_one(metric)

    def _add_one(self, metric: hms.ReplicationMetrics) -> None:
        parts = _parts(metric.scheduledExecutionId)
        for _ in range(CAS_TRIES):
            was = self._rows.read(parts)
            if was is None:
                if metric.policy is None or metric.dumpExecutionId is None:
                    raise hms.MetaException(
                        message="A new replication metric needs its policy and dump execution id"
                    )
                if self._rows.create(parts, copy.copy(metric)):
                    return
                continue
            updated = copy.copy(was.obj)
            for name in _UPDATED:
                if getattr(metric, name) is not None:
                    setattr(updated, name, getattr(metric, name))
            if self._rows.replace(was, updated):
                return
        raise hms.MetaException(message="The replication metric kept changing meanwhile")

    def get(self, request: hms.GetReplicationMetricsRequest | None) -> hms.ReplicationMetricList:
        """Records by scheduled execution id, else policy, else dump execution id."""
        request = request or hms.GetReplicationMetricsRequest()
        if request.scheduledExecutionId is not None:
            found = self._rows.find(_parts(request.scheduledExecutionId))
            return hms.ReplicationMetricList(replicationMetricList=[found] if found else [])
        if request.policy is not None:
            wanted = [m for m in self._all() if m.policy == request.policy]
        elif request.dumpExecutionId is not None:
            wanted = [m for m in self._all() if m.dumpExecutionId == request.dumpExecutionId]
        else:
            wanted = []
        return hms.ReplicationMetricList(replicationMetricList=wanted)

    def _all(self) -> list[hms.ReplicationMetrics]:
        """Every record, newest execution first."""
        return [stored.obj for stored in reversed(list(self._rows.scan()))]
