"""SASL authentication of Thrift connections, as HMS's TSaslServerTransport speaks it.

**Negotiation.** Each frame is one status byte (:data:`START` .. :data:`COMPLETE`), a 4-byte
big-endian length and a payload. The client's START names the mechanism; then OK/COMPLETE
frames carry its responses and the server's challenges until the mechanism is done and the
server answers COMPLETE. It is bounded: the whole negotiation must end within
``handshake_timeout``, a payload may be at most ``max_payload`` bytes and there are at most
``max_rounds`` responses. A frame that breaks the protocol (a status byte that is none of the
five, as a plain Thrift client's first byte is; a length past the cap; a status out of turn) is
answered with an ERROR frame, an unknown mechanism or failed credentials with a BAD frame, each
carrying the reason; the connection is then closed and a ``sasl_refused`` line logged.

**Data.** After COMPLETE, every Thrift message travels in data frames (4-byte big-endian length,
payload). :class:`SaslSocket` takes them off and puts them on, under
:class:`~metastore_server.server.transport_limits.LimitedSocket`, so every limit on messages
still applies to what the frames carry. A frame header declaring more than ``max_frame`` bytes
(the server's ``max_message_size`` plus :data:`FRAME_SLACK`: a frame holds one message) or a
negative length ends the connection before anything is read or allocated for it. Without a
security layer (PLAIN; any mechanism's QOP ``auth``) frames are streamed, never held whole; with
one (GSSAPI's auth-int and auth-conf) a frame is read whole and unwrapped, and a payload that
fails the layer's check ends the connection (:class:`SaslFrameError`). Once the first byte of a
frame header has arrived, the rest of the header (and a wrapped frame's payload) must arrive
within ``frame_timeout`` (the server's ``message_timeout``); each ``recv`` also keeps within the
timeout its caller set on the socket, however many (empty) frames it meets.

**Mechanisms.** A mechanism is any :class:`ServerMechanism`; which ones a server offers is set
by ``--auth`` (:mod:`metastore_server.server.auth`).

**Acting for another user.** A mechanism whose client asked to act for another user (PLAIN's
authorization identity, GSSAPI's in its security-layer answer) names that user in
``authorization_id``; once the mechanism is done, the server's proxy-user rules
(``impersonation``, :mod:`metastore_server.api.proxy_users`) must let the authenticated user
act for it from the client's address, else the client is answered BAD with the rules'
refusal. The connection is then that user, the authenticated one its ``real_user``.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

log = structlog.get_logger(__name__)

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
_STATUS_NAMES = {START: "START", OK: "OK", BAD: "BAD", ERROR: "ERROR", COMPLETE: "COMPLETE"}
#: Seconds the whole negotiation may take.
DEFAULT_HANDSHAKE_TIMEOUT = 30.0
#: Largest negotiation payload (a Kerberos ticket with a big PAC stays well below).
DEFAULT_MAX_PAYLOAD = 64 * 1024
#: Most responses a client may send after START.
DEFAULT_MAX_ROUNDS = 8
#: Seconds an answer to a refused client may take to send.
_SEND_TIMEOUT = 5.0
#: Bytes a data frame may hold beyond one message: a framed transport's header inside it and a
#: security layer's wrapping (a Kerberos token header, checksum and padding: well under 1 KiB).
FRAME_SLACK = 4096
#: Characters of a client-chosen text (a mechanism name) shown in an answer or a log line.
_SHOWN = 64
_HEADER = struct.Struct(">BI")


class AuthenticationFailed(Exception):
    """A mechanism refused the client: ``message`` goes to the client, ``reason`` to the log."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or message


class SecurityLayer(Protocol):
    """What a mechanism negotiating auth-int or auth-conf wraps data frames with."""

    def wrap(self, data: bytes) -> bytes:
        """The payload of a data frame carrying ``data``."""
        ...

    def unwrap(self, payload: bytes) -> bytes:
        """The data of a data frame's payload; raises on a payload that does not check."""
        ...


class ServerMechanism(Protocol):
    """The server side of one SASL mechanism, for one connection."""

    name: str

    def step(self, response: bytes) -> tuple[bytes, bool]:
        """(challenge, complete) for the client's ``response``; raises AuthenticationFailed."""
        ...

    @property
    def user(self) -> str:
        """The authenticated identity, once complete."""
        ...

    @property
    def authorization_id(self) -> str | None:
        """The user the client asked to act for, when other than ``user`` (once complete)."""
        ...

    @property
    def real_user(self) -> str | None:
        """Who acts for ``user`` by the credentials themselves (a token's real user)."""
        ...

    def security_layer(self) -> SecurityLayer | None:
        """The negotiated security layer, None for QOP auth; asked once complete."""
        ...


