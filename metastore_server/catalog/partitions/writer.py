"""What every partition writer (adding, dropping, altering) holds: the context, the tables, the
dependent-table rules it asks before a write, and the fast statistics it keeps. Every write is
announced through ``ctx.changes.writing`` (timelines, statistics, grants and events listen)."""

from __future__ import annotations

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.fast_stats import FastStats
from metastore_server.catalog.dependencies.store import Dependencies
from metastore_server.catalog.objects.tables import Tables


class PartitionWriter:
    """The base of the partition writers."""

    def __init__(self, ctx: CatalogContext, tables: Tables, dependencies: Dependencies) -> None:
        self._ctx = ctx
        self._tables = tables
        #: Asked before a write that dependents' policies govern (a drop, a rename), and held
        #: while new dependent partitions are written.
        self._dependencies = dependencies
        self._stats = FastStats(ctx.data, autogather=ctx.stats_autogather)
