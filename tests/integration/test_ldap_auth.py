"""LDAP authentication (``--auth ldap``: SASL PLAIN checked by binding to an LDAP server as the
user, as HMS's hive.metastore.authentication=LDAP) against a real OpenLDAP server started by the
test (``support.ldap_server``), with thriftpy2's SASL client and pure-sasl: good and bad logins,
the group filter, user names that would inject into DNs and filters, a search user, a directory
that is stopped or does not answer, TLS on either side."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs
from support.ldap_server import (
    LDAP_SKIP_REASON,
    PEOPLE,
    READER_DN,
    READER_PASSWORD,
    SUFFIX,
    LdapServer,
)
from support.our_server import OurServer
from support.sasl_client import negotiation_frame, read_frame, sasl_client
from support.tls import make_certificate
from thriftpy2.transport import TTransportException

from metastore_server import audit
from metastore_server.server import sasl
from metastore_server.server.sasl_plain import FAILED
from metastore_server.thrift_api import hms

from .conftest import RunningServer

pytestmark = [
    pytest.mark.skipif(LDAP_SKIP_REASON is not None, reason=LDAP_SKIP_REASON or ""),
    pytest.mark.any_store,
]
pytest.importorskip("ldap3", reason="ldap3 (the ldap extra) is not installed")

START, OK, BAD, COMPLETE = 1, 2, 3, 5
PATTERN = f"uid=%s,{PEOPLE}"
GROUP_PATTERN = f"cn=%s,ou=groups,{SUFFIX}"


@pytest.fixture(autouse=True)
def fresh_loggers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loggers that follow the configuration of the moment (capture_logs must see them)."""
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))
    monkeypatch.setattr(sasl, "log", structlog.get_logger(sasl.__name__))


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LdapServer]:
    with LdapServer(tmp_path_factory.mktemp("slapd")) as running:
        yield running


def _ldap_server(tmp: Path, directory: LdapServer, **settings: object) -> RunningServer:
    """A server with ``--auth ldap`` against ``directory``: users by DN pattern, only members
    of metastore-users, unless ``settings`` say otherwise."""
    base: dict[str, object] = {
        "ldap_url": directory.url,
        "ldap_user_dn_pattern": PATTERN,
        "ldap_group_filter": "metastore-users",
        "ldap_group_dn_pattern": GROUP_PATTERN,
    }
    base.update(settings)
    return RunningServer(tmp, auth="ldap", **base)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, directory: LdapServer
) -> Iterator[RunningServer]:
    running = _ldap_server(tmp_path_factory.mktemp("ldap-server"), directory)
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


def _plain_login(server: RunningServer, user: str, password: str) -> tuple[int, bytes]:
    """The server's answer to a PLAIN login sent as raw frames."""
    message = f"\0{user}\0{password}".encode()
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(negotiation_frame(START, b"PLAIN") + negotiation_frame(OK, message))
        return read_frame(sock)


def _refused(server: RunningServer, user: str, password: str) -> str:
    """The logged reason a login is refused (the client must get PLAIN's usual BAD frame)."""
    with capture_logs() as logs:
        assert _plain_login(server, user, password) == (BAD, FAILED.encode())
        return _wait_for(logs, "sasl_refused")["reason"]


# --------------------------------------------------------------------------- logins


def test_a_directory_user_is_served_and_named_on_the_audit_line(server: RunningServer) -> None:
    with capture_logs() as logs:
        client = sasl_client(server.host, server.port, "alice", "wonderland")
        try:
            client.create_database(hms.Database(name="by_ldap", description="", parameters={}))
            assert "by_ldap" in client.get_all_databases()
        finally:
            client.close()
        line = _wait_for(logs, "sasl_authenticated")
        deadline = time.monotonic() + 5
        while not [e for e in logs if e.get("method") == "get_all_databases"]:
            assert time.monotonic() < deadline, logs
            time.sleep(0.01)
    assert (line["user"], line["mechanism"]) == ("alice", "PLAIN")
    calls = [e for e in logs if e["event"] == "call"]
    assert {e["method"] for e in calls} == {"create_database", "get_all_databases"}
    assert all(e["user"] == "alice" for e in calls)


