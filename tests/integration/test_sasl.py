"""SASL PLAIN authentication against a password file: real sockets, thriftpy2's SASL client
transport with pure-sasl, TLS underneath, and hostile negotiations."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs
from support.our_server import REPO_ROOT, OurServer
from support.sasl_client import negotiation_frame, read_frame, sasl_client
from support.tls import make_certificate
from thriftpy2.protocol.cybin import ProtocolError
from thriftpy2.protocol.exc import TProtocolException
from thriftpy2.transport import TTransportException

from metastore_server import audit
from metastore_server.cli import main as cli
from metastore_server.server import passwords, sasl
from metastore_server.server.app import build_handler
from metastore_server.server.auth import build_sasl_server
from metastore_server.server.config import ServerConfig
from metastore_server.server.passwords import hash_password
from metastore_server.server.thrift_server import MetastoreServer
from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer, create_db, make_partition, make_table

pytestmark = pytest.mark.any_store

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
#: What a client sees when the server refuses it or closes on it.
REFUSED = (TTransportException, ConnectionError, OSError)


@pytest.fixture(autouse=True)
def fresh_loggers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loggers that follow the configuration of the moment (capture_logs must see them)."""
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))
    monkeypatch.setattr(sasl, "log", structlog.get_logger(sasl.__name__))
    monkeypatch.setattr(passwords, "log", structlog.get_logger(passwords.__name__))


@pytest.fixture(scope="module")
def password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """alice/wonderland and bob/builder."""
    path = tmp_path_factory.mktemp("auth") / "passwords"
    path.write_text(
        "# users of the tests\n"
        f"alice:{hash_password('wonderland')}\n\n"
        f"bob:{hash_password('builder')}\n"
    )
    return path


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, password_file: Path
) -> Iterator[RunningServer]:
    """A server with ``--auth password``."""
    running = RunningServer(
        tmp_path_factory.mktemp("sasl-server"), auth="password", password_file=str(password_file)
    )
    yield running
    running.stop()


