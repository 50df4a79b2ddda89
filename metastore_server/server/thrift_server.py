"""Thrift server wiring: bind, accept, per-connection threads, the processor, graceful stop.

Binary protocol over buffered transport is the default (Hive's); framed transport and the
compact protocol are options, and so is TLS (the handshake runs in the connection's thread, so a
stalled client never holds up the accept loop). Each connection has its own thread (HMS clients
hold long-lived connections and make one call at a time). An incoming message larger than
``max_message_size``, one that decodes to more than its size allows, one that does not arrive
within ``message_timeout`` once begun, or one the protocol cannot read, closes that connection
only (see :mod:`metastore_server.server.transport_limits`). Every call produces one audit line.
Errors of a call never drop the connection: an exception the method declares is returned as
such, an HMS exception it does not declare becomes a MetaException when the method declares
that, and anything else becomes a TApplicationException.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from thriftpy2.protocol import TCompactProtocolFactory, TCyBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TException, TMessageType, TType
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TTransportException,
)

from metastore_server import thrift_api
from metastore_server.api.audit_fields import result_size, split_audit_target
from metastore_server.audit import audit_call, collecting_extras
from metastore_server.server.generations import (
    SNIFFED_REQUESTS,
    ClientGeneration,
    needs_both_layouts,
    read_arguments,
    shape_result,
    write_both_layouts,
)
from metastore_server.server.stored_replies import send_stored_partitions, stored_partitions
from metastore_server.server.text_check import undecoded_field
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

#: The exceptions the IDL declares: answered as themselves, never logged as a server error.
_HMS_EXCEPTIONS = tuple(
    value
    for value in vars(hms).values()
    if isinstance(value, type)
    and issubclass(value, TException)
    and not issubclass(value, TApplicationException)
)


class InvalidMessage(Exception):
    """A message the server answered but cannot read on from: its connection is closed."""


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


@dataclass
class _Call:
    """One call being served: what its audit line and reply need."""

    api: str
    seqid: int
    peer: str
    started: float
    reader: LimitedSocket | None
    generation: ClientGeneration

    def audit(self, outcome: str, **fields: Any) -> None:
        """Write the call's audit line."""
        audit_call(method=self.api, peer=self.peer, ms=_ms(self.started), outcome=outcome,
                   **fields)  # fmt: skip


