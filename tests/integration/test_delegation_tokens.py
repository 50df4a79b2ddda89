"""Delegation tokens (``--auth kerberos``) against a real MIT KDC started by the test: a
Kerberos client gets a token; a second connection logs in with it over SASL DIGEST-MD5
(pure-sasl's client) and is served as the token's owner; the token is renewed and cancelled,
after which it no longer logs in; forged tokens, token connections asking for tokens, other
owners and other renewers are refused with HMS's messages; a second server on the same store
takes the first one's tokens."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kdc import KDC_SKIP_REASON, REALM, Kdc
from support.sasl_client import gssapi_client, token_client
from thriftpy2.transport import TTransportException

from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer

pytestmark = pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or "")
gssapi = pytest.importorskip("gssapi", reason="python-gssapi is not installed (needs libkrb5-dev)")

SERVICE = "hive/localhost"
#: What a login with a cancelled (or expired, or unknown) token is told.
GONE = "the delegation token is expired, cancelled or unknown"
RENEW_S = 3600.0
MAX_S = 7200.0


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        yield running


@pytest.fixture(scope="module")
def caches(kdc: Kdc, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The server's keytab (``hive``) and the tickets of alice and bob."""
    kdc.add_principal(SERVICE)
    folder = tmp_path_factory.mktemp("kerberos")
    found = {"hive": kdc.keytab(SERVICE, folder / "hive.keytab")}
    for user in ("alice", "bob"):
        kdc.add_principal(user, password=f"{user}-secret")
        found[user] = kdc.kinit(user, password=f"{user}-secret", cache=folder / f"cc_{user}")
    return found


