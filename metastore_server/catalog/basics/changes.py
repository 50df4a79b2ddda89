"""Changes announced once: an object room tells the listeners registered at start what it
changes, instead of calling each room that cares (HMS's listener model).

Two kinds of listener, both registered in one place (``catalog.facade``) and run inside the
change, under the catalog's write lock, so that what they write commits or rolls back with it:

* ``TableListener``: told of a table's creation or alteration *before* its row is written; it
  may refuse it (its exception is the call's answer) or complete it (timelines check their
  declaration, dependent tables their base, and record their marks).
* ``ChangeListener``: told of a change once it is written (``Change``: what, how, the object
  before and after; ``PartitionChange`` for partitions); the notification log, and the rooms
  whose rows hang on a changed object (statistics, constraints, indexes, grants), listen this
  way, in the order registered.
* ``WriteListener``: wraps the write of a partition change (``Announcer.writing``), for what
  must be kept in step with the rows themselves (the timelines: entries go into memory before
  the write, the stored timelines after it, and are forgotten when it fails).

Decisions a write asks for and that may refuse it (the drop policies of dependent tables, the
data a change must move or delete) are not listeners: the writing room asks for them first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from metastore_server.catalog.basics.names import make_partition_name
from metastore_server.thrift_api import ErrorClass, hms


@dataclass
class TableChange:
    """A table being created (``previous`` None) or altered, before its row is written.

    ``table`` is the new definition (listeners may complete it, e.g. a dependent's columns
    from its base); a refusal raises ``error`` (HMS: InvalidObjectException on create,
    InvalidOperationException on alter). On alter, ``current`` is the stored table (its
    ``TableRef``); a listener that must act once the new row is written adds a step to
    ``then`` (given the stored ``TableRef``), and the row is then written with a new version
    stamp (``layout.TIMELINE_VERSION``)."""

    table: hms.Table
    previous: hms.Table | None
    error: ErrorClass
    current: Any = None
    then: list[Callable[[Any], None]] = field(default_factory=list)

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
        """Write what must exist before the table row, or adjust the definition to store (in
        the same change); what must follow the row goes into ``change.then``."""


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
DATABASE, TABLE, FUNCTION, PARTITION = "database", "table", "function", "partition"
INDEX = "index"
#: How it changed (``Change.action``); partitions are added and renamed (new values) too.
CREATE, ALTER, DROP, ADD, RENAME = "create", "alter", "drop", "add", "rename"
#: A partition's values and parameters, as the timelines read them.
Entry = tuple[Sequence[str], dict[str, str] | None]
#: The environment context property marking the alters of a truncation (their notification
#: events say so: ``isTruncateOp``).
TRUNCATING = "metastore.truncate.op"


def truncating(context: Any) -> bool:  # noqa: ANN401 - an environment context's properties
    """Whether an alter's environment ``context`` is a truncation's (``TRUNCATING``)."""
    return bool(context) and context.get(TRUNCATING) == "true"


@dataclass(frozen=True)
class Change:
    """One change a call made: ``kind`` of object, ``action``, the object ``before`` and
    ``after`` (None where there is none: before a create, after a drop), ``when`` (seconds),
    for a table its stable ``table_id``, and whether it is a truncation's alter."""

    kind: str
    action: str
    before: Any = None
    after: Any = None
    when: int = 0
    table_id: int | None = None
    truncate: bool = False


@dataclass(frozen=True)
class PartitionChange(Change):
    """Partitions of one table written by one call (``kind`` PARTITION).

    ``table`` is the table's ``TableRef``. ``added`` and ``removed`` are the entries (values,
    parameters) the write brings and takes away (an alteration removes the old definition and
    adds the new). ``before`` and ``after`` are lists of partitions: the dropped ones
    (``before``), the old and new definitions of altered or renamed ones (``before[i]``
    became ``after[i]``); an add gives ``stored``, the new rows' Thrift bytes, instead.
    """

    table: Any = None
    added: Sequence[Entry] = ()
    removed: Sequence[Entry] = ()
    stored: Sequence[bytes] = ()

    def names(self, entries: Sequence[Entry]) -> list[str]:
        """The names (``k=v/...``) of the partitions of ``entries`` (``added``, ``removed``)."""
        keys = self.table.key_names
        return [make_partition_name(keys, values) for values, _ in entries]


class ChangeListener(Protocol):
    """Hears every change once it is written."""

    def changed(self, change: Change) -> None:
        """React to ``change`` (inside the change: a failure undoes it on stores that can)."""
        ...


class WriteListener(Protocol):
    """Wraps the write of every partition change."""

    def around(self, change: PartitionChange) -> AbstractContextManager[None]:
        """A context the write runs in (it sees the write's exception, if any)."""
        ...


class Announcer:
    """The listeners of changes, told in the order they were registered."""

    def __init__(self) -> None:
        self._listeners: list[ChangeListener] = []
        self._wrappers: list[WriteListener] = []

    def register(self, listener: ChangeListener) -> None:
        """Add a listener of written changes (at start, before any call)."""
        self._listeners.append(listener)

    def register_around(self, listener: WriteListener) -> None:
        """Add a listener that wraps partition writes (at start, before any call)."""
        self._wrappers.append(listener)

    def announce(self, change: Change) -> None:
        """Tell every listener of ``change``."""
        for listener in self._listeners:
            listener.changed(change)

    @contextmanager
    def writing(self, change: PartitionChange) -> Iterator[None]:
        """Run the body (the write of ``change``) inside every wrapping listener, then, when
        it succeeded, ``announce`` the change."""
        with ExitStack() as stack:
            for wrapper in self._wrappers:
                stack.enter_context(wrapper.around(change))
            yield
        self.announce(change)


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
