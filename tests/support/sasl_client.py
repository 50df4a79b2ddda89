"""Real SASL Thrift clients for the tests: the package's own (``metastore_server.sasl_client``:
thriftpy2's TSaslClientTransport with pure-sasl's PLAIN and DIGEST-MD5, or python-gssapi) with the
tests' usual arguments, and raw pieces for hand-made negotiations (a frame's bytes, a bare
GSSAPI initiator context, the server's first answer)."""

from __future__ import annotations

import socket
import struct
from typing import Any

from metastore_server.sasl_client import (
    GssapiSasl,
    PureSasl,
    SaslLogin,
    open_sasl_client,
    sasl_thrift_client,
)

__all__ = [
    "GssapiSasl",
    "first_answer",
    "gssapi_client",
    "initiator_context",
    "negotiation_frame",
    "sasl_client",
    "token_client",
    "token_credentials",
]

#: The layers of --sasl-qop, by RFC 4752's numbers.
_QOPS = {1: "auth", 2: "auth-int", 4: "auth-conf"}


def sasl_client(
    host: str,
    port: int,
    user: str,
    password: str,
    *,
    mechanism: str = "PLAIN",
    tls_ca: str | None = None,
    timeout_ms: int = 10000,
    authorization_id: str | None = None,
    framed: bool = False,
) -> Any:
    """An open ThriftHiveMetastore client authenticated with SASL ``mechanism`` (PLAIN, or
    another of pure-sasl's such as DIGEST-MD5) as ``user`` with ``password``."""
    if mechanism == "PLAIN":
        login = SaslLogin("plain", user, password, authorization_id=authorization_id or "")
        return open_sasl_client(host, port, login, tls_ca=tls_ca, timeout_ms=timeout_ms,
                                framed=framed)  # fmt: skip
    props: dict[str, Any] = {"username": user, "password": password}
    if authorization_id is not None:
        props["authorization_id"] = authorization_id
    adapter = PureSasl(host, mechanism, **props)
    return sasl_thrift_client(host, port, adapter, mechanism, tls_ca=tls_ca,
                              timeout_ms=timeout_ms, framed=framed)  # fmt: skip


def gssapi_client(host: str, port: int, ccache: str, *, service: str = "hive", layer: int = 1,
                  authorization_id: str = "", timeout_ms: int = 10000,
                  service_host: str = "localhost") -> Any:  # fmt: skip
    """An open ThriftHiveMetastore client authenticated with Kerberos (SASL GSSAPI) with the
    ticket in ``ccache``, as ``service@service_host``, asking for the security ``layer``."""
    login = SaslLogin("kerberos", service=service, host=service_host, ccache=ccache,
                      qop=_QOPS[layer], authorization_id=authorization_id)  # fmt: skip
    return open_sasl_client(host, port, login, timeout_ms=timeout_ms)


def negotiation_frame(status: int, payload: bytes) -> bytes:
    """One SASL negotiation frame as a client would send it."""
    return struct.pack(">BI", status, len(payload)) + payload


def initiator_context(ccache: str, service: str, host: str, mech: Any = None) -> Any:
    """A python-gssapi initiator context for ``service@host`` with the ticket in ``ccache``
    (Kerberos V5 unless ``mech`` says otherwise); its first ``step()`` is the first token."""
    import gssapi

    creds = gssapi.Credentials(usage="initiate", store={"ccache": f"FILE:{ccache}"})
    name = gssapi.Name(f"{service}@{host}", gssapi.NameType.hostbased_service)
    flags = gssapi.RequirementFlag
    wanted = [flags.mutual_authentication, flags.integrity, flags.confidentiality]
    return gssapi.SecurityContext(name=name, creds=creds, usage="initiate", flags=wanted,
                                  mech=mech)  # fmt: skip


def first_answer(host: str, port: int, mechanism: str, response: bytes) -> tuple[int, bytes]:
    """(status, payload) of the server's answer to a client that starts ``mechanism`` with
    ``response``, read off a raw socket."""
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(negotiation_frame(1, mechanism.encode()) + negotiation_frame(2, response))
        return read_frame(sock)


def read_exactly(sock: socket.socket, size: int) -> bytes:
    """``size`` bytes off ``sock``; EOFError when it closes first."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError(f"closed after {data!r} ({len(data)} of {size} bytes)")
        data += chunk
    return data


def read_frame(sock: socket.socket) -> tuple[int, bytes]:
    """(status, payload) of one SASL negotiation frame off a raw socket."""
    status, length = struct.unpack(">BI", read_exactly(sock, 5))
    return status, read_exactly(sock, length)


def _vint(data: bytes, pos: int) -> tuple[int, int]:
    """A Hadoop vint (non-negative: a length) at ``pos``: (value, next position)."""
    first = data[pos] - 256 if data[pos] > 127 else data[pos]
    if first >= -112:
        return first, pos + 1
    size = -112 - first
    return int.from_bytes(data[pos + 1 : pos + 1 + size], "big"), pos + 1 + size


def token_credentials(token: str) -> tuple[str, str]:
    """The DIGEST-MD5 user and password of a delegation token's string form, as Hadoop's
    clients make them: the identifier and the password, each in (standard) base64."""
    import base64

    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    size, pos = _vint(raw, 0)
    identifier, pos = raw[pos : pos + size], pos + size
    size, pos = _vint(raw, pos)
    password = raw[pos : pos + size]
    return base64.b64encode(identifier).decode(), base64.b64encode(password).decode()


def token_client(host: str, port: int, token: str, *, timeout_ms: int = 10000) -> Any:
    """An open ThriftHiveMetastore client logged in with a delegation token (SASL DIGEST-MD5)."""
    user, password = token_credentials(token)
    return sasl_client(host, port, user, password, mechanism="DIGEST-MD5", timeout_ms=timeout_ms)
