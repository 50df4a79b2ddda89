"""Runtime statistics (``add_runtime_stats``, ``get_runtime_stats``): opaque payloads the query
engine stores with a weight, kept as HMS 4 keeps them.

Each stat is stamped with the server's time when added (HMS ignores the one sent) and kept under
that time and a sequence number, so rows come in age order. A read answers the newest first,
only those created before ``maxCreateTime`` (when it is positive), adding stats until their
total weight reaches ``maxWeight``. Stats older than ``max_age_s`` are dropped when another is
added (HMS drops them on a timer), so the store stays bounded.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import NamedRows
from metastore_server.storage import layout
from metastore_server.storage.port import Delete
from metastore_server.thrift_api import hms

#: How long a stat is kept (HMS's default maximum age of runtime statistics: 3 days).
DEFAULT_MAX_AGE_S = 3 * 24 * 3600
#: At most this many old stats are dropped by one add (the rest by the next ones).
_DROP_PER_ADD = 100


class RuntimeStats:
    """Runtime statistics on the store."""

    def __init__(self, ctx: CatalogContext, max_age_s: int = DEFAULT_MAX_AGE_S) -> None:
        self._ctx = ctx
        self.max_age_s = max_age_s
        self._rows = NamedRows(ctx.store, "rstat", hms.RuntimeStat)

    def add(self, stat: hms.RuntimeStat | None) -> None:
        """Store a stat stamped with now; drop stats past their age."""
        if stat is None or stat.weight is None or stat.payload is None:
            raise hms.MetaException(message="A runtime stat needs its weight and payload")
        now = self._ctx.now()
        stored = copy.copy(stat)
        stored.createTime = now
        number = self._ctx.store.increment(
            layout.META, layout.COUNTERS_ROW, layout.NEXT_RUNTIME_STAT
        )
        expired: list[Delete] = []
        for old in self._rows.scan():
            if old.obj.createTime >= now - self.max_age_s or len(expired) >= _DROP_PER_ADD:
                break
            expired.append(self._rows.delete_op(old.parts))
        self._rows.create((f"{now:012d}", f"{number:020d}"), stored, also=expired)

    def get(self, request: hms.GetRuntimeStatsRequest | None) -> list[hms.RuntimeStat]:
        """The newest stats (created before ``maxCreateTime`` when positive) up to a total
        weight of ``maxWeight``, newest first."""
        if request is None or request.maxWeight is None:
            raise hms.MetaException(message="A runtime stats request needs maxWeight")
        newest = sorted(self._rows.scan(), key=lambda stored: stored.parts, reverse=True)
        answer: list[hms.RuntimeStat] = []
        total = 0
        for stored in newest:
            if total >= request.maxWeight:
                break
            if request.maxCreateTime and request.maxCreateTime > 0:
                if stored.obj.createTime >= request.maxCreateTime:
                    continue
            answer.append(stored.obj)
            total += stored.obj.weight
        return answer
