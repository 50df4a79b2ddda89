"""Proxy users (``proxy_users`` / ``--proxy-user``), as HiveServer2 with doAs and Trino or
Impala with impersonation use them: a service authenticates as itself and acts for end users.

With passwords (SASL PLAIN): a login whose authorization identity names another user is
served as that user when the rules allow it from the client's address, and refused with
Hadoop's message when they do not. With a real MIT KDC: a service principal gets a delegation
token for an end user (the token's real user is the service), a second connection logs in
with it (DIGEST-MD5) and is served as the end user; GSSAPI logins acting for another user
follow the same rules; callers the rules do not name are refused with HMS's message."""

from __future__ import annotations

import base64
import os
import pwd
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kdc import KDC_SKIP_REASON, Kdc
from support.sasl_client import gssapi_client, sasl_client, token_client
from thriftpy2.transport import TTransportException

from metastore_server.api.authorization.callers import os_groups
from metastore_server.server.passwords import hash_password
from metastore_server.thrift_api import hms

from .conftest import RunningServer

#: The user running the tests and one of its operating system groups.
ME = pwd.getpwuid(os.getuid()).pw_name
MY_GROUP = os_groups(ME)[0]
PASSWORDS = {"hive": "hive-secret", "alice": "wonderland", "ops": "ops-secret",
             "remote": "far-away"}  # fmt: skip
RULES = {
    "hive": {"users": ["alice", "bob"], "hosts": ["127.0.0.1"]},
    "ops": {"groups": [MY_GROUP], "hosts": ["localhost"]},
    "remote": {"users": ["*"], "hosts": ["10.0.0.0/8"]},
}
kerberos_only = pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or "")


def database(name: str) -> hms.Database:
    return hms.Database(name=name, description="", parameters={})


def audit_line(out: str, method: str) -> str:
    """The last audit line of a call of ``method``."""
    lines = [line for line in out.splitlines() if f"method={method} " in line]
    assert lines, f"no audit line of {method}"
    return lines[-1]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp("proxy-plain")
    path = folder / "passwords"
    path.write_text("".join(f"{u}:{hash_password(p)}\n" for u, p in PASSWORDS.items()))
    running = RunningServer(folder, auth="password", password_file=str(path), proxy_users=RULES)
    yield running
    running.stop()


def login(server: RunningServer, user: str, acting: str):  # noqa: ANN201 - thriftpy2 client
    return sasl_client(server.host, server.port, user, PASSWORDS[user], authorization_id=acting)


def test_a_service_acts_for_a_user(plain: RunningServer, capsys: pytest.CaptureFixture) -> None:
    client = login(plain, "hive", "alice")
    try:
        client.create_database(database("made_for_alice"))
        assert client.get_database("made_for_alice").ownerName == "alice"
    finally:
        client.close()
    line = audit_line(capsys.readouterr().out, "create_database")
    assert re.search(r"\buser=alice\b", line) and re.search(r"\breal_user=hive\b", line)


def test_users_not_named_are_refused(plain: RunningServer) -> None:
    with pytest.raises(TTransportException, match="User: hive is not allowed to impersonate ops"):
        login(plain, "hive", "ops")
    # A user without a rule may act for nobody, whatever its password.
    with pytest.raises(TTransportException, match="User: alice is not allowed to impersonate hive"):
        login(plain, "alice", "hive")
    with pytest.raises(TTransportException, match="Error validating the login"):
        sasl_client(plain.host, plain.port, "hive", "wrong", authorization_id="alice")


def test_members_of_a_group_by_the_operating_system(plain: RunningServer) -> None:
    client = login(plain, "ops", ME)
    try:
        client.create_database(database("made_by_ops"))
        assert client.get_database("made_by_ops").ownerName == ME
    finally:
        client.close()
    with pytest.raises(TTransportException, match="User: ops is not allowed to impersonate alice"):
        login(plain, "ops", "alice")


def test_hosts_not_named_are_refused(plain: RunningServer) -> None:
    expected = "Unauthorized connection for super-user: remote from IP 127.0.0.1"
    with pytest.raises(TTransportException, match=expected):
        login(plain, "remote", "alice")


# -- Kerberos and delegation tokens ------------------------------------------------------------

SERVICE = "hive/localhost"
CLIENTS = ("hive/etl.example.com", "bob")  # a service principal (short name hive) and a user


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        yield running


