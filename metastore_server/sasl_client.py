"""The client side of SASL for Thrift connections to a metastore that authenticates clients
(``serve --auth password`` or ``--auth kerberos``; an HMS with SASL), over thriftpy2's
``TSaslClientTransport``:

- PLAIN (user and password, RFC 4616) with pure-sasl; use it over TLS, as PLAIN sends the
  password as it is;
- GSSAPI (Kerberos, RFC 4752) with python-gssapi (the ``kerberos`` extra): a ticket from the
  process's credentials cache (``KRB5CCNAME``, or the one ``kinit`` fills) or a given one, for
  the service principal ``service/host`` (HMS's ``hive/_HOST``), then the security layer: the
  one asked for (``auth``, ``auth-int``, ``auth-conf``) or, by default, the strongest the server
  offers.

:class:`SaslLogin` says how to log in; :func:`open_sasl_client` opens a ThriftHiveMetastore
client with it. Both adapters have the interface ``TSaslClientTransport`` expects (that of
python-sasl's client: ``start``, ``step``, ``encode``, ``decode``, ``getError``).
"""

from __future__ import annotations

import ssl
import struct
from dataclasses import dataclass
from typing import Any

from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket, TSSLSocket
from thriftpy2.transport.framed import TFramedTransport
from thriftpy2.transport.sasl import TSaslClientTransport

from metastore_server.thrift_api import binary_protocol_factory, hms

__all__ = [
    "MECHANISMS",
    "QOP_LAYERS",
    "GssapiSasl",
    "PureSasl",
    "SaslLogin",
    "open_sasl_client",
    "sasl_thrift_client",
]

#: The mechanisms a client can log in with, by the name the options use.
MECHANISMS = {"plain": "PLAIN", "kerberos": "GSSAPI"}
#: RFC 4752's security layers by their QOP names: none, integrity, privacy.
QOP_LAYERS = {"auth": 1, "auth-int": 2, "auth-conf": 4}
#: The largest wrapped message this client takes (a 3-byte field).
_MAX_BUFFER = 0xFFFFFF


class PureSasl:
    """A pure-sasl mechanism (PLAIN; DIGEST-MD5 for delegation tokens) for
    ``TSaslClientTransport``."""

    def __init__(self, host: str, mechanism: str = "PLAIN", service: str = "hive",
                 **props: Any) -> None:  # fmt: skip
        from puresasl.client import SASLClient

        self._client = SASLClient(host, service=service, mechanism=mechanism, **props)
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
        """The data of a frame."""
        return True, self._client.unwrap(data)

    def getError(self) -> str | None:  # noqa: N802 - the name TSaslClientTransport calls
        """The last error."""
        return self._error


class GssapiSasl:
    """GSSAPI over python-gssapi for ``TSaslClientTransport``: a ticket for ``service@host``
    from ``ccache`` (a file; None: the process's default cache), then the security layer
    ``layer`` (1, 2 or 4; None: the strongest the server offers)."""

    def __init__(self, service: str, host: str, *, ccache: str | None = None,
                 layer: int | None = None, authorization_id: str = "") -> None:  # fmt: skip
        try:
            import gssapi
        except ImportError:
            raise ValueError(
                "Kerberos needs python-gssapi (the kerberos extra; it builds against MIT "
                "Kerberos, Debian's libkrb5-dev)"
            ) from None
        store: dict[bytes | str, bytes | str] | None = (
            {"ccache": ccache if ":" in ccache else f"FILE:{ccache}"} if ccache else None
        )
        creds = gssapi.Credentials(usage="initiate", store=store) if store else None
        name = gssapi.Name(f"{service}@{host}", gssapi.NameType.hostbased_service)
        flags = gssapi.RequirementFlag
        wanted = flags.mutual_authentication | flags.integrity | flags.confidentiality
        self._context = gssapi.SecurityContext(name=name, creds=creds, usage="initiate",
                                               flags=wanted)  # fmt: skip
        self.layer = layer
        self._authorization_id = authorization_id
        self._error: str | None = None

    @property
    def context(self) -> Any:
        """The GSSAPI security context."""
        return self._context

    def start(self, mechanism: str) -> tuple[bool, str, bytes]:
        """(ok, chosen mechanism, the first context token)."""
        try:
            return True, mechanism, bytes(self._context.step() or b"")
        except Exception as exc:  # noqa: BLE001 - reported through getError
            self._error = str(exc)
            return False, mechanism, b""

    def step(self, challenge: bytes) -> tuple[bool, bytes]:
        """(ok, response): the next context token, then the answer to the layer offer."""
        try:
            if not self._context.complete:
                return True, bytes(self._context.step(challenge) or b"")
            offer = bytes(self._context.unwrap(challenge).message)
            self.layer = self._choose(offer[0])
            answer = bytes([self.layer]) + _MAX_BUFFER.to_bytes(3, "big")
            answer += self._authorization_id.encode("utf-8")
            return True, bytes(self._context.wrap(answer, False).message)
        except Exception as exc:  # noqa: BLE001
            self._error = str(exc)
            return False, b""

    def _choose(self, offered: int) -> int:
        if self.layer is None:
            for layer in (4, 2, 1):
                if offered & layer:
                    return layer
        elif offered & self.layer:
            return self.layer
        names = [qop for qop, bit in QOP_LAYERS.items() if offered & bit]
        raise ValueError(f"the server offers QOP {', '.join(names) or 'none'}, not the one asked")

    def encode(self, data: bytes) -> tuple[bool, bytes]:
        """A data frame's payload (with its length header when wrapped: the transport's way)."""
        if self.layer in (None, 1):
            return True, data
        wrapped = bytes(self._context.wrap(data, self.layer == 4).message)
        return True, struct.pack(">I", len(wrapped)) + wrapped

    def decode(self, data: bytes) -> tuple[bool, bytes]:
        """The data of a frame (its length header first when wrapped)."""
        if self.layer in (None, 1):
            return True, data
        try:
            return True, bytes(self._context.unwrap(data[4:]).message)
        except Exception as exc:  # noqa: BLE001
            self._error = str(exc)
            return False, b""

    def getError(self) -> str | None:  # noqa: N802 - the name TSaslClientTransport calls
        """The last error."""
        return self._error


