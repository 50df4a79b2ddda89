"""A sick HBase cluster: the Thrift gateway takes calls but answers none (HBase's master and
region servers down; the HBase double's ``stall``). A call whose HBase requests cannot end
within its share of ``--call-timeout`` answers a MetaException naming HBase, its worker is not
replaced, and the same connection serves the next call once HBase answers again."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage import deadline
from support.hbase_double import HBaseDouble
from support.our_server import OurServer

from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_table

pytestmark = [
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds workers in /proc"),
    pytest.mark.own_double,
]

#: The call timeout the server runs with (small, so that the test is short).
CALL_TIMEOUT_S = 3.0
#: A loaded machine may be slow: bounds are this many times what the mechanism needs.
SLACK = 10


def workers_of(server: OurServer) -> set[int]:
    """The pids of the supervisor's worker processes."""
    assert server.process is not None
    found = subprocess.run(["pgrep", "-P", str(server.process.pid)], capture_output=True,
                           text=True, check=False)  # fmt: skip
    return {int(pid) for pid in found.stdout.split()}


@pytest.fixture()
def double() -> Iterator[HBaseDouble]:
    with HBaseDouble() as running:
        yield running


@pytest.fixture()
def server(double: HBaseDouble, tmp_path: Path) -> Iterator[OurServer]:
    """One worker under a supervisor, on the double, with a short call timeout."""
    options = ["--workers", "1", "--call-timeout", str(CALL_TIMEOUT_S)]
    running = OurServer(tmp_path / "server", extra_args=[*options, "--writer-lease", str(LEASE_S)],
                        storage=double.url(prefix="sick_"))  # fmt: skip
    running.start()
    yield running
    running.stop()


#: HBase's write calls (``stall`` of these only: a change's reads answered, its writes not).
WRITES = {"mutateRow", "mutateRows", "checkAndPut", "atomicIncrement"}
LEASE_S = 2.0


@pytest.mark.parametrize(("call", "held"), [("get_table", None), ("drop_database", None),
                                            ("drop_database", WRITES)])  # fmt: skip
def test_a_call_on_a_gateway_that_never_answers_gets_a_meta_exception(
    double: HBaseDouble, server: OurServer, call: str, held: set[str] | None
) -> None:
    client = make_client("127.0.0.1", server.port, timeout_ms=int(CALL_TIMEOUT_S * SLACK * 1000))
    create_db(client, "sick")
    client.create_table(make_table("sick", "t", keys=[("ds", "string")]))
    before = workers_of(server)
    assert len(before) == 1
    double.stall(held)
    started = time.monotonic()
    with pytest.raises(hms.MetaException, match="HBase did not answer") as refused:
        if call == "get_table":
            client.get_table("sick", "t")
        else:
            client.drop_database("sick", True, True)
    took = time.monotonic() - started
    print(f"{call}: MetaException after {took:.2f} s ({took / CALL_TIMEOUT_S:.2f} call "
          f"timeouts; {double.stalled} HBase calls held): {refused.value.message}")  # fmt: skip
    assert "HBase Thrift gateway" in refused.value.message
    assert double.stalled >= 1  # it was HBase that held it
    assert took < CALL_TIMEOUT_S * SLACK
    double.heal()  # a write held lands now, late
    # The same connection, on the same worker (not replaced), serves the next calls; the
    # drop that answered an error left nothing (a write landing late is undone after the
    # writer lease).
    _still_there(client, LEASE_S * 1.5)
    assert workers_of(server) == before
    client.drop_database("sick", True, True)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database("sick")


def _still_there(client: object, settle_s: float) -> None:
    """The database and its table are there, after ``settle_s`` too (polled until then)."""
    ends = time.monotonic() + settle_s * SLACK
    while True:
        try:
            assert client.get_table("sick", "t").tableName == "t"  # type: ignore[attr-defined]
            break
        except hms.NoSuchObjectException:
            assert time.monotonic() < ends, "the table never came back"
            time.sleep(0.1)
    time.sleep(settle_s)
    assert client.get_database("sick").name == "sick"  # type: ignore[attr-defined]
    assert client.get_table("sick", "t").tableName == "t"  # type: ignore[attr-defined]


def test_a_call_limit_bounds_the_requests_and_their_retries(double: HBaseDouble) -> None:
    """In process: a get under a 0.5 s limit on a stalled gateway ends when the limit does,
    once (no retry starts past it), where the store's own timeout is a minute a try."""
    from metastore_server.storage.hbase import HBaseStore
    from metastore_server.storage.hbase_connection import HBaseTimeoutError
    from metastore_server.storage.port import Put, TableSpec

    with HBaseStore.from_url(double.url(prefix="lim_")) as store:
        store.ensure_tables([TableSpec("t", ("c",))])
        store.mutate([Put("t", b"k", {b"c:a": b"1"})])
        double.stall({"getRowWithColumns"})
        no_answer = pytest.raises(HBaseTimeoutError, match="took get but gave no answer")
        with no_answer, deadline.limit(0.5):
            store.get("t", b"k")
        assert double.stalled == 1  # not sent again: the limit had run out
        with deadline.limit(0.5), pytest.raises(HBaseTimeoutError, match="was not sent"):
            time.sleep(0.6)
            store.get("t", b"k")
        assert double.stalled == 1
        double.heal()
        assert store.get("t", b"k") == {b"c:a": b"1"}
        double.stall({"getRowWithColumns"}, delay_s=0.2)  # a late answer, within the limit
        with deadline.limit(0.2 * SLACK):
            assert store.get("t", b"k") == {b"c:a": b"1"}
        assert double.stalled == 2