@pytest.fixture()
def start(
    kdc: Kdc, caches: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[object]:
    """Starts Kerberos servers (stopped at the test's end)."""
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    started: list[RunningServer] = []

    def make(name: str = "server", **config: object) -> RunningServer:
        running = RunningServer(
            tmp_path / name, auth="kerberos", kerberos_keytab=str(caches["hive"]),
            kerberos_principal=f"{SERVICE}@{kdc.realm}",
            delegation_token_renew_interval=RENEW_S, delegation_token_max_lifetime=MAX_S,
            **config,
        )  # fmt: skip
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()


@pytest.fixture()
def server(start) -> RunningServer:  # noqa: ANN001 - the factory above
    return start()


def kerberos(server: RunningServer, caches: dict[str, Path], user: str):  # noqa: ANN201
    return gssapi_client(server.host, server.port, str(caches[user]))


def identifier_fields(token: str) -> tuple[str, str, int, int]:
    """(owner, renewer, issue date, max date) read off a token string with Hadoop's layout."""
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    ident = raw[1 : 1 + raw[0]]  # (an identifier shorter than 128 bytes: a 1-byte length)
    pos, texts = 1, []
    for _ in range(3):
        texts.append(ident[pos + 1 : pos + 1 + ident[pos]].decode())
        pos += 1 + ident[pos]
    dates = []
    for _ in range(2):
        size = -112 - (ident[pos] - 256)  # positive vlongs of several bytes
        dates.append(int.from_bytes(ident[pos + 1 : pos + 1 + size], "big"))
        pos += 1 + size
    return texts[0], texts[1], dates[0], dates[1]


def test_a_token_logs_in_as_its_owner(
    server: RunningServer, caches: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    alice = kerberos(server, caches, "alice")
    token = alice.get_delegation_token("alice", f"alice@{REALM}")
    owner, renewer, issued, maximum = identifier_fields(token)
    assert (owner, renewer) == ("alice", "alice")
    assert maximum - issued == MAX_S * 1000
    job = token_client(server.host, server.port, token)
    job.create_database(hms.Database(name="from_token", description="", parameters={}))
    assert job.get_database("from_token").ownerName == "alice"
    out = capsys.readouterr().out
    assert "mechanism=DIGEST-MD5" in out and "user=alice" in out


def test_renewed_then_cancelled(server: RunningServer, caches: dict[str, Path]) -> None:
    alice = kerberos(server, caches, "alice")
    token = alice.get_delegation_token("alice", "alice")
    _owner, _renewer, issued, maximum = identifier_fields(token)
    renewed = alice.renew_delegation_token(token)
    assert issued + RENEW_S * 1000 <= renewed <= maximum
    token_client(server.host, server.port, token).get_all_databases()  # still good
    alice.cancel_delegation_token(token)
    with pytest.raises(TTransportException, match=GONE):
        token_client(server.host, server.port, token)
    with pytest.raises(hms.MetaException, match="token expired or does not exist"):
        alice.renew_delegation_token(token)
    with pytest.raises(hms.MetaException, match=r"Token not found \(HIVE_DELEGATION_TOKEN"):
        alice.cancel_delegation_token(token)


def test_a_forged_token_is_refused(server: RunningServer, caches: dict[str, Path]) -> None:
    alice = kerberos(server, caches, "alice")
    token = alice.get_delegation_token("alice", "alice")
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    at = 1 + raw[0] + 1  # the password's first byte
    raw[at] ^= 0xFF
    forged = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(TTransportException, match="wrong password for the delegation token"):
        token_client(server.host, server.port, forged)
    with pytest.raises(hms.MetaException, match="alice is trying to renew a token .* with wrong"):
        alice.renew_delegation_token(forged)
    with pytest.raises(hms.MetaException, match="not a delegation token"):
        alice.renew_delegation_token("not-a-token")


def test_a_token_connection_gets_no_token(server: RunningServer, caches: dict[str, Path]) -> None:
    token = kerberos(server, caches, "alice").get_delegation_token("alice", "alice")
    job = token_client(server.host, server.port, token)
    expected = (
        r"Delegation Token can be issued only with kerberos authentication\. "
        r"Current AuthenticationMethod: TOKEN'"
    )
    with pytest.raises(hms.MetaException, match=expected):
        job.get_delegation_token("alice", "alice")
    with pytest.raises(hms.MetaException, match=expected):
        job.renew_delegation_token(token)
    job.cancel_delegation_token(token)  # the owner may cancel from a token login
    with pytest.raises(TTransportException, match=GONE):
        token_client(server.host, server.port, token)


def test_only_the_owner_and_renewer(server: RunningServer, caches: dict[str, Path]) -> None:
    alice, bob = kerberos(server, caches, "alice"), kerberos(server, caches, "bob")
    with pytest.raises(hms.MetaException, match="User: alice is not allowed to impersonate bob'"):
        alice.get_delegation_token("bob", "alice")
    token = alice.get_delegation_token("alice@METASTORE.TEST", "alice")
    with pytest.raises(hms.MetaException, match=r"bob tries to renew a token \(.*\) with "
                       r"non-matching renewer alice'"):  # fmt: skip
        bob.renew_delegation_token(token)
    with pytest.raises(hms.MetaException, match="bob is not authorized to cancel the token"):
        bob.cancel_delegation_token(token)
    for_bob = alice.get_delegation_token("alice", "bob/etl.example.com@METASTORE.TEST")
    assert bob.renew_delegation_token(for_bob) > 0
    bob.cancel_delegation_token(for_bob)


def test_a_second_server_on_the_same_store_takes_the_token(
    start,
    caches: dict[str, Path],  # noqa: ANN001
) -> None:
    first = start("one")
    second = start("two", storage=first.config.storage)
    token = kerberos(first, caches, "alice").get_delegation_token("alice", "alice")
    assert token_client(second.host, second.port, token).get_all_databases() is not None
    assert kerberos(second, caches, "alice").renew_delegation_token(token) > 0
    kerberos(second, caches, "alice").cancel_delegation_token(token)
    with pytest.raises(TTransportException, match=GONE):
        token_client(first.host, first.port, token)


def test_a_server_without_kerberos_issues_no_tokens(tmp_path: Path) -> None:
    running = RunningServer(tmp_path / "plain")
    try:
        client = make_client(running.host, running.port)
        client.set_ugi("alice", [])
        with pytest.raises(hms.MetaException, match="Current AuthenticationMethod: SIMPLE'"):
            client.get_delegation_token("alice", "alice")
        with pytest.raises(hms.MetaException, match="Current AuthenticationMethod: SIMPLE'"):
            client.cancel_delegation_token("x")
        client.close()
    finally:
        running.stop()
