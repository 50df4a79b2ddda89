"""Changes announced once: an object room tells the listeners registered at start what it is
about to change, instead of calling each room that cares.

A table's creation or alteration is announced to every ``TableListener`` (timelines check their
declarations, dependent tables their base and record their marks). Listeners run inside the
change, under the catalog's write lock: what they write commits or rolls back with it, and a
refusal they raise is the call's answer.
"""

from __future__ import annotations

from dataclasses import dataclass

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
