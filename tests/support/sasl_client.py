"""A real SASL Thrift client: thriftpy2's TSaslClientTransport driven by pure-sasl."""

from __future__ import annotations

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
