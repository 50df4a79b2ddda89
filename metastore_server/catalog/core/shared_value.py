"""One value in one row, changed only by compare-and-set on the value it was read from: how
the locks and transactions (``txn.transactions``) and the compaction queue
(``txn.compactions``) are kept, atomic on HBase (whose check-and-put writes one column
atomically) as on the embedded store.

A change may come with notification events (``events``): on a store with atomic batches they
are written in the same ``mutate`` as the value, under its compare-and-set and their ids' marks
being free; elsewhere (HBase, one condition per ``mutate``) right after the compare-and-set
succeeded, through ``NotificationLog.record``, in one store transaction with it (an intent on
HBase). Either way all or nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from metastore_server.storage import retrying
from metastore_server.storage.port import Capabilities, Condition, Put, StoragePort
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms

if TYPE_CHECKING:
    from metastore_server.catalog.events.log import NotificationLog
    from metastore_server.catalog.events.messages import Event


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
    events: Callable[[V], Sequence[Event]] | None = None,
    log: NotificationLog | None = None,
) -> R:
    """Run ``action(value, now)`` on the value as ``read`` and store it when it changed,
    compare-and-set on the bytes it was read from (``where``: table, row, column); read again
    and retried, after a short random pause, when another call changed it meanwhile
    (``retrying.SHARED_VALUE``): MetaException after its attempts all lost (``what`` names the
    value). When the value changed, ``events(value)`` are the notification events of the
    change, recorded in ``log`` (see the module's docstring; none while the log is off)."""
    table, row, column = where

    def attempt() -> R | Lost:
        value = read()
        result = action(value, clock())
        if not value.changed:
            return result
        recorder = log if log is not None and log.enabled else None
        built: list[Event] = []
        if events is not None and recorder is not None:
            built = list(events(value))
        ops = [Put(table, row, {column: value.encode()})]
        conditions = [Condition(table, row, column, value.stored)]
        # (events are built only where there is a recorder)
        joined = recorder is not None and bool(built) and recorder.joins(1)
        if joined and recorder is not None:
            puts, marks = recorder.rows(built)
            ops += puts
            conditions += marks
        condition = conditions if len(conditions) > 1 else conditions[0]
        if joined or not built or recorder is None:
            held = store.mutate(ops, condition)
            if held and joined and recorder is not None:
                recorder.written()
        else:
            held = _with_events(store, ops, condition, recorder, built)
        return result if held else LOST  # lost to another change: again, after a pause

    answer = retrying.race(retrying.SHARED_VALUE, attempt)
    if answer is LOST:
        raise hms.MetaException(message=f"{what}: other calls kept changing them; try again")
    return answer


def _with_events(
    store: StoragePort,
    ops: list[Put],
    condition: Condition | list[Condition],
    log: NotificationLog,
    built: list[Event],
) -> bool:
    """The compare-and-set, then its events, in one store transaction (an event that cannot
    be written undoes the change); False when the compare-and-set did not hold."""
    with in_transaction(store):
        if not store.mutate(ops, condition):
            return False
        log.record(built)
    return True


def in_transaction(store: StoragePort) -> contextlib.AbstractContextManager[None]:
    """A store transaction for writes made outside the write lock (whose holder has one
    already): all of them, or none."""
    transaction = Capabilities.of(store).transaction
    return transaction() if transaction is not None else contextlib.nullcontext()
