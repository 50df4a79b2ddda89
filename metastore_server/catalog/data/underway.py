"""What this process is doing to directories outside any write lock: the deletions committed
changes reserved and have not carried out yet (a directory made at or around one waits for
it, so that a late delete never takes a new partition's directory), and a count of the
deletions and moves begun, which says whether directories seen before a write lock can still
be trusted without looking again (``SeenDirs``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import structlog

from metastore_server.catalog.data.filesystems import Place

log = structlog.get_logger(__name__)

#: Longest wait of a directory being made for a committed drop's delete of it to finish.
DELETION_WAIT_S = 120.0


@dataclass
class SeenDirs:
    """Local directories a call found before its write lock (counting their files), trusted
    while this process has begun no deletion or move since (``DirsUnderway.trusted``)."""

    changes: int
    paths: set[str] = field(default_factory=set)


def _key(place: Place) -> tuple[str, str, str]:
    return place.protocol, place.authority, place.path.rstrip("/")


def _overlap(one: Place, other: Place) -> bool:
    """Whether two places are one, or one holds the other."""
    return one.same_as(other) or one.contains(other) or other.contains(one)


class DirsUnderway:
    """The pending deletions of this process, and its count of directory changes begun."""

    def __init__(self) -> None:
        #: Places committed changes are still deleting, with how many; and a condition told
        #: of every change to them.
        self._deleting: dict[tuple[str, str, str], tuple[Place, int]] = {}
        self._changed = threading.Condition()
        self._changes = 0

    def seeing(self) -> SeenDirs | None:
        """Start noting the directories a call finds; None while a deletion is pending (a
        directory seen then may be deleted before the call's write lock)."""
        with self._changed:
            return None if self._deleting else SeenDirs(self._changes)

    def trusted(self, seen: SeenDirs | None) -> set[str] | tuple[()]:
        """The directories of ``seen`` still known to exist (called holding the write lock,
        under which deletions are reserved and moves made)."""
        return seen.paths if seen is not None and seen.changes == self._changes else ()

    def changing(self) -> None:
        """Note directories about to be moved or removed other than by a reserved deletion (a
        move, a failed call's undo, a dead process's move undone)."""
        with self._changed:
            self._changes += 1

    def reserve(self, places: Iterable[Place]) -> None:
        """Note deletions a committed change will carry out (``release`` each when done)."""
        with self._changed:
            self._changes += 1
            for place in places:
                key = _key(place)
                kept, count = self._deleting.get(key, (place, 0))
                self._deleting[key] = (kept, count + 1)

    def wait(self, place: Place) -> None:
        """Wait until no pending deletion is at, in or around ``place`` (at most
        ``DELETION_WAIT_S``, then logged and let be)."""
        deadline = time.monotonic() + DELETION_WAIT_S
        with self._changed:
            while any(_overlap(place, pending) for pending, _ in self._deleting.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("data_deletion_wait_expired", location=place.uri)
                    return
                self._changed.wait(left)

    def release(self, place: Place) -> None:
        """A deletion reserved at ``place`` is over (carried out or given up)."""
        with self._changed:
            key = _key(place)
            pending = self._deleting.get(key)
            if pending is not None:
                if pending[1] > 1:
                    self._deleting[key] = (pending[0], pending[1] - 1)
                else:
                    del self._deleting[key]
            self._changed.notify_all()
