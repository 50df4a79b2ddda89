"""Kerberos authentication (``--auth kerberos``, SASL GSSAPI as HMS's hive.metastore.sasl) against
a real MIT KDC started by the test (``support.kdc``): a client with a ticket for the server's
principal is served and named on the audit line; a client without a ticket, with an expired
ticket, with a ticket for another service principal, offering SPNEGO instead of Kerberos, or
speaking plain Thrift, is refused (answered BAD "GSS initiate failed", as HMS answers, the reason
logged) and other clients are served on; a keytab for the wrong principal stops the server at
start."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs
from support.kdc import KDC_SKIP_REASON, Kdc
from support.sasl_client import first_answer, gssapi_client, initiator_context

from metastore_server.server import sasl
from metastore_server.server.sasl_gssapi import principal_for
from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer

pytestmark = [
    pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or ""),
    pytest.mark.any_store,
]
gssapi = pytest.importorskip("gssapi", reason="python-gssapi is not installed (needs libkrb5-dev)")

SERVICE = "hive/localhost"
#: Seconds of clock skew the realm's libraries tolerate (the default, 5 minutes, would keep an
#: expired ticket good that long): all of it runs on one clock.
CLOCKSKEW = 1
BAD = 3
SPNEGO = gssapi.OID.from_int_seq("1.3.6.1.5.5.2")


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    with Kdc(tmp_path_factory.mktemp("kdc"), clockskew=CLOCKSKEW) as running:
        running.add_principal("alice", password="alice-secret")
        yield running


@pytest.fixture()
def refusals(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """The server's log lines, captured (the sasl module's logger made afresh: one made before
    may be cached on an earlier configuration)."""
    with capture_logs() as logs:
        monkeypatch.setattr(sasl, "log", structlog.get_logger(sasl.__name__))
        yield logs


def refusal_reason(logs: list[dict[str, Any]]) -> str:
    """The reason of the latest refusal (the server logs it just after answering, so it may
    come a moment after the client has the answer)."""
    deadline = time.monotonic() + 5
    while True:
        lines = [e for e in logs if e.get("event") == "sasl_refused"]
        if lines or time.monotonic() > deadline:
            assert lines, "no refusal logged"
            return str(lines[-1]["reason"])
        time.sleep(0.01)


def assert_others_served(kdc: Kdc, server: RunningServer, tmp_path: Path) -> None:
    """A client with a good ticket is served."""
    cache = kdc.kinit("alice", password="alice-secret", cache=tmp_path / "cc_alice_again")
    client = gssapi_client(server.host, server.port, str(cache))
    try:
        assert isinstance(client.get_all_databases(), list)
    finally:
        client.close()


@pytest.fixture(scope="module")
def keytab(kdc: Kdc, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's principal and its keytab."""
    kdc.add_principal(SERVICE)
    return kdc.keytab(SERVICE, tmp_path_factory.mktemp("keytab") / "hive.keytab")


