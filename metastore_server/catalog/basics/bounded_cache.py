"""A thread-safe least-recently-used map bounded by the bytes of what it holds (each value's
size given when it is put): the kept replies of names listings and the notification events
kept as rendered use it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedCache(Generic[V]):
    """Values by key, the least recently used dropped first once their sizes pass
    ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self.held = 0  # bytes held, by the sizes given
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value kept under ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Keep ``value`` under ``key`` as ``size`` bytes (replacing what was there)."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.held -= old[1]
            self._entries[key] = (value, size)
            self.held += size
            while self.held > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.held -= dropped
