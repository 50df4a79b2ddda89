"""Changes announced once: an object room tells the listeners registered at start what it
changes, instead of calling each room that cares (HMS's listener model).

Two kinds of listener, both registered in one place (``catalog.facade``) and run inside the
change, under the catalog's write lock, so that what they write commits or rolls back with it:

* ``TableListener``: told of a table's creation or alteration *before* its row is written; it
  may refuse it (its exception is the call's answer) or complete it (timelines check their
  declaration, dependent tables their base, and record their marks).
* ``ChangeListener``: told of a change once it is written (``Change``: what, how, the object
  before and after); the notification log, and the rooms whose rows hang on a dropped object
  (statistics, constraints, indexes, grants), listen this way, in the order registered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from metastore_server.thrift_api import hms


@dataclass
class TableChange:
    """A table being created (``previous`` None) or altered, before its row is written.

    ``table`` is the new definition (listeners may complete it, e.g. a dependent's columns
    from its base); a refusal raises ``error`` (HMS: InvalidObjectException on create,
    InvalidOperationException on alter)."""

    table: hms.Table
    previous: hms.Table | None
    error: type[Exception]

    @property
    def creating(self) -> bool:
        """Whether the table is being created."""
        return self.previous is None


class TableListener:
    """What a room does when a table is created or altered; every step is optional."""

    def check_definition(self, change: TableChange) -> None:
        """Refuse a definition by what it says alone (no store read), before anything else."""

    def check(self, change: TableChange) -> None:
        """Refuse or complete the new definition against the store; nothing written."""

    def before_write(self, change: TableChange) -> None:
        """Write what must exist before the table row (in the same change)."""


class TableListeners:
    """The listeners of table changes, in the order they were registered."""

    def __init__(self) -> None:
        self._listeners: list[TableListener] = []

    def register(self, listener: TableListener) -> None:
        """Add a listener (at start, before any call)."""
        self._listeners.append(listener)

    def check_definition(self, change: TableChange) -> None:
        """Every listener's ``check_definition``."""
        for listener in self._listeners:
            listener.check_definition(change)

    def check(self, change: TableChange) -> None:
        """Every listener's ``check``."""
        for listener in self._listeners:
            listener.check(change)

    def before_write(self, change: TableChange) -> None:
        """Every listener's ``before_write``."""
        for listener in self._listeners:
            listener.before_write(change)


#: What changed (``Change.kind``).
DATABASE, TABLE, FUNCTION = "database", "table", "function"
#: How it changed (``Change.action``).
CREATE, ALTER, DROP = "create", "alter", "drop"


@dataclass(frozen=True)
class Change:
    """One change a call made: ``kind`` of object, ``action``, the object ``before`` and
    ``after`` (None where there is none: before a create, after a drop), ``when`` (seconds) and,
    for a table, its stable ``table_id``."""

    kind: str
    action: str
    before: Any = None
    after: Any = None
    when: int = 0
    table_id: int | None = None


class ChangeListener(Protocol):
    """Hears every change once it is written."""

    def changed(self, change: Change) -> None:
        """React to ``change`` (inside the change: a failure undoes it on stores that can)."""
        ...


class Announcer:
    """The listeners of written changes, told in the order they were registered."""

    def __init__(self) -> None:
        self._listeners: list[ChangeListener] = []

    def register(self, listener: ChangeListener) -> None:
        """Add a listener (at start, before any call)."""
        self._listeners.append(listener)

    def announce(self, change: Change) -> None:
        """Tell every listener of ``change``."""
        for listener in self._listeners:
            listener.changed(change)


@dataclass(frozen=True)
class WhenDropped:
    """Calls ``forget`` with what names a dropped object's rows elsewhere: a table's stable id,
    a database's name (the rows of statistics, constraints, indexes and grants that hang on
    it)."""

    kind: str
    forget: Callable[[Any], None]

    def changed(self, change: Change) -> None:
        """``forget`` the object of a drop of this listener's kind."""
        if change.kind != self.kind or change.action != DROP:
            return
        self.forget(change.table_id if self.kind == TABLE else change.before.name)
