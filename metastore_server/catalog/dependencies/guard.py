"""The dependency policies across server processes on stores without a writers' lock (HBase).

On the embedded store every change of every server process takes turns (``WriteLock`` holds
the store's lock), so a base partition's drop and a new dependent partition on it never
interleave. HBase has no such lock: without one, a drop could check for dependents, a
dependent partition be added, and the drop then go on, both succeeding. So each change a policy
decides on takes the *guard* of the base tables involved first, and keeps it until the change
and its notification event are written (the outermost write lock lets go):

* a partition drop or rename, and a table drop or alter (columns, name), guard the table itself
  (it may be a base: what its dependents allow is read under the guard);
* an add of dependent partitions guards every base they depend on.

A guard is a claim (``catalog.claims``) on the base's dependents row: a compare-and-set on one
row, held by one writer at a time, taken over after the writer lease when its holder died. A
writer finding it held waits for it, briefly; past ``GUARD_WAIT_S`` the call is refused with a
MetaException saying another server process is changing the same tables.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from metastore_server.catalog.core.claims import Claims
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.dependencies.model import TableName
from metastore_server.storage import layout
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: Longest wait for guards another server process holds.
GUARD_WAIT_S = 10.0


class DependencyGuard:
    """Take the guards of base tables for the rest of the current write (see the module)."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self._claims = Claims(ctx)
        #: Whether the store's writers already take turns across processes (no guard needed).
        self.needless = ctx.capabilities.writers_lock is not None

    def hold(self, bases: Iterable[TableName]) -> None:
        """Guard ``bases`` until this thread's outermost write lock lets go (call it while
        holding the write lock). MetaException when other server processes hold them longer
        than ``GUARD_WAIT_S``."""
        if self.needless:
            return
        names = sorted({f"{b.db}.{b.table}" for b in bases})
        if not names:
            return
        keys = [layout.dependents_key(*name.split(".", 1)) for name in names]
        taken = self._claims.take_waiting(keys, GUARD_WAIT_S)
        if taken is None:
            raise hms.MetaException(
                message=(
                    f"Another server process is changing {', '.join(names)} or a table "
                    f"depending on it (its guard was held for over {GUARD_WAIT_S:g} s); "
                    "try again"
                )
            )

        def release() -> None:
            self._claims.release(taken)

        self._ctx.write_lock.after_commit(release, undo=release)
