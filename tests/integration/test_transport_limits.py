"""Malformed, truncated and oversized messages over real sockets; max_message_size; the decode
budget; message_timeout; the connection limit. Each bad connection is closed alone and the
server keeps serving."""

from __future__ import annotations

import random
import socket
import ssl
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import structlog
from support import test_storage
from support.tls import make_certificate
from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TMemoryBuffer, TTransportException

from metastore_server.cli import main as cli
from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig
from metastore_server.server.thrift_server import MetastoreServer
from metastore_server.server.transport_limits import DECODE_RATIO
from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer, _storage_url

pytestmark = pytest.mark.any_store

CALL = 0x80010000 | TMessageType.CALL
SMALL_LIMIT = 64 * 1024
#: Most the server process may grow over the malformed cases (the server is in-process).
RSS_SLACK_KB = 64 * 1024


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def _i32(value: int) -> bytes:
    return struct.pack("!i", value)


def _string(text: str) -> bytes:
    data = text.encode()
    return _i32(len(data)) + data


def _header(name: str, msg_type: int = CALL, seqid: int = 1) -> bytes:
    return struct.pack("!I", msg_type) + _string(name) + _i32(seqid)


def _connect(server: RunningServer) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=10)
    return sock


def _closed_by_server(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sent until it closed the connection (fails if it does not)."""
    sock.settimeout(timeout)
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return received
        except TimeoutError:
            break
        if not chunk:
            return received
        received += chunk
    raise AssertionError("the server did not close the connection")


def _still_serves(server: RunningServer, **kwargs: object) -> None:
    fresh = server.client(**kwargs)
    try:
        assert "default" in fresh.get_all_databases()
    finally:
        fresh.close()


def _call_bytes(name: str, args: object, *, framed: bool = False) -> bytes:
    """The exact bytes a binary-protocol client sends for one call."""
    buffer = TMemoryBuffer()
    proto = TCyBinaryProtocolFactory().get_protocol(buffer)
    proto.write_message_begin(name, TMessageType.CALL, 1)
    proto.write_struct(args)
    proto.write_message_end()
    proto.trans.flush()
    payload = buffer.getvalue()
    return _i32(len(payload)) + payload if framed else payload


def _create_database_args(name: str, description_len: int) -> object:
    database = hms.Database(name=name, description="d" * description_len, parameters={})
    return hms.ThriftHiveMetastore.create_database_args(database=database)


@pytest.fixture(scope="module")
def buffered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server on the default transport with the default limit."""
    server = RunningServer(tmp_path_factory.mktemp("limits-buffered"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def framed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server on the framed transport with the default limit."""
    server = RunningServer(tmp_path_factory.mktemp("limits-framed"), transport="framed")
    yield server
    server.stop()


# --------------------------------------------------------------------------- malformed input

STRING_FIELD_GET_DATABASE = _header("get_database") + b"\x0b\x00\x01"  # field 1: string
LIST_FIELD_BY_NAMES = (
    _header("get_partitions_by_names")
    + b"\x0b\x00\x01"
    + _string("default")
    + b"\x0b\x00\x02"
    + _string("t")
    + b"\x0f\x00\x03\x0b"  # field 3: list<string>
)
MAP_FIELD_CREATE_DB = (
    _header("create_database")
    + b"\x0c\x00\x01"  # field 1: Database
    + b"\x0d\x00\x04\x0b\x0b"  # its field 4 (parameters): map<string, string>
)

#: Inputs after which the server must close the connection by itself.
SELF_CLOSING = {
    "garbage": bytes(random.Random(7).getrandbits(8) for _ in range(4096)),
    "wrong_version": struct.pack("!I", 0x80020000 | TMessageType.CALL) + _string("x") + _i32(1),
    "no_version_header": _i32(16) + b"garbage-not-thrift" * 4,
    "huge_name_length": struct.pack("!I", CALL) + _i32(2**31 - 1) + b"abc",
    "1gib_name_length": struct.pack("!I", CALL) + _i32(2**30) + b"abc",
    "negative_name_length": struct.pack("!I", CALL) + _i32(-5) + b"abc" * 10,
    "huge_string_arg": STRING_FIELD_GET_DATABASE + _i32(2**31 - 1) + b"x" * 100,
    "1gib_string_arg": STRING_FIELD_GET_DATABASE + _i32(2**30) + b"x" * 100,
    "negative_string_arg": STRING_FIELD_GET_DATABASE + _i32(-1) + b"\x00" * 16,
    "unknown_message_type": _header("get_all_databases", 0x80010000 | 7) + b"\x00",
    "unknown_field_type": _header("get_database") + b"\x42\x00\x01" + b"\x00" * 8,
}

#: Inputs that leave the server waiting for more: the client then closes.
CLIENT_CLOSING = {
    "truncated_call": _header("get_database") + b"\x0b\x00\x01" + _i32(10) + b"def",
    "truncated_header": struct.pack("!I", CALL)[:3],
    "huge_list_size": LIST_FIELD_BY_NAMES + _i32(2**31 - 1) + _string("ds=1") * 1000,
    "huge_map_size": MAP_FIELD_CREATE_DB + _i32(2**31 - 1) + (_string("k") + _string("v")) * 1000,
    "negative_list_size": LIST_FIELD_BY_NAMES + _i32(-7),
}


@pytest.mark.parametrize("name", sorted(SELF_CLOSING))
def test_malformed_message_closes_only_that_connection(buffered: RunningServer, name: str) -> None:
    before = _rss_kb()
    bystander = buffered.client()  # an open connection that must not be disturbed
    with _connect(buffered) as sock:
        try:
            sock.sendall(SELF_CLOSING[name])
        except (ConnectionResetError, BrokenPipeError):
            pass  # closed while we were still sending
        answer = _closed_by_server(sock)
    if name == "unknown_message_type":
        assert b"Invalid message type" in answer
    assert "default" in bystander.get_all_databases()
    bystander.close()
    _still_serves(buffered)
    assert _rss_kb() - before < RSS_SLACK_KB


@pytest.mark.parametrize("name", sorted(CLIENT_CLOSING))
def test_incomplete_message_then_close(buffered: RunningServer, name: str) -> None:
    before = _rss_kb()
    with _connect(buffered) as sock:
        sock.sendall(CLIENT_CLOSING[name])
        time.sleep(0.2)
        _still_serves(buffered)  # while that connection waits for the rest
    _still_serves(buffered)
    assert _rss_kb() - before < RSS_SLACK_KB


@pytest.mark.parametrize("size", [2**31 - 1, 2**30, 300 * 1024 * 1024, 0, -1])
def test_framed_bad_frame_header_is_refused_at_once(framed: RunningServer, size: int) -> None:
    before = _rss_kb()
    with _connect(framed) as sock:
        sock.sendall(_i32(size) + b"\x80\x01\x00\x01" + b"x" * 64)
        _closed_by_server(sock, timeout=5)
    _still_serves(framed, framed=True)
    assert _rss_kb() - before < RSS_SLACK_KB


def test_framed_garbage_and_truncated_frame(framed: RunningServer) -> None:
    with _connect(framed) as sock:
        sock.sendall(_i32(64) + b"\xff" * 64)
        _closed_by_server(sock)
    with _connect(framed) as sock:
        sock.sendall(_i32(1000) + _header("get_all_databases"))
    _still_serves(framed, framed=True)


def test_buffered_declared_length_beyond_the_limit_is_refused_at_once(
    tmp_path: Path,
) -> None:
    """Declared far beyond the limit: closed without waiting for the bytes."""
    server = RunningServer(tmp_path, max_message_size=SMALL_LIMIT)
    try:
        with _connect(server) as sock:
            sock.sendall(STRING_FIELD_GET_DATABASE + _i32(10 * SMALL_LIMIT) + b"x" * 100)
            _closed_by_server(sock, timeout=5)
        with _connect(server) as sock:  # a huge list: closed once the limit is read
            sock.sendall(LIST_FIELD_BY_NAMES + _i32(2**31 - 1))
            item = _string("ds=2024-01-01")
            with pytest.raises((ConnectionResetError, BrokenPipeError)):
                for _ in range(2 * SMALL_LIMIT // len(item) + 100):
                    sock.sendall(item * 16)
                    time.sleep(0.001)
        _still_serves(server)
    finally:
        server.stop()


# --------------------------------------------------------------------------- max_message_size


def _exact_description(name: str, limit: int) -> int:
    """The description length that makes a create_database call exactly ``limit`` bytes (the
    frame's payload on the framed transport)."""
    return limit - len(_call_bytes("create_database", _create_database_args(name, 0)))


@pytest.mark.parametrize(
    ("transport", "protocol"),
    [("buffered", "binary"), ("framed", "binary"), ("buffered", "compact")],
)
def test_message_at_the_limit_works_one_byte_more_closes(
    tmp_path: Path, transport: str, protocol: str
) -> None:
    framed = transport == "framed"
    compact = protocol == "compact"
    server = RunningServer(
        tmp_path, transport=transport, protocol=protocol, max_message_size=SMALL_LIMIT
    )
    kwargs = {"framed": framed, "compact": compact}
    try:
        if compact:  # compact encodings are shorter: measure by sending, not by formula
            fits, too_big = SMALL_LIMIT - 200, SMALL_LIMIT + 10
        else:
            fits = _exact_description("fits", SMALL_LIMIT)
            too_big = _exact_description("too_big", SMALL_LIMIT) + 1
            sent = _call_bytes("create_database", _create_database_args("fits", fits))
            assert len(sent) == SMALL_LIMIT
        bystander = server.client(**kwargs)
        with structlog.testing.capture_logs() as logs:
            connection = server.client(**kwargs)
            connection.create_database(
                hms.Database(name="fits", description="d" * fits, parameters={})
            )
            assert len(connection.get_database("fits").description) == fits
            with pytest.raises((TTransportException, ConnectionError)):
                connection.create_database(
                    hms.Database(name="too_big", description="d" * too_big, parameters={})
                )
            connection.close()
        refusals = [e for e in logs if e["event"] == "connection_closed_message_too_large"]
        assert refusals and refusals[0]["max_message_size"] == SMALL_LIMIT
        assert "default" in bystander.get_all_databases()
        bystander.close()
        check = server.client(**kwargs)
        assert "too_big" not in check.get_all_databases()
        check.close()
    finally:
        server.stop()


def test_reply_larger_than_the_limit_is_sent(tmp_path: Path) -> None:
    """The limit is on what clients send, not on the answers."""
    server = RunningServer(tmp_path, max_message_size=SMALL_LIMIT)
    try:
        connection = server.client()
        for n in range(3):
            connection.create_database(
                hms.Database(name=f"d{n}", description="x" * (SMALL_LIMIT // 2), parameters={})
            )
        total = sum(len(connection.get_database(f"d{n}").description) for n in range(3))
        assert total > SMALL_LIMIT
        connection.close()
    finally:
        server.stop()


# --------------------------------------------------------------------------- max_connections


def test_connection_over_the_limit_is_closed_and_a_freed_slot_is_reused(tmp_path: Path) -> None:
    server = RunningServer(tmp_path, max_connections=3)
    try:
        open_clients = [server.client() for _ in range(3)]
        for connection in open_clients:
            assert "default" in connection.get_all_databases()
        extra = make_client(server.host, server.port, timeout_ms=5000)
        with pytest.raises((TTransportException, ConnectionError)):
            extra.get_all_databases()
        extra.close()
        for connection in open_clients:  # the refusal disturbed none of them
            assert "default" in connection.get_all_databases()
        open_clients.pop().close()
        deadline = time.monotonic() + 10
        while True:
            try:
                _still_serves(server)
                break
            except (TTransportException, ConnectionError):
                assert time.monotonic() < deadline, "a freed connection slot was not reused"
                time.sleep(0.05)
        for connection in open_clients:
            connection.close()
    finally:
        server.stop()


def test_unknown_message_type_gets_an_application_exception(buffered: RunningServer) -> None:
    with _connect(buffered) as sock:
        sock.sendall(_header("get_all_databases", 0x80010000 | TMessageType.REPLY) + b"\x00")
        answer = _closed_by_server(sock)
    reply = TMemoryBuffer(answer)
    proto = TCyBinaryProtocolFactory().get_protocol(reply)
    _name, msg_type, _seqid = proto.read_message_begin()
    assert msg_type == TMessageType.EXCEPTION
    error = TApplicationException()
    proto.read_struct(error)
    assert error.type == TApplicationException.INVALID_MESSAGE_TYPE


# --------------------------------------------------------------------------- decoded size

#: Empty structs in the repro: one byte each on the wire, 3.8 MiB in all.
EMPTY_STRUCTS = 4_000_000


def _varint(value: int) -> bytes:
    out = b""
    while value > 0x7F:
        out += bytes([value & 0x7F | 0x80])
        value >>= 7
    return out + bytes([value])


def _empty_partitions_call(count: int, *, framed: bool = False, compact: bool = False) -> bytes:
    """add_partitions of ``count`` empty Partition structs (one stop byte each)."""
    name = b"add_partitions"
    if compact:  # protocol id, version 1 + CALL, seqid, name; field 1 list<struct> of count
        payload = b"\x82\x21\x01" + _varint(len(name)) + name + b"\x19\xfc" + _varint(count)
    else:
        payload = _header(name.decode()) + b"\x0f\x00\x01\x0c" + _i32(count)
    payload += b"\x00" * count + b"\x00"
    return _i32(len(payload)) + payload if framed else payload


class PeakRss:
    """How much the process's resident size (kB) grew at most while the block ran (sampled every
    5 ms: the decoded objects are freed when their connection closes)."""

    def __init__(self) -> None:
        self.start = self.peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, _rss_kb())
            if self._done.wait(0.005):
                return

    @property
    def growth(self) -> int:
        """Peak minus the size at the start (kB)."""
        return self.peak - self.start

    def __enter__(self) -> PeakRss:
        self.start = self.peak = _rss_kb()
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_kb())


def _logged(logs: list[dict], event: str, count: int = 1) -> list[dict]:
    """The log entries ``event`` (server threads log a moment after the client sees the close)."""
    deadline = time.monotonic() + 10
    while True:
        found = [entry for entry in logs if entry["event"] == event]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


@pytest.fixture(scope="module")
def compact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server on the compact protocol with the default limit."""
    server = RunningServer(tmp_path_factory.mktemp("limits-compact"), protocol="compact")
    yield server
    server.stop()


@pytest.mark.parametrize("kind", ["buffered", "framed", "compact"])
def test_request_of_empty_structs_is_refused_within_its_decode_budget(
    request: pytest.FixtureRequest, kind: str
) -> None:
    """The audit's repro: 4M empty structs in 3.8 MiB used to decode to ~800 MiB (and take
    ~20 s); now the connection closes once the structs cost DECODE_RATIO bytes per byte."""
    server: RunningServer = request.getfixturevalue(kind)
    framed, compact = kind == "framed", kind == "compact"
    message = _empty_partitions_call(EMPTY_STRUCTS, framed=framed, compact=compact)
    # The framed transport reads the whole frame before decoding: its budget is the frame's.
    bound_kb = RSS_SLACK_KB + (DECODE_RATIO * len(message) // 1024 if framed else 0)
    bystander = server.client(framed=framed, compact=compact)
    assert "default" in bystander.get_all_databases()
    with structlog.testing.capture_logs() as logs, PeakRss() as rss, _connect(server) as sock:
        try:
            sock.sendall(message)
        except (ConnectionResetError, BrokenPipeError):
            pass  # closed while we were still sending
        answer = _closed_by_server(sock)
        (refusal,) = _logged(logs, "connection_closed_decode_limit")
    if framed:  # the whole frame was read: the client listens and gets a clear error
        assert b"decodes to more than 16 bytes of objects per byte sent" in answer
    assert refusal["ratio"] == DECODE_RATIO
    assert refusal["decoded"] > DECODE_RATIO * refusal["received"]
    assert rss.growth < bound_kb, f"peak RSS grew by {rss.growth} kB"
    assert "default" in bystander.get_all_databases()
    bystander.close()
    _still_serves(server, framed=framed, compact=compact)


# --------------------------------------------------------------------------- message_timeout

#: A message_timeout short enough for tests.
STALL_TIMEOUT = 0.5
#: The first two bytes of a binary-protocol call (or of a frame header), then nothing.
HALF_MESSAGE = b"\x80\x01"


@contextmanager
def _server(tmp: Path, **options: Any) -> Iterator[MetastoreServer]:
    """A server over the run's store, built as ``serve`` builds it, with settings such as
    ``message_timeout``."""
    url = test_storage.own(_storage_url(tmp))  # on HBase: emptied when it stops
    config = ServerConfig(storage=url, warehouse=str(tmp / "warehouse"), port=0, **options)
    server, close = build_server(config)
    test_storage.server_started(url)
    server.start()
    try:
        yield server
    finally:
        try:
            server.stop()
            close()
        finally:
            test_storage.server_stopped(url)


def _serves_soon(server: MetastoreServer, **kwargs: Any) -> None:
    """A new client is served (a slot freed by a close is free a moment after the close)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            fresh = make_client(*server.address, timeout_ms=5000, **kwargs)
            try:
                assert "default" in fresh.get_all_databases()
            finally:
                fresh.close()
            return
        except (TTransportException, ConnectionError):
            assert time.monotonic() < deadline, "no connection slot came free"
            time.sleep(0.05)


def _answered(sock: socket.socket, *, framed: bool = False) -> None:
    """The connection answers a get_all_databases call sent as raw bytes."""
    args = hms.ThriftHiveMetastore.get_all_databases_args()
    sock.sendall(_call_bytes("get_all_databases", args, framed=framed))
    sock.settimeout(10)
    answer = b""
    while len(answer) < 8:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection instead of answering"
        answer += chunk
    reply = answer[4:8] if framed else answer[:4]
    assert reply == struct.pack("!I", 0x80010000 | TMessageType.REPLY)


@pytest.mark.parametrize("transport", ["buffered", "framed"])
def test_stalled_half_messages_are_closed_and_their_slots_reused(
    tmp_path: Path, transport: str
) -> None:
    """Three clients that send two bytes and stop no longer hold max_connections=3 forever."""
    framed = transport == "framed"
    with (
        _server(
            tmp_path, transport=transport, max_connections=3, message_timeout=STALL_TIMEOUT
        ) as server,
        structlog.testing.capture_logs() as logs,
    ):
        stalled = [socket.create_connection(server.address, timeout=10) for _ in range(3)]
        for sock in stalled:
            sock.sendall(HALF_MESSAGE)
        for sock in stalled:
            _closed_by_server(sock)
            sock.close()
        closes = _logged(logs, "connection_closed_message_timeout", 3)
        assert len(closes) == 3
        assert {(c["message_timeout"], c["received"]) for c in closes} == {(STALL_TIMEOUT, 2)}
        _serves_soon(server, framed=framed)


def test_stalled_half_message_over_tls_is_closed(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    context = ssl.create_default_context(cafile=str(cert))
    with (
        _server(
            tmp_path, tls_cert=str(cert), tls_key=str(key), message_timeout=STALL_TIMEOUT
        ) as server,
        structlog.testing.capture_logs() as logs,
    ):
        raw = socket.create_connection(server.address, timeout=10)
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            sock.sendall(HALF_MESSAGE)
            _closed_by_server(sock)
        assert len(_logged(logs, "connection_closed_message_timeout")) == 1
        _serves_soon(server, tls_ca=str(cert))


def test_idle_connections_are_not_cut(tmp_path: Path) -> None:
    with (
        _server(tmp_path, message_timeout=STALL_TIMEOUT) as server,
        structlog.testing.capture_logs() as logs,
    ):
        after_a_call = make_client(*server.address, timeout_ms=10000)
        assert "default" in after_a_call.get_all_databases()
        silent = socket.create_connection(server.address, timeout=10)  # never sent a byte
        with socket.create_connection(server.address, timeout=10) as stalled:
            stalled.sendall(HALF_MESSAGE)
            _closed_by_server(stalled)
        # Both other connections have now been idle for longer than message_timeout.
        assert "default" in after_a_call.get_all_databases()
        after_a_call.close()
        with silent:
            _answered(silent)
        assert len(_logged(logs, "connection_closed_message_timeout")) == 1


@pytest.mark.parametrize("transport", ["buffered", "framed"])
def test_half_message_sent_behind_a_whole_one_is_timed_too(tmp_path: Path, transport: str) -> None:
    """A call and the start of the next in one send: the start sits in the transport's buffer
    when the server turns to the next message, and must not wait there without a deadline."""
    framed = transport == "framed"
    args = hms.ThriftHiveMetastore.get_all_databases_args()
    whole = _call_bytes("get_all_databases", args, framed=framed)
    with (
        _server(tmp_path, transport=transport, message_timeout=STALL_TIMEOUT) as server,
        structlog.testing.capture_logs() as logs,
        socket.create_connection(server.address, timeout=10) as sock,
    ):
        sock.sendall(whole + HALF_MESSAGE)
        answer = _closed_by_server(sock)  # after answering the whole call
        reply = answer[4:8] if framed else answer[:4]
        assert reply == struct.pack("!I", 0x80010000 | TMessageType.REPLY)
        assert len(_logged(logs, "connection_closed_message_timeout")) == 1
        _serves_soon(server, framed=framed)


def test_pipelined_calls_are_all_answered(tmp_path: Path) -> None:
    """Bytes of the next calls taken back from the transport's buffer are handed out again in
    order: three calls sent at once get three answers."""
    args = hms.ThriftHiveMetastore.get_all_databases_args()
    with (
        _server(tmp_path, message_timeout=STALL_TIMEOUT) as server,
        socket.create_connection(server.address, timeout=10) as sock,
    ):
        sock.sendall(_call_bytes("get_all_databases", args) * 3)
        sock.shutdown(socket.SHUT_WR)
        answer = _closed_by_server(sock)
    proto = TCyBinaryProtocolFactory().get_protocol(TMemoryBuffer(answer))
    for _ in range(3):
        _name, msg_type, _seqid = proto.read_message_begin()
        assert msg_type == TMessageType.REPLY
        result = hms.ThriftHiveMetastore.get_all_databases_result()
        proto.read_struct(result)
        assert "default" in result.success


def test_message_timeout_setting(tmp_path: Path) -> None:
    assert ServerConfig().message_timeout == 60.0
    assert ServerConfig.from_env({"METASTORE_MESSAGE_TIMEOUT": "2.5"}).message_timeout == 2.5
    file = tmp_path / "m.toml"
    for text, value in (("message_timeout = 0", 0.0), ("message_timeout = 1.5", 1.5)):
        file.write_text(text + "\n")
        assert ServerConfig.from_file(file).message_timeout == value
    file.write_text('message_timeout = "soon"\n')
    with pytest.raises(ValueError, match="message_timeout must be a number"):
        ServerConfig.from_file(file)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="message_timeout must be 0"):
            ServerConfig(message_timeout=bad).validate()
    args = cli.build_parser(ServerConfig()).parse_args(["serve", "--message-timeout", "5"])
    assert args.message_timeout == 5.0
    assert cli.build_parser(ServerConfig()).parse_args(["serve"]).message_timeout == 60.0
