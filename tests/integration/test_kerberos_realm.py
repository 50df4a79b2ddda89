"""The throw-away Kerberos realm the authentication tests run against (``support.kdc``): a real
MIT KDC on loopback issues tickets for a password and for a keytab, refuses a wrong password,
and a GSSAPI security context is established between a user's ticket and a service's keytab
through python-gssapi (the library the server's Kerberos authentication uses)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kdc import KDC_SKIP_REASON, Kdc

pytestmark = [
    pytest.mark.skipif(KDC_SKIP_REASON is not None, reason=KDC_SKIP_REASON or ""),
    pytest.mark.any_store,
]

SERVICE = "hive/localhost"


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        yield running


def test_tickets_for_a_password_and_a_keytab(kdc: Kdc, tmp_path: Path) -> None:
    kdc.add_principal("alice", password="alice-secret")
    assert kdc.kinit("alice", password="alice-secret").exists()
    with pytest.raises(RuntimeError, match="kinit alice failed"):
        kdc.kinit("alice", password="wrong", cache=tmp_path / "cc_wrong")
    kdc.add_principal("bob/localhost")
    keytab = kdc.keytab("bob/localhost", tmp_path / "bob.keytab")
    assert kdc.kinit("bob/localhost", keytab=keytab).exists()


def test_a_gssapi_context_between_a_user_and_a_service(kdc: Kdc, tmp_path: Path) -> None:
    pytest.importorskip("gssapi", reason="python-gssapi is not installed (needs libkrb5-dev)")
    kdc.add_principal("carol", password="carol-secret")
    cache = kdc.kinit("carol", password="carol-secret", cache=tmp_path / "cc_carol")
    kdc.add_principal(SERVICE)
    keytab = kdc.keytab(SERVICE, tmp_path / "service.keytab")
    script = textwrap.dedent(f"""
        import gssapi
        service = gssapi.Name("hive@localhost", gssapi.NameType.hostbased_service)
        client = gssapi.SecurityContext(name=service, usage="initiate", creds=gssapi.Credentials(
            usage="initiate", store={{"ccache": "FILE:{cache}"}}))
        server = gssapi.SecurityContext(creds=gssapi.Credentials(
            usage="accept", store={{"keytab": "{keytab}"}}))
        token = client.step()
        while not (client.complete and server.complete):
            token = server.step(token)
            if token and not client.complete:
                token = client.step(token)
        print(server.initiator_name, server.target_name)
    """)
    done = subprocess.run([sys.executable, "-c", script], env=kdc.env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    initiator, target = done.stdout.split()
    assert initiator == f"carol@{kdc.realm}"
    assert target.startswith(f"{SERVICE}@")
