"""The REST catalog's kept replies (its ``Idempotency-Key`` entries) as rows of ``meta``, so
that every server process sharing the store, and one started again, finds them: one row a
digest of the caller and key, its entry (bytes the REST side makes and reads) changed only by
compare-and-set on what it was read as, and when it expires, so that a sweep finds the
expired rows without reading the entries."""

from __future__ import annotations

from collections.abc import Callable

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put

#: Rows a sweep reads at most (the rest wait for the next one).
SWEEP_ROWS = 10_000


class KeptReplies:
    """Entries by digest: read, replaced by compare-and-set, removed, swept when expired."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._store = ctx.store

    def read(self, digest: bytes) -> bytes | None:
        """The entry of ``digest`` (None: there is none)."""
        row = self._store.get(layout.META, layout.idempotency_row(digest))
        return bytes(row[layout.OBJECT]) if row and layout.OBJECT in row else None

    def replace(self, digest: bytes, expected: bytes | None, entry: bytes, until: int) -> bool:
        """Write ``entry`` (expiring at second ``until``) while the row still holds
        ``expected`` (None: no entry); whether it was written."""
        key = layout.idempotency_row(digest)
        columns = {layout.OBJECT: entry, layout.KEPT_UNTIL: str(until).encode()}
        return self._store.mutate([Put(layout.META, key, columns)],
                                  Condition(layout.META, key, layout.OBJECT, expected))  # fmt: skip

    def remove(self, digest: bytes, expected: bytes) -> bool:
        """Remove the entry while it still holds ``expected``; whether it was removed."""
        key = layout.idempotency_row(digest)
        return self._store.mutate([Delete(layout.META, key)],
                                  Condition(layout.META, key, layout.OBJECT, expected))  # fmt: skip

    def sweep(self, now: int, keep: Callable[[], bool] = lambda: True) -> int:
        """Remove the entries expired at second ``now`` (at most ``SWEEP_ROWS`` read; ``keep``
        false stops early); how many were removed."""
        start, stop = layout.idempotency_range()
        expired = []
        for key, row in self._store.scan(layout.META, start, stop, limit=SWEEP_ROWS,
                                         columns=[layout.KEPT_UNTIL]):  # fmt: skip
            until = row.get(layout.KEPT_UNTIL, b"0")
            if until.isdigit() and int(until) < now:
                expired.append((key, until))
            if not keep():
                break
        removed = 0
        for key, until in expired:
            guard = Condition(layout.META, key, layout.KEPT_UNTIL, until)
            if self._store.mutate([Delete(layout.META, key)], guard):
                removed += 1
        return removed
