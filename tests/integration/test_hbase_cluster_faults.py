"""What an HBase cluster does to its clients, against the HBase test double (which injects it):
the Thrift gateway restarting during a stream of calls, an answer lost after the write landed,
a region server restarting (calls wait, within a bound), and HBase unreachable while serving.
Every call answers either success or a MetaException; whatever answered an error left nothing,
whatever succeeded is there once, the notification log agreeing, and the server recovers without
a restart."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.hbase_double import HBaseDouble, storage_url

from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

pytestmark = pytest.mark.own_double

DB = "faults"
LEASE_S = 1.0
#: How long the gateway stays away unless brought back: longer than a call may wait (the test
#: client's 30 s timeout), so a call waiting for the gateway ends in a timeout, not its answer.
GATEWAY_AWAY_S = 120.0


@pytest.fixture()
def double() -> Iterator[HBaseDouble]:
    with HBaseDouble() as running:
        yield running


@pytest.fixture()
def serve(double: HBaseDouble, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Starts a server on the double (URL options as given) with a table ``t``; its client."""
    servers: list[RunningServer] = []

    def start(**url_options: object) -> Any:
        url = storage_url(*double.address, prefix=f"cf{len(servers)}_", **url_options)
        server = RunningServer(tmp_path / f"s{len(servers)}", storage=url, writer_lease=LEASE_S)
        servers.append(server)
        client = server.client()
        create_db(client, DB)
        client.create_table(make_table(DB, "t", keys=[("ds", "string")]))
        return client

    yield start
    for server in servers:
        server.stop()


def _batch(first: int, size: int = 5) -> list[hms.Partition]:
    return [make_partition(DB, "t", [f"d{n:04d}"]) for n in range(first, first + size)]


def _settle_and_check(client: Any, kept: set[str], refused: set[str]) -> None:
    """After the lease: exactly ``kept`` is there (nothing of ``refused``), each partition's
    ADD_PARTITION event once."""
    time.sleep(LEASE_S * 1.6)
    present = set(client.get_partition_names(DB, "t", -1))
    assert present == kept
    assert not present & refused
    events = client.get_next_notification(
        hms.NotificationEventRequest(lastEvent=0, maxEvents=100_000)
    ).events
    added = [e.message for e in events if e.eventType == "ADD_PARTITION"]
    for name in kept:
        assert sum(name.split("=")[1] in message for message in added) == 1, name


def test_a_gateway_restarting_during_adds_loses_and_repeats_nothing(
    double: HBaseDouble, serve: Callable[..., Any]
) -> None:
    client = serve()
    kept: set[str] = set()
    refused: set[str] = set()
    done = threading.Event()

    def adds() -> None:
        for first in range(0, 500, 5):
            names = {f"ds=d{n:04d}" for n in range(first, first + 5)}
            try:
                client.add_partitions(_batch(first))
                kept.update(names)
            except hms.MetaException:
                refused.update(names)
        done.set()

    adder = threading.Thread(target=adds)
    adder.start()
    restarts = 0
    while not done.wait(0.25):  # a restart (0.1 s away) every 0.25 s while the adds go on
        double.restart_gateway(0.1)
        restarts += 1
    adder.join()
    assert restarts >= 2 and kept
    _settle_and_check(client, kept, refused)
    client.add_partitions(_batch(1000))  # the server goes on, with no restart of its own


@pytest.mark.parametrize("method", ["mutateRows", "checkAndPut", "mutateRow"])
def test_an_answer_lost_after_the_write_landed(
    double: HBaseDouble, serve: Callable[..., Any], method: str
) -> None:
    client = serve()
    parts = _batch(0, 10)
    names = {f"ds=d{n:04d}" for n in range(10)}
    double.drop_connection(method, when="after")  # done, never answered
    try:
        client.add_partitions(parts)  # an idempotent write is sent again and succeeds
    except hms.MetaException as refused:
        assert method == "checkAndPut", refused  # a compare-and-set's outcome is unknown...
        assert client.add_partitions(parts) == 10  # ...the call was undone: a retry succeeds
    _settle_and_check(client, names, set())


def test_a_region_server_restarting_is_waited_for(
    double: HBaseDouble, serve: Callable[..., Any]
) -> None:
    client = serve()
    double.pause_regions(1.0)
    started = time.monotonic()
    assert client.add_partitions(_batch(0)) == 5  # waited for the regions, then done
    assert time.monotonic() - started >= 0.9
    _settle_and_check(client, {f"ds=d{n:04d}" for n in range(5)}, set())


def test_a_region_server_that_stays_away_gets_a_clear_error_within_a_bound(
    double: HBaseDouble, serve: Callable[..., Any]
) -> None:
    client = serve(timeout_ms=500, connect_retries=1, retry_backoff_ms=100)
    double.pause_regions(30, give_up_s=0.2)  # the gateway's own client gives up after 0.2 s
    started = time.monotonic()
    with pytest.raises(hms.MetaException, match="RetriesExhaustedException"):
        client.add_partitions(_batch(0))
    assert time.monotonic() - started < 10
    # The gateway holds calls past the server's timeout (0.5 s, three tries): a clear error.
    double.pause_regions(60.0)
    with pytest.raises(hms.MetaException, match="HBase"):
        client.add_partitions(_batch(5))
    # Ended by the server's own timeout, not by the regions coming back (no bound in seconds).
    assert double.regions_paused()
    double.pause_regions(0)  # back; a write held may land now
    _settle_and_check(client, set(), {f"ds=d{n:04d}" for n in range(10)})
    assert client.add_partitions(_batch(0)) == 5


def test_hbase_unreachable_while_serving_then_back(
    double: HBaseDouble, serve: Callable[..., Any]
) -> None:
    """While the gateway is away, calls end with a clear error after their retries (they do
    not wait for it: it stays away until the errors are in); once back, the same server
    serves again."""
    client = serve(connect_retries=1, retry_backoff_ms=100)
    assert client.add_partitions(_batch(0)) == 5
    double.restart_gateway(GATEWAY_AWAY_S)  # away until brought back below
    unreachable = "cannot reach the HBase Thrift gateway at 127.0.0.1"
    with pytest.raises(hms.MetaException, match=unreachable):
        client.get_partitions(DB, "t", -1)
    with pytest.raises(hms.MetaException, match=unreachable):
        client.add_partitions(_batch(5))
    double.restart_gateway(0.0)  # back at once (a restart under way starts over)
    _settle_and_check(client, {f"ds=d{n:04d}" for n in range(5)}, set())
    assert client.add_partitions(_batch(5)) == 5  # back, with no restart of the server
