"""Requests read whole by the wire walker first, then decoded by thriftpy2's Cython decoder
when they hold no map keyed by lists (a skewed table's ``skewedColValueLocationMaps``) and no
string that is not UTF-8; every other request takes the careful path. Either way the server
stores exactly what was sent, refuses text that is not UTF-8 naming the field, and answers
calls sent back to back in order, on both transports."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_partition, make_table

DB = "fastdb"
SERVICE = hms.ThriftHiveMetastore


@pytest.fixture(scope="module", params=["buffered", "framed"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RunningServer]:  # fmt: skip
    running = RunningServer(tmp_path_factory.mktemp("fast"), transport=request.param)
    yield running
    running.stop()


def _client(server: RunningServer) -> Any:
    return server.client(framed=server.config.transport == "framed")


def _skewed(partition: Any, value: str) -> Any:
    partition.sd.skewedInfo = hms.SkewedInfo(
        skewedColNames=["v"],
        skewedColValues=[[value]],
        skewedColValueLocationMaps={(value,): f"file:/skew/{value}"},
    )
    return partition


def _fresh_table(client: Any, name: str) -> None:
    try:
        client.get_database(DB)
    except hms.NoSuchObjectException:
        client.create_database(hms.Database(name=DB, parameters={}))
    client.create_table(make_table(DB, name, keys=[("ds", "string"), ("hr", "int")]))


def _parts(table: str, count: int) -> list[Any]:
    return [make_partition(DB, table, [f"2024-01-{1 + i // 24:02d}", str(i % 24)])
            for i in range(count)]  # fmt: skip


def test_a_big_add_with_a_list_keyed_map_at_its_end_is_stored_exactly(
    server: RunningServer,
) -> None:
    client = _client(server)
    _fresh_table(client, "big")
    parts = _parts("big", 3000)  # about 2 MB: read in many pieces
    _skewed(parts[-1], "7")
    assert client.add_partitions(parts) == 3000
    got = client.get_partition(DB, "big", parts[-1].values)
    assert got.sd.skewedInfo.skewedColValueLocationMaps == {("7",): "file:/skew/7"}
    plain = client.get_partition(DB, "big", parts[0].values)
    assert not plain.sd.skewedInfo.skewedColValueLocationMaps
    assert len(client.get_partition_names(DB, "big", -1)) == 3000
    client.close()


def test_text_that_is_not_utf8_deep_in_a_big_add_is_refused_naming_it(
    server: RunningServer,
) -> None:
    client = _client(server)
    _fresh_table(client, "badtext")
    parts = _parts("badtext", 2000)
    parts[1999].parameters = {"note": b"caf\xe9"}  # Latin-1, not UTF-8
    with pytest.raises(hms.InvalidObjectException, match=r"new_parts\[1999\]\.parameters"):
        client.add_partitions(parts)
    assert client.get_partition_names(DB, "badtext", -1) == []
    parts[1999].parameters = {"note": "café ☕"}  # valid UTF-8 that is not ASCII is kept
    assert client.add_partitions(parts) == 2000
    assert client.get_partition(DB, "badtext", parts[1999].values).parameters["note"] == "café ☕"
    client.close()


def _call(name: str, args: Any, seqid: int, framed: bool) -> bytes:
    buffer = TMemoryBuffer()
    proto = TBinaryProtocol(buffer)
    proto.write_message_begin(name, TMessageType.CALL, seqid)
    args.write(proto)
    proto.write_message_end()
    body = buffer.getvalue()
    return struct.pack("!i", len(body)) + body if framed else body


def _read_replies(sock: socket.socket, count: int, framed: bool) -> list[Any]:
    """Decode ``count`` add_partitions replies off the socket (their results, in order)."""
    from thriftpy2.transport import TBufferedTransport, TFramedTransport, TSocket

    tsock = TSocket(sock=sock)
    trans = TFramedTransport(tsock) if framed else TBufferedTransport(tsock)
    proto = TBinaryProtocol(trans)
    out = []
    for _ in range(count):
        _name, mtype, seqid = proto.read_message_begin()
        assert mtype == TMessageType.REPLY
        result = SERVICE.add_partitions_result()
        result.read(proto)
        proto.read_message_end()
        out.append((seqid, result.success, result.o1 or result.o2 or result.o3))
    return out


def test_calls_sent_back_to_back_are_each_decoded_by_their_own_kind(
    server: RunningServer, tmp_path: Path
) -> None:
    """A call with a list-keyed map between two without one, all sent before any answer: the
    walker runs ahead of the decoder, and each call is still read the right way."""
    client = _client(server)
    _fresh_table(client, "piped")
    client.close()
    framed = server.config.transport == "framed"
    batches = [_parts("piped", 90)[i : i + 30] for i in range(0, 90, 30)]
    _skewed(batches[1][5], "x")
    data = b"".join(
        _call("add_partitions", SERVICE.add_partitions_args(new_parts=batch), seqid, framed)
        for seqid, batch in enumerate(batches)
    )
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(data)
        replies = _read_replies(sock, 3, framed)
    assert replies == [(0, 30, None), (1, 30, None), (2, 30, None)]
    client = _client(server)
    skewed = client.get_partition(DB, "piped", batches[1][5].values)
    assert skewed.sd.skewedInfo.skewedColValueLocationMaps == {("x",): "file:/skew/x"}
    assert len(client.get_partition_names(DB, "piped", -1)) == 90
    client.close()
