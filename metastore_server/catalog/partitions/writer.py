"""What every partition writer (adding, dropping, altering) holds: the context, the tables, the
dependent-table rules it asks before a write, and the fast statistics it keeps. Every write is
announced through ``ctx.changes.writing`` (timelines, statistics, grants and events listen)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

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


_In = TypeVar("_In")
_Out = TypeVar("_Out")


def each_until_failure(
    items: Iterable[_In], make: Callable[[_In], _Out]
) -> tuple[list[_Out], Exception | None]:
    """``make`` of each item, up to the first it raises for: those made and that error (to be
    raised once the ones before it are dealt with, as when each is handled in turn, so a
    batch can read all their rows in one request)."""
    made: list[_Out] = []
    for item in items:
        try:
            made.append(make(item))
        except Exception as exc:  # noqa: BLE001 - raised by the caller in its turn
            return made, exc
    return made, None
