"""Hostile bytes on the wire, over real sockets: a container of a type that takes no bytes (the
decoder would loop over its declared size without reading) placed in every struct and in place
of every container of a call, nesting bombs, and the same on the framed transport and the
compact protocol. Each gets a PROTOCOL_ERROR answer saying what is wrong, its connection is
closed, nothing of that call is written, calls sent before it on the same connection are
answered, and other clients never notice. Valid unknown fields (a newer client's) are skipped."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from support.thrift_bytes import (
    VALID_UNKNOWN_FIELDS,
    Splice,
    bomb_field,
    container_paths,
    message,
    struct_paths,
)
from thriftpy2.protocol import TCompactProtocolFactory, TCyBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TMessageType, TType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.thrift_api import hms

from .conftest import RunningServer

DB = "wire"
SVC = hms.ThriftHiveMetastore


@pytest.fixture(scope="module", params=["buffered", "framed"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RunningServer]:  # fmt: skip
    running = RunningServer(tmp_path_factory.mktemp(f"wire-{request.param}"),
                            transport=request.param)  # fmt: skip
    client = _client(running)
    client.create_database(hms.Database(name=DB, description="", parameters={}))
    client.create_table(_table("t"))
    client.close()
    yield running
    running.stop()


def _table(name: str) -> Any:
    cols = [hms.FieldSchema(name="v", type="string", comment="")]
    sd = hms.StorageDescriptor(cols=cols, parameters={}, serdeInfo=hms.SerDeInfo(
        name="s", serializationLib="lib", parameters={"k": "v"}), bucketCols=["v"],
        sortCols=[hms.Order(col="v", order=1)])  # fmt: skip
    return hms.Table(tableName=name, dbName=DB, owner="me", sd=sd, parameters={"p": "q"},
                     partitionKeys=[hms.FieldSchema(name="ds", type="string", comment="")],
                     tableType="MANAGED_TABLE",
                     privileges=hms.PrincipalPrivilegeSet(userPrivileges={"me": [
                         hms.PrivilegeGrantInfo(privilege="ALL", createTime=0, grantor="me",
                                                grantorType=1, grantOption=False)]}))  # fmt: skip


def _partition(value: str) -> Any:
    sd = _table("t").sd
    return hms.Partition(values=[value], dbName=DB, tableName="t", sd=sd,
                         parameters={"a": "b"})  # fmt: skip


def _framed(server: RunningServer) -> bool:
    return server.config.transport == "framed"


def _client(server: RunningServer) -> Any:
    return server.client(framed=_framed(server))


def _exchange(server: RunningServer, data: bytes, *, last: bool = False
              ) -> tuple[list[tuple[str, int, Any]], bool]:  # fmt: skip
    """Send ``data`` on a new connection (then end it when ``last``); the replies read until
    the server closes it (or goes quiet for 30 s), and whether it closed."""
    if _framed(server):
        data = struct.pack("!i", len(data)) + data
    received = b""
    closed = False
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(data)
        if last:
            sock.shutdown(socket.SHUT_WR)
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
            except TimeoutError:
                break
            if not chunk:
                closed = True
                break
            received += chunk
    return _replies(received, _framed(server)), closed


def _replies(data: bytes, framed: bool) -> list[tuple[str, int, Any]]:
    out = []
    while data:
        if framed:
            size = struct.unpack("!i", data[:4])[0]
            payload, data = data[4 : 4 + size], data[4 + size :]
        else:
            payload, data = data, b""
        buffer = TMemoryBuffer(payload)
        proto = TCyBinaryProtocolFactory().get_protocol(buffer)
        while True:
            try:
                name, kind, seqid = proto.read_message_begin()
            except Exception:  # noqa: BLE001 - no further reply in these bytes
                break
            body = (TApplicationException() if kind == TMessageType.EXCEPTION
                    else getattr(SVC, name + "_result")())  # fmt: skip
            proto.read_struct(body)
            out.append((name, seqid, body))
            if framed:
                break
    return out


def _assert_refused(server: RunningServer, data: bytes, reason: str, where: object) -> None:
    replies, closed = _exchange(server, data)
    assert closed, f"connection not closed after a bomb at {where}"
    assert replies, f"no answer to a bomb at {where}"
    name, _seqid, error = replies[-1]
    assert isinstance(error, TApplicationException), (where, error)
    assert error.type == TApplicationException.PROTOCOL_ERROR, (where, error)
    assert reason in error.message, (where, error.message)


def test_bombs_in_every_struct_and_container_of_add_partitions_are_refused(
    server: RunningServer,
) -> None:
    bystander = _client(server)
    args = SVC.add_partitions_args(new_parts=[_partition("bomb")])
    tried = 0
    for path in struct_paths(args):
        data = message("add_partitions", args, Splice(path, tail=bomb_field()))
        _assert_refused(server, data, "a list or set of unknown element type 1", path)
        tried += 1
    for path, kind in container_paths(args):
        header = (struct.pack("!BBi", 1, 1, 2**31 - 1) if kind == TType.MAP
                  else struct.pack("!Bi", 0, 2**31 - 1))  # fmt: skip
        data = message("add_partitions", args, Splice(path, header=header))
        _assert_refused(server, data, "unknown", path)
        tried += 1
    assert tried >= 12  # partition, sd, serde, order, field schema, args; their containers
    assert bystander.get_partitions(DB, "t", -1) == []  # nothing of any of them was written
    bystander.close()


def test_bombs_in_every_struct_of_create_table_are_refused(server: RunningServer) -> None:
    args = SVC.create_table_args(tbl=_table("bombed"))
    for path in struct_paths(args):
        data = message("create_table", args, Splice(path, tail=bomb_field(0)))
        _assert_refused(server, data, "a list or set of unknown element type 0", path)
    client = _client(server)
    assert "bombed" not in client.get_all_tables(DB)
    client.close()


def test_calls_before_a_bomb_on_the_same_connection_are_answered(server: RunningServer) -> None:
    first = message("get_all_databases", SVC.get_all_databases_args(), seqid=1)
    second = message("create_database", SVC.create_database_args(database=hms.Database(
        name="before_bomb", description="", parameters={})), seqid=2)  # fmt: skip
    bomb = message("get_all_databases", SVC.get_all_databases_args(),
                   Splice((), tail=bomb_field()), seqid=3)  # fmt: skip
    if _framed(server):  # one message per frame
        sent = [first, second, bomb]
        replies: list[tuple[str, int, Any]] = []
        with socket.create_connection((server.host, server.port), timeout=30) as sock:
            sock.sendall(b"".join(struct.pack("!i", len(m)) + m for m in sent))
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
        replies = _replies(received, framed=True)
    else:
        replies, closed = _exchange(server, first + second + bomb)
        assert closed
    assert [(name, seqid) for name, seqid, _ in replies] == [
        ("get_all_databases", 1), ("create_database", 2), ("get_all_databases", 3)]
    assert DB in replies[0][2].success
    assert isinstance(replies[2][2], TApplicationException)
    client = _client(server)
    assert client.get_database("before_bomb").name == "before_bomb"  # acknowledged: kept
    client.drop_database("before_bomb", True, True)
    client.close()


def test_deep_nesting_is_refused(server: RunningServer) -> None:
    nested = struct.pack("!bh", 12, 99) * 100_000 + b"\x00" * 100_001
    data = message("get_all_databases", SVC.get_all_databases_args(), Splice((), tail=nested))
    _assert_refused(server, data, "nesting deeper than 64", "an unknown field")


def test_valid_unknown_fields_in_every_struct_are_skipped(server: RunningServer) -> None:
    """A newer client's extra fields, of every type, are ignored as HMS ignores them."""
    extra = VALID_UNKNOWN_FIELDS
    client = _client(server)
    args = SVC.add_partitions_args(new_parts=[_partition("x")])
    paths = list(struct_paths(args))
    for n, path in enumerate(paths):
        args.new_parts[0].values = [f"extra{n}"]
        data = message("add_partitions", args, Splice(path, tail=extra))
        replies, _closed = _exchange(server, data, last=True)
        assert replies and replies[0][2].success == 1, path
    names = client.get_partition_names(DB, "t", -1)
    assert sorted(names) == sorted(f"ds=extra{n}" for n in range(len(paths)))
    for name in names:
        client.drop_partition_by_name(DB, "t", name, True)
    client.close()


def test_the_compact_protocol_refuses_lists_of_the_stop_type(tmp_path: Any) -> None:
    running = RunningServer(tmp_path, protocol="compact")
    try:
        buffer = TMemoryBuffer()
        proto = TCompactProtocolFactory().get_protocol(buffer)
        proto.write_message_begin("get_all_databases", TMessageType.CALL, 5)
        header = buffer.getvalue()
        # Field 99 (long form: list type, zigzag varint id), then a list of 2^31-1 stops.
        bomb = header + b"\x09\xc6\x01" + b"\xf0" + b"\xff\xff\xff\xff\x07" + b"\x00"
        with socket.create_connection((running.host, running.port), timeout=30) as sock:
            sock.sendall(bomb)
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
        reply = TCompactProtocolFactory().get_protocol(TMemoryBuffer(received))
        name, kind, seqid = reply.read_message_begin()
        assert (name, kind, seqid) == ("get_all_databases", TMessageType.EXCEPTION, 5)
        error = TApplicationException()
        reply.read_struct(error)
        assert error.type == TApplicationException.PROTOCOL_ERROR
        assert "stop type" in error.message
        client = running.client(compact=True)
        assert "default" in client.get_all_databases()
        client.close()
    finally:
        running.stop()