@pytest.fixture()
def realm(kdc: Kdc, keytab: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process uses the test realm; the server's keytab."""
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    return keytab


@pytest.fixture()
def server(realm: Path, kdc: Kdc, tmp_path: Path) -> Iterator[RunningServer]:
    running = RunningServer(tmp_path / "server", auth="kerberos", kerberos_keytab=str(realm),
                            kerberos_principal=f"{SERVICE}@{kdc.realm}")  # fmt: skip
    yield running
    running.stop()


def test_a_client_with_a_ticket_is_served_as_its_principal(
    kdc: Kdc, server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = kdc.kinit("alice", password="alice-secret", cache=tmp_path / "cc_alice")
    client = gssapi_client(server.host, server.port, str(cache))
    client.create_database(hms.Database(name="kerb", description="", parameters={}))
    assert "kerb" in client.get_all_databases()
    assert "user=alice" in capsys.readouterr().out


def test_the_servers_principal_names_its_host(kdc: Kdc) -> None:
    assert principal_for("hive/_HOST@R", "Meta.Example.COM") == "hive/meta.example.com@R"
    assert principal_for("hive/fixed@R", "other") == "hive/fixed@R"


def test_a_keytab_without_the_principal_stops_the_server(
    kdc: Kdc, realm: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="no Kerberos keys for hive/elsewhere"):
        RunningServer(tmp_path / "s", auth="kerberos", kerberos_keytab=str(realm),
                      kerberos_principal=f"hive/elsewhere@{kdc.realm}")  # fmt: skip


def test_clients_without_a_usable_ticket_are_refused(
    kdc: Kdc, server: RunningServer, tmp_path: Path
) -> None:
    with pytest.raises(Exception):  # noqa: B017, PT011 - the client library's own error
        gssapi_client(server.host, server.port, str(tmp_path / "no_such_cache"))
    plain = make_client(server.host, server.port)
    with pytest.raises(Exception):  # noqa: B017, PT011 - the connection is closed
        plain.get_all_databases()
    plain.close()


def test_a_client_without_a_ticket_to_show_is_refused(
    kdc: Kdc, server: RunningServer, tmp_path: Path, refusals: list[dict[str, Any]]
) -> None:
    """A client that starts GSSAPI with an empty response (it has no ticket to send)."""
    assert first_answer(server.host, server.port, "GSSAPI", b"") == (BAD, b"GSS initiate failed")
    assert "no Kerberos token" in refusal_reason(refusals)
    assert_others_served(kdc, server, tmp_path)


def test_an_expired_ticket_is_refused(
    kdc: Kdc, server: RunningServer, tmp_path: Path, refusals: list[dict[str, Any]]
) -> None:
    """A token made while the ticket was good, sent once it has expired, is refused by the
    server; the client library, asked then, will not even make one."""
    kdc.add_principal("erin", password="erin-secret", max_life="3 seconds")
    cache = kdc.kinit("erin", password="erin-secret", cache=tmp_path / "cc_erin", lifetime="3s")
    left = gssapi.Credentials(usage="initiate", store={"ccache": f"FILE:{cache}"}).lifetime
    assert left <= 3
    token = bytes(initiator_context(str(cache), "hive", "localhost").step())
    time.sleep(left + CLOCKSKEW + 1.5)  # past the ticket's end and the skew allowed
    assert first_answer(server.host, server.port, "GSSAPI", token) == (BAD, b"GSS initiate failed")
    assert "Ticket expired" in refusal_reason(refusals)
    with pytest.raises(Exception, match="(?i)expired"):  # noqa: PT011 - the library's error
        gssapi_client(server.host, server.port, str(cache))
    assert_others_served(kdc, server, tmp_path)


@pytest.mark.parametrize("service", ["hive/otherhost", "impala/localhost"])
def test_a_ticket_for_another_service_principal_is_refused(
    kdc: Kdc, server: RunningServer, tmp_path: Path, refusals: list[dict[str, Any]], service: str
) -> None:
    """The realm knows the principal, so the client gets a ticket for it; the server, whose
    keytab holds only hive/localhost, cannot read it."""
    kdc.add_principal(service)
    cache = kdc.kinit("alice", password="alice-secret", cache=tmp_path / "cc_alice")
    name, host = service.split("/")
    with pytest.raises(Exception, match="GSS initiate failed"):  # noqa: PT011
        gssapi_client(server.host, server.port, str(cache), service=name, service_host=host)
    assert service in refusal_reason(refusals)
    assert_others_served(kdc, server, tmp_path)


def test_spnego_is_not_kerberos(
    kdc: Kdc, server: RunningServer, tmp_path: Path, refusals: list[dict[str, Any]]
) -> None:
    """SASL GSSAPI is Kerberos V5 only: a SPNEGO token, even wrapping a good ticket, is refused."""
    cache = kdc.kinit("alice", password="alice-secret", cache=tmp_path / "cc_alice")
    context = initiator_context(str(cache), "hive", "localhost", mech=SPNEGO)
    token = bytes(context.step())
    assert first_answer(server.host, server.port, "GSSAPI", token) == (BAD, b"GSS initiate failed")
    refusal_reason(refusals)
    assert_others_served(kdc, server, tmp_path)


@pytest.mark.parametrize(("qop", "layer"), [("auth-int", 2), ("auth-conf", 4)])
def test_integrity_and_privacy_layers(kdc: Kdc, realm: Path, tmp_path: Path, qop: str,
                                      layer: int) -> None:  # fmt: skip
    kdc.add_principal(f"dave{layer}", password="dave-secret")
    cache = kdc.kinit(f"dave{layer}", password="dave-secret", cache=tmp_path / "cc_dave")
    running = RunningServer(tmp_path / "s", auth="kerberos", kerberos_keytab=str(realm),
                            kerberos_principal=f"{SERVICE}@{kdc.realm}", sasl_qop=qop)  # fmt: skip
    try:
        client = gssapi_client(running.host, running.port, str(cache), layer=layer)
        client.create_database(hms.Database(name=f"layer{layer}", description="", parameters={}))
        assert f"layer{layer}" in client.get_all_databases()
        with pytest.raises(Exception):  # noqa: B017, PT011 - a layer the server does not offer
            gssapi_client(running.host, running.port, str(cache), layer=1)
    finally:
        running.stop()
