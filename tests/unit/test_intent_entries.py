"""What an intent records of a write, and the undo rule (``storage.intent_entries``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from metastore_server.storage.intent_entries import decode, encode, image, restore


@dataclass
class Change:
    table: str
    key: bytes
    whole: bool = False
    puts: dict[bytes, bytes] = field(default_factory=dict)
    deletes: set[bytes] = field(default_factory=set)


ROW = {b"c:a": b"1", b"c:b": b"2"}


def test_a_put_is_undone_to_the_columns_before() -> None:
    row = image(Change("t", b"k", puts={b"c:a": b"9", b"c:new": b"x"}), ROW)
    assert row.before == {b"c:a": b"1"}
    after = {b"c:a": b"9", b"c:b": b"2", b"c:new": b"x"}
    assert restore(row, after) == ({b"c:a": b"1"}, [b"c:new"])


def test_a_whole_row_delete_is_undone_to_the_whole_row() -> None:
    row = image(Change("t", b"k", whole=True), ROW)
    assert restore(row, None) == (ROW, [])


def test_a_replace_is_undone_even_when_it_landed_in_part() -> None:
    row = image(Change("t", b"k", whole=True, puts={b"c:a": b"new"}), ROW)
    assert restore(row, {b"c:a": b"new"}) == ({b"c:a": b"1", b"c:b": b"2"}, [])
    assert restore(row, {b"c:a": b"new", b"c:b": b"2"}) == ({b"c:a": b"1"}, [])  # in part


def test_a_new_row_is_undone_by_deleting_it() -> None:
    row = image(Change("t", b"k", puts={b"c:a": b"1"}), None)
    assert restore(row, {b"c:a": b"1"}) == ({}, [b"c:a"])
    assert restore(row, None) == ({}, [])  # never landed: nothing to do


def test_a_row_someone_else_changed_since_is_left() -> None:
    row = image(Change("t", b"k", puts={b"c:a": b"9"}), ROW)
    assert restore(row, {b"c:a": b"theirs", b"c:b": b"2"}) is None
    whole = image(Change("t", b"k", whole=True), ROW)
    assert restore(whole, {b"c:z": b"theirs"}) is None  # a column no write of it made


def test_entries_round_trip_and_refuse_garbage() -> None:
    rows = [
        image(Change("t", b"k\x00\xff", puts={b"c:a": b"9"}, deletes={b"c:b"}), ROW),
        image(Change("u", b"", whole=True), {b"d:x": b"\x00" * 300}),
    ]
    assert decode(encode(rows)) == rows
    with pytest.raises(ValueError, match="truncated"):
        decode(encode(rows)[:-3])
    with pytest.raises(ValueError, match="trailing"):
        decode(encode(rows) + b"!")
