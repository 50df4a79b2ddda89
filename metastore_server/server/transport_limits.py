"""Bounds on what one client connection may make the server read, decode and wait for, and the
server's TLS context.

**Message size.** thriftpy2's Cython transports and binary protocol trust the lengths they read:
a string or frame length is allocated (``malloc``) and then read until that many bytes have
arrived. The limits are enforced under them, in the socket they read from, so the Cython fast
path is kept:

- **framed transport**: every frame header passing through the socket is checked before the
  transport sees it; a frame longer than the limit (or of zero or negative length) is refused
  before anything is allocated for it;
- **buffered transport**: the bytes received since the current message began are counted and
  one byte more than the limit ends the connection; a single read request far larger than the
  limit (only a declared length beyond it asks for that) ends it at once.

Each ``recv`` is also capped, so a huge declared length never sizes a receive buffer. On the
buffered transport thriftpy2 still reserves (``malloc``) a declared string length before asking
the socket for it; those pages are never written, so resident memory does not grow, and they are
freed as the connection closes. (Lengths of 2 GiB minus a few KiB and more overflow thriftpy2's
buffer growth, which then fails with MemoryError: that too closes only the connection.)

**Decoded size.** thriftpy2 has no limit on container sizes, and a struct costs one byte on the
wire (its stop byte) but 100 to 300 bytes decoded. :func:`install_decode_metering` makes every
struct a request can hold charge, as it is built while a request is decoded, its empty size to
the connection's :class:`DecodeMeter` (the compact protocol also charges each container,
:data:`CONTAINER_COST`). The charges may reach :data:`DECODE_RATIO` bytes per byte of the message
received so far, plus :data:`DECODE_FLOOR`; past that the connection is closed
(:class:`DecodeLimitExceeded`). Everything else a message decodes to (strings, numbers, the lists
and maps holding them) takes at most about 13 bytes per byte of the message (binary protocol;
about 25 compact), so one request's decoded objects stay within about
``(DECODE_RATIO + 13) * max_message_size + DECODE_FLOOR``. Realistic requests are far below:
``add_partitions`` charges 2 to 5 bytes of structs per byte and decodes to 6 to 10 in all.

**Structure.** With ``walk=True`` (binary protocol) every byte received passes a
:class:`~metastore_server.wire.walk.WireWalker` before the transport sees it. thriftpy2's
decoder skips a container of a type that takes no bytes by looping over its declared size
without reading, so 38 bytes could hold the process for seconds; the walker refuses such a
message (and negative sizes, nesting deeper than 64) at its first malformed byte. The bytes
before that byte are handed over as usual, so the messages before it are answered; the read that
reaches it raises :class:`MalformedMessage`.

**Message time.** With ``message_timeout`` > 0, once the first byte of a message has arrived the
server waits at most that long for the rest (:class:`MessageTimeout`); it never cuts a message
whose bytes are already there, and the idle time between messages is not limited.
"""

from __future__ import annotations

import os
import socket
import ssl
import time
from collections import deque
from typing import Any

from thriftpy2.transport import TSocket, TTransportException

from metastore_server.server.decode_meter import (
    CONTAINER_COST,
    DECODE_FLOOR,
    DECODE_RATIO,
    DecodeLimitExceeded,
    DecodeMeter,
    charge,
    install_decode_metering,
)
from metastore_server.wire.malformed import MalformedMessage
from metastore_server.wire.walk import WireWalker

__all__ = [
    "CONTAINER_COST",
    "DECODE_FLOOR",
    "DECODE_RATIO",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_MESSAGE_TIMEOUT",
    "DecodeLimitExceeded",
    "DecodeMeter",
    "LimitedSocket",
    "MalformedMessage",
    "MessageTimeout",
    "MessageTooLarge",
    "charge",
    "install_decode_metering",
    "server_tls_context",
]

