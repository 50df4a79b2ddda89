"""Hostile clients of a server with authentication on, for both ``--auth password`` (SASL
PLAIN) and ``--auth kerberos`` (SASL GSSAPI, against the test KDC), over real sockets:
malformed negotiation frames, a header declaring a huge token, garbage mechanism tokens,
clients trickling the negotiation a byte at a time (one, and many at once while a good client
is served), and clients that log in and then send a data frame over the limit, a negative or
truncated one, or (auth-int, auth-conf) one that fails its integrity check. Each is answered
where the protocol has an answer, closed, and logged with the reason; other clients go on and
the server stays up. (test_sasl.py has the PLAIN basics: bad credentials, garbage first byte.)"""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs
from support.kdc import KDC_SKIP_REASON, Kdc
from support.sasl_client import (
    GssapiSasl,
    gssapi_client,
    negotiation_frame,
    read_exactly,
    read_frame,
    sasl_client,
)
from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.server import sasl, thrift_server
from metastore_server.server.app import build_handler
from metastore_server.server.auth import build_sasl_server
from metastore_server.server.config import ServerConfig
from metastore_server.server.passwords import hash_password
from metastore_server.server.thrift_server import MetastoreServer
from metastore_server.thrift_api import hms

pytestmark = pytest.mark.any_store

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
SERVICE = "hive/localhost"
#: The servers' max_message_size: small, so that frames over it are cheap to declare.
LIMIT = 64 * 1024
#: The servers' message_timeout (a begun data frame must arrive within it).
MESSAGE_TIMEOUT = 2.0
#: Most the (in-process) server may grow while refusing a huge declared token.
RSS_SLACK_KB = 64 * 1024
_GSSAPI_SKIP = KDC_SKIP_REASON or (
    "python-gssapi is not installed (needs libkrb5-dev)"
    if importlib.util.find_spec("gssapi") is None else None
)  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_loggers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loggers that follow the configuration of the moment (capture_logs must see them)."""
    monkeypatch.setattr(sasl, "log", structlog.get_logger(sasl.__name__))
    monkeypatch.setattr(thrift_server, "log", structlog.get_logger(thrift_server.__name__))


@dataclass
class Auth:
    """One ``--auth`` mode under test and how a client logs in to it."""

    mode: str  # the --auth value
    mechanism: str
    settings: dict[str, Any]
    ccache: str = ""  # GSSAPI: a ticket of a user

    def client(self, address: tuple[str, int], layer: int = 1, timeout_ms: int = 20000) -> Any:
        """A logged-in Thrift client."""
        if self.mechanism == "PLAIN":
            return sasl_client(*address, "alice", "wonderland", timeout_ms=timeout_ms)
        return gssapi_client(*address, self.ccache, layer=layer, timeout_ms=timeout_ms)

    def login(self, sock: socket.socket, layer: int = 1) -> GssapiSasl | None:
        """Negotiate by hand on ``sock`` (the GSSAPI client, to wrap data frames with)."""
        if self.mechanism == "PLAIN":
            sock.sendall(negotiation_frame(START, b"PLAIN") +
                         negotiation_frame(OK, b"\0alice\0wonderland"))  # fmt: skip
            assert read_frame(sock) == (COMPLETE, b"")
            return None
        gss = GssapiSasl("hive", "localhost", ccache=self.ccache, layer=layer)
        ok, _, first = gss.start("GSSAPI")
        assert ok, gss.getError()
        sock.sendall(negotiation_frame(START, b"GSSAPI") + negotiation_frame(OK, first))
        while True:
            status, challenge = read_frame(sock)
            if status == COMPLETE:
                return gss
            assert status == OK, (status, challenge)
            ok, answer = gss.step(challenge)
            assert ok, gss.getError()
            sock.sendall(negotiation_frame(OK, answer))


@pytest.fixture(scope="module")
def password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "passwords"
    path.write_text(f"alice:{hash_password('wonderland')}\n")
    return path


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kdc]:
    with Kdc(tmp_path_factory.mktemp("kdc")) as running:
        running.add_principal(SERVICE)
        running.add_principal("alice", password="alice-secret")
        yield running


@pytest.fixture(params=["plain", pytest.param("gssapi", marks=pytest.mark.skipif(
    _GSSAPI_SKIP is not None, reason=_GSSAPI_SKIP or ""))])  # fmt: skip
def auth(request: pytest.FixtureRequest, password_file: Path, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Auth:  # fmt: skip
    """PLAIN against a password file, or GSSAPI with a keytab and a user's ticket."""
    if request.param == "plain":
        return Auth("password", "PLAIN", {"password_file": str(password_file)})
    kdc: Kdc = request.getfixturevalue("kdc")
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    keytab = kdc.keytab(SERVICE, tmp_path / "hive.keytab")
    cache = kdc.kinit("alice", password="alice-secret", cache=tmp_path / "cc_alice")
    settings = {"kerberos_principal": f"{SERVICE}@{kdc.realm}", "kerberos_keytab": str(keytab)}
    return Auth("kerberos", "GSSAPI", settings, str(cache))


