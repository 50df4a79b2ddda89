"""SaslSocket over a socket pair: data frames streamed (QOP auth) or wrapped whole by a
security layer (what GSSAPI's auth-int/auth-conf will use)."""

from __future__ import annotations

import socket
import threading

import pytest

from metastore_server.server.sasl import SaslFrameError, SaslServer, SaslSocket


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
        sasl = SaslSocket(ours, Reversing(), max_frame=64)
        theirs.sendall(_frame(b"W" + b"olleh"))
        assert _read_all(sasl, 5) == b"hello"
        sasl.sendall(b"abc")
        assert theirs.recv(100) == _frame(b"Wcba")
        theirs.sendall(_frame(b"x" * 65))
        with pytest.raises(ConnectionError, match="exceeds 64 bytes"):
            sasl.recv(10)


def test_wrapped_payload_that_fails_the_check_is_refused() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours, Reversing())
        theirs.sendall(_frame(b"Xolleh"))
        with pytest.raises(SaslFrameError, match="fails the security layer's check: ValueError"):
            sasl.recv(10)


@pytest.mark.parametrize("layer", [None, Reversing()])
def test_frame_over_the_limit_is_refused_at_its_header(layer: Reversing | None) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours, layer, max_frame=1000)
        theirs.sendall((2**31 - 1).to_bytes(4, "big"))  # nothing of the payload follows
        with pytest.raises(SaslFrameError, match="of 2147483647 bytes exceeds 1000 bytes"):
            sasl.recv(10)


@pytest.mark.parametrize("layer", [None, Reversing()])
def test_truncated_frames_end_the_stream(layer: Reversing | None) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours, layer)
        theirs.sendall(_frame(b"Wabc")[:-1])  # the last byte never comes
        theirs.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sasl.recv(10):
            data += chunk
        assert data == (b"" if layer else b"Wab")


@pytest.mark.parametrize("layer", [None, Reversing()])
def test_a_begun_frame_must_complete_within_the_frame_timeout(layer: Reversing | None) -> None:
    """No timeout set by the caller (between messages): a header (and a wrapped payload) once
    begun is still bounded; the caller's setting is put back."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sasl = SaslSocket(ours, layer, frame_timeout=0.2)
        theirs.sendall(b"\x00\x00" if layer is None else _frame(b"Wabc")[:-1])
        with pytest.raises(TimeoutError):
            sasl.recv(10)
        assert ours.gettimeout() is None


def test_empty_frames_do_not_stretch_the_callers_timeout() -> None:
    """A client sending an empty frame every so often cannot keep one recv going past the
    timeout its caller set."""
    ours, theirs = socket.socketpair()
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.05):
            theirs.sendall(_frame(b""))

    with ours, theirs:
        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        try:
            ours.settimeout(0.5)
            with pytest.raises(TimeoutError):
                SaslSocket(ours).recv(10)
            assert ours.gettimeout() == 0.5
        finally:
            stop.set()
            sender.join()


class Broken:
    """A mechanism with a bug: it raises what it should not."""

    name = "BROKEN"

    def step(self, response: bytes) -> tuple[bytes, bool]:
        raise KeyError("a bug")


def test_a_mechanism_that_raises_ends_only_its_client_with_an_error_frame() -> None:
    server = SaslServer({"BROKEN": Broken}, handshake_timeout=10)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"\x01\x00\x00\x00\x06BROKEN\x02\x00\x00\x00\x00")
        assert server.negotiate(ours, "peer") is None
        answer = theirs.recv(1000)
    assert answer[:1] == b"\x04" and answer[5:] == b"BROKEN negotiation failed on the server"