@pytest.mark.parametrize(
    ("user", "password", "reason"),
    [
        ("alice", "looking-glass", f"'uid=alice,{PEOPLE}' refused: invalidCredentials"),
        ("mallory", "wonderland", f"'uid=mallory,{PEOPLE}' refused: invalidCredentials"),
        ("carol", "carrot", "in none of the groups of ldap_group_filter (metastore-users; "
                            "found: others)"),
    ],
)  # fmt: skip
def test_bad_logins_get_the_password_files_bad_frame_and_the_log_says_why(
    server: RunningServer, user: str, password: str, reason: str
) -> None:
    assert reason in _refused(server, user, password)
    with pytest.raises(TTransportException, match="Error validating the login"):
        sasl_client(server.host, server.port, user, password)


def test_an_empty_password_is_refused_before_any_bind(server: RunningServer) -> None:
    assert "empty user or password" in _refused(server, "alice", "")


def test_a_name_with_a_comma_is_escaped_into_its_own_dn(server: RunningServer) -> None:
    """``x,y`` binds as uid=x\\,y: unescaped, its DN would not even parse."""
    assert _plain_login(server, "x,y", "comma") == (COMPLETE, b"")


@pytest.mark.parametrize(
    ("user", "password"),
    [
        ("*", "star"),  # its entry exists but is in no group: (member=*) must not match all
        ("*", "wonderland"),
        ("alice)(uid=*", "wonderland"),
        (f"alice,{PEOPLE}", "wonderland"),
        ("alice+cn=alice", "wonderland"),
        ("al*", "wonderland"),
    ],
)
def test_injection_attempts_are_refused(server: RunningServer, user: str, password: str) -> None:
    _refused(server, user, password)


# --------------------------------------------------------------------------- other set-ups


def test_a_search_user_finds_users_by_guid_key(tmp_path: Path, directory: LdapServer) -> None:
    """With ldap_bind_dn the user's DN is searched: ``*`` finds only its own entry and
    ``al*`` nobody (unescaped, ``(uid=al*)`` would find alice and log in with her password)."""
    secret = tmp_path / "bind-password"
    secret.write_text(READER_PASSWORD + "\n")
    running = _ldap_server(
        tmp_path / "server", directory, ldap_user_dn_pattern="", ldap_base_dn=SUFFIX,
        ldap_bind_dn=READER_DN, ldap_bind_password_file=str(secret), ldap_group_filter="",
        ldap_group_dn_pattern="",
    )  # fmt: skip
    try:
        for user, password in (("alice", "wonderland"), ("*", "star"), ("x,y", "comma")):
            assert _plain_login(running, user, password) == (COMPLETE, b""), user
        assert "unknown user: no entry matches (uid=al\\2a)" in _refused(
            running, "al*", "wonderland"
        )
        assert "unknown user" in _refused(running, "mallory", "wonderland")
        assert "invalidCredentials" in _refused(running, "alice", "looking-glass")
    finally:
        running.stop()


def test_base_dn_and_guid_key_and_the_user_filter(tmp_path: Path, directory: LdapServer) -> None:
    running = _ldap_server(
        tmp_path / "server", directory, ldap_user_dn_pattern="", ldap_base_dn=PEOPLE,
        ldap_group_filter="", ldap_group_dn_pattern="", ldap_user_filter="bob,carol",
    )  # fmt: skip
    try:
        assert _plain_login(running, "carol", "carrot") == (COMPLETE, b"")
        assert "not in ldap_user_filter" in _refused(running, "alice", "wonderland")
    finally:
        running.stop()


def test_a_stopped_directory_fails_logins_and_spares_connections_already_in(
    tmp_path: Path,
) -> None:
    with LdapServer(tmp_path / "slapd") as directory:
        running = _ldap_server(tmp_path / "server", directory)
        try:
            client = sasl_client(running.host, running.port, "bob", "builder")
            assert "default" in client.get_all_databases()
            directory.stop()
            assert "no LDAP server could be used" in _refused(running, "alice", "wonderland")
            client.create_database(hms.Database(name="still_in", description="", parameters={}))
            assert "still_in" in client.get_all_databases()
            client.close()
        finally:
            running.stop()


