"""Kerberos authentication (``--auth kerberos``, SASL GSSAPI as HMS's hive.metastore.sasl) against
a real MIT KDC started by the test (``support.kdc``): a client with a ticket for the server's
principal is served and named on the audit line; a client without a ticket, with a ticket of
another realm's principal it cannot use, or speaking plain Thrift, is refused; a keytab for the
wrong principal stops the server at start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kdc import KDC_SKIP_REASON, Kdc
from support.sasl_client import gssapi_client

from metastore_server.server.sasl_gssapi import principal_for
from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer

pytestmark = pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or "")
gssapi = pytest.importorskip("gssapi", reason="python-gssapi is not installed (needs libkrb5-dev)")

SERVICE = "hive/localhost"


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        yield running


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
    kdc.add_principal("alice", password="alice-secret")
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