@pytest.fixture()
def serve(auth: Auth, tmp_path: Path) -> Iterator[Callable[..., MetastoreServer]]:
    """Starts servers of ``auth``'s mode (``qop``, ``handshake_timeout`` as asked; the small
    LIMIT and MESSAGE_TIMEOUT); stops them at the end of the test."""
    started: list[tuple[MetastoreServer, Callable[[], None]]] = []

    def start(qop: str = "auth", handshake_timeout: float = 30.0) -> MetastoreServer:
        where = tmp_path / f"server{len(started)}"
        config = ServerConfig(storage=f"sqlite:///{where / 'm.db'}", warehouse=str(where / "w"))
        where.mkdir()
        handler, close = build_handler(config)
        sasl_server = build_sasl_server(
            auth.mode, sasl_qop=qop, handshake_timeout=handshake_timeout, **auth.settings
        )
        server = MetastoreServer(handler, "127.0.0.1", 0, sasl=sasl_server, max_message_size=LIMIT,
                                 message_timeout=MESSAGE_TIMEOUT)  # fmt: skip
        server.start()
        started.append((server, close))
        return server

    yield start
    for server, close in started:
        server.stop()
        close()


@pytest.fixture()
def server(serve: Callable[..., MetastoreServer]) -> MetastoreServer:
    return serve()


# --------------------------------------------------------------------------- helpers


def _closed_by_server(sock: socket.socket, timeout: float = 20.0) -> bytes:
    """Everything the server sent until it closed the connection (fails if it does not
    within ``timeout``, a bound, not a measure)."""
    sock.settimeout(timeout)
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return received
        except TimeoutError:
            raise AssertionError(f"the server did not close the connection: {received!r}") from None
        if not chunk:
            return received
        received += chunk


def _refusal(sock: socket.socket) -> tuple[int, bytes]:
    """The one frame the server answers with before it closes the connection."""
    answer = _closed_by_server(sock)
    assert len(answer) >= 5, answer
    status, length = struct.unpack(">BI", answer[:5])
    assert len(answer) == 5 + length, answer
    return status, answer[5:]


def _logged(logs: list[dict], event: str, count: int = 1) -> list[dict]:
    """The log entries ``event`` (server threads log a moment after the client sees the close)."""
    deadline = time.monotonic() + 20
    while True:
        found = [entry for entry in logs if entry["event"] == event]
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, f"{count} {event} not logged: {logs}"
        time.sleep(0.02)


def _connect(server: MetastoreServer) -> socket.socket:
    return socket.create_connection(server.address, timeout=20)


def _serves(server: MetastoreServer, auth: Auth, layer: int = 1) -> None:
    """A good client logs in and is answered."""
    client = auth.client(server.address, layer)
    try:
        assert "default" in client.get_all_databases()
    finally:
        client.close()


def _call_bytes() -> bytes:
    """A get_all_databases call as a binary-protocol client sends it."""
    buffer = TMemoryBuffer()
    proto = TCyBinaryProtocolFactory().get_protocol(buffer)
    proto.write_message_begin("get_all_databases", TMessageType.CALL, 1)
    proto.write_struct(hms.ThriftHiveMetastore.get_all_databases_args())
    proto.write_message_end()
    proto.trans.flush()
    return buffer.getvalue()


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


# --------------------------------------------------------------------------- negotiation frames


def _mechanism(auth: Auth) -> bytes:
    return auth.mechanism.encode()