def _wait_for(logs: list[dict], event: str, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = [entry for entry in logs if entry["event"] == event]
        if found:
            return found[-1]
        assert time.monotonic() < deadline, f"no {event} logged: {logs}"
        time.sleep(0.01)


def _calls_of(logs: list[dict], user: str | None) -> list[dict]:
    """Audit lines of calls made as ``user`` (None: with no user; an earlier test's calls
    may be logged a moment after it ended, under their own user)."""
    return [e for e in logs if e["event"] == "call" and e.get("user") == user]


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def _closed_yet(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` already (without waiting)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.setblocking(True)


# --------------------------------------------------------------------------- credentials


def test_good_password_serves_calls_and_audit_names_the_user(server: RunningServer) -> None:
    with capture_logs() as logs:
        client = sasl_client(server.host, server.port, "alice", "wonderland")
        try:
            client.create_database(hms.Database(name="by_alice", description="", parameters={}))
            assert "by_alice" in client.get_all_databases()
        finally:
            client.close()
        line = _wait_for(logs, "sasl_authenticated")
        assert (line["user"], line["mechanism"]) == ("alice", "PLAIN")
        deadline = time.monotonic() + 5
        while not [e for e in logs if e.get("method") == "get_all_databases"]:
            assert time.monotonic() < deadline, logs
            time.sleep(0.01)
    calls = [e for e in logs if e["event"] == "call"]
    assert {e["method"] for e in calls} == {"create_database", "get_all_databases"}
    assert all(e["user"] == "alice" for e in calls)


@pytest.mark.parametrize(
    ("user", "password", "reason"),
    [("alice", "looking-glass", "wrong password"), ("mallory", "wonderland", "unknown user")],
)
def test_bad_credentials_get_a_bad_frame_and_no_calls(
    server: RunningServer, user: str, password: str, reason: str
) -> None:
    with capture_logs() as logs:
        with pytest.raises(TTransportException) as info:
            sasl_client(server.host, server.port, user, password)
        refused = _wait_for(logs, "sasl_refused")
    assert "Bad status: 3" in str(info.value)
    assert "Error validating the login" in str(info.value)
    assert reason in refused["reason"]
    assert not _calls_of(logs, None) and not _calls_of(logs, user)


def test_acting_for_another_user_is_refused(server: RunningServer) -> None:
    # No --proxy-user rule: nobody may act for another user (Hadoop's refusal).
    with pytest.raises(TTransportException, match="User: alice is not allowed to impersonate bob"):
        sasl_client(server.host, server.port, "alice", "wonderland", authorization_id="bob")
    client = sasl_client(server.host, server.port, "alice", "wonderland", authorization_id="alice")
    assert "default" in client.get_all_databases()
    client.close()


def test_plain_thrift_client_is_refused(server: RunningServer) -> None:
    with capture_logs() as logs:
        # It reads the ERROR frame as a reply and fails (as against HMS).
        with pytest.raises((*REFUSED, TProtocolException, ProtocolError)):
            plain = make_client(server.host, server.port, timeout_ms=10000)
            try:
                plain.get_all_databases()
            finally:
                plain.close()
        refused = _wait_for(logs, "sasl_refused")
    assert "not a SASL client" in refused["reason"]
    assert not _calls_of(logs, None)


def test_unknown_mechanism_gets_a_bad_frame(server: RunningServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(negotiation_frame(START, b"DIGEST-MD5"))
        status, payload = read_frame(sock)
        assert status == BAD
        assert b"Unsupported mechanism type DIGEST-MD5" in payload
        assert b"PLAIN" in payload
        assert _closed(sock)


def test_plain_without_initial_response_is_asked_once(server: RunningServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(negotiation_frame(START, b"PLAIN") + negotiation_frame(OK, b""))
        assert read_frame(sock) == (OK, b"")
        sock.sendall(negotiation_frame(OK, b"\0bob\0builder"))
        assert read_frame(sock) == (COMPLETE, b"")


def test_password_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "passwords"
    path.write_text(f"alice:{hash_password('one')}\n")
    running = RunningServer(tmp_path, auth="password", password_file=str(path))
    try:
        with pytest.raises(TTransportException):
            sasl_client(running.host, running.port, "carol", "two")
        path.write_text(f"alice:{hash_password('one')}\ncarol:{hash_password('two')}\n")
        client = sasl_client(running.host, running.port, "carol", "two")
        assert "default" in client.get_all_databases()
        client.close()
        with capture_logs() as logs:
            path.write_text("carol:not-a-hash\n")  # a broken file keeps the users we had
            client = sasl_client(running.host, running.port, "carol", "two")
            client.close()
        assert _wait_for(logs, "password_file_unreadable")
    finally:
        running.stop()


def test_limits_still_apply_inside_sasl_frames(tmp_path: Path, password_file: Path) -> None:
    running = RunningServer(
        tmp_path, auth="password", password_file=str(password_file), max_message_size=4096
    )
    try:
        client = sasl_client(running.host, running.port, "bob", "builder")
        big = hms.Database(name="big", description="x" * 20000, parameters={})
        with capture_logs() as logs:
            with pytest.raises(REFUSED):
                client.create_database(big)
            _wait_for(logs, "connection_closed_message_too_large")
        client.close()
        client = sasl_client(running.host, running.port, "bob", "builder")
        assert "big" not in client.get_all_databases()
        client.close()
    finally:
        running.stop()


@pytest.mark.parametrize("transport", ["buffered", "framed"])
def test_partition_listings_through_sasl_frames(
    tmp_path: Path, password_file: Path, transport: str
) -> None:
    """Big answers (stored partition replies, written in chunks) and the framed transport
    inside SASL data frames."""
    running = RunningServer(
        tmp_path, auth="password", password_file=str(password_file), transport=transport
    )
    try:
        client = sasl_client(running.host, running.port, "bob", "builder",
                             framed=transport == "framed")  # fmt: skip
        create_db(client, "sales")
        client.create_table(make_table("sales", "events", keys=[("ds", "string")]))
        parts = [make_partition("sales", "events", [f"2024-01-{d:02d}"]) for d in range(1, 29)]
        assert client.add_partitions(parts) == 28
        listed = client.get_partitions("sales", "events", -1)
        assert sorted(p.values[0] for p in listed) == [f"2024-01-{d:02d}" for d in range(1, 29)]
        filtered = client.get_partitions_by_filter("sales", "events", 'ds >= "2024-01-20"', -1)
        assert len(filtered) == 9
        client.close()
    finally:
        running.stop()


# --------------------------------------------------------------------------- TLS


def test_plain_over_tls(tmp_path: Path, password_file: Path) -> None:
    cert, key = make_certificate(tmp_path)
    running = RunningServer(
        tmp_path, auth="password", password_file=str(password_file),
        tls_cert=str(cert), tls_key=str(key),
    )  # fmt: skip
    try:
        client = sasl_client(running.host, running.port, "alice", "wonderland", tls_ca=str(cert))
        assert "default" in client.get_all_databases()
        client.close()
        with pytest.raises(TTransportException, match="Bad status: 3"):
            sasl_client(running.host, running.port, "alice", "nope", tls_ca=str(cert))
        with pytest.raises(REFUSED):  # SASL without TLS against a TLS server
            sasl_client(running.host, running.port, "alice", "wonderland")
    finally:
        running.stop()


# --------------------------------------------------------------------------- hostile


def test_huge_negotiation_length_is_refused_at_its_header(server: RunningServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(struct.pack(">BI", START, 0xFFFFFFF0))
        status, payload = read_frame(sock)
        assert status == ERROR
        assert b"Invalid payload header length: 4294967280" in payload
        assert _closed(sock)


@pytest.mark.parametrize("first", [b"\x09", b"\x00", b"\xff"])
def test_garbage_status_byte_gets_an_error_frame(server: RunningServer, first: bytes) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(first + b"\x00\x00\x00\x05hello")
        status, payload = read_frame(sock)
        assert status == ERROR
        assert payload == f"Invalid status {first[0]}".encode()
        assert _closed(sock)


def test_status_out_of_turn_and_client_errors_close_the_connection(server: RunningServer) -> None:
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(negotiation_frame(OK, b"PLAIN"))  # no START
        status, payload = read_frame(sock)
        assert (status, payload) == (ERROR, b"Expecting START status, received OK")
        assert _closed(sock)
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(negotiation_frame(START, b"PLAIN") + negotiation_frame(ERROR, b"giving up"))
        assert _closed(sock)  # nothing to answer a client that gave up


def test_stalled_negotiation_holds_up_nobody(tmp_path: Path, password_file: Path) -> None:
    config = ServerConfig(storage=f"sqlite:///{tmp_path / 'm.db'}", warehouse=str(tmp_path / "w"))
    handler, close = build_handler(config)
    sasl_server = build_sasl_server(
        "password", password_file=str(password_file), handshake_timeout=6.0
    )
    server = MetastoreServer(handler, "127.0.0.1", 0, sasl=sasl_server)
    server.start()
    host, port = server.address
    try:
        stalled = [socket.create_connection((host, port), timeout=10) for _ in range(3)]
        stalled[0].sendall(b"\x01\x00")  # half a START header, then nothing
        stalled[1].sendall(negotiation_frame(START, b"PLAIN") + b"\x02\x00\x00\x00\x10ab")
        client = sasl_client(host, port, "alice", "wonderland", timeout_ms=5000)
        assert "default" in client.get_all_databases()
        client.close()
        assert not any(_closed_yet(sock) for sock in stalled)  # served while they stall
        for sock in stalled:  # dropped after the handshake timeout
            assert _closed(sock)
            sock.close()
    finally:
        server.stop()
        close()


# --------------------------------------------------------------------------- settings


def test_auth_settings_are_checked(tmp_path: Path, password_file: Path) -> None:
    with pytest.raises(ValueError, match="auth password needs password_file"):
        ServerConfig(auth="password").validate()
    with pytest.raises(ValueError, match="one of none, password, ldap, kerberos, not .radius."):
        ServerConfig(auth="radius").validate()
    with pytest.raises(ValueError, match="auth kerberos needs kerberos_principal"):
        ServerConfig(auth="kerberos").validate()
    with pytest.raises(ValueError, match="sasl_qop must be auth, auth-int or auth-conf"):
        ServerConfig(sasl_qop="privacy").validate()
    with pytest.raises(ValueError, match="password_file is set but auth is none"):
        ServerConfig(password_file=str(password_file)).validate()
    with pytest.raises(ValueError, match="does not exist"):
        ServerConfig(auth="password", password_file=str(tmp_path / "nope")).validate()
    bad = tmp_path / "bad"
    bad.write_text("alice:plaintext\n")
    with pytest.raises(ValueError, match="line 1: the hash of 'alice' is not an argon2 or bcrypt"):
        ServerConfig(auth="password", password_file=str(bad)).validate()
    bad.write_text(f"alice:{hash_password('a')}\nalice:{hash_password('b')}\n")
    with pytest.raises(ValueError, match="line 2: user 'alice' appears twice"):
        ServerConfig(auth="password", password_file=str(bad)).validate()
    ServerConfig(auth="password", password_file=str(password_file)).validate()


def test_auth_settings_from_environment_and_file(tmp_path: Path) -> None:
    env = {"METASTORE_AUTH": "password", "METASTORE_PASSWORD_FILE": "/etc/hms/passwords"}
    config = ServerConfig.from_env(env)
    assert (config.auth, config.password_file) == ("password", "/etc/hms/passwords")
    file = tmp_path / "m.toml"
    file.write_text('auth = "password"\npassword_file = "/p"\n')
    config = ServerConfig.from_file(file)
    assert (config.auth, config.password_file) == ("password", "/p")


# --------------------------------------------------------------------------- command line


def test_hash_password_command_and_workers_serve_plain(tmp_path: Path) -> None:
    """A password file made with ``hash-password``, served by ``serve --workers 1 --auth
    password`` (the workers authenticate); the audit line in the log names the user."""
    made = subprocess.run(
        [sys.executable, "-m", "metastore_server", "hash-password", "--user", "carol"],
        input=b"s3cret\n", capture_output=True, check=True, cwd=REPO_ROOT,
    )  # fmt: skip
    line = made.stdout.decode().strip()
    assert line.startswith("carol:$argon2id$") and "s3cret" not in line
    password_file = tmp_path / "passwords"
    password_file.write_text(line + "\n")
    server = OurServer(tmp_path / "served", extra_args=[
        "--workers", "1", "--auth", "password", "--password-file", str(password_file),
        "--log-format", "json",
    ])  # fmt: skip
    endpoint = server.start()
    try:
        client = sasl_client(endpoint.host, endpoint.port, "carol", "s3cret")
        assert "default" in client.get_all_databases()
        client.close()
        with pytest.raises(TTransportException, match="Bad status: 3"):
            sasl_client(endpoint.host, endpoint.port, "carol", "wrong")
    finally:
        server.stop()
    rows = server.stderr_path.read_text().splitlines()  # the log goes to stderr
    logged = [json.loads(row) for row in rows if row.startswith("{")]
    calls = [e for e in logged if e.get("event") == "call"]
    assert [e.get("user") for e in calls] == ["carol"]
    assert any(e.get("event") == "sasl_refused" and "wrong password" in e["reason"] for e in logged)


def test_serve_refuses_to_start_without_a_password_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["serve", "--port", "0", "--storage", f"sqlite:///{tmp_path / 'm.db'}"]
    with pytest.raises(SystemExit) as info:
        cli.main([*base, "--auth", "password"])
    assert info.value.code == 2
    assert "auth password needs password_file" in capsys.readouterr().err


def test_connect_and_close_is_no_news(server: RunningServer) -> None:
    """A TCP readiness probe (connect, close) logs nothing above debug."""
    with capture_logs() as logs:
        socket.create_connection((server.host, server.port), timeout=10).close()
        client = sasl_client(server.host, server.port, "bob", "builder")
        client.close()
        _wait_for(logs, "sasl_authenticated")
        time.sleep(0.2)
    assert not [e for e in logs if e["event"] == "sasl_refused" and e["log_level"] != "debug"]
