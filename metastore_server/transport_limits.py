"""Bounds on what one client connection may make the server read, and the server's TLS context.

thriftpy2's Cython transports and binary protocol trust the lengths they read: a string or
frame length is allocated (``malloc``) and then read until that many bytes have arrived. The
limits are enforced under them, in the socket they read from, so the Cython fast path is kept:

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
"""

from __future__ import annotations

import os
import socket
import ssl

from thriftpy2.transport import TSocket, TTransportException

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "LimitedSocket",
    "MessageTooLarge",
    "server_tls_context",
]

#: Default limit on one incoming message: 256 MiB (Thrift's own default is 100 MiB).
DEFAULT_MAX_MESSAGE_SIZE = 256 * 1024 * 1024
#: Largest ``recv`` asked of the OS at once.
_MAX_RECV = 1024 * 1024
#: Read-buffer slack of thriftpy2's Cython transports (their buffers grow in 4 KiB steps).
_BUFFER_SLACK = 2 * 4096


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


class LimitedSocket(TSocket):
    """A connected server-side socket that enforces ``max_message_size`` while reading."""

    def __init__(self, sock: socket.socket, limit: int, *, framed: bool) -> None:
        super().__init__(sock=sock)
        self.limit = limit
        self._framed = framed
        self._received = 0  # buffered: bytes read since the current message began
        self._suspect = 2 * limit + _BUFFER_SLACK  # buffered: a read this big means > limit
        self._header = b""  # framed: partial frame header seen so far
        self._frame_left = 0  # framed: bytes of the current frame still to come

    def start_message(self) -> None:
        """A new message begins (buffered transport: restart the count)."""
        self._received = 0

    def read(self, sz: int) -> bytes:
        """Up to ``sz`` bytes; raises MessageTooLarge past the limit, EOF when closed."""
        sock = self.sock
        assert sock is not None
        if self._framed:
            data = sock.recv(min(sz, _MAX_RECV))
            if not data:
                raise TTransportException(TTransportException.END_OF_FILE, "TSocket read 0 bytes")
            self._check_frames(data)
            return data
        if sz > self._suspect:
            raise MessageTooLarge(self.limit)
        room = self.limit - self._received
        data = sock.recv(min(sz, room + 1, _MAX_RECV))
        if not data:
            raise TTransportException(TTransportException.END_OF_FILE, "TSocket read 0 bytes")
        self._received += len(data)
        if self._received > self.limit:
            raise MessageTooLarge(self.limit)
        return data

    def _check_frames(self, data: bytes) -> None:
        """Follow the frame boundaries in ``data``; refuse a frame header over the limit."""
        pos, end = 0, len(data)
        while pos < end:
            if self._frame_left:
                step = min(self._frame_left, end - pos)
                self._frame_left -= step
                pos += step
                continue
            need = 4 - len(self._header)
            self._header += data[pos : pos + need]
            pos += need
            if len(self._header) < 4:
                return
            size = int.from_bytes(self._header, "big", signed=True)
            self._header = b""
            if size <= 0:
                raise TTransportException(
                    TTransportException.UNKNOWN, f"invalid frame length {size}"
                )
            if size > self.limit:
                raise MessageTooLarge(self.limit, size)
            self._frame_left = size


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