@pytest.mark.parametrize(
    ("sent", "answer"),
    [
        (lambda m: negotiation_frame(OK, m), b"Expecting START status, received OK"),
        (lambda m: negotiation_frame(COMPLETE, m), b"Expecting START status, received COMPLETE"),
        (lambda m: negotiation_frame(START, m) + negotiation_frame(START, m),
         b"Expected COMPLETE or OK, got START"),
        (lambda m: negotiation_frame(START, m) + b"\x07\x00\x00\x00\x01x", b"Invalid status 7"),
        (lambda m: negotiation_frame(START, m) + b"\x00\x00\x00\x00\x00", b"Invalid status 0"),
    ],
    ids=["ok-first", "complete-first", "start-twice", "status-7-mid", "status-0-mid"],
)  # fmt: skip
def test_frames_out_of_turn_or_of_unknown_status_get_an_error_frame(
    server: MetastoreServer, auth: Auth, sent: Callable[[bytes], bytes], answer: bytes
) -> None:
    with capture_logs() as logs, _connect(server) as sock:
        sock.sendall(sent(_mechanism(auth)))
        assert _refusal(sock) == (ERROR, answer)
        assert answer.decode().lower() in _logged(logs, "sasl_refused")[0]["reason"].lower()
    _serves(server, auth)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (b"", b"''"),
        (b"\xff\xfe\x00PLAIN", b"b'\\xff\\xfe\\x00PLAIN'"),
        (b"GSSAPI\nsasl_authenticated user=root", b"'GSSAPI\\nsasl_authenticated user=root'"),
        (b"\x00\x00\x00\x00", b"'\\x00\\x00\\x00\\x00'"),
    ],
    ids=["empty", "not-utf8", "newline", "nul"],
)
def test_odd_mechanism_names_are_refused_and_shown_quoted(
    server: MetastoreServer, auth: Auth, name: bytes, shown: bytes
) -> None:
    with capture_logs() as logs, _connect(server) as sock:
        sock.sendall(negotiation_frame(START, name))
        status, payload = _refusal(sock)
        assert status == BAD
        assert payload.startswith(b"Unsupported mechanism type " + shown + b" (this server")
        assert auth.mechanism.encode() in payload
        reason = _logged(logs, "sasl_refused")[0]["reason"]
    assert "\n" not in reason and "\x00" not in reason  # no forged log lines
    _serves(server, auth)


def test_a_long_mechanism_name_is_cut_in_the_answer(server: MetastoreServer, auth: Auth) -> None:
    with _connect(server) as sock:
        sock.sendall(negotiation_frame(START, b"X" * 60000))
        status, payload = _refusal(sock)
    assert status == BAD
    assert b"'" + b"X" * 64 + b"'..." in payload and len(payload) < 200


@pytest.mark.parametrize("after_start", [False, True], ids=["start", "response"])
def test_a_huge_token_is_refused_at_its_header(
    server: MetastoreServer, auth: Auth, after_start: bool
) -> None:
    """A frame declaring 2 GiB is answered at once: the server waits for none of it (the test
    sends none) and allocates nothing for it."""
    before = _rss_kb()
    with capture_logs() as logs, _connect(server) as sock:
        begun = negotiation_frame(START, _mechanism(auth)) if after_start else b""
        sock.sendall(begun + struct.pack(">BI", OK if after_start else START, 2**31))
        assert _refusal(sock) == (
            ERROR, b"Invalid payload header length: 2147483648 (at most 65536 bytes)")  # fmt: skip
        _logged(logs, "sasl_refused")
    assert _rss_kb() - before < RSS_SLACK_KB
    _serves(server, auth)


@pytest.mark.parametrize(
    "sent",
    [b"\x01\x00\x00", negotiation_frame(START, b"PLAIN")[:7], b"\x01\x00\x00\x00\x06GSS"],
    ids=["half-header", "half-name", "name-cut"],
)
def test_truncated_frames_then_close(server: MetastoreServer, auth: Auth, sent: bytes) -> None:
    with capture_logs() as logs, _connect(server) as sock:
        sock.sendall(sent)
        sock.shutdown(socket.SHUT_WR)
        assert _closed_by_server(sock) == b""  # nothing to answer a client that left
        line = _logged(logs, "sasl_refused")[0]
    assert line["reason"].startswith("connection lost: EOFError: closed while sending")
    assert line["log_level"] == "info"
    _serves(server, auth)


def test_garbage_mechanism_tokens_get_a_bad_frame(server: MetastoreServer, auth: Auth) -> None:
    """PLAIN: messages that are not authzid NUL authcid NUL password in UTF-8; GSSAPI: tokens
    that are no Kerberos token (the log says what GSSAPI made of them)."""
    garbage = [b"\x60\x82\xff\xff" + b"\x00" * 40, b"\xff" * 300, b"no nul bytes", b"a\0\xff\0b"]
    for token in garbage:
        with capture_logs() as logs, _connect(server) as sock:
            sock.sendall(negotiation_frame(START, _mechanism(auth)) + negotiation_frame(OK, token))
            status, payload = _refusal(sock)
            reason = _logged(logs, "sasl_refused")[0]["reason"]
        assert status == BAD, payload
        if auth.mechanism == "GSSAPI":
            assert payload == b"GSS initiate failed"
            assert reason.startswith("GSSAPI: context not accepted: "), reason
            assert len(reason) > 40  # and says what the library made of it
        else:
            assert payload.startswith(b"PLAIN message"), payload
    _serves(server, auth)