#: Default limit on one incoming message: 256 MiB (Thrift's own default is 100 MiB).
DEFAULT_MAX_MESSAGE_SIZE = 256 * 1024 * 1024
#: Default time a message may take to arrive once its first byte is there (seconds; 0: none).
DEFAULT_MESSAGE_TIMEOUT = 60.0
#: Largest ``recv`` asked of the OS at once.
_MAX_RECV = 1024 * 1024
#: Read-buffer slack of thriftpy2's Cython transports (their buffers grow in 4 KiB steps).
_BUFFER_SLACK = 2 * 4096
#: Largest piece taken at once out of a buffered transport's read buffer (its initial size).
_DRAIN_CHUNK = 4096
#: Shortest wait on a socket once a message's deadline has passed (data already there is read).
_LAST_LOOK = 0.001


class MessageTooLarge(TTransportException):
    """An incoming message (or frame) is larger than the configured maximum."""

    def __init__(self, limit: int, size: int | None = None) -> None:
        self.limit = limit
        self.size = size
        shown = "more" if size is None else str(size)
        super().__init__(
            TTransportException.UNKNOWN,
            f"message of {shown} bytes exceeds max_message_size ({limit} bytes)",
        )


class MessageTimeout(TTransportException):
    """The rest of a begun message did not arrive within ``message_timeout``."""

    def __init__(self, timeout: float, received: int) -> None:
        self.timeout = timeout
        self.received = received
        super().__init__(
            TTransportException.TIMED_OUT,
            f"message incomplete after {timeout} s ({received} bytes received)",
        )


class _TransportEmpty(Exception):
    """Raised into a transport that asks for bytes while its buffer is being drained."""


# --------------------------------------------------------------------------- the socket