@dataclass(frozen=True)
class SaslLogin:
    """How to log in: ``mechanism`` "plain" (``user``, ``password``) or "kerberos" (a ticket
    for ``service``/``host``, host defaulting to the server's; ``ccache``; ``qop``)."""

    mechanism: str
    user: str = ""
    password: str = ""
    service: str = "hive"
    host: str | None = None
    ccache: str | None = None
    qop: str | None = None
    authorization_id: str = ""

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"auth must be one of none, {', '.join(MECHANISMS)}, not "
                             f"{self.mechanism!r}")  # fmt: skip
        if self.mechanism == "plain" and (not self.user or not self.password):
            raise ValueError("auth plain needs a user and a password")
        if self.qop is not None and self.qop not in QOP_LAYERS:
            raise ValueError(f"qop must be auth, auth-int or auth-conf, not {self.qop!r}")

    def adapter(self, server_host: str) -> PureSasl | GssapiSasl:
        """A new SASL client for one connection to ``server_host``."""
        if self.mechanism == "plain":
            props: dict[str, Any] = {"username": self.user, "password": self.password}
            if self.authorization_id:
                props["authorization_id"] = self.authorization_id
            return PureSasl(server_host, **props)
        layer = QOP_LAYERS[self.qop] if self.qop else None
        return GssapiSasl(self.service, self.host or server_host, ccache=self.ccache,
                          layer=layer, authorization_id=self.authorization_id)  # fmt: skip


def open_sasl_client(host: str, port: int, login: SaslLogin, *, tls_ca: str | None = None,
                     timeout_ms: int = 30000, framed: bool = False) -> TClient:  # fmt: skip
    """An open ThriftHiveMetastore client logged in with ``login`` (over TLS verified against
    ``tls_ca`` when given); raises thriftpy2's TTransportException when the login is refused."""
    adapter = login.adapter(host)  # made first: a missing library fails before connecting
    return sasl_thrift_client(host, port, adapter, MECHANISMS[login.mechanism], tls_ca=tls_ca,
                              timeout_ms=timeout_ms, framed=framed)  # fmt: skip


def sasl_thrift_client(host: str, port: int, adapter: Any, mechanism: str, *,
                       tls_ca: str | None = None, timeout_ms: int = 30000,
                       framed: bool = False) -> TClient:  # fmt: skip
    """An open ThriftHiveMetastore client logged in with ``mechanism`` driven by ``adapter``
    (a :class:`PureSasl` or :class:`GssapiSasl`, used for this one connection)."""
    if tls_ca:
        context = ssl.create_default_context(cafile=tls_ca)
        sock: Any = TSSLSocket(host, port, ssl_context=context, socket_timeout=timeout_ms,
                               connect_timeout=timeout_ms)  # fmt: skip
    else:
        sock = TSocket(host, port, socket_timeout=timeout_ms, connect_timeout=timeout_ms)
    transport = TSaslClientTransport(lambda: adapter, mechanism, sock)
    try:
        transport.open()
    except BaseException:
        transport.close()
        raise
    outer: Any = TFramedTransport(transport) if framed else transport
    return TClient(hms.ThriftHiveMetastore, binary_protocol_factory().get_protocol(outer))
