"""``kill -9`` of a server process between any two of its HBase writes leaves, once another
process has touched the store, the whole change or none of it, the notification log agreeing.

For each change (add, drop, rename, exchange, alter with cascade, create with grants) the test
first makes it once without a kill, counting the writes it sends to the HBase test double; then,
for every one of those writes, it sets the change up afresh, lets a forked server process
(``support.kill_steps``) make it, and kills that process when the double receives that write.
After the writer lease, a second server on the same store sees either the state before the
change or the state after it, as a client sees it: tables, columns, partitions, their data,
grants, timelines and the notification events. When it sees none of it, the change then
succeeds there (nothing half-done is left to collide with).

Whoever finds a dead writer's change judges it by its own lease, so only that second server
(the checker, started once the writer has exited) has a short lease, to keep the test short.
The set-up and the killed writer keep the normal lease: a short one there would only make a
pause of the test process (its collector, a loaded machine) refuse their writes as too slow.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.hbase_double import HBaseDouble
from support.kill_steps import CHANGES, Zygote, set_up, snapshot

from metastore_server.catalog.core.context import WRITER_LEASE_S
from metastore_server.thrift_api import hms

from .conftest import TEST_STORAGE, RunningServer

pytestmark = pytest.mark.skipif(
    TEST_STORAGE != "hbase-double",
    reason="runs in the HBase pass, on a double of its own (which kills the writes)",
)

#: The checker's lease: how long after a writer's last sign of life its change is recovered.
LEASE_S = 0.4
_PREFIXES = itertools.count(1)


@pytest.fixture(scope="module")
def double() -> Iterator[HBaseDouble]:
    with HBaseDouble() as running:
        yield running


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    forks = Zygote()
    yield forks
    forks.close()


class Store:
    """One fresh store on the double: its URL and warehouse, and a server of the test's on it
    with a client (``handler``), on the normal writer lease."""

    def __init__(self, double: HBaseDouble, tmp: Path) -> None:
        self._dir = tmp / f"kill{next(_PREFIXES)}_"
        self.url = double.url(prefix=self._dir.name)
        self._servers = [RunningServer(self._dir, storage=self.url)]
        self.warehouse = str(self._servers[0].warehouse)
        self.handler = self._servers[0].client()
        self._clients = [self.handler]

    def checker(self) -> Any:
        """A client of a second server on the store with the short lease (``LEASE_S``)."""
        server = RunningServer(self._dir, storage=self.url, writer_lease=LEASE_S)
        self._servers.append(server)
        self._clients.append(server.client())
        return self._clients[-1]

    def close(self) -> None:
        for client in self._clients:
            client.close()
        for server in reversed(self._servers):
            server.stop()


def _run(double: HBaseDouble, zygote: Zygote, store: Store, change: str,
         kill_at: int | None) -> int:  # fmt: skip
    """Make ``change`` in a forked server process, killed when write ``kill_at`` arrives
    (None: not killed); its exit status."""
    run = zygote.start(store.url, store.warehouse, WRITER_LEASE_S, change)
    if kill_at is None:
        double.count_writes()
    else:
        double.crash_before_write(kill_at, lambda: os.kill(run.pid, signal.SIGKILL))
    return zygote.go()


def _after_the_lease(checker: Any, first_event: int) -> dict[str, Any]:
    """What the checker sees once a killed writer's lease (as the checker counts) ran out."""
    time.sleep(LEASE_S * 1.5)
    return snapshot(checker, first_event)


#: How often the checker makes the change again when its short lease refuses it for time.
REDO_TRIES = 10


def _redo(change: str, checker: Any) -> None:
    """Make ``change`` through the checker. Its lease is short (``LEASE_S``): on a loaded
    machine a claim may take over half of it, which the server refuses cleanly, changing
    nothing ("over half the writer lease"); that refusal is tried again, any other fails."""
    for attempt in range(REDO_TRIES):
        try:
            CHANGES[change][1](checker)
            return
        except hms.MetaException as exc:
            if "over half the writer lease" not in (exc.message or "") or attempt + 1 == REDO_TRIES:
                raise


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_kill_at_every_write_leaves_all_or_nothing(
    double: HBaseDouble, zygote: Zygote, tmp_path: Path, change: str
) -> None:
    whole = Store(double, tmp_path)
    first = set_up(whole.handler, change)
    before = snapshot(whole.handler, first)
    assert _run(double, zygote, whole, change, None) == 0
    writes = double.writes
    after = snapshot(whole.handler, first)
    whole.close()
    assert after != before and after["events"], "the change changed nothing"
    outcomes = []
    for kill_at in range(1, writes + 1):
        store = Store(double, tmp_path)
        try:
            first = set_up(store.handler, change)
            status = _run(double, zygote, store, change, kill_at)
            checker = store.checker()
            seen = _after_the_lease(checker, first)
            # (The last writes counted may be the commit's clean-up, in the background: a
            # process done before it exits untouched.)
            assert status == -signal.SIGKILL or (status == 0 and seen == after), status
            assert seen in (before, after), f"killed at write {kill_at} of {writes}: {seen}"
            outcomes.append("all" if seen == after else "none")
            if seen == before:
                _redo(change, checker)  # nothing half-done is in its way
                assert snapshot(checker, first) == after
        finally:
            store.close()
    assert "none" in outcomes, outcomes
