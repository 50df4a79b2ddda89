"""Malformed, truncated and oversized messages over real sockets; max_message_size; the
connection limit. Each bad connection is closed alone and the server keeps serving."""

from __future__ import annotations

import random
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TMemoryBuffer, TTransportException

from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer

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
