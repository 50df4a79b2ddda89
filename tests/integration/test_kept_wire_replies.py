"""Replies of small reads kept as sent (``server/kept_wire.py``): a call with the same
argument bytes on an unchanged store gets the bytes of the first reply with its own sequence
id, never after any change (by this server or another on the same store), never an error,
shaped for what the connection's client reads, and not under authorization or on HBase."""

from __future__ import annotations

import socket

import pytest
import structlog
from structlog.testing import capture_logs
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport.memory import TMemoryBuffer

from metastore_server import audit
from metastore_server.server.kept_wire import WIRE_KEPT_CALLS
from metastore_server.thrift_api import hms

from .conftest import ON_HBASE, audit_lines, create_db, make_partition, make_table

SERVICE = hms.ThriftHiveMetastore


@pytest.fixture(autouse=True)
def fresh_audit_logger(monkeypatch) -> None:
    """A logger that follows the configuration of the moment (see test_audit.py)."""
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))


def _call_bytes(method: str, seqid: int, **args: object) -> bytes:
    buffer = TMemoryBuffer()
    proto = TBinaryProtocol(buffer)
    proto.write_message_begin(method, TMessageType.CALL, seqid)
    getattr(SERVICE, method + "_args")(**args).write(proto)
    proto.write_message_end()
    return buffer.getvalue()


def _read_reply(sock: socket.socket, method: str) -> tuple[int, object]:
    """One reply off a raw socket: (its sequence id, its result)."""
    proto = TBinaryProtocol(_SocketReader(sock))
    name, kind, seqid = proto.read_message_begin()
    assert (name, kind) == (method, TMessageType.REPLY)
    result = getattr(SERVICE, method + "_result")()
    result.read(proto)
    return seqid, result


class _SocketReader:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self._sock.recv(size - len(data))
            assert chunk, "the server closed the connection"
            data += chunk
        return data


@pytest.fixture
def loaded(start_server):
    server = start_server()
    client = server.client()
    create_db(client, "kw")
    client.create_table(make_table("kw", "p", keys=[("ds", "string")]))
    client.add_partitions([make_partition("kw", "p", [f"d{i}"]) for i in range(3)])
    yield server, client
    client.close()


CALLS = [
    ("get_database", {"name": "kw"}),
    ("get_table", {"dbname": "kw", "tbl_name": "p"}),
    ("get_partition", {"db_name": "kw", "tbl_name": "p", "part_vals": ["d1"]}),
    ("get_partition_by_name", {"db_name": "kw", "tbl_name": "p", "part_name": "ds=d2"}),
    ("get_partition_names_ps", {"db_name": "kw", "tbl_name": "p", "part_vals": ["d0"],
                                "max_parts": -1}),
    ("get_current_notificationEventId", {}),
    ("get_all_tables", {"db_name": "kw"}),
    ("get_table_meta", {"db_patterns": "kw", "tbl_patterns": "*", "tbl_types": []}),
]  # fmt: skip


def test_every_kept_call_is_covered() -> None:
    assert {method for method, _ in CALLS} <= WIRE_KEPT_CALLS


@pytest.mark.parametrize(("method", "args"), CALLS, ids=[m for m, _ in CALLS])
def test_a_repeated_call_gets_the_same_reply_with_its_own_sequence_id(
    loaded, method: str, args: dict
) -> None:
    server, _client = loaded
    with socket.create_connection(("127.0.0.1", server.port)) as sock, capture_logs() as logs:
        answers = []
        for seqid in (11, 12, 13):
            sock.sendall(_call_bytes(method, seqid, **args))
            answers.append(_read_reply(sock, method))
        lines = audit_lines(logs, method, 3)
    assert [seqid for seqid, _ in answers] == [11, 12, 13]
    assert answers[0][1].success is not None
    assert answers[1][1] == answers[0][1] == answers[2][1]
    hits = [line.get("reply_cache") for line in lines]
    assert hits == [None, "hit", "hit"] if not ON_HBASE else hits == [None, None, None]
    if not ON_HBASE:
        assert lines[1].get("rows") == lines[0].get("rows")
        assert lines[1].get("db") == lines[0].get("db")


@pytest.mark.skipif(ON_HBASE, reason="no reply is kept on HBase")
def test_calls_sent_together_are_answered_in_order(loaded) -> None:
    server, _client = loaded
    one = _call_bytes("get_database", 1, name="kw")
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(one)
        _read_reply(sock, "get_database")  # kept now
        sock.sendall(_call_bytes("get_database", 2, name="kw")
                     + _call_bytes("get_table", 3, dbname="kw", tbl_name="p")
                     + _call_bytes("get_database", 4, name="kw"))  # fmt: skip
        assert _read_reply(sock, "get_database")[0] == 2
        seqid, table = _read_reply(sock, "get_table")
        assert seqid == 3 and table.success.tableName == "p"
        assert _read_reply(sock, "get_database")[0] == 4


def test_no_kept_reply_after_a_change_by_another_server(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    reader, writer = first.client(), second.client()
    create_db(writer, "kc")
    writer.create_table(make_table("kc", "t"))
    assert reader.get_table("kc", "t").parameters.get("comment") is None
    assert not reader.get_database("kc").description
    table = writer.get_table("kc", "t")
    table.parameters["comment"] = "changed"
    writer.alter_table("kc", "t", table)
    database = writer.get_database("kc")
    database.description = "described"
    writer.alter_database("kc", database)
    assert reader.get_table("kc", "t").parameters["comment"] == "changed"
    assert reader.get_database("kc").description == "described"
    before = reader.get_current_notificationEventId().eventId
    writer.create_table(make_table("kc", "u"))
    assert reader.get_current_notificationEventId().eventId > before
    reader.close()
    writer.close()


def test_an_error_is_never_kept(loaded) -> None:
    _server, client = loaded
    for _ in range(2):
        with pytest.raises(hms.NoSuchObjectException):
            client.get_database("kw_later")
    create_db(client, "kw_later")
    assert client.get_database("kw_later").name == "kw_later"


def test_the_reply_is_shaped_for_each_connections_client(loaded) -> None:
    server, _client = loaded
    older, newer = server.client(), server.client()
    newer.get_database("@hive#kw")  # a catalog-prefixed name: an HMS 3+ client
    for _ in range(2):
        assert older.get_database("kw").catalogName is None
        assert newer.get_database("kw").catalogName == "hive"
    older.close()
    newer.close()


@pytest.mark.skipif(ON_HBASE, reason="no reply is kept on HBase")
def test_no_kept_reply_under_authorization(start_server) -> None:
    server = start_server(authorization="storage")
    client = server.client()
    client.set_ugi("root", [])  # the superuser, claimed (no authentication)
    create_db(client, "ka")
    with capture_logs() as logs:
        for _ in range(3):
            assert client.get_database("ka").name == "ka"
        lines = audit_lines(logs, "get_database", 3)
    assert [line.get("reply_cache") for line in lines] == [None, None, None]
    client.close()