@pytest.fixture(scope="module")
def caches(kdc: Kdc, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The server's keytab and the tickets of the service (from its keytab, as a service
    logs in) and of bob (a user the rules do not name)."""
    folder = tmp_path_factory.mktemp("kerberos")
    found = {}
    for name in (SERVICE, CLIENTS[0]):
        kdc.add_principal(name)
        found[name] = kdc.keytab(name, folder / f"{name.replace('/', '_')}.keytab")
    found["hive"] = kdc.kinit(CLIENTS[0], keytab=found[CLIENTS[0]], cache=folder / "cc_hive")
    kdc.add_principal("bob", password="bob-secret")
    found["bob"] = kdc.kinit("bob", password="bob-secret", cache=folder / "cc_bob")
    return found


@pytest.fixture()
def start(kdc: Kdc, caches: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """Starts Kerberos servers with proxy-user rules (stopped at the test's end)."""
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    started: list[RunningServer] = []

    def make(rules: dict[str, dict[str, object]], name: str = "server") -> RunningServer:
        running = RunningServer(tmp_path / name, auth="kerberos", proxy_users=rules,
                                kerberos_keytab=str(caches[SERVICE]),
                                kerberos_principal=f"{SERVICE}@{kdc.realm}")  # fmt: skip
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()


def kerberos(server: RunningServer, caches: dict[str, Path], user: str, acting: str = ""):  # noqa: ANN201
    return gssapi_client(server.host, server.port, str(caches[user]), authorization_id=acting)


@kerberos_only
def test_a_service_gets_a_token_for_a_user(
    start, caches: dict[str, Path], capsys: pytest.CaptureFixture
) -> None:  # noqa: ANN001
    server = start({"hive": {"users": ["alice"], "hosts": ["127.0.0.1"]}})
    service = kerberos(server, caches, "hive")
    token = service.get_delegation_token("alice", "hive/etl.example.com@METASTORE.TEST")
    assert identifier_texts(token) == ("alice", "hive", "hive")  # owner, renewer, real user
    job = token_client(server.host, server.port, token)
    job.create_database(database("for_alice_by_token"))
    assert job.get_database("for_alice_by_token").ownerName == "alice"
    line = audit_line(capsys.readouterr().out, "create_database")
    assert re.search(r"\buser=alice\b", line) and re.search(r"\breal_user=hive\b", line)
    # The service renews the token it holds as renewer, and may cancel it.
    assert service.renew_delegation_token(token) > 0
    service.cancel_delegation_token(token)


@kerberos_only
def test_callers_the_rules_do_not_allow_are_refused(start, caches: dict[str, Path]) -> None:  # noqa: ANN001
    server = start({"hive": {"users": ["alice"], "hosts": ["127.0.0.1"]}})
    bob, service = kerberos(server, caches, "bob"), kerberos(server, caches, "hive")
    with pytest.raises(hms.MetaException, match="User: bob is not allowed to impersonate alice'"):
        bob.get_delegation_token("alice", "bob")
    with pytest.raises(hms.MetaException, match="User: hive is not allowed to impersonate carol'"):
        service.get_delegation_token("carol@METASTORE.TEST", "hive")
    far = start({"hive": {"users": ["alice"], "hosts": ["10.0.0.0/8"]}}, name="far")
    expected = "Unauthorized connection for super-user: hive from IP 127.0.0.1'"
    with pytest.raises(hms.MetaException, match=expected):
        kerberos(far, caches, "hive").get_delegation_token("alice", "hive")


@kerberos_only
def test_a_kerberos_login_acting_for_a_user(start, caches: dict[str, Path]) -> None:  # noqa: ANN001
    server = start({"hive": {"users": ["alice"], "hosts": ["localhost"]}})
    as_alice = kerberos(server, caches, "hive", acting="alice")
    as_alice.create_database(database("alice_via_gssapi"))
    assert as_alice.get_database("alice_via_gssapi").ownerName == "alice"
    with pytest.raises(TTransportException, match="User: bob is not allowed to impersonate alice"):
        kerberos(server, caches, "bob", acting="alice")


def identifier_texts(token: str) -> tuple[str, ...]:
    """(owner, renewer, real user) read off a token string with Hadoop's layout: the
    identifier (a 1-byte length when short), a version byte, then three length-prefixed
    texts."""
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    ident = raw[1 : 1 + raw[0]]
    pos, texts = 1, []
    for _ in range(3):
        texts.append(ident[pos + 1 : pos + 1 + ident[pos]].decode())
        pos += 1 + ident[pos]
    return tuple(texts)