MechanismFactory = Callable[[], ServerMechanism]


class Impersonation(Protocol):
    """The proxy-user rules a login acting for another user is checked against."""

    def authorize(self, real_user: str, user: str, address: str | None) -> None:
        """Raise PermissionError (its message for the client) unless allowed."""
        ...


@dataclass(frozen=True)
class Identity:
    """Who a connection is (authenticated, or acted for by ``real_user``), and how."""

    user: str
    mechanism: str
    real_user: str | None = None


class SaslFrameError(ConnectionError):
    """A data frame that cannot be taken: a length past the limit (``size``, the length it
    declares) or negative, or a payload that fails the security layer's check. The connection
    is closed."""

    def __init__(self, message: str, size: int | None = None) -> None:
        super().__init__(message)
        self.size = size


class _Refused(Exception):
    """The negotiation failed: answer ``status`` with ``message`` (if a status), log ``reason``."""

    def __init__(self, status: int | None, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason or message


class SaslServer:
    """Runs the negotiation of each connection against a set of mechanisms."""

    def __init__(
        self,
        mechanisms: dict[str, MechanismFactory],
        *,
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
        max_payload: int = DEFAULT_MAX_PAYLOAD,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        impersonation: Impersonation | None = None,
    ) -> None:
        self.mechanisms = dict(mechanisms)
        self.impersonation = impersonation
        self.handshake_timeout = handshake_timeout
        self.max_payload = max_payload
        self.max_rounds = max_rounds

    def negotiate(
        self, sock: socket.socket, peer: str, *, max_frame: int = 2**31 - 1,
        frame_timeout: float = 0.0,
    ) -> tuple[SaslSocket, Identity] | None:  # fmt: skip
        """Authenticate the client on ``sock``: its data socket (frames up to ``max_frame``
        bytes, each complete within ``frame_timeout`` s once begun; 0: no limit) and identity,
        or None (the client answered where it can be, the refusal logged; the caller closes
        ``sock``)."""
        negotiation = _Negotiation(sock, self, time.monotonic() + self.handshake_timeout)
        try:
            mechanism, identity = negotiation.run()
        except _Refused as exc:
            # Logged before the answer: a client that has its answer finds the line written.
            log.warning("sasl_refused", peer=peer, reason=exc.reason)
            if exc.status is not None:
                negotiation.send(exc.status, exc.message.encode("utf-8", "replace"))
            return None
        except (OSError, EOFError) as exc:
            # A connection closed before its first byte (a TCP readiness probe) is no news.
            level = log.info if negotiation.received else log.debug
            level("sasl_refused", peer=peer, reason=f"connection lost: {_text(exc)}")
            return None
        finally:
            with contextlib.suppress(OSError):
                sock.settimeout(None)
        log.info("sasl_authenticated", peer=peer, user=identity.user, mechanism=identity.mechanism,
                 **({"real_user": identity.real_user} if identity.real_user else {}))  # fmt: skip
        data = SaslSocket(sock, mechanism.security_layer(), max_frame=max_frame,
                          frame_timeout=frame_timeout)  # fmt: skip
        return data, identity


class _Negotiation:
    """One connection's negotiation, under one deadline."""

    def __init__(self, sock: socket.socket, server: SaslServer, deadline: float) -> None:
        self.sock = sock
        self.server = server
        self.deadline = deadline
        self.received = 0  # bytes received so far

    def run(self) -> tuple[ServerMechanism, Identity]:
        """The completed mechanism and who the client is; raises _Refused."""
        status, payload = self.receive(first=True)
        if status != START:
            raise _Refused(ERROR, f"Expecting START status, received {_name(status)}")
        name = payload.decode("ascii", "replace")
        factory = self.server.mechanisms.get(name)
        if factory is None:
            offered = ", ".join(sorted(self.server.mechanisms))
            shown = _shown(payload)
            raise _Refused(
                BAD, f"Unsupported mechanism type {shown} (this server offers {offered})"
            )
        mechanism = factory()
        for _round in range(self.server.max_rounds):
            status, payload = self.receive()
            if status not in (OK, COMPLETE):
                raise _Refused(ERROR, f"Expected COMPLETE or OK, got {_name(status)}")
            try:
                challenge, done = mechanism.step(payload)
            except AuthenticationFailed as exc:
                raise _Refused(BAD, exc.message, f"{name}: {exc.reason}") from None
            except Exception as exc:  # noqa: BLE001 - a mechanism's own failure ends this client only
                raise _Refused(ERROR, f"{name} negotiation failed on the server",
                               f"{name}: unexpected {_text(exc)}") from None  # fmt: skip
            identity = self._identity(name, mechanism) if done else None
            self.send(COMPLETE if done else OK, challenge)
            if identity is not None:
                return mechanism, identity
        raise _Refused(ERROR, f"SASL negotiation took more than {self.server.max_rounds} rounds")

    def _identity(self, name: str, mechanism: ServerMechanism) -> Identity:
        """Who the client of a completed mechanism is: the user it authenticated as, or the
        one it asked to act for when the proxy-user rules allow it (else refused)."""
        acting = mechanism.authorization_id
        if not acting:
            return Identity(mechanism.user, name, mechanism.real_user or None)
        impersonation = self.server.impersonation
        address = _address(self.sock)
        try:
            if impersonation is None:
                raise PermissionError(
                    f"User: {mechanism.user} is not allowed to impersonate {acting}"
                )
            impersonation.authorize(mechanism.user, acting, address)
        except PermissionError as exc:
            raise _Refused(BAD, str(exc), f"{name}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a failed check refuses this client only
            raise _Refused(ERROR, "the proxy-user check failed on the server",
                           f"{name}: proxy-user check: {_text(exc)}") from None  # fmt: skip
        return Identity(acting, name, mechanism.user)

    def receive(self, first: bool = False) -> tuple[int, bytes]:
        """The next negotiation frame (status, payload); refuses a malformed one."""
        header = self._read(_HEADER.size, "a frame header")
        status, length = _HEADER.unpack(header)
        if status not in _STATUS_NAMES:
            hint = " (not a SASL client: a plain Thrift message?)" if first else ""
            raise _Refused(ERROR, f"Invalid status {status}", f"invalid status {status}{hint}")
        if length > self.server.max_payload:
            raise _Refused(
                ERROR,
                f"Invalid payload header length: {length} "
                f"(at most {self.server.max_payload} bytes)",
            )
        payload = self._read(length, f"a {_name(status)} payload") if length else b""
        if status in (BAD, ERROR):
            text = payload.decode("utf-8", "replace")[:200]
            raise _Refused(None, "", f"client sent {_name(status)}: {text}")
        return status, payload

    def send(self, status: int, payload: bytes) -> None:
        """Send one negotiation frame (a refusal: best effort, briefly)."""
        remaining = self.deadline - time.monotonic()
        if status in (BAD, ERROR):
            remaining = _SEND_TIMEOUT
        try:
            self.sock.settimeout(max(remaining, 0.001))
            self.sock.sendall(_HEADER.pack(status, len(payload)) + payload)
        except OSError:
            if status not in (BAD, ERROR):
                raise

    def _read(self, size: int, what: str) -> bytes:
        chunks: list[bytes] = []
        left = size
        while left:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise _Refused(None, "", self._late(what))
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(min(left, 65536))
            except TimeoutError:
                raise _Refused(None, "", self._late(what)) from None
            if not data:
                raise EOFError(f"closed while sending {what}")
            chunks.append(data)
            left -= len(data)
            self.received += len(data)
        return b"".join(chunks)

    def _late(self, what: str) -> str:
        return f"negotiation not complete after {self.server.handshake_timeout:g} s " \
               f"(waiting for {what})"  # fmt: skip


class SaslSocket:
    """The socket-like object Thrift reads and writes through once a client is authenticated:
    data frames are taken off on ``recv`` and put on by ``sendall`` (limits: module docstring)."""

    def __init__(
        self,
        sock: socket.socket,
        layer: SecurityLayer | None = None,
        *,
        max_frame: int = 2**31 - 1,
        frame_timeout: float = 0.0,
    ) -> None:
        self._sock = sock
        self._layer = layer
        self._max_frame = max_frame
        self._frame_timeout = frame_timeout
        self._header = b""  # a frame header partly received
        self._left = 0  # bytes of the current frame still to come (streamed frames)
        self._unwrapped = b""  # data of a wrapped frame not handed out yet
        self._frame_deadline: float | None = None  # when the frame begun must be complete
        self._call_end: float | None = None  # when the recv under way must return
        self._timeout: float | None = None  # the timeout the caller set on the socket

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes of data (at least one); b"" once the client has closed.
        Raises TimeoutError past the caller's timeout or a begun frame's ``frame_timeout``,
        SaslFrameError on a frame that cannot be taken."""
        self._timeout = timeout = self._sock.gettimeout()
        self._call_end = None if timeout is None else time.monotonic() + timeout
        try:
            if self._layer is not None:
                return self._recv_wrapped(size)
            while not self._left:
                length = self._frame_length()
                if length is None:
                    return b""
                self._left = length
            data = self._read(min(size, self._left))
            self._left -= len(data)
            return data
        finally:
            if self._sock.gettimeout() != timeout:
                self._sock.settimeout(timeout)

    def _read(self, size: int) -> bytes:
        """One ``recv`` of the socket underneath, within the call's and the frame's time."""
        ends = [end for end in (self._call_end, self._frame_deadline) if end is not None]
        if ends:
            left = min(ends) - time.monotonic()
            if left <= 0:
                raise TimeoutError("SASL data frame incomplete in time")
            self._sock.settimeout(left)
        elif self._sock.gettimeout() != self._timeout:
            self._sock.settimeout(self._timeout)
        return self._sock.recv(size)

    def _frame_length(self) -> int | None:
        """The length of the next data frame (None at the end of the stream)."""
        while len(self._header) < 4:
            data = self._read(4 - len(self._header))
            if not data:
                return None
            if not self._header and self._frame_timeout > 0:
                self._frame_deadline = time.monotonic() + self._frame_timeout
            self._header += data
        length = int.from_bytes(self._header, "big", signed=True)
        self._header = b""
        if self._layer is None:
            self._frame_deadline = None  # a streamed payload is timed by the message's reader
        if length < 0:
            raise SaslFrameError(f"invalid SASL data frame length {length}")
        if length > self._max_frame:
            raise SaslFrameError(
                f"SASL data frame of {length} bytes exceeds {self._max_frame} bytes", length
            )
        return length

    def _recv_wrapped(self, size: int) -> bytes:
        assert self._layer is not None
        while not self._unwrapped:
            length = self._frame_length()
            if length is None:
                return b""
            chunks: list[bytes] = []
            left = length
            while left:
                data = self._read(min(left, 1024 * 1024))
                if not data:
                    return b""
                chunks.append(data)
                left -= len(data)
            self._frame_deadline = None
            try:
                self._unwrapped = self._layer.unwrap(b"".join(chunks))
            except Exception as exc:  # noqa: BLE001 - whatever the layer raises on a bad payload
                raise SaslFrameError(
                    f"SASL data frame of {length} bytes fails the security layer's check: "
                    f"{_text(exc)}"
                ) from None
        data, self._unwrapped = self._unwrapped[:size], self._unwrapped[size:]
        return data

    def sendall(self, data: bytes) -> None:
        """Send ``data`` as one data frame."""
        if not data:
            return
        payload = self._layer.wrap(bytes(data)) if self._layer is not None else data
        self._sock.sendall(len(payload).to_bytes(4, "big") + payload)

    def settimeout(self, value: float | None) -> None:
        """As ``socket.settimeout`` of the socket underneath."""
        self._sock.settimeout(value)

    def gettimeout(self) -> float | None:
        """As ``socket.gettimeout`` of the socket underneath."""
        return self._sock.gettimeout()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)  # shutdown, close, fileno, setsockopt, ...


def _address(sock: socket.socket) -> str | None:
    """The IP address of a socket's peer (None: not known)."""
    try:
        peer = sock.getpeername()
    except (OSError, AttributeError):
        return None
    return str(peer[0]) if isinstance(peer, tuple) and peer else None


def _name(status: int) -> str:
    return _STATUS_NAMES.get(status, str(status))


def _shown(raw: bytes) -> str:
    """A client-chosen name as an answer or a log line may show it: as it is when it is short
    printable text, else quoted (bytes that are not UTF-8 escaped) and cut."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return repr(raw[:_SHOWN]) + ("..." if len(raw) > _SHOWN else "")
    if text and text.isprintable() and len(text) <= _SHOWN and text.strip() == text:
        return text
    return repr(text[:_SHOWN]) + ("..." if len(text) > _SHOWN else "")


def _text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
