"""SaslSocket over a socket pair: data frames streamed (QOP auth) or wrapped whole by a
security layer (what GSSAPI's auth-int/auth-conf will use)."""

from __future__ import annotations

import socket

import pytest

from metastore_server.server.sasl import SaslSocket


class Reversing:
    """A toy security layer: a payload is the data reversed behind a marker."""

    def wrap(self, data: bytes) -> bytes:
        return b"W" + data[::-1]

    def unwrap(self, payload: bytes) -> bytes:
        if not payload.startswith(b"W"):
            raise ValueError("payload does not check")
        return payload[1:][::-1]


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


def _read_all(sock: SaslSocket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, data
        data += chunk
    return data


def test_streamed_frames_skip_empty_ones_and_end_cleanly() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours)
        theirs.sendall(_frame(b"hello ") + _frame(b"") + _frame(b"world"))
        assert _read_all(sasl, 11) == b"hello world"
        sasl.sendall(b"answer")
        sasl.sendall(b"")  # nothing is sent for nothing
        assert theirs.recv(100) == _frame(b"answer")
        theirs.sendall(b"\x00\x00")  # half a header, then the end
        theirs.shutdown(socket.SHUT_WR)
        assert sasl.recv(10) == b""


def test_streamed_frame_is_never_read_past_what_is_asked() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours)
        theirs.sendall((2**31 - 1).to_bytes(4, "big") + b"abc")  # a huge frame, begun
        assert sasl.recv(2) == b"ab"
        assert sasl.recv(100) == b"c"


def test_negative_frame_length_is_refused() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"\xff\xff\xff\xfe")
        with pytest.raises(ConnectionError, match="invalid SASL data frame length -2"):
            SaslSocket(ours).recv(10)


def test_wrapped_frames_go_through_the_security_layer() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours, Reversing(), max_wrapped=64)
        theirs.sendall(_frame(b"W" + b"olleh"))
        assert _read_all(sasl, 5) == b"hello"
        sasl.sendall(b"abc")
        assert theirs.recv(100) == _frame(b"Wcba")
        theirs.sendall(_frame(b"x" * 65))
        with pytest.raises(ConnectionError, match="exceeds 64 bytes"):
            sasl.recv(10)