class CallProcessor:
    """Reads one call from a protocol, runs the handler method, writes the reply."""

    def __init__(self, service: Any, handler: object, *, binary_output: bool = True) -> None:
        self._service = service
        self._handler = handler
        self._binary_output = binary_output
        #: Thread id -> monotonic start of the call it is serving (from its message's start).
        self._in_flight: dict[int, float] = {}

    def oldest_call_age(self) -> float:
        """Seconds the longest-running call in flight has run (0 when none)."""
        starts = list(self._in_flight.values())
        return time.monotonic() - min(starts) if starts else 0.0

    def process(
        self,
        iprot: Any,
        oprot: Any,
        peer: str,
        frame_writer: Callable[[bytes], None] | None = None,
        reader: LimitedSocket | None = None,
        generation: ClientGeneration | None = None,
    ) -> None:
        """Serve one message. Raises transport errors (the connection is then closed).

        ``frame_writer`` (framed transport) writes to the socket under the transport: a big
        partition list is then sent as its frame header and chunks, not gathered whole in the
        transport's frame buffer first. ``reader`` (the socket under ``iprot``) meters the
        decoding of the arguments and is told when the message has been read. ``generation``
        is what the connection's client has shown of its HMS generation (see
        :mod:`metastore_server.server.generations`)."""
        api, msg_type, seqid = iprot.read_message_begin()
        me = threading.get_ident()
        self._in_flight[me] = time.monotonic()
        call = _Call(api, seqid, peer, time.perf_counter(), reader,
                     generation if generation is not None else ClientGeneration())  # fmt: skip
        try:
            self._process(call, msg_type, iprot, oprot, frame_writer)
        finally:
            self._in_flight.pop(me, None)

    def _process(
        self,
        call: _Call,
        msg_type: int,
        iprot: Any,
        oprot: Any,
        frame_writer: Callable[[bytes], None] | None,
    ) -> None:
        api, reader = call.api, call.reader
        if msg_type not in (TMessageType.CALL, TMessageType.ONEWAY):
            # The rest cannot be trusted: answer, then let the connection close.
            error = TApplicationException(
                TApplicationException.INVALID_MESSAGE_TYPE, f"Invalid message type {msg_type}"
            )
            self._send_exception(oprot, api, error, call.seqid)
            call.audit("invalid_message_type")
            raise InvalidMessage(f"invalid message type {msg_type}")
        method = getattr(self._handler, api, None) if api in self._service.thrift_services else None
        if method is None:
            iprot.skip(TType.STRUCT)
            iprot.read_message_end()
            if reader is not None:
                reader.message_read()
            error = TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{api}'"
            )
            self._send_exception(oprot, api, error, call.seqid)
            call.audit("unknown_method")
            return
        args = self._read_arguments(call, iprot, oprot)
        not_text = undecoded_field(args) if reader is None or reader.may_hold_bad_text() else None
        if not_text is not None:  # refused before the handler sees it: nothing is written
            method = functools.partial(_refuse_text, not_text)
        arg_names = [spec[1] for spec in args.thrift_spec.values()]
        values = {name: getattr(args, name, None) for name in arg_names}
        call.generation.observe(api, values)
        db, table = split_audit_target(values)
        result = getattr(self._service, api + "_result")()
        outcome, error_text, rows, app_error, extras = self._run(
            api, method, [values[name] for name in arg_names], result
        )
        try:
            if not getattr(result, "oneway", False):
                self._reply(call, result, app_error, oprot, frame_writer)
        finally:
            # After the reply is written: ``ms`` is the whole call, sending included.
            call.audit(outcome, db=db, table=table, rows=rows, error=error_text, extras=extras)

    def _read_arguments(self, call: _Call, iprot: Any, oprot: Any) -> Any:
        """The call's arguments, decoded within the connection's limits."""
        api, reader = call.api, call.reader
        args = getattr(self._service, api + "_args")()
        if reader is not None:
            # The walker follows the whole message first: one without list-keyed maps (all
            # but a skewed table's) is decoded by thriftpy2's Cython decoder alone.
            reader.read_ahead()
            iprot.lists_as_keys = reader.may_hold_list_keys()
        try:
            with reader.meter.active() if reader is not None else contextlib.nullcontext():
                if api in SNIFFED_REQUESTS:
                    read_arguments(api, args, iprot)
                else:
                    args.read(iprot)
        except DecodeLimitExceeded as exc:
            # The rest of the message is not read: answer (if the client still listens), close.
            error = TApplicationException(TApplicationException.PROTOCOL_ERROR, exc.message)
            with contextlib.suppress(OSError, TTransportException):
                self._send_exception(oprot, api, error, call.seqid)
            call.audit("decode_limit_exceeded")
            raise
        iprot.read_message_end()
        if reader is not None:
            reader.message_read()
        return args

    def _run(
        self, api: str, method: Callable[..., Any], arguments: list[Any], result: Any
    ) -> tuple[str, str | None, int | None, TApplicationException | None, dict[str, object]]:
        """Run the handler method into ``result``: (outcome, error text, rows, the
        application error to send instead of ``result``, audit extras)."""
        outcome, error_text, rows = "ok", None, None
        extras: dict[str, object] = {}
        app_error: TApplicationException | None = None
        try:
            with collecting_extras() as extras:
                result.success = method(*arguments)
            rows = result_size(result.success)
        except TApplicationException as exc:
            outcome, error_text, app_error = "application_error", exc.message, exc
        except Exception as exc:  # noqa: BLE001 - every error must become a Thrift answer
            outcome, error_text = type(exc).__name__, _message(exc)
            if not isinstance(exc, _HMS_EXCEPTIONS):
                log.exception("handler_error", method=api)
            if not self._declare(result, exc):
                app_error = TApplicationException(TApplicationException.INTERNAL_ERROR, error_text)
        return outcome, error_text, rows, app_error, extras

    def _reply(
        self,
        call: _Call,
        result: Any,
        app_error: TApplicationException | None,
        oprot: Any,
        frame_writer: Callable[[bytes], None] | None,
    ) -> None:
        """Write the answer: the application error, or the result in the shape the
        connection's client reads."""
        api, seqid = call.api, call.seqid
        if app_error is not None:
            self._send_exception(oprot, api, app_error, seqid)
        elif stored_partitions(result) is not None:
            socket_writer = call.reader.write if call.reader is not None else None
            send_stored_partitions(oprot, api, result, seqid, self._binary_output,
                                   frame_writer, socket_writer)  # fmt: skip
        elif needs_both_layouts(api, result, call.generation, self._binary_output):
            write_both_layouts(api, result, seqid, oprot.trans.write)
            oprot.trans.flush()
        else:
            oprot.write_message_begin(api, TMessageType.REPLY, seqid)
            shape_result(api, result, call.generation).write(oprot)
            oprot.write_message_end()
            oprot.trans.flush()

    @staticmethod
    def _declare(result: Any, exc: Exception) -> bool:
        """Put ``exc`` in the result's matching exception field (or a MetaException one)."""
        fields = [spec for fid, spec in sorted(result.thrift_spec.items()) if fid != 0]
        for spec in fields:
            if isinstance(exc, spec[2]):
                setattr(result, spec[1], exc)
                return True
        for spec in fields:
            if spec[2] is hms.MetaException:
                setattr(result, spec[1], hms.MetaException(message=_message(exc)))
                return True
        return False

    @staticmethod
    def _send_exception(oprot: Any, api: str, exc: TApplicationException, seqid: int) -> None:
        oprot.write_message_begin(api, TMessageType.EXCEPTION, seqid)
        exc.write(oprot)
        oprot.write_message_end()
        oprot.trans.flush()


