"""The metrics' pieces in one process (figures in memory, prometheus_client's default
registry): what a call, a store operation and an HBase intent record; fb303's counters made
from them; the store's readiness probe and its caching; the monitoring HTTP server; the
``metrics_port`` setting. A served server's figures across its processes:
``tests/integration/test_metrics.py``."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from metastore_server.storage import telemetry
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.port import Put, TableSpec
from metastore_server.storage.probes import probe_sqlite
from structlog.testing import capture_logs
from support.hbase_double import HBaseDouble, storage_url

from metastore_server import metrics
from metastore_server.server.config import ServerConfig
from metastore_server.server.monitoring import MonitoringServer, StoreHealth, answer


def figure(name: str, **labels: str) -> float:
    """A sample of ours as ``collect`` finds it (0 when absent)."""
    for family in metrics.collect():
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


CALLS = metrics.CALL_SECONDS + "_count"
ROOT = Path(__file__).resolve().parents[2]


def test_a_call_is_timed_by_method_and_an_error_counted_by_type() -> None:
    calls = figure(CALLS, method="get_table")
    errors = figure("metastore_api_errors_total", method="get_table", error="MetaException")
    metrics.record_call("get_table", 1.5, "ok")
    metrics.record_call("get_table", 2.5, "MetaException")
    assert figure(CALLS, method="get_table") == calls + 2
    assert figure("metastore_api_errors_total", method="get_table",
                  error="MetaException") == errors + 1  # fmt: skip


def test_a_method_the_idl_does_not_name_is_labelled_unknown() -> None:
    unknown = figure(CALLS, method="unknown")
    metrics.record_call("drop_everything_now", 0.1, "unknown_method")
    assert figure(CALLS, method="unknown") == unknown + 1
    assert figure(CALLS, method="drop_everything_now") == 0


def test_fb303_counters_name_methods_as_hms_does_and_samples_as_metrics_do() -> None:
    metrics.record_call("get_all_databases", 0.2, "ok")
    metrics.record_call("get_database", 0.2, "NoSuchObjectException")
    counters = metrics.fb303_counters()
    assert counters["get_all_databases"] == figure(CALLS, method="get_all_databases") >= 1
    assert counters[f'{CALLS}{{method="get_database"}}'] == counters["get_database"]
    key = 'metastore_api_errors_total{error="NoSuchObjectException",method="get_database"}'
    assert counters[key] >= 1
    total = sum(value for name, value in counters.items() if name.startswith(CALLS))
    assert counters["total_api_calls"] == total
    assert not [name for name in counters if name.endswith("_created")]


def test_store_operations_are_sampled_or_timed() -> None:
    ops = "metastore_store_operation_duration_seconds_count"
    before = figure(ops, op="sampled_op")
    timed = telemetry.sampled("sampled_op", every=4)(lambda: None)
    for _ in range(8):
        timed()
    assert figure(ops, op="sampled_op") == before + 2
    store = SqliteStore(":memory:")
    commits = figure(ops, op="commit")
    store.ensure_tables([TableSpec("t")])
    store.mutate([Put("t", b"k", {b"c:x": b"1"})])
    store.close()
    assert figure(ops, op="commit") > commits


def test_hbase_intents_committed_and_rolled_back_are_counted() -> None:
    intents = "metastore_hbase_intents_total"
    commits, rollbacks = figure(intents, outcome="commit"), figure(intents, outcome="rollback")
    with HBaseDouble() as double:
        store = HBaseStore.from_url(storage_url(*double.address, prefix="metrics_"))
        store.ensure_tables([TableSpec("t")])
        gets = figure("metastore_store_operation_duration_seconds_count", op="get")
        with store.transaction():
            store.mutate([Put("t", b"a", {b"c:x": b"1"})])
        with pytest.raises(RuntimeError), store.transaction():
            store.mutate([Put("t", b"b", {b"c:x": b"1"})])
            raise RuntimeError("the call failed")
        assert store.get("t", b"b") is None
        store.close()
    assert figure(intents, outcome="commit") == commits + 1
    assert figure(intents, outcome="rollback") == rollbacks + 1
    assert figure("metastore_store_operation_duration_seconds_count", op="get") > gets


def test_a_dead_writers_intent_rolled_back_is_counted_as_a_recovery() -> None:
    recoveries = figure("metastore_hbase_intents_total", outcome="recovery")
    with HBaseDouble() as double:
        url = storage_url(*double.address, prefix="recovered_")
        store = HBaseStore.from_url(url, writer_lease_s=0.5)
        store.ensure_tables([TableSpec("t")])
        script = textwrap.dedent(f"""
            import os, signal
            from metastore_server.storage.hbase import HBaseStore
            from metastore_server.storage.port import Put
            store = HBaseStore.from_url({url!r}, writer_lease_s=0.5)
            with store.transaction():
                store.mutate([Put("t", b"a", {{b"c:x": b"1"}})])
                os.kill(os.getpid(), signal.SIGKILL)
        """)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        ended = subprocess.run([sys.executable, "-c", script], capture_output=True, env=env,
                               timeout=120)  # fmt: skip
        assert ended.returncode == -9, ended.stderr.decode()[-2000:]
        deadline = time.monotonic() + 60
        assert store.get("t", b"a") is None  # (readers never see it)
        while store.get("t", b"a") is None and store.raw.get("t", b"a") is not None:
            # its lease runs out; a read then rolls back
            assert time.monotonic() < deadline, "the dead writer's change stayed"
            time.sleep(0.1)
        store.close()
    assert figure("metastore_hbase_intents_total", outcome="recovery") == recoveries + 1


def test_the_embedded_probe_reads_a_fresh_connection_and_names_no_path(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SqliteStore(str(path)).close()
    assert probe_sqlite(str(path)) == (None, "")
    path.unlink()
    reason, detail = probe_sqlite(str(path))
    assert reason == "store: its file is gone" and str(path) in detail
    assert not path.exists()  # the probe created nothing


def test_store_health_reads_at_most_once_a_second_and_logs_changes() -> None:
    answers = [("store: down", "detail"), (None, "")]
    asked: list[str] = []

    def probe(url: str) -> tuple[str | None, str]:
        asked.append(url)
        return answers[min(len(asked), len(answers)) - 1]

    health = StoreHealth("sqlite:///x", probe)
    with capture_logs() as logs:
        assert health() == "store: down"
        assert health() == "store: down"  # the last answer, not asked again
    assert asked == ["sqlite:///x"]
    assert [entry["event"] for entry in logs] == ["store_not_answering"]


def test_the_monitoring_server_answers_health_ready_and_metrics() -> None:
    reasons: list[str | None] = [None]
    monitor = MonitoringServer("127.0.0.1", 0, lambda: reasons[0])
    monitor.start()
    try:
        port = monitor.address[1]

        def get(path: str) -> tuple[int, bytes]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as error:
                return error.code, error.read()

        assert get("/health") == (200, b"ok\n")
        assert get("/ready") == (200, b"ready\n")
        reasons[0] = "no worker is ready (1 of 1 starting)"
        assert get("/ready") == (503, b"not ready: no worker is ready (1 of 1 starting)\n")
        metrics.record_call("get_table", 0.2, "ok")
        status, body = get("/metrics")
        assert status == 200
        assert b'metastore_api_call_duration_seconds_count{method="get_table"}' in body
        assert get("/other")[0] == 404
    finally:
        monitor.stop()


def test_answer_of_metrics_is_prometheus_text() -> None:
    code, _body, content_type = answer("/metrics", lambda: None)
    assert (code, content_type.split(";")[0]) == (200, "text/plain")


def test_metrics_port_setting(tmp_path: Path) -> None:
    assert ServerConfig().metrics_port == 0  # not served unless asked for
    assert ServerConfig.from_env({"METASTORE_METRICS_PORT": "9095"}).metrics_port == 9095
    (tmp_path / "c.toml").write_text("metrics_port = 9096\n")
    assert ServerConfig.from_file(tmp_path / "c.toml").metrics_port == 9096
    for port, message in ((70000, "metrics_port out of range"),
                          (9083, "metrics_port 9083 is the Thrift port too")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            ServerConfig(metrics_port=port).validate()
    with pytest.raises(ValueError, match="is the REST catalog port too"):
        ServerConfig(rest_port=9001, metrics_port=9001).validate()


def test_the_grafana_dashboard_asks_only_for_metrics_we_export() -> None:
    dashboard = json.loads((ROOT / "docker" / "grafana-dashboard.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"]
             for target in panel.get("targets", [])]  # fmt: skip
    assert len(exprs) >= 15
    asked = {re.sub(r"_(bucket|count|sum|total)$", "", name)
             for expr in exprs for name in re.findall(r"metastore_[a-z_]+", expr)}  # fmt: skip
    assert asked <= set(metrics.NAMES), asked - set(metrics.NAMES)
    assert {re.sub(r"_(count|total)$", "", name) for name in asked} >= {
        metrics.CALL_SECONDS, metrics.ERRORS, metrics.WORKERS, metrics.CACHE_LOOKUPS,
        "metastore_store_operation_duration_seconds"}


def test_the_rest_port_asks_credentials_for_metrics_only() -> None:
    from starlette.requests import Request

    from metastore_server.rest.auth import RestAuth
    from metastore_server.rest.health import health_routes

    class Users:
        def verify(self, user: str, password: str) -> str | None:
            return None if (user, password) == ("ops", "secret") else "wrong password"

        def lookup(self, user: str) -> tuple[bool | None, str]:
            return True, ""

    routes = health_routes(object(), RestAuth(Users(), key=b"k" * 32))
    endpoints = {route.path: route.endpoint for route in routes}

    def status(path: str, authorization: str | None = None) -> int:
        headers = [(b"authorization", authorization.encode())] if authorization else []
        scope = {"type": "http", "method": "GET", "path": path, "headers": headers,
                 "query_string": b""}  # fmt: skip
        return asyncio.run(endpoints[path](Request(scope))).status_code

    assert status("/health") == 200 and status("/ready") == 200  # probes carry nothing
    assert status("/metrics") == 401
    assert status("/metrics", "Basic " + base64.b64encode(b"ops:wrong").decode()) == 401
    assert status("/metrics", "Basic " + base64.b64encode(b"ops:secret").decode()) == 200
