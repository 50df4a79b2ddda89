"""Which lock requests may be granted: HMS 2.3's lock compatibility, as pure logic.

A lock request holds components (a database, a table or a partition, each shared read, shared
write or exclusive) and is granted whole or not at all. A request is checked against the
overlapping components of earlier requests (lower lock ids) that are granted, and against those
still waiting whose type ranks at or below its own (HMS sorts waiting locks by type, so a read
is never held up by a waiting write or exclusive lock). Against those:

============  ==================  ==================  =====================
requested     shared read held    shared write held   exclusive held
============  ==================  ==================  =====================
shared read   granted             granted             waits
shared write  granted             waits               waits
exclusive     waits               waits               waits
============  ==================  ==================  =====================

(a waiting lock counts as held here). Overlap: a component without a table is the whole
database, one without a partition the whole table. Never in conflict: a database-level shared
read and a table-level exclusive lock (either way round), and components of one request or of
one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SHARED_READ = 1
SHARED_WRITE = 2
EXCLUSIVE = 3
ACQUIRED = 1
WAITING = 2


@dataclass(frozen=True)
class Component:
    """One object a lock covers (names lower-case)."""

    type: int
    db: str
    table: str | None = None
    partition: str | None = None

    def overlaps(self, other: Component) -> bool:
        """Whether both cover some object in common."""
        if self.db != other.db:
            return False
        if self.table is None or other.table is None:
            return True
        if self.table != other.table:
            return False
        if self.partition is None or other.partition is None:
            return True
        return self.partition == other.partition


@dataclass(frozen=True)
class Held:
    """A lock already recorded: its id, transaction (0: none), state and components."""

    lockid: int
    txnid: int
    state: int
    components: tuple[Component, ...]


def _never_conflict(one: Component, other: Component) -> bool:
    """HMS lets a database-level shared read and a table-level exclusive lock coexist."""
    for a, b in ((one, other), (other, one)):
        if (
            a.type == SHARED_READ
            and a.table is None
            and b.type == EXCLUSIVE
            and b.table is not None
            and b.partition is None
        ):
            return True
    return False


def _waits_for(wanted: int, existing: Component, existing_state: int) -> bool:
    if existing_state == WAITING and existing.type > wanted:
        return False  # sorted after the request: never looked at
    if wanted == SHARED_READ:
        return existing.type == EXCLUSIVE
    if wanted == SHARED_WRITE:
        return existing.type in (SHARED_WRITE, EXCLUSIVE)
    return True


def blocker(request: Held, others: Sequence[Held]) -> tuple[int, int, int] | None:
    """(lock id, its component number, the request's component number), numbers from 1, of
    the earlier lock ``request`` must wait for; None when it can be granted now. ``others``
    are the other recorded locks, any order."""
    for other in sorted(others, key=lambda held: held.lockid):
        if other.lockid >= request.lockid:
            break
        if request.txnid and other.txnid == request.txnid:
            continue
        for mine, wanted in enumerate(request.components, start=1):
            for index, existing in enumerate(other.components, start=1):
                if not wanted.overlaps(existing) or _never_conflict(wanted, existing):
                    continue
                if _waits_for(wanted.type, existing, other.state):
                    return other.lockid, index, mine
    return None