def _refuse_text(field: str, *_args: object) -> None:
    """The answer to a request holding a string that is not UTF-8 (an InvalidObjectException,
    or the MetaException of a call that does not declare it)."""
    raise hms.InvalidObjectException(message=f"{field} is not valid UTF-8 text")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _message(exc: Exception) -> str:
    message = getattr(exc, "message", None)
    if isinstance(message, str) and message:
        return message
    text = str(exc)
    return text if text else type(exc).__name__


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
    ) -> None:
        install_decode_metering(hms.ThriftHiveMetastore)
        self._processor = CallProcessor(
            hms.ThriftHiveMetastore, handler, binary_output=protocol != "compact"
        )
        self._host, self._port = host, port
        self._transport_factory = (
            TFramedTransportFactory() if transport == "framed" else TBufferedTransportFactory()
        )
        if protocol == "compact":
            self._iprot_factory: Any = MeteredCompactProtocolFactory()
            self._oprot_factory = TCompactProtocolFactory()
        else:
            self._iprot_factory = thrift_api.binary_protocol_factory()
            self._oprot_factory = TCyBinaryProtocolFactory()
        self._framed = transport == "framed"
        ClientGeneration(hms_api)  # refuses a setting that is none of auto, 2.3 and 4
        self._hms_api = hms_api
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
        self._listener: socket.socket | None = None
        self._ids = itertools.count()
        self._connections: dict[int, socket.socket] = {}
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._closing = threading.Event()
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
        try:
            thread.start()
        except (RuntimeError, MemoryError) as exc:  # e.g. "can't start new thread"
            log.error(
                "connection_thread_failed", peer=peer, error=f"{type(exc).__name__}: {exc}"
            )
            with self._lock:
                self._connections.pop(key, None)
                self._threads.discard(thread)
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
                self._serve_calls(connection, peer)
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

    def _serve_calls(self, client: socket.socket, peer: str) -> None:
        """Answer calls on one connection until it closes or sends what cannot be read."""
        tsocket = LimitedSocket(
            client,
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
        try:
            while not self._closing.is_set():
                tsocket.start_message(itrans)
                self._processor.process(iprot, oprot, peer, frame_writer, tsocket, generation)
        except MessageTooLarge as exc:
            log.warning(
                "connection_closed_message_too_large",
                peer=peer,
                max_message_size=exc.limit,
                size=exc.size,
            )
        except MalformedMessage as exc:
            self._answer_malformed(oprot, exc, peer)
        except DecodeLimitExceeded as exc:
            log.warning(
                "connection_closed_decode_limit",
                peer=peer,
                decoded=exc.spent,
                received=exc.received,
                ratio=exc.ratio,
            )
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
    def _answer_malformed(oprot: Any, exc: MalformedMessage, peer: str) -> None:
        """Tell the client (when its message header could be read) that its message breaks
        the protocol; the connection is then closed, as nothing after it can be trusted."""
        if exc.seqid is not None and exc.method is not None:
            error = TApplicationException(TApplicationException.PROTOCOL_ERROR, exc.message)
            with contextlib.suppress(OSError, TTransportException):
                CallProcessor._send_exception(oprot, exc.method, error, exc.seqid)
        audit_call(method=exc.method or "", peer=peer, ms=0.0, outcome="malformed_message")
        log.warning(
            "connection_closed_malformed_message", peer=peer, method=exc.method, reason=exc.reason
        )

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, let calls in flight finish (up to ``timeout`` s), close connections."""
        if self._closing.is_set():
            return
        self._closing.set()
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
        for thread in threads:
            if thread.ident is None:  # registered by the accept loop, not started (yet or ever)
                continue
            thread.join(max(0.0, deadline - time.monotonic()))
        for callback in self.on_stopped:
            callback()
        log.info("stopped")


def _is_disconnect(exc: Exception) -> bool:
    text = str(exc)
    return (
        "TSocket read 0 bytes" in text
        or "end of file" in text.lower()
        or isinstance(exc, (ConnectionResetError, BrokenPipeError))
    )
