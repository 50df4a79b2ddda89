"""A real SASL Thrift client: thriftpy2's TSaslClientTransport driven by pure-sasl."""

from __future__ import annotations

import socket
import ssl
import struct
from typing import Any

from puresasl.client import SASLClient
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket, TSSLSocket
from thriftpy2.transport.framed import TFramedTransport
from thriftpy2.transport.sasl import TSaslClientTransport

from metastore_server.thrift_api import hms


class PureSaslAdapter:
    """The client interface TSaslClientTransport expects (python-sasl's), over pure-sasl."""

    def __init__(self, host: str, mechanism: str, **props: Any) -> None:
        self._client = SASLClient(host, service="hive", mechanism=mechanism, **props)
        self._error: str | None = None

    def start(self, mechanism: str) -> tuple[bool, str, bytes]:
        """(ok, chosen mechanism, initial response)."""
        try:
            return True, mechanism, self._client.process() or b""
        except Exception as exc:  # noqa: BLE001 - reported through getError, as python-sasl
            self._error = str(exc)
            return False, mechanism, b""

    def step(self, challenge: bytes) -> tuple[bool, bytes]:
        """(ok, response) to a challenge."""
        try:
            return True, self._client.process(challenge) or b""
        except Exception as exc:  # noqa: BLE001
            self._error = str(exc)
            return False, b""

    def encode(self, data: bytes) -> tuple[bool, bytes]:
        """PLAIN has no security layer: data goes as it is."""
        return True, self._client.wrap(data)

    def decode(self, data: bytes) -> tuple[bool, bytes]:
        """The data of a wrapped frame."""
        return True, self._client.unwrap(data)

    def getError(self) -> str | None:  # noqa: N802 - the name TSaslClientTransport calls
        """The last error."""
        return self._error


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
    """An open ThriftHiveMetastore client authenticated with SASL ``mechanism``."""
    if tls_ca:
        context = ssl.create_default_context(cafile=tls_ca)
        sock: Any = TSSLSocket(host, port, ssl_context=context, socket_timeout=timeout_ms,
                               connect_timeout=timeout_ms)  # fmt: skip
    else:
        sock = TSocket(host, port, socket_timeout=timeout_ms, connect_timeout=timeout_ms)
    props: dict[str, Any] = {"username": user, "password": password}
    if authorization_id is not None:
        props["authorization_id"] = authorization_id
    transport = TSaslClientTransport(
        lambda: PureSaslAdapter(host, mechanism, **props), mechanism, sock
    )
    transport.open()
    outer: Any = TFramedTransport(transport) if framed else transport
    return TClient(hms.ThriftHiveMetastore, TBinaryProtocol(outer))


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
        header = _read(sock, 5)
        status, length = struct.unpack(">BI", header)
        return status, _read(sock, length)


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return data


class GssapiClient:
    """The client side of SASL GSSAPI (RFC 4752) over python-gssapi, in the interface
    TSaslClientTransport expects: a ticket from ``ccache`` for ``service@host``, then the
    security layer ``layer`` (1: none, 2: integrity, 4: privacy) out of what the server offers."""

    def __init__(self, ccache: str, service: str, host: str, layer: int = 1,
                 authorization_id: str = "") -> None:  # fmt: skip
        self._context = initiator_context(ccache, service, host)
        self._layer = layer
        self._authorization_id = authorization_id
        self._error: str | None = None

    def start(self, mechanism: str) -> tuple[bool, str, bytes]:
        try:
            return True, mechanism, bytes(self._context.step() or b"")
        except Exception as exc:  # noqa: BLE001 - reported through getError
            self._error = str(exc)
            return False, mechanism, b""

    def step(self, challenge: bytes) -> tuple[bool, bytes]:
        try:
            if not self._context.complete:
                return True, bytes(self._context.step(challenge) or b"")
            offer = bytes(self._context.unwrap(challenge).message)
            if not offer[0] & self._layer:
                raise ValueError(f"the server offers layers {offer[0]}, not {self._layer}")
            answer = bytes([self._layer]) + b"\xff\xff\xff" + self._authorization_id.encode()
            return True, bytes(self._context.wrap(answer, False).message)
        except Exception as exc:  # noqa: BLE001
            self._error = str(exc)
            return False, b""

    def encode(self, data: bytes) -> tuple[bool, bytes]:
        if self._layer == 1:
            return True, data
        wrapped = bytes(self._context.wrap(data, self._layer == 4).message)
        return True, struct.pack(">I", len(wrapped)) + wrapped  # (the transport wants the header)

    def decode(self, data: bytes) -> tuple[bool, bytes]:
        if self._layer == 1:
            return True, data
        return True, bytes(self._context.unwrap(data[4:]).message)  # (after the header)

    def getError(self) -> str | None:  # noqa: N802 - the name TSaslClientTransport calls
        return self._error


def gssapi_client(host: str, port: int, ccache: str, *, service: str = "hive", layer: int = 1,
                  authorization_id: str = "", timeout_ms: int = 10000,
                  service_host: str = "localhost") -> Any:  # fmt: skip
    """An open ThriftHiveMetastore client authenticated with Kerberos (SASL GSSAPI) as
    ``service@service_host``."""
    sock = TSocket(host, port, socket_timeout=timeout_ms, connect_timeout=timeout_ms)
    transport = TSaslClientTransport(
        lambda: GssapiClient(ccache, service, service_host, layer, authorization_id),
        "GSSAPI",
        sock,
    )
    transport.open()
    return TClient(hms.ThriftHiveMetastore, TBinaryProtocol(transport))


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
