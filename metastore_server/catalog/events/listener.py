"""The notification log as a change listener: each announced change (``basics.changes``) that
HMS's DbNotificationListener reports becomes its event, in the order of the changes."""

from __future__ import annotations

from collections.abc import Callable

from metastore_server.catalog.basics.changes import (
    ALTER,
    CREATE,
    DATABASE,
    DROP,
    FUNCTION,
    TABLE,
    Change,
)
from metastore_server.catalog.events import messages
from metastore_server.catalog.events.log import NotificationLog
from metastore_server.catalog.events.messages import Event

#: The event of each kind of change that has one.
_EVENTS: dict[tuple[str, str], Callable[[Change], Event]] = {
    (DATABASE, CREATE): lambda c: messages.create_database(c.after, c.when),
    (DATABASE, DROP): lambda c: messages.drop_database(c.before, c.when),
    (TABLE, CREATE): lambda c: messages.create_table(c.after, c.when),
    (TABLE, ALTER): lambda c: messages.alter_table(c.before, c.after, c.when),
    (TABLE, DROP): lambda c: messages.drop_table(c.before, c.when),
    (FUNCTION, CREATE): lambda c: messages.create_function(c.after, c.when),
    (FUNCTION, DROP): lambda c: messages.drop_function(c.before, c.when),
}


class NotificationListener:
    """Records the notification event of every change that has one."""

    def __init__(self, log: NotificationLog) -> None:
        self._log = log

    def changed(self, change: Change) -> None:
        """Record ``change``'s event (``NotificationLog.record`` never raises)."""
        event = _EVENTS.get((change.kind, change.action))
        if event is not None:
            self._log.record([event(change)])
