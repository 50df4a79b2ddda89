"""The HMS table locks the REST catalog's commits take: EXCLUSIVE, table level, as Iceberg's
HiveCatalog takes them, so that a REST commit and a Thrift one exclude each other."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import commit_failed
from metastore_server.storage import retrying
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms

#: Seconds a commit waits for the table's HMS lock before it fails (409).
LOCK_WAIT_S = 30.0


@contextmanager
def table_lock(calls: MetastoreCalls, db: str, name: str) -> Iterator[None]:
    """Hold the table's HMS lock (EXCLUSIVE, table level: what Iceberg's HiveCatalog takes)
    for the block; 409 when it is not granted within ``LOCK_WAIT_S``."""
    with table_locks(calls, [(db, name)]):
        yield


@contextmanager
def table_locks(calls: MetastoreCalls, tables: Sequence[tuple[str, str]]) -> Iterator[None]:
    """Hold the HMS locks of ``tables`` (one request: all or none) for the block."""
    components = [
        hms.LockComponent(type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE,
                          dbname=db, tablename=name, isAcid=True)  # fmt: skip
        for db, name in sorted(set(tables))
    ]
    request = hms.LockRequest(component=components, user=calls.session.user or "iceberg-rest",
                              hostname=socket.gethostname(), agentInfo="iceberg-rest")  # fmt: skip
    response = calls.lock(request)
    try:
        _wait_granted(calls, response, tables)
        yield
    finally:
        calls.unlock(hms.UnlockRequest(lockid=response.lockid))


def _wait_granted(calls: MetastoreCalls, response: Any, tables: Sequence[tuple[str, str]]) -> None:
    """Check the lock again, after growing pauses (``retrying.REST_LOCK``), while it waits;
    409 when it is not granted within ``LOCK_WAIT_S``."""
    checks = 0

    def attempt() -> None | Lost:
        nonlocal response, checks
        if checks:
            response = calls.check_lock(hms.CheckLockRequest(lockid=response.lockid))
        checks += 1
        return LOST if response.state == hms.LockState.WAITING else None

    retrying.race(retrying.REST_LOCK, attempt, within_s=LOCK_WAIT_S)
    if response.state != hms.LockState.ACQUIRED:
        shown = ", ".join(f"{db}.{name}" for db, name in tables)
        raise commit_failed(f"Could not lock {shown} within {LOCK_WAIT_S:g} s "
                            f"(lock state {response.state})")  # fmt: skip
