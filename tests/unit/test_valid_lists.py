"""The ValidTxnList and ValidWriteIdList string forms, and a table's valid write ids in a
snapshot (``catalog/txn/valid_lists.py``, ``catalog/txn/write_id_state.py``)."""

from __future__ import annotations

import pytest

from metastore_server.catalog.txn import write_id_state as wid
from metastore_server.catalog.txn.valid_lists import (
    NONE_OPEN,
    ValidTxnList,
    bit_set,
    parse_valid_txn_list,
    parse_valid_write_id_list,
)


def test_a_snapshot_without_exceptions() -> None:
    snapshot = parse_valid_txn_list("5:9223372036854775807::")
    assert snapshot == ValidTxnList(5, NONE_OPEN, (), ())
    assert snapshot.is_valid(5) and not snapshot.is_valid(6)


def test_a_snapshot_with_open_and_aborted_transactions() -> None:
    snapshot = parse_valid_txn_list("10:3:7,3:4")
    assert (snapshot.min_open, snapshot.open, snapshot.aborted) == (3, (3, 7), (4,))
    assert [t for t in range(1, 12) if snapshot.is_valid(t)] == [1, 2, 5, 6, 8, 9, 10]
    assert snapshot.is_aborted(4) and not snapshot.is_aborted(3)


def test_an_empty_snapshot_sees_everything_committed() -> None:
    assert parse_valid_txn_list("").is_valid(10**12)


@pytest.mark.parametrize("text", ["x:1::", "1:2:3:4:5", "5:1:a:"])
def test_not_a_snapshot(text: str) -> None:
    with pytest.raises(ValueError, match="Not a ValidTxnList"):
        parse_valid_txn_list(text)


def test_the_write_id_list_string() -> None:
    assert parse_valid_write_id_list("db.t:3:3:3:2") == ("db.t", 3, 3, [3], [2])
    assert parse_valid_write_id_list("db.t:4:9223372036854775807::") == (
        "db.t", 4, NONE_OPEN, [], []
    )


def test_bit_set_is_java_to_byte_array() -> None:
    assert (bit_set([]), bit_set([0]), bit_set([1, 9])) == (b"", b"\x01", b"\x02\x02")


def _state() -> dict:
    """Write ids 1, 2, 3 of transactions 11 (committed at 13), 12 (aborted), 13 (open)."""
    return {"last": 3, "base": 0, "t": {"11": [1, wid.COMMITTED, 13, 0],
                                        "12": [2, wid.ABORTED, None, None],
                                        "13": [3, wid.OPEN, None, None]}}  # fmt: skip


@pytest.mark.parametrize(
    ("snapshot", "hwm", "invalid", "min_open", "bits"),
    [
        ("13:11:11,12,13:", 3, [1, 2, 3], 1, b"\x02"),  # before anything ended
        ("13:13:13:12", 3, [2, 3], 3, b"\x01"),  # now
        ("12:12:12:", 2, [2], None, b"\x01"),  # before 13 began: 12's write aborted since
        ("10:9223372036854775807::", 3, [1, 2, 3], 1, b"\x02"),  # before any began
    ],
)
def test_valid_write_ids_in_a_snapshot(snapshot, hwm, invalid, min_open, bits) -> None:
    answer = wid.valid_write_ids(_state(), "db.t", parse_valid_txn_list(snapshot))
    got = (answer.writeIdHighWaterMark, answer.invalidWriteIds, answer.minOpenWriteId)
    assert got + (answer.abortedBits,) == (hwm, invalid, min_open, bits)


def test_valid_write_ids_up_to_a_write_id() -> None:
    answer = wid.valid_write_ids(_state(), "db.t", parse_valid_txn_list("13:13:13:12"), cap=2)
    assert (answer.writeIdHighWaterMark, answer.invalidWriteIds) == (2, [2])
