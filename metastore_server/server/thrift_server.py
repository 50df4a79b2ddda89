"""Thrift server wiring: bind, accept, per-connection threads, graceful stop; each call is
served by the processor (:mod:`metastore_server.server.processor`).

Binary protocol over buffered transport is the default (Hive's); framed transport and the
compact protocol are options, and so is TLS (the handshake runs in the connection's thread, so a
stalled client never holds up the accept loop). Each connection has its own thread (HMS clients
hold long-lived connections and make one call at a time). An incoming message larger than
``max_message_size``, one that decodes to more than its size allows, one that does not arrive
within ``message_timeout`` once begun, or one the protocol cannot read, closes that connection
only (see :mod:`metastore_server.server.transport_limits`). Each connection keeps what its
client has shown of its HMS generation (:mod:`metastore_server.server.generations`).
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog
from thriftpy2.protocol import TCompactProtocolFactory, TCyBinaryProtocolFactory
from thriftpy2.protocol.base import TProtocolFactory
from thriftpy2.thrift import TApplicationException, TType
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TTransportException,
)

from metastore_server import metrics, thrift_api
from metastore_server.audit import audit_call
from metastore_server.caller import Session
from metastore_server.server.generations import (
    ClientGeneration,
)
from metastore_server.server.processor import CallProcessor
from metastore_server.server.sasl import (
    FRAME_SLACK,
    Identity,
    SaslFrameError,
    SaslServer,
    SaslSocket,
)
from metastore_server.server.transport_limits import (
    CONTAINER_COST,
    DEFAULT_MAX_MESSAGE_SIZE,
    DEFAULT_MESSAGE_TIMEOUT,
    DecodeLimitExceeded,
    LimitedSocket,
    MalformedMessage,
    MessageTimeout,
    MessageTooLarge,
    charge,
    install_decode_metering,
    server_tls_context,
)
from metastore_server.thrift_api import KeyFixingCompactProtocol, hms

log = structlog.get_logger(__name__)

#: How often a waiting accept looks whether the server is stopping.
ACCEPT_POLL_S = 0.2

class MeteredCompactProtocol(KeyFixingCompactProtocol):
    """The compact input protocol, charging each container it decodes to the active meter
    (its encoding of an empty list is one byte, of an empty map one byte).

    A container whose elements are of the stop type takes no bytes per element, so skipping
    one would loop over its declared size without reading: it is refused (MalformedMessage)."""

    _header: tuple[str | None, int | None] = (None, None)

    def read_message_begin(self) -> tuple[str, int, int]:
        self._header = (None, None)
        name, msg_type, seqid = super().read_message_begin()
        self._header = (name, seqid)
        return name, msg_type, seqid

    def _read_collection_begin(self) -> tuple[int, int]:
        charge(CONTAINER_COST)
        etype, size = super()._read_collection_begin()
        if size and etype == TType.STOP:
            self._refuse(f"a list or set of {size} elements of the stop type")
        return etype, size

    def _read_map_begin(self) -> tuple[int, int, int]:
        charge(CONTAINER_COST)
        ktype, vtype, size = super()._read_map_begin()
        if size and ktype == TType.STOP and vtype == TType.STOP:
            self._refuse(f"a map of {size} entries of the stop type")
        return ktype, vtype, size

    def _refuse(self, reason: str) -> None:
        raise MalformedMessage(reason, *self._header)


class MeteredCompactProtocolFactory:
    """Factory of :class:`MeteredCompactProtocol` (server input)."""

    def get_protocol(self, trans: Any) -> MeteredCompactProtocol:
        """A protocol bound to ``trans``."""
        return MeteredCompactProtocol(trans)


class MetastoreServer:
    """A threaded Thrift server for one handler."""

    def __init__(
        self,
        handler: object,
        host: str = "127.0.0.1",
        port: int = 9083,
        *,
        transport: str = "buffered",
        protocol: str = "binary",
        hms_api: str = "auto",
        max_connections: int = 1000,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        tls_cert: str = "",
        tls_key: str = "",
        tls_handshake_timeout: float = 30.0,
        message_timeout: float = DEFAULT_MESSAGE_TIMEOUT,
        sasl: SaslServer | None = None,
        call_timeout: float = 0.0,
    ) -> None:
        install_decode_metering(hms.ThriftHiveMetastore)
        self._processor = CallProcessor(hms.ThriftHiveMetastore, handler,
                                        binary_output=protocol != "compact",
                                        call_timeout=call_timeout)  # fmt: skip
        self._host, self._port = host, port
        self._transport_factory = (
            TFramedTransportFactory() if transport == "framed" else TBufferedTransportFactory()
        )
        if protocol == "compact":
            self._iprot_factory: Any = MeteredCompactProtocolFactory()
            self._oprot_factory: TProtocolFactory = TCompactProtocolFactory()
        else:
            self._iprot_factory = thrift_api.binary_protocol_factory()
            self._oprot_factory = TCyBinaryProtocolFactory()
        self._framed = transport == "framed"
        ClientGeneration(hms_api)  # refuses a setting that is none of auto, 2.3 and 4
        self._hms_api = hms_api
        settings = getattr(handler, "settings", None)
        if settings is not None:  # what get_config_value's key rule follows
            settings.hms_api = hms_api
        self._walk = protocol != "compact"
        self._max_connections = max_connections
        self._max_message_size = max_message_size
        if bool(tls_cert) != bool(tls_key):
            raise ValueError("TLS needs both a certificate and a key (tls_cert and tls_key)")
        self._tls: ssl.SSLContext | None = (
            server_tls_context(tls_cert, tls_key) if tls_cert else None
        )
        self._tls_handshake_timeout = tls_handshake_timeout
        self._message_timeout = message_timeout
        self._sasl = sasl
        self._listener: socket.socket | None = None
        self._ids = itertools.count()
        self._connections: dict[int, socket.socket] = {}
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._stopped = threading.Event()
        self._accept_thread: threading.Thread | None = None
        self.on_stopped: list[Callable[[], None]] = []

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) actually bound (port 0 asks the OS for a free one)."""
        assert self._listener is not None, "server not started"
        host, port = self._listener.getsockname()[:2]
        return host, port

    def start(self) -> None:
        """Bind and start accepting in a background thread."""
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        self._listener = socket.create_server(
            (self._host, self._port), family=family, backlog=128, reuse_port=False
        )
        self._accept_thread = threading.Thread(target=self._accept_loop, name="accept", daemon=True)
        self._accept_thread.start()
        log.info(
            "listening",
            host=self.address[0],
            port=self.address[1],
            tls=self._tls is not None,
            sasl=sorted(self._sasl.mechanisms) if self._sasl is not None else None,
            max_message_size=self._max_message_size,
            message_timeout=self._message_timeout,
        )

    def serve_forever(self) -> None:
        """Start (if needed) and block until :meth:`stop` is called."""
        if self._listener is None:
            self.start()
        self._closing.wait()
        assert self._accept_thread is not None
        self._accept_thread.join(timeout=ACCEPT_POLL_S * 4)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        # Woken every ACCEPT_POLL_S to notice a stop: closing a socket does not wake accept().
        self._listener.settimeout(ACCEPT_POLL_S)
        while not self._closing.is_set():
            try:
                client, address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._closing.is_set():
                    return
                time.sleep(0.05)
                continue
            client.settimeout(None)
            if not self.admit(client, f"{address[0]}:{address[1]}"):
                return

    @property
    def processor(self) -> CallProcessor:
        """The call processor (its ``oldest_call_age`` tells how long calls have run)."""
        return self._processor

    @property
    def open_connections(self) -> int:
        """Connections being served."""
        return len(self._connections)

    @property
    def closing(self) -> bool:
        """Whether :meth:`stop` has begun."""
        return self._closing.is_set()

    def serve_handed_over(self) -> None:
        """Serve connections another process accepted and hands over (:meth:`admit`),
        instead of a listener of this server's own; block until :meth:`stop`."""
        self._closing.wait()

    def admit(self, client: socket.socket, peer: str) -> bool:
        """Serve an accepted connection in a thread of its own (refused past
        ``max_connections``). False once the server is stopping (the connection is closed)."""
        with self._lock:
            if self._closing.is_set():
                client.close()
                return False
            if len(self._connections) >= self._max_connections:
                log.warning("connection_refused_limit", peer=peer, limit=self._max_connections)
                client.close()
                return True
            key = next(self._ids)
            self._connections[key] = client
            thread = threading.Thread(
                target=self._serve_connection,
                args=(key, client, peer),
                name=f"connection-{key}",
                daemon=True,
            )
            self._threads.add(thread)
        metrics.connection_opened()
        try:
            thread.start()
        except (RuntimeError, MemoryError) as exc:  # e.g. "can't start new thread"
            log.error(
                "connection_thread_failed", peer=peer, error=f"{type(exc).__name__}: {exc}"
            )
            with self._lock:
                self._connections.pop(key, None)
                self._threads.discard(thread)
            metrics.connection_closed()
            with contextlib.suppress(OSError):
                client.close()
        return True

    def _serve_connection(self, key: int, client: socket.socket, peer: str) -> None:
        connection: socket.socket | None = client
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is not None:
                connection = self._handshake(key, client, peer)
            if connection is not None:
                self._authenticate_and_serve(connection, peer)
        except OSError as exc:
            log.info("connection_closed_on_error", peer=peer, error=f"{type(exc).__name__}: {exc}")
        finally:
            for sock in (connection, client):
                try:
                    if sock is not None:
                        sock.close()
                except OSError:
                    pass
            with self._lock:
                self._connections.pop(key, None)
                self._threads.discard(threading.current_thread())
            metrics.connection_closed()

    def _handshake(self, key: int, client: socket.socket, peer: str) -> ssl.SSLSocket | None:
        """The TLS connection over ``client`` (None, logged, if the handshake fails)."""
        assert self._tls is not None
        try:
            wrapped = self._tls.wrap_socket(client, server_side=True, do_handshake_on_connect=False)
        except OSError as exc:
            log.info("tls_handshake_failed", peer=peer, error=f"{type(exc).__name__}: {exc}")
            return None
        with self._lock:  # the plain socket object is detached now: stop() must see this one
            self._connections[key] = wrapped
        try:
            wrapped.settimeout(self._tls_handshake_timeout)
            wrapped.do_handshake()
            wrapped.settimeout(None)
        except (OSError, ValueError) as exc:
            if not self._closing.is_set():
                log.info("tls_handshake_failed", peer=peer, error=f"{type(exc).__name__}: {exc}")
            wrapped.close()
            return None
        return wrapped

    def _authenticate_and_serve(self, connection: socket.socket, peer: str) -> None:
        """Serve calls on ``connection``, after the SASL negotiation when ``--auth`` asks for
        one (a client that fails it is answered, logged and closed by the caller)."""
        if self._sasl is None:
            self._serve_calls(connection, peer)
            return
        negotiated = self._sasl.negotiate(
            connection, peer, max_frame=self._max_message_size + FRAME_SLACK,
            frame_timeout=self._message_timeout,
        )  # fmt: skip
        if negotiated is not None and not self._closing.is_set():
            data_socket, identity = negotiated
            self._serve_calls(data_socket, peer, identity)

    def _serve_calls(
        self, client: socket.socket | SaslSocket, peer: str, identity: Identity | None = None
    ) -> None:
        """Answer calls on one connection until it closes or sends what cannot be read."""
        tsocket = LimitedSocket(
            client,  # type: ignore[arg-type]  # a SaslSocket reads and writes as a socket
            self._max_message_size,
            framed=self._framed,
            message_timeout=self._message_timeout,
            walk=self._walk,
        )
        itrans = self._transport_factory.get_transport(tsocket)
        otrans = self._transport_factory.get_transport(tsocket)
        iprot = self._iprot_factory.get_protocol(itrans)
        oprot = self._oprot_factory.get_protocol(otrans)
        frame_writer = tsocket.write if self._framed else None
        generation = ClientGeneration(self._hms_api)
        session = Session(address=peer.rsplit(":", 1)[0])
        if identity is not None:
            session.authenticated_user, session.mechanism = identity.user, identity.mechanism
            session.real_user = identity.real_user
        user = session.authenticated_user
        try:
            while not self._closing.is_set():
                tsocket.start_message(itrans)
                self._processor.process(
                    iprot, oprot, peer, frame_writer, tsocket, generation, session=session
                )
        except MessageTooLarge as exc:
            log.warning(
                "connection_closed_message_too_large",
                peer=peer,
                max_message_size=exc.limit,
                size=exc.size,
            )
        except MalformedMessage as exc:
            self._answer_malformed(oprot, exc, peer, user)
        except DecodeLimitExceeded as exc:
            log.warning(
                "connection_closed_decode_limit",
                peer=peer,
                decoded=exc.spent,
                received=exc.received,
                ratio=exc.ratio,
            )
        except SaslFrameError as exc:
            if exc.size is not None:  # a frame holds one message: its limit is the message's
                log.warning("connection_closed_message_too_large", peer=peer,
                            max_message_size=self._max_message_size, size=exc.size)  # fmt: skip
            else:
                log.warning("connection_closed_bad_sasl_frame", peer=peer, reason=str(exc))
        except MessageTimeout as exc:
            if not self._closing.is_set():
                log.warning(
                    "connection_closed_message_timeout",
                    peer=peer,
                    message_timeout=exc.timeout,
                    received=exc.received,
                )
        except Exception as exc:  # noqa: BLE001 - transport/protocol errors end this connection only
            if not self._closing.is_set() and not _is_disconnect(exc):
                log.info(
                    "connection_closed_on_error", peer=peer, error=f"{type(exc).__name__}: {exc}"
                )

    @staticmethod
    def _answer_malformed(
        oprot: Any, exc: MalformedMessage, peer: str, user: str | None = None
    ) -> None:
        """Tell the client (when its message header could be read) that its message breaks
        the protocol; the connection is then closed, as nothing after it can be trusted."""
        if exc.seqid is not None and exc.method is not None:
            error = TApplicationException(TApplicationException.PROTOCOL_ERROR, exc.message)
            with contextlib.suppress(OSError, TTransportException):
                CallProcessor._send_exception(oprot, exc.method, error, exc.seqid)
        audit_call(method=exc.method or "", peer=peer, ms=0.0, outcome="malformed_message",
                   user=user)  # fmt: skip
        log.warning(
            "connection_closed_malformed_message", peer=peer, method=exc.method, reason=exc.reason
        )

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, let calls in flight finish (up to ``timeout`` s), close connections.
        A stop already begun (in another thread) is waited for, up to ``timeout`` s: whoever
        calls it returns once calls in flight are done, not before."""
        with self._lock:
            begun = self._closing.is_set()
            self._closing.set()
        if begun:
            self._stopped.wait(timeout)
            return
        if self._listener is not None:
            try:
                self._listener.close()
            except OSError:
                pass
        with self._lock:
            clients = list(self._connections.values())
            threads = list(self._threads)
        for client in clients:
            try:
                # socket.socket's own shutdown: an SSLSocket's would drop its TLS state
                # under the thread still reading from it.
                socket.socket.shutdown(client, socket.SHUT_RD)
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        try:
            for thread in threads:
                if thread.ident is None:  # registered by the accept loop, not started (yet)
                    continue
                thread.join(max(0.0, deadline - time.monotonic()))
            for callback in self.on_stopped:
                callback()
        finally:
            self._stopped.set()
        log.info("stopped")


def _is_disconnect(exc: Exception) -> bool:
    text = str(exc)
    return (
        "TSocket read 0 bytes" in text
        or "end of file" in text.lower()
        or isinstance(exc, (ConnectionResetError, BrokenPipeError))
    )
