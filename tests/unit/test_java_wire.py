"""The strict reader of the per-client flow tests (``support.java_wire``) refuses what a client
generated for Java cannot read: checked on replies made by hand."""

from __future__ import annotations

import socket
import struct

import pytest
from support.java_wire import HMS_4, ApplicationError, JavaClient, RemoteError, StrictDecodeError

REPLY = 0x80010000 | 2


def _string(text: str) -> bytes:
    return struct.pack("!i", len(text)) + text.encode()


def _answer(method: str, result: bytes) -> object:
    """What the client makes of ``result`` (the result struct's fields, without the stop)."""
    mine, theirs = socket.socketpair()
    with mine, theirs:
        theirs.sendall(struct.pack("!I", REPLY) + _string(method) + struct.pack("!i", 1)
                       + result + b"\x00")  # fmt: skip
        client = JavaClient("", 0, HMS_4, sock=mine)
        return client.call(method)


def _field(ttype: int, fid: int, body: bytes) -> bytes:
    return struct.pack("!bh", ttype, fid) + body


def test_a_field_of_another_wire_type_is_skipped_then_the_required_one_is_missing() -> None:
    good = _field(12, 0, _field(10, 1, struct.pack("!q", 7)) + b"\x00")
    assert _answer("get_current_notificationEventId", good).eventId == 7
    extra = _field(12, 0, _field(8, 9, struct.pack("!i", 1)) + _field(10, 1, struct.pack("!q", 7))
                   + b"\x00")  # fmt: skip
    assert _answer("get_current_notificationEventId", extra).eventId == 7  # unknown id skipped
    as_i32 = _field(12, 0, _field(8, 1, struct.pack("!i", 7)) + b"\x00")
    with pytest.raises(StrictDecodeError, match="eventId"):
        _answer("get_current_notificationEventId", as_i32)


def test_an_undeclared_enum_value_reads_as_null() -> None:
    reply = _field(12, 0, _field(10, 1, struct.pack("!q", 5)) + _field(8, 2, struct.pack("!i", 99))
                   + b"\x00")  # fmt: skip
    with pytest.raises(StrictDecodeError, match="state"):
        _answer("check_lock", reply)


def test_elements_of_another_type_cannot_be_read() -> None:
    with pytest.raises(StrictDecodeError, match="elements"):
        _answer("get_all_databases", _field(15, 0, struct.pack("!bi", 8, 1) + b"\0\0\0\1"))
    assert _answer("get_all_databases", _field(15, 0, struct.pack("!bi", 8, 0))) == []


def test_results_exceptions_and_unions() -> None:
    with pytest.raises(ApplicationError, match="unknown result"):
        _answer("get_all_databases", b"")
    with pytest.raises(RemoteError) as error:
        _answer("get_all_databases", _field(12, 1, _field(11, 1, _string("boom")) + b"\x00"))
    assert (error.value.kind, error.value.value.message) == ("MetaException", "boom")
    counts = _field(10, 3, b"\0" * 8) + _field(10, 4, b"\0" * 8) + b"\x00"  # numNulls, numDVs
    two = _field(12, 3, _field(12, 2, counts) + _field(12, 3, counts) + b"\x00")  # double, long
    obj = _field(11, 1, _string("c")) + _field(11, 2, _string("bigint")) + two
    stats = _field(12, 0, _field(15, 1, struct.pack("!bi", 12, 1) + obj + b"\x00") + b"\x00")
    with pytest.raises(StrictDecodeError, match="union ColumnStatisticsData with 2"):
        _answer("get_table_statistics_req", stats)
