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

from .conftest import TEST_STORAGE, RunningServer

pytestmark = pytest.mark.skipif(
    TEST_STORAGE != "hbase-double",
    reason="runs in the HBase pass, on a double of its own (which kills the writes)",
)

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
    with a client (``handler``)."""

    def __init__(self, double: HBaseDouble, tmp: Path) -> None:
        prefix = f"kill{next(_PREFIXES)}_"
        self.url = double.url(prefix=prefix)
        self._server = RunningServer(tmp / prefix, storage=self.url, writer_lease=LEASE_S)
        self.warehouse = str(self._server.warehouse)
        self.handler = self._server.client()

    def close(self) -> None:
        self.handler.close()
        self._server.stop()


def _run(double: HBaseDouble, zygote: Zygote, store: Store, change: str,
         kill_at: int | None) -> int:  # fmt: skip
    """Make ``change`` in a forked server process, killed when write ``kill_at`` arrives
    (None: not killed); its exit status."""
    run = zygote.start(store.url, store.warehouse, LEASE_S, change)
    if kill_at is None:
        double.count_writes()
    else:
        double.crash_before_write(kill_at, lambda: os.kill(run.pid, signal.SIGKILL))
    return zygote.go()


def _after_the_lease(store: Store, first_event: int) -> dict[str, Any]:
    """What the test's server sees once a killed writer's lease ran out."""
    time.sleep(LEASE_S * 1.5)
    return snapshot(store.handler, first_event)


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
            seen = _after_the_lease(store, first)
            # (The last writes counted may be the commit's clean-up, in the background: a
            # process done before it exits untouched.)
            assert status == -signal.SIGKILL or (status == 0 and seen == after), status
            assert seen in (before, after), f"killed at write {kill_at} of {writes}: {seen}"
            outcomes.append("all" if seen == after else "none")
            if seen == before:
                CHANGES[change][1](store.handler)  # nothing half-done is in its way
                assert snapshot(store.handler, first) == after
        finally:
            store.close()
    assert "none" in outcomes, outcomes
