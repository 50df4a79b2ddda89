"""The Iceberg metrics reports the REST catalog keeps of a table, as rows of ``meta`` keyed by
the table's stable id and the time they came (``layout.metrics_report_key``): the last
``KEEP`` of each table, its oldest removed as new ones come; every one of a dropped table
removed with it (``forget_table``, a ``WhenDropped`` listener), so a table made again under
the same name starts with none."""

from __future__ import annotations

import os
import time

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.storage.port import Delete, Put, StoragePort

#: Reports kept of one table (the oldest go first).
KEEP = 100


def forget_table(store: StoragePort, table_id: int) -> None:
    """Remove every report of a dropped table."""
    start, stop = layout.metrics_report_range(table_id)
    keys = [key for key, _ in store.scan(layout.META, start, stop)]
    if keys:
        store.mutate([Delete(layout.META, key) for key in keys])


class MetricsReports:
    """A table's kept reports: add one, read the last ones, as bytes the REST side makes."""

    def __init__(self, ctx: CatalogContext, keep: int = KEEP) -> None:
        self._store = ctx.store
        self._keep = keep

    def add(self, table_id: int, report: bytes) -> None:
        """Keep ``report`` of table ``table_id``; then remove the oldest past ``keep``."""
        stamp = time.time_ns().to_bytes(8, "big") + os.urandom(4)
        key = layout.metrics_report_key(table_id, stamp)
        self._store.mutate([Put(layout.META, key, {layout.OBJECT: report})])
        start, stop = layout.metrics_report_range(table_id)
        keys = [k for k, _ in self._store.scan(layout.META, start, stop, columns=[layout.OBJECT])]
        surplus = keys[: max(0, len(keys) - self._keep)]
        if surplus:
            self._store.mutate([Delete(layout.META, k) for k in surplus])

    def last(self, table_id: int, limit: int = KEEP) -> list[bytes]:
        """The table's last ``limit`` reports, the newest first."""
        start, stop = layout.metrics_report_range(table_id)
        rows = self._store.scan(layout.META, start, stop, reverse=True, limit=limit)
        return [bytes(row[layout.OBJECT]) for _, row in rows if layout.OBJECT in row]