class LimitedSocket(TSocket):
    """A connected server-side socket that enforces ``max_message_size`` and
    ``message_timeout`` while reading, and meters the decoding of each message.

    The server calls :meth:`start_message` before each message and :meth:`message_read` once
    the message has been read, and decodes inside ``meter.active()``. The meter's budget grows
    with the bytes handed to the transport since the message began (buffered) or with the size
    of the message's frame, which the framed transport reads whole before decoding (one message
    per frame, as Thrift clients send)."""

    def __init__(
        self,
        sock: socket.socket,
        limit: int,
        *,
        framed: bool,
        message_timeout: float = 0.0,
        decode_ratio: int = DECODE_RATIO,
        walk: bool = False,
    ) -> None:
        super().__init__(sock=sock)
        self.limit = limit
        self.message_timeout = message_timeout
        self.meter = DecodeMeter(self._decodable, decode_ratio)
        self._framed = framed
        self._received = 0  # bytes handed to the transport since the current message began
        self._suspect = 2 * limit + _BUFFER_SLACK  # buffered: a read this big means > limit
        self._header = b""  # framed: partial frame header seen so far
        self._frame_left = 0  # framed: bytes of the current frame still to come
        self._frames: deque[int] = deque()  # framed: sizes of the frames not yet decoded
        self._deadline: float | None = None  # when the message under way must be complete
        self._timed = sock.gettimeout() is not None  # whether the socket has a timeout set
        self._pending = _Pending()  # buffered: bytes to hand out before reading the socket
        self._message = -1  # the number (0-based) of the message being read
        self._probing = False
        self._walker = WireWalker() if walk else None
        self._malformed: MalformedMessage | None = None  # raised once the good bytes are out

    def start_message(self, transport: Any = None) -> None:
        """A new message begins: restart the count, the meter and the clock.

        Buffered: bytes of it already in ``transport``'s read buffer (a client that did not
        wait for the previous answer) are taken back to be handed out again, and start its
        clock now; so does a frame already under way on the framed transport."""
        self._received = 0
        self._message += 1
        self.meter.reset()
        self._deadline = None
        if self._framed:
            if self._header or self._frame_left:
                self._arm()
            return
        if transport is not None:
            self._pending.push_front(self._drain(transport))
        if self._pending:
            self._arm()

    def read_ahead(self) -> None:
        """Buffered: receive (and walk) the rest of the current message now, to be handed to
        the transport as it asks; a no-op without a walker, on the framed transport (which
        reads a frame whole first) and once the message has been walked whole. The size limit
        and the message's clock hold as for any read; a malformed byte stops it (the bytes
        before it are handed out, then the error is raised as usual)."""
        walker = self._walker
        if walker is None or self._framed:
            return
        while walker.messages <= self._message and self._malformed is None:
            if self._received + len(self._pending) + walker.value_left() > self.limit:
                raise MessageTooLarge(self.limit)
            data = self._recv(_MAX_RECV)
            if self._deadline is None:
                self._arm()
            self._pending.append(data[: self._walk(data)])

    def may_hold_list_keys(self) -> bool:
        """Whether the current message may hold a non-empty map keyed by lists or sets: True
        unless the walker has followed it whole and met none (see :meth:`read_ahead`)."""
        return self._walked_mark("list_keys_last")

    def may_hold_bad_text(self) -> bool:
        """Whether a string of the current message may not be valid UTF-8: True unless the
        walker has followed it whole and every string was plain ASCII or valid UTF-8."""
        return self._walked_mark("text_suspect_last")

    def take_walked(self, transport: Any) -> bytes | None:
        """Buffered: the rest of the current message, walked whole and holding only valid
        text, taken out of ``transport`` and of the bytes waiting (with whatever follows it:
        the caller gives that back, ``give_back``); None (nothing taken) on the framed
        transport or when the message was not walked so."""
        walker = self._walker
        if self._framed or walker is None or self.may_hold_bad_text():
            return None
        # What the transport holds: what it was handed less the message header the protocol
        # read (strict binary: 12 bytes and the name), taken in one read when that is so.
        header = 12 + len(walker.method.encode("utf-8")) if walker.method is not None else 0
        pieces = [self._drain(transport, self._received - header if header else 0)]
        while self._pending:
            pieces.append(self._pending.take(len(self._pending)))
            self._received += len(pieces[-1])
        return b"".join(pieces)

    def give_back(self, data: bytes) -> None:
        """Bytes ``take_walked`` returned that are to be handed out (again)."""
        self._received -= len(data)
        self._pending.push_front(data)

    def message_read(self) -> None:
        """The message has been read: its clock stops, the reply is written without one."""
        if self._framed:
            if self._frames:
                self._frames.popleft()
        else:
            self._deadline = None
        if self._timed:
            assert self.sock is not None
            self.sock.settimeout(None)
            self._timed = False

    def _walked_mark(self, mark: str) -> bool:
        walker = self._walker
        if walker is None or walker.messages <= self._message:
            return True
        return bool(getattr(walker, mark) >= self._message)

    def read(self, sz: int) -> bytes:
        """Up to ``sz`` bytes; raises MessageTooLarge past the limit, MessageTimeout past the
        deadline, EOF when closed."""
        if self._probing:
            raise _TransportEmpty
        if self._framed:
            if self._malformed is not None:
                raise self._malformed
            data = self._recv(min(sz, _MAX_RECV))
            data = data[: self._check_frames(data)]
            if not data and self._malformed is not None:
                raise self._malformed
            self._received += len(data)
            return data
        if sz > self._suspect:
            raise MessageTooLarge(self.limit)
        if self._pending:
            data = self._pending.take(sz)
        elif self._malformed is not None:
            raise self._malformed
        else:
            room = self.limit - self._received
            data = self._recv(min(sz, room + 1, _MAX_RECV))
            if self._deadline is None:
                self._arm()
            if self._walker is not None:
                data = data[: self._walk(data)]
                if not data:
                    assert self._malformed is not None
                    raise self._malformed
        self._received += len(data)
        if self._received > self.limit:
            raise MessageTooLarge(self.limit)
        return data

    def _walk(self, data: bytes) -> int:
        """How many bytes of ``data`` the walker accepts; past a malformed byte it also keeps
        the error to raise once those are handed out."""
        walker = self._walker
        assert walker is not None
        good = walker.feed(data)
        if good < len(data):
            self._malformed = MalformedMessage(walker.error or "", walker.method, walker.seqid)
        return good

    def _decodable(self) -> int:
        """Bytes of the current message the decoder may have read."""
        if self._framed:  # the transport reads a whole frame before decoding any of it
            return self._frames[0] if self._frames else 0
        return self._received

    def _arm(self) -> None:
        if self.message_timeout > 0:
            self._deadline = time.monotonic() + self.message_timeout

    def _recv(self, size: int) -> bytes:
        sock = self.sock
        assert sock is not None
        if self._deadline is None:
            if self._timed:
                sock.settimeout(None)
                self._timed = False
        else:
            sock.settimeout(max(self._deadline - time.monotonic(), _LAST_LOOK))
            self._timed = True
        try:
            data = sock.recv(size)
        except TimeoutError:
            raise MessageTimeout(self.message_timeout, self._received) from None
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "TSocket read 0 bytes")
        return data

    def _drain(self, transport: Any, expected: int = 0) -> bytes:
        """What ``transport`` has buffered and not handed out, taken out of it (in order);
        ``expected``: how many bytes it likely holds (read at once when it holds them)."""
        chunks: list[bytes] = []
        size = expected if expected > 0 else 1  # the usual answer is "nothing": one probe
        grow = True
        self._probing = True
        try:
            while True:
                try:
                    chunks.append(transport.read(size))
                except _TransportEmpty:
                    if size == 1:
                        break
                    size //= 2
                    continue
                if size == expected:  # all that was expected: one probe for more
                    size, expected = 1, 0
                elif grow and size == 1:  # something is there: take it in chunks
                    size, grow = _DRAIN_CHUNK, False
        finally:
            self._probing = False
        return b"".join(chunks)

    def _check_frames(self, data: bytes) -> int:
        """Follow the frame boundaries in ``data``; refuse a frame header over the limit.

        How many bytes of ``data`` may be handed over: all, or those before a malformed byte
        of a frame's payload."""
        pos, end = 0, len(data)
        while pos < end:
            if self._frame_left:
                step = min(self._frame_left, end - pos)
                if self._walker is not None:
                    good = self._walk(data[pos : pos + step])
                    if good < step:
                        return pos + good
                self._frame_left -= step
                pos += step
                if not self._frame_left:
                    self._deadline = None
                continue
            if not self._header:
                self._arm()
            need = 4 - len(self._header)
            self._header += data[pos : pos + need]
            pos += need
            if len(self._header) < 4:
                return end
            size = int.from_bytes(self._header, "big", signed=True)
            self._header = b""
            if size <= 0:
                raise TTransportException(
                    TTransportException.UNKNOWN, f"invalid frame length {size}"
                )
            if size > self.limit:
                raise MessageTooLarge(self.limit, size)
            self._frames.append(size)
            self._frame_left = size
        return end