@pytest.mark.skipif(_GSSAPI_SKIP is not None, reason=_GSSAPI_SKIP or "")
def test_garbage_in_place_of_the_security_layer_answer(
    serve: Callable[..., MetastoreServer], auth: Auth
) -> None:
    """GSSAPI: the context is made, then the client answers the layer offer with garbage, with
    a layer the server does not offer, or with an answer too short to hold one."""
    if auth.mechanism != "GSSAPI":
        pytest.skip("the security layer exchange is GSSAPI's")
    server = serve(qop="auth-conf")
    answers: list[Callable[[Any], bytes]] = [
        lambda context: b"\x05\x04garbage",
        lambda context: bytes(context.wrap(b"\x01\xff\xff\xff", False).message),  # no layer
        lambda context: bytes(context.wrap(b"\x04", False).message),  # too short
    ]
    reasons = []
    for answer in answers:
        gss = GssapiSasl("hive", "localhost", ccache=auth.ccache, layer=4)
        with capture_logs() as logs, _connect(server) as sock:
            _, _, first = gss.start("GSSAPI")
            sock.sendall(negotiation_frame(START, b"GSSAPI") + negotiation_frame(OK, first))
            while not gss.context.complete:  # (the test drives the context)
                status, challenge = read_frame(sock)
                assert status == OK
                _, token = gss.step(challenge)
                sock.sendall(negotiation_frame(OK, token))
            assert read_frame(sock)[0] == OK  # the server's (wrapped) offer of layers
            sock.sendall(negotiation_frame(OK, answer(gss.context)))
            status, payload = _refusal(sock)
            assert status == BAD, payload
            reasons.append(_logged(logs, "sasl_refused")[0]["reason"])
    assert reasons[0].startswith("GSSAPI: security layer answer does not unwrap: ")
    assert "layer 1 chosen, 4 offered" in reasons[1]
    assert reasons[2] == "GSSAPI: security layer answer of 1 bytes (at least 4)"
    _serves(server, auth, layer=4)


# --------------------------------------------------------------------------- slow clients


def _trickle(sock: socket.socket, data: bytes, gap: float, stop: threading.Event) -> None:
    """Send ``data`` one byte every ``gap`` s until it is all sent, ``stop`` is set or the
    server closes the connection."""
    for byte in data:
        if stop.wait(gap):
            return
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return


def _slow_login(auth: Auth) -> bytes:
    """A negotiation start that a byte every 0.2 s takes far longer than the tests' timeouts
    to send (its response is a padded, never completed one)."""
    return negotiation_frame(START, _mechanism(auth)) + negotiation_frame(OK, b"\0" * 400)


def test_a_trickled_negotiation_is_cut_at_the_handshake_timeout(
    serve: Callable[..., MetastoreServer], auth: Auth
) -> None:
    """Bytes keep coming, one every 0.2 s: the whole negotiation is timed, not each read."""
    server = serve(handshake_timeout=2.0)
    stop = threading.Event()
    with capture_logs() as logs, _connect(server) as sock:
        sender = threading.Thread(target=_trickle, args=(sock, _slow_login(auth), 0.2, stop))
        sender.start()
        try:
            assert _closed_by_server(sock, timeout=60) == b""
        finally:
            stop.set()
            sender.join()
        line = _logged(logs, "sasl_refused")[0]
    assert line["reason"].startswith("negotiation not complete after 2 s (waiting for")
    _serves(server, auth)


def test_many_trickling_clients_hold_up_no_good_client(
    serve: Callable[..., MetastoreServer], auth: Auth
) -> None:
    """40 clients trickle their negotiation while good clients log in and make calls: each
    call is answered within the clients' own timeout (10 s, shorter than the handshake timeout
    that frees the trickling ones: a server stalled by them would leave the calls unanswered);
    the trickling ones are then all cut at the handshake timeout and logged."""
    server = serve(handshake_timeout=15.0)
    stop = threading.Event()
    with capture_logs() as logs, contextlib.ExitStack() as stack:
        slow = [stack.enter_context(_connect(server)) for _ in range(40)]
        senders = [threading.Thread(target=_trickle, args=(sock, _slow_login(auth), 0.2, stop))
                   for sock in slow]  # fmt: skip
        for sender in senders:
            sender.start()
        try:
            for number in range(3):
                client = auth.client(server.address, timeout_ms=10000)
                try:
                    db = f"good{number}"
                    client.create_database(hms.Database(name=db, description="", parameters={}))
                    assert db in client.get_all_databases()
                finally:
                    client.close()
            for sock in slow:
                assert _closed_by_server(sock, timeout=60) == b""
        finally:
            stop.set()
            for sender in senders:
                sender.join()
        cut = _logged(logs, "sasl_refused", 40)
    assert all(line["reason"].startswith("negotiation not complete after 15 s") for line in cut)
    assert len(_logged(logs, "sasl_authenticated", 3)) == 3
    _serves(server, auth)


