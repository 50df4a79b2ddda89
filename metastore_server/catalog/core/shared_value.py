"""One value in one row, changed only by compare-and-set on the value it was read from: how
the locks and transactions (``txn.transactions``) and the compaction queue
(``txn.compactions``) are kept, atomic on HBase (whose check-and-put writes one column
atomically) as on the embedded store."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from metastore_server.thrift_api import hms
from storage.port import Condition, Put, StoragePort

#: Tries before a change gives up (others kept changing the value first).
ATTEMPTS = 200


class SharedValue(Protocol):
    """A value as read: the bytes it was decoded from, and whether a call changed it."""

    stored: bytes | None
    changed: bool

    def encode(self) -> bytes:
        """The value's bytes to store."""
        ...


V = TypeVar("V", bound=SharedValue)
R = TypeVar("R")


def change(
    store: StoragePort,
    where: tuple[str, bytes, bytes],
    read: Callable[[], V],
    action: Callable[[V, int], R],
    clock: Callable[[], int],
    what: str,
) -> R:
    """Run ``action(value, now)`` on the value as ``read`` and store it when it changed,
    compare-and-set on the bytes it was read from (``where``: table, row, column); read again
    and retried, after a short random back-off, when another call changed it meanwhile.
    MetaException after :data:`ATTEMPTS` lost races (``what`` names the value)."""
    table, row, column = where
    for attempt in range(ATTEMPTS):
        value = read()
        result = action(value, clock())
        if not value.changed:
            return result
        condition = Condition(table, row, column, value.stored)
        if store.mutate([Put(table, row, {column: value.encode()})], condition):
            return result
        # Lost to another change: back off a little, longer each time, at random.
        time.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
    raise hms.MetaException(message=f"{what}: other calls kept changing them; try again")