class _Pending:
    """Bytes waiting to be handed out, in order: chunks, the first one read from an offset
    (so that handing out a little of a big chunk copies only that little)."""

    __slots__ = ("_chunks", "_offset", "_size")

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._offset = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, data: bytes) -> None:
        """Add ``data`` after the bytes waiting."""
        if data:
            self._chunks.append(data)
            self._size += len(data)

    def push_front(self, data: bytes) -> None:
        """Add ``data`` before the bytes waiting."""
        if data:
            if self._offset:
                self._chunks[0] = self._chunks[0][self._offset :]
                self._offset = 0
            self._chunks.appendleft(data)
            self._size += len(data)

    def take(self, size: int) -> bytes:
        """Up to ``size`` of the first bytes waiting (at least one when any wait)."""
        if not self._size or size <= 0:
            return b""
        head, offset = self._chunks[0], self._offset
        end = min(len(head), offset + size)
        data = head[offset:end] if offset or end < len(head) else head
        if end == len(head):
            self._chunks.popleft()
            self._offset = 0
        else:
            self._offset = end
        self._size -= len(data)
        return data


def server_tls_context(cert: str, key: str) -> ssl.SSLContext:
    """A server-side TLS context for a PEM certificate (chain) and private key.

    ValueError names the file that cannot be read or the pair that cannot be loaded.
    """
    for role, path in (("certificate", cert), ("key", key)):
        if not os.path.isfile(path):
            raise ValueError(f"TLS {role} file {path!r} does not exist or is not a file")
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise ValueError(f"TLS {role} file {path!r} cannot be read: {exc.strerror}") from exc
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(
            f"TLS certificate {cert!r} and key {key!r} cannot be loaded: {exc}"
        ) from exc
    return context