# --------------------------------------------------------------------------- data frames


def test_a_data_frame_over_the_limit_is_refused_at_its_header(
    server: MetastoreServer, auth: Auth
) -> None:
    before = _rss_kb()
    with capture_logs() as logs, _connect(server) as sock:
        auth.login(sock)
        sock.sendall(struct.pack(">I", 2**31 - 1))  # and nothing of the payload
        assert _closed_by_server(sock) == b""
        line = _logged(logs, "connection_closed_message_too_large")[0]
    assert (line["size"], line["max_message_size"]) == (2**31 - 1, LIMIT)
    assert _rss_kb() - before < RSS_SLACK_KB
    _serves(server, auth)


def test_a_negative_data_frame_length_closes_the_connection(
    server: MetastoreServer, auth: Auth
) -> None:
    with capture_logs() as logs, _connect(server) as sock:
        auth.login(sock)
        sock.sendall(b"\xff\xff\xff\xf0")
        assert _closed_by_server(sock) == b""
        line = _logged(logs, "connection_closed_bad_sasl_frame")[0]
    assert line["reason"] == "invalid SASL data frame length -16"
    _serves(server, auth)


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_truncated_data_frames(serve: Callable[..., MetastoreServer], auth: Auth, qop: str) -> None:
    """Logged in, a call's frame is cut short: closed by the client, the server lets go;
    left hanging (half a header, or half a frame), the server cuts it at message_timeout."""
    if auth.mechanism == "PLAIN" and qop != "auth":
        pytest.skip("PLAIN has no security layer")
    layer = {"auth": 1, "auth-int": 2, "auth-conf": 4}[qop]
    server = serve(qop=qop)
    call = _call_bytes()
    with capture_logs() as logs:
        for cut, close in [(10, True), (2, False), (10, False)]:
            with _connect(server) as sock:
                gss = auth.login(sock, layer)
                if gss is not None and layer != 1:
                    frame = gss.encode(call)[1]  # (the length header included)
                else:
                    frame = struct.pack(">I", len(call)) + call
                sock.sendall(frame)  # one whole call first: answered
                assert read_exactly(sock, 4)
                sock.sendall(frame[:cut])
                if close:
                    sock.shutdown(socket.SHUT_WR)
                _closed_by_server(sock)
        timeouts = _logged(logs, "connection_closed_message_timeout", 2)
    assert {line["message_timeout"] for line in timeouts} == {MESSAGE_TIMEOUT}
    _serves(server, auth, layer)


@pytest.mark.skipif(_GSSAPI_SKIP is not None, reason=_GSSAPI_SKIP or "")
@pytest.mark.parametrize("qop", ["auth-int", "auth-conf"])
def test_a_data_frame_failing_its_integrity_check_closes_the_connection(
    serve: Callable[..., MetastoreServer], auth: Auth, qop: str
) -> None:
    if auth.mechanism != "GSSAPI":
        pytest.skip("PLAIN has no security layer")
    layer = {"auth-int": 2, "auth-conf": 4}[qop]
    server = serve(qop=qop)
    with capture_logs() as logs:
        for spoil in (lambda b: b[:-1] + bytes([b[-1] ^ 1]), lambda b: b"\x05\x04" + b[6:],
                      lambda b: b"\x00" * len(b)):  # fmt: skip
            with _connect(server) as sock:
                gss = auth.login(sock, layer)
                assert gss is not None
                sock.sendall(gss.encode(_call_bytes())[1])
                (length,) = struct.unpack(">I", read_exactly(sock, 4))
                assert gss.decode(b"...." + read_exactly(sock, length))[1]  # answered
                wrapped = gss.encode(_call_bytes())[1][4:]
                spoiled = spoil(wrapped)
                sock.sendall(struct.pack(">I", len(spoiled)) + spoiled)
                assert _closed_by_server(sock) == b""
        lines = _logged(logs, "connection_closed_bad_sasl_frame", 3)
    assert all("fails the security layer's check: " in line["reason"] for line in lines), lines
    _serves(server, auth, layer)
