"""Metrics and health as an operator meets them (docs/operations.md#monitoring): a server
started as users start it (``serve --workers 2 --metrics-port P --rest-port R``), its
``/metrics`` scraped and read with prometheus_client's own parser, ``/health`` and ``/ready``
asked, fb303's ``getCounters`` and ``getStatus`` compared with them; on the embedded store and,
with METASTORE_TEST_STORAGE=hbase-double, on the HBase test double.

Figures are recorded once a reply is written, so a scrape right after an answer may miss it:
each check waits (up to a generous deadline, never a bound on speed) for the figures to
settle."""

from __future__ import annotations

import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import net, test_storage
from support.net import LOOPBACK, free_port
from support.our_server import OurServer

from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_partition, make_table

#: Long enough for anything on a loaded machine; the checks end as soon as they hold.
SETTLE_S = 60.0
ON_HBASE = test_storage.uses_hbase()
#: fb303's fb_status.
ALIVE, WARNING = 2, 5
#: Puts the test faults of ``support/worker_start_site/sitecustomize.py`` into the server.
SITE = str(Path(__file__).parents[1] / "support" / "worker_start_site")

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def http_get(port: int, path: str) -> tuple[int, str]:
    """(status, body) of GET ``path`` on the loopback ``port``."""
    try:
        with urllib.request.urlopen(f"http://{LOOPBACK}:{port}{path}", timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def scrape(port: int, path: str = "/metrics") -> Samples:
    """Every sample of ``/metrics``, by (name, sorted labels), parsed by prometheus_client."""
    status, text = http_get(port, path)
    assert status == 200, text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """One sample's value (0 when absent)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    net.wait_until(condition, what, SETTLE_S)


def settled(port: int, name: str, expected: float, **labels: str) -> Samples:
    """The scrape in which sample ``name{labels}`` reached ``expected`` (asserted equal)."""
    found: list[Samples] = []

    def reached() -> bool:
        found[:] = [scrape(port)]
        return value(found[0], name, **labels) >= expected

    wait_until(reached, f"{name}{labels} to reach {expected}")
    assert value(found[0], name, **labels) == expected
    return found[0]


def worker_pids(server: OurServer) -> list[int]:
    """The worker processes of a served supervisor (its children but the REST catalog's)."""
    assert server.process is not None
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in children
            if b"--worker-channel-fd" in Path(f"/proc/{child}/cmdline").read_bytes()]


class Served:
    """A started server: its metrics port, REST port and a client factory."""

    def __init__(self, server: OurServer, metrics_port: int, rest_port: int) -> None:
        self.server, self.metrics_port, self.rest_port = server, metrics_port, rest_port

    def client(self) -> Any:
        return make_client(LOOPBACK, self.server.port, timeout_ms=60_000)


def start(workdir: Path, *extra: str, env: dict[str, str] | None = None) -> Served:
    metrics_port, rest_port = free_port(LOOPBACK), free_port(LOOPBACK)
    server = OurServer(workdir, extra_args=["--workers", "2", "--metrics-port", str(metrics_port),
                                            "--rest-port", str(rest_port), *extra], env=env)
    if not ON_HBASE:  # a directory of its own, that a test may take away
        (workdir / "store").mkdir(parents=True)
        server.storage = f"sqlite:///{workdir / 'store' / 'metastore.db'}"
    server.start()
    served = Served(server, metrics_port, rest_port)
    wait_until(lambda: http_get(metrics_port, "/ready")[0] == 200, "/ready")
    wait_until(lambda: _answers(rest_port), "the REST catalog's /health")
    return served


def _answers(port: int) -> bool:
    try:
        return http_get(port, "/health")[0] == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = start(tmp_path_factory.mktemp("metrics"))
    yield running
    running.server.stop()


CALLS = "metastore_api_call_duration_seconds"


def test_calls_are_counted_and_timed_by_method_and_errors_by_type(served: Served) -> None:
    before = scrape(served.metrics_port)
    client = served.client()
    try:
        create_db(client, "counted")
        for _ in range(3):
            client.get_database("counted")
        for _ in range(2):
            with pytest.raises(hms.NoSuchObjectException):
                client.get_table("counted", "missing")
    finally:
        client.close()
    count = CALLS + "_count"
    got = value(before, count, method="get_database") + 3
    after = settled(served.metrics_port, count, got, method="get_database")
    after = settled(served.metrics_port, count,
                    value(before, count, method="get_table") + 2, method="get_table")
    assert value(after, count, method="create_database") == value(
        before, count, method="create_database") + 1
    for method in ("get_database", "get_table"):  # every call in one bucket, with its time
        assert value(after, CALLS + "_bucket", method=method, le="+Inf") == value(
            after, count, method=method)
        assert value(after, CALLS + "_sum", method=method) > 0
    errors = "metastore_api_errors_total"
    assert value(after, errors, method="get_table", error="NoSuchObjectException") == value(
        before, errors, method="get_table", error="NoSuchObjectException") + 2
    assert value(after, errors, method="get_database", error="NoSuchObjectException") == value(
        before, errors, method="get_database", error="NoSuchObjectException")


def test_store_operations_are_timed(served: Served) -> None:
    samples = scrape(served.metrics_port)
    ops = {dict(labels)["op"] for (name, labels) in samples
           if name == "metastore_store_operation_duration_seconds_count"}
    # HBase: each request to the gateway; the embedded store: every commit (and sampled reads)
    if ON_HBASE:
        assert "get" in ops and ops & {"mutateRow", "mutateRows", "checkAndPut"}, ops
    else:
        assert "commit" in ops, ops


def test_workers_are_shown_and_a_replaced_one_counted(served: Served) -> None:
    samples = settled(served.metrics_port, "metastore_workers", 2, state="ready")
    assert value(samples, "metastore_workers_desired") == 2
    exited = value(samples, "metastore_worker_restarts_total", reason="exited")
    victim = worker_pids(served.server)[0]
    os.kill(victim, 9)
    settled(served.metrics_port, "metastore_worker_restarts_total", exited + 1, reason="exited")
    settled(served.metrics_port, "metastore_workers", 2, state="ready")
    wait_until(lambda: http_get(served.metrics_port, "/ready")[0] == 200, "ready again")


def test_open_connections_are_counted(served: Served) -> None:
    gauge = "metastore_open_connections"
    # the connections of earlier tests are closed (once their workers have seen them go)
    wait_until(lambda: value(scrape(served.metrics_port), gauge) == 0, "no connection open")
    clients = [served.client() for _ in range(3)]
    try:
        for client in clients:  # answered: each connection is with a worker
            client.get_all_databases()
        settled(served.metrics_port, gauge, 3)
    finally:
        for client in clients:
            client.close()
    wait_until(lambda: value(scrape(served.metrics_port), gauge) == 0, "the three closed")


@pytest.mark.skipif(ON_HBASE, reason="HBase gives no change token: nothing is cached")
def test_listing_cache_hits_and_misses_are_counted(served: Served) -> None:
    client = served.client()
    try:
        create_db(client, "cached")
        client.create_table(make_table("cached", "t", keys=[("ds", "string")]))
        client.add_partitions([make_partition("cached", "t", [f"d{n}"]) for n in range(5)])
        before = scrape(served.metrics_port)
        for _ in range(2):  # one connection: one worker, one cache
            assert len(client.get_partitions("cached", "t", -1)) == 5
    finally:
        client.close()
    lookups = "metastore_listing_cache_lookups_total"
    hits = value(before, lookups, result="hit")
    wait_until(lambda: value(scrape(served.metrics_port), lookups, result="hit") > hits, "a hit")
    after = scrape(served.metrics_port)
    assert value(after, lookups, result="miss") > value(before, lookups, result="miss")
    assert value(after, "metastore_listing_cache_bytes") > 0


@pytest.mark.skipif(not ON_HBASE, reason="intents are HBase's")
def test_hbase_intents_are_counted(served: Served) -> None:
    commits = value(scrape(served.metrics_port), "metastore_hbase_intents_total", outcome="commit")
    client = served.client()
    try:
        create_db(client, "intended")
    finally:
        client.close()
    wait_until(lambda: value(scrape(served.metrics_port), "metastore_hbase_intents_total",
                             outcome="commit") > commits, "a commit counted")


def test_get_counters_holds_the_figures_of_metrics(served: Served) -> None:
    count = CALLS + "_count"
    listed = value(scrape(served.metrics_port), count, method="get_all_databases")
    client = served.client()
    try:
        client.get_all_databases()
        settled_figures = settled(served.metrics_port, count, listed + 1,
                                  method="get_all_databases")
        counters = client.getCounters()
        assert client.getStatus() == ALIVE
        assert client.getStatusDetails() == "serving"
    finally:
        client.close()
    assert counters, "getCounters answered nothing"
    calls = {dict(labels)["method"]: seen for (name, labels), seen in settled_figures.items()
             if name == count}
    for method in ("get_all_databases", "get_database", "create_database"):
        assert counters[method] == calls[method], method  # HMS's name: the method's own
        assert counters[f'{count}{{method="{method}"}}'] == calls[method]
    assert counters["total_api_calls"] >= sum(calls.values())
    key = 'metastore_api_errors_total{error="NoSuchObjectException",method="get_table"}'
    assert counters[key] == value(settled_figures, "metastore_api_errors_total",
                                  method="get_table", error="NoSuchObjectException")
    assert counters['metastore_workers{state="ready"}'] == 2
    assert counters["open_connections"] >= 1  # this one


def test_rest_requests_are_counted_and_its_port_answers_health(served: Served) -> None:
    rest = served.rest_port
    assert http_get(rest, "/health")[0] == 200
    assert http_get(rest, "/ready") == (200, "ready\n")
    before = scrape(served.metrics_port)
    assert http_get(rest, "/v1/config")[0] == 200
    assert http_get(rest, "/v1/namespaces/nowhere")[0] == 404
    assert http_get(rest, "/no/such/route")[0] == 404
    requests = "metastore_rest_requests_total"
    config = {"route": "/v1/config", "method": "GET", "status": "200"}
    settled(served.metrics_port, requests, value(before, requests, **config) + 1, **config)
    missing = {"route": "/v1/namespaces/{namespace}", "method": "GET", "status": "404"}
    unmatched = {"route": "unmatched", "method": "GET", "status": "404"}
    after = settled(served.metrics_port, requests, value(before, requests, **unmatched) + 1,
                    **unmatched)
    assert value(after, requests, **missing) == value(before, requests, **missing) + 1
    # the REST port's /metrics shows the same figures (every process's, from one directory)
    assert value(scrape(rest), requests, **config) == value(after, requests, **config)


@pytest.mark.skipif(test_storage.kind() == "hbase", reason="a real HBase is not taken away")
def test_health_ready_and_not_ready_once_the_store_is_gone(tmp_path: Path) -> None:
    served = start(tmp_path / "server")
    port = served.metrics_port
    try:
        assert http_get(port, "/health") == (200, "ok\n")
        assert http_get(port, "/ready") == (200, "ready\n")
        assert http_get(port, "/elsewhere")[0] == 404
        client = served.client()
        _take_the_store_away(served.server, tmp_path)
        wait_until(lambda: http_get(port, "/ready")[0] == 503, "/ready to say 503")
        status, text = http_get(port, "/ready")
        assert status == 503 and text.startswith("not ready: store:"), text
        assert str(tmp_path) not in text  # no path in what anyone may read
        assert http_get(port, "/health")[0] == 200  # alive, if not ready
        wait_until(lambda: client.getStatus() == WARNING, "getStatus to say WARNING")
        assert client.getStatusDetails().startswith("store:")
        _bring_the_store_back(served.server, tmp_path)
        wait_until(lambda: http_get(port, "/ready")[0] == 200, "/ready to say 200 again")
        wait_until(lambda: client.getStatus() == ALIVE, "getStatus to say ALIVE again")
        client.close()
    finally:
        served.server.stop()


def _take_the_store_away(server: OurServer, tmp_path: Path) -> None:
    double = server._double  # noqa: SLF001 - the test's own HBase double
    if double is not None:
        double.restart_gateway(3600.0)  # unreachable until it is restarted again
    else:
        shutil.move(tmp_path / "server" / "store", tmp_path / "away")


def _bring_the_store_back(server: OurServer, tmp_path: Path) -> None:
    double = server._double  # noqa: SLF001
    if double is not None:
        double.restart_gateway(0.0)
    else:
        shutil.move(tmp_path / "away", tmp_path / "server" / "store")


def test_not_ready_until_a_worker_is(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    env = {"PYTHONPATH": SITE, "METASTORE_TEST_WORKER_GATE": str(gate)}
    metrics_port = free_port(LOOPBACK)
    server = OurServer(tmp_path / "server", env=env,
                       extra_args=["--workers", "1", "--metrics-port", str(metrics_port)])
    process = server.launch()
    try:
        wait_until(lambda: Path(f"{gate}.reached").exists() or process.poll() is not None,
                   "the worker at its gate")
        assert process.poll() is None, server.stderr_path.read_text()
        assert http_get(metrics_port, "/health")[0] == 200
        status, text = http_get(metrics_port, "/ready")
        assert (status, text) == (503, "not ready: no worker is ready (1 of 1 starting)\n")
        gate.touch()
        wait_until(lambda: http_get(metrics_port, "/ready")[0] == 200, "ready once it is")
    finally:
        server.stop()
