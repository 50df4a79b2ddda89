"""The server itself: unknown methods, fb303, transports/protocols, concurrency, clean stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import structlog
import thriftpy2
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

from metastore_server.thrift_api import hms, hms23, make_client

from .conftest import RunningServer, create_db, make_partition, make_table


def test_unserved_method_answers_and_connection_survives(running, tmp_path) -> None:
    """A method the server does not know (one no HMS has) is UNKNOWN_METHOD, and the same
    connection goes on serving."""
    idl = tmp_path / "probe.thrift"
    idl.write_text(
        "service Probe {\n  void no_such_method()\n  list<string> get_all_databases()\n}\n"
    )
    probe = thriftpy2.load(str(idl), module_name="probe_thrift")
    client = thriftpy2.rpc.make_client(probe.Probe, running.host, running.port)
    try:
        with pytest.raises(TApplicationException) as info:
            client.no_such_method()
        assert info.value.type == TApplicationException.UNKNOWN_METHOD
        assert "default" in client.get_all_databases()
    finally:
        client.close()


def test_fb303_and_session_calls(client, running) -> None:
    assert client.getName()
    assert client.getVersion()
    assert client.getStatus() == 2
    assert client.aliveSince() > 0
    client.shutdown()
    assert client.set_ugi("alice", ["staff"]) == ["staff"]
    warehouse = client.get_config_value("hive.metastore.warehouse.dir", "none")
    assert warehouse == "file:" + str(running.warehouse.absolute())
    assert client.get_config_value("hive.some.unknown.key", "fallback") == "fallback"
    assert client.get_config_value("hive.exec.dynamic.partition.mode", "x") == "strict"
    with pytest.raises(hms.ConfigValSecurityException, match="cannot be accessed"):
        client.get_config_value("fs.defaultFS", "fallback")
    with pytest.raises(hms.ConfigValSecurityException):
        client.get_config_value("hive.metastore.dbaccess.ssl.truststore.password", "x")
    assert "default" in client.get_all_databases()


def test_undeclared_error_becomes_meta_exception(running) -> None:
    """HMS 2.3's get_partition_names declares only MetaException: a missing table's
    NoSuchObjectException reaches a 2.3 client as one (an HMS 3+ client, which declares it,
    gets it as such)."""
    old = thriftpy2.rpc.make_client(hms23.HiveMetastore23Wire, running.host, running.port,
                                    timeout=30000)  # fmt: skip
    try:
        with pytest.raises(hms.MetaException, match="no_such_table table not found"):
            old.get_partition_names("default", "no_such_table", -1)
    finally:
        old.close()


def test_garbage_bytes_close_only_that_connection(running) -> None:
    with socket.create_connection((running.host, running.port), timeout=5) as raw:
        raw.sendall(b"\x00\x00\x00\x10garbage-not-thrift" * 4)
        raw.settimeout(5)
        try:
            data = raw.recv(1024)
        except OSError:
            data = b""
        assert data is not None
    fresh = running.client()
    assert "default" in fresh.get_all_databases()
    fresh.close()


@pytest.mark.parametrize(
    ("framed", "compact"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_other_transports_and_protocols(tmp_path: Path, framed: bool, compact: bool) -> None:
    server = RunningServer(
        tmp_path,
        transport="framed" if framed else "buffered",
        protocol="compact" if compact else "binary",
    )
    try:
        connection = make_client(server.host, server.port, framed=framed, compact=compact)
        create_db(connection, "proto_db")
        table = make_table("proto_db", "t", keys=[("ds", "string")])
        table.sd.skewedInfo = hms.SkewedInfo(
            skewedColNames=["v"],
            skewedColValues=[["1"]],
            skewedColValueLocationMaps={("1",): "file:/x"},
        )
        connection.create_table(table)
        got = connection.get_table("proto_db", "t")
        assert got.sd.skewedInfo.skewedColValueLocationMaps == {("1",): "file:/x"}
        for ds in ("b", "a"):
            connection.add_partition(
                hms.Partition(values=[ds], dbName="proto_db", tableName="t", parameters={})
            )
        listed = connection.get_partitions("proto_db", "t", -1)
        assert [(p.dbName, p.tableName, p.values) for p in listed] == [
            ("proto_db", "t", ["a"]),
            ("proto_db", "t", ["b"]),
        ]
        # A listing of several chunks (streamed under a framed transport), then more calls.
        many = [f"c{i:05d}" for i in range(5000)]
        connection.add_partitions(
            [hms.Partition(values=[v], dbName="proto_db", tableName="t") for v in many]
        )
        listed = connection.get_partitions("proto_db", "t", -1)
        assert [p.values[0] for p in listed] == ["a", "b", *many]
        assert "proto_db" in connection.get_all_databases()
        connection.close()
    finally:
        server.stop()


def test_many_concurrent_clients(running) -> None:
    setup = running.client()
    create_db(setup, "conc")
    setup.create_table(make_table("conc", "t", keys=[("ds", "string"), ("n", "int")]))
    setup.close()
    errors: list[BaseException] = []

    def worker(worker_id: int) -> None:
        try:
            connection = running.client()
            for i in range(20):
                connection.add_partition(make_partition("conc", "t", [f"w{worker_id}", str(i)]))
                connection.get_partitions_by_filter("conc", "t", f'ds = "w{worker_id}"', -1)
            connection.close()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    check = running.client()
    assert len(check.get_partition_names("conc", "t", -1)) == 16 * 20
    assert check.get_num_partitions_by_filter("conc", "t", "n >= 10") == 16 * 10
    check.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_subprocess_serves_then_stops_on_sigterm_and_keeps_data(tmp_path: Path) -> None:
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "metastore_server",
        "serve",
        "--port",
        str(port),
        "--storage",
        f"sqlite:///{tmp_path / 'm.db'}",
        "--warehouse",
        str(tmp_path / "wh"),
    ]
    env = dict(os.environ)

    def start() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return process
            except OSError:
                assert process.poll() is None, process.stderr.read().decode()
                time.sleep(0.1)
        process.kill()
        raise AssertionError("server did not start")

    process = start()
    connection = make_client("127.0.0.1", port)
    create_db(connection, "durable")
    connection.close()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    assert b"listening" in process.stderr.read()
    process = start()
    connection = make_client("127.0.0.1", port)
    assert connection.get_database("durable").name == "durable"
    connection.close()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0


# --------------------------------------------------------------------------- accept loop


def test_connection_thread_that_cannot_start_closes_only_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection whose thread cannot start (the OS refuses a thread) is closed and logged;
    the accept loop keeps accepting."""
    server = RunningServer(tmp_path)
    start = threading.Thread.start
    refused: list[str] = []

    def start_or_refuse_once(thread: threading.Thread) -> None:
        if thread.name.startswith("connection-") and not refused:
            refused.append(thread.name)
            raise RuntimeError("can't start new thread")
        start(thread)

    try:
        with structlog.testing.capture_logs() as logs:
            monkeypatch.setattr(threading.Thread, "start", start_or_refuse_once)
            first = make_client(server.host, server.port, timeout_ms=10000)
            with pytest.raises((TTransportException, ConnectionError)):
                first.get_all_databases()
            first.close()
            assert refused
            second = server.client()
            assert "default" in second.get_all_databases()
            second.close()
        failures = [e for e in logs if e["event"] == "connection_thread_failed"]
        assert len(failures) == 1 and "can't start new thread" in failures[0]["error"]
    finally:
        monkeypatch.undo()
        server.stop()


def test_stop_while_a_connection_thread_is_not_started_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stop() between the accept loop registering a connection's thread and starting it skips
    that thread and still runs to the end (closing the store)."""
    server = RunningServer(tmp_path)
    stopped = threading.Event()
    server.server.on_stopped.append(stopped.set)
    start = threading.Thread.start
    outcome: list[BaseException | None] = []

    def stop_then_start(thread: threading.Thread) -> None:
        if thread.name.startswith("connection-") and not outcome:
            try:
                server.server.stop(timeout=5)
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                outcome.append(exc)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", stop_then_start)
    try:
        with socket.create_connection((server.host, server.port), timeout=10) as sock:
            assert stopped.wait(10), f"stop() did not finish: {outcome}"
            sock.settimeout(10)
            try:
                assert sock.recv(1024) == b""  # the connection is closed, not served
            except ConnectionResetError:
                pass
        assert outcome == [None]
    finally:
        monkeypatch.undo()
        server.stop()
