"""The notification log as a change listener: each announced change (``basics.changes``) that
HMS's DbNotificationListener reports becomes its events, in the order of the changes.

A partition change gives one event per partition as HMS does (ADD_PARTITION: one for the whole
batch, split only past ``messages.MAX_MESSAGE_BYTES``); no event is built while the log is off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from metastore_server.catalog.basics.changes import (
    ADD,
    ALTER,
    CREATE,
    DATABASE,
    DROP,
    FUNCTION,
    INDEX,
    PARTITION,
    RENAME,
    TABLE,
    Change,
    PartitionChange,
)
from metastore_server.catalog.events import messages
from metastore_server.catalog.events.log import NotificationLog
from metastore_server.catalog.events.messages import Event
from metastore_server.wire.serde import to_bytes


def _added(c: PartitionChange) -> Iterable[Event]:
    return messages.added_partitions(c.table.table, c.stored)


def _altered(c: PartitionChange) -> Iterable[Event]:
    table = c.table.table
    table_data = to_bytes(table)  # the table's encoding once, not once an event
    pairs = zip(c.before, c.after, strict=True)
    return (messages.alter_partition(table, old, new, c.when, truncate=c.truncate,
                                     table_data=table_data)
            for old, new in pairs)  # fmt: skip


def _dropped(c: PartitionChange) -> Iterable[Event]:
    table = c.table.table
    table_data = to_bytes(table)  # the table's encoding once, not once an event
    return (messages.drop_partition(table, [partition], c.when, table_data=table_data)
            for partition in c.before)  # fmt: skip


#: The events of each kind of change that has some.
_EVENTS: dict[tuple[str, str], Callable[..., Iterable[Event]]] = {
    (DATABASE, CREATE): lambda c: [messages.create_database(c.after, c.when)],
    (DATABASE, ALTER): lambda c: [messages.alter_database(c.before, c.after, c.when)],
    (DATABASE, DROP): lambda c: [messages.drop_database(c.before, c.when)],
    (TABLE, CREATE): lambda c: [messages.create_table(c.after, c.when)],
    (TABLE, ALTER): lambda c: [
        messages.alter_table(c.before, c.after, c.when, truncate=c.truncate)
    ],
    (TABLE, DROP): lambda c: [messages.drop_table(c.before, c.when)],
    (FUNCTION, CREATE): lambda c: [messages.create_function(c.after, c.when)],
    (FUNCTION, DROP): lambda c: [messages.drop_function(c.before, c.when)],
    (INDEX, CREATE): lambda c: [messages.create_index(c.after, c.when)],
    (INDEX, ALTER): lambda c: [messages.alter_index(c.before, c.after, c.when)],
    (INDEX, DROP): lambda c: [messages.drop_index(c.before, c.when)],
    (PARTITION, ADD): _added,
    (PARTITION, ALTER): _altered,
    (PARTITION, RENAME): _altered,
    (PARTITION, DROP): _dropped,
}


class NotificationListener:
    """Records the notification events of every change that has some."""

    def __init__(self, log: NotificationLog) -> None:
        self._log = log

    def changed(self, change: Change) -> None:
        """Record ``change``'s events (a failure raises: the change is rolled back)."""
        events = _EVENTS.get((change.kind, change.action))
        if events is not None and self._log.enabled:
            self._log.record(events(change))