def test_a_directory_that_does_not_answer_fails_the_login_within_the_timeout(
    tmp_path: Path,
) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    host, port = silent.getsockname()
    running = RunningServer(tmp_path, auth="ldap", ldap_url=f"ldap://{host}:{port}",
                            ldap_user_dn_pattern=PATTERN, ldap_timeout=1.0)  # fmt: skip
    try:
        reason = _refused(running, "alice", "wonderland")
        assert "no LDAP server could be used" in reason and "timed out" in reason
        with socket.create_connection((running.host, running.port), timeout=10) as sock:
            sock.sendall(negotiation_frame(START, b"GSSAPI"))  # the server still answers
            assert read_frame(sock)[0] == BAD
    finally:
        running.stop()
        silent.close()


def test_the_next_url_is_tried_when_one_cannot_be_reached(
    tmp_path: Path, directory: LdapServer
) -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    nowhere = f"ldap://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    running = _ldap_server(tmp_path, directory, ldap_url=f"{nowhere} {directory.url}")
    try:
        assert _plain_login(running, "alice", "wonderland") == (COMPLETE, b"")
    finally:
        running.stop()


# --------------------------------------------------------------------------- TLS


def test_tls_between_client_and_server_with_ldap(tmp_path: Path, directory: LdapServer) -> None:
    cert, key = make_certificate(tmp_path)
    running = _ldap_server(tmp_path, directory, tls_cert=str(cert), tls_key=str(key))
    try:
        client = sasl_client(running.host, running.port, "alice", "wonderland", tls_ca=str(cert))
        assert "default" in client.get_all_databases()
        client.close()
        with pytest.raises(TTransportException, match="Bad status: 3"):
            sasl_client(running.host, running.port, "alice", "nope", tls_ca=str(cert))
    finally:
        running.stop()


def test_starttls_and_ldaps_to_the_directory_check_its_certificate(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    with LdapServer(tmp_path / "slapd", tls=(cert, key)) as directory:
        trusting = _ldap_server(tmp_path / "trusting", directory, ldap_starttls="on",
                                ldap_ca_file=str(cert))  # fmt: skip
        distrusting = _ldap_server(tmp_path / "distrusting", directory, ldap_starttls="on")
        ldaps = _ldap_server(tmp_path / "ldaps", directory, ldap_url=directory.ldaps_url,
                             ldap_ca_file=str(cert))  # fmt: skip
        try:
            assert _plain_login(trusting, "alice", "wonderland") == (COMPLETE, b"")
            reason = _refused(distrusting, "alice", "wonderland")
            assert "certificate" in reason.lower()
            assert _plain_login(ldaps, "alice", "wonderland") == (COMPLETE, b"")
            assert "invalidCredentials" in _refused(ldaps, "alice", "nope")
        finally:
            trusting.stop()
            distrusting.stop()
            ldaps.stop()


# --------------------------------------------------------------------------- command line


def test_workers_serve_ldap_logins_set_by_environment(
    tmp_path: Path, directory: LdapServer
) -> None:
    """``serve --workers 1 --auth ldap`` with the LDAP settings in METASTORE_LDAP_* variables
    (the workers check the logins)."""
    env = {
        "METASTORE_AUTH": "ldap",
        "METASTORE_LDAP_URL": directory.url,
        "METASTORE_LDAP_USER_DN_PATTERN": f"uid=%s,ou=nowhere,{SUFFIX}:{PATTERN}",
        "METASTORE_LDAP_BASE_DN": SUFFIX,
        "METASTORE_LDAP_GROUP_FILTER": "metastore-users",
        "METASTORE_LDAP_TIMEOUT": "5",
    }
    server = OurServer(tmp_path / "served", env=env, extra_args=["--workers", "1"])
    endpoint = server.start()
    try:
        client = sasl_client(endpoint.host, endpoint.port, "bob", "builder")
        assert "default" in client.get_all_databases()
        client.close()
        with pytest.raises(TTransportException, match="Bad status: 3"):
            sasl_client(endpoint.host, endpoint.port, "carol", "carrot")
    finally:
        server.stop()
