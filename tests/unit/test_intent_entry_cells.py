"""How an intent entry is kept in its cell (``IntentRows.entry_value`` / ``entry_bytes``): a
large entry that deflates well is kept deflated, inline when it then fits; one that does not
deflate is kept as it is; too large either way, it goes to chunk rows; cells written before
entries were deflated are read as they were; a damaged one is a clear error."""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

import pytest
from metastore_server.storage import intent_entries
from metastore_server.storage.deflating import DEFLATE_FROM_BYTES
from metastore_server.storage.intent_entries import RowImage
from metastore_server.storage.intent_rows import (
    CHUNK_BYTES,
    INLINE_BYTES,
    INTENTS,
    IntentRows,
)
from metastore_server.storage.port import Condition, Delete, Put, Row

KEY = b"\x01" * 16


class _Store:
    """The intents table in a dict: what IntentRows reads and writes."""

    def __init__(self) -> None:
        self.rows: dict[bytes, Row] = {}
        self.writes = 0

    def get_many(self, table: str, keys: Sequence[bytes]) -> list[tuple[bytes, Row]]:
        assert table == INTENTS
        return [(key, self.rows[key]) for key in keys if key in self.rows]

    def write(self, ops: Sequence[Put | Delete], condition: Condition | None) -> bool:
        self.writes += 1
        for op in ops:
            assert isinstance(op, Put) and op.table == INTENTS
            self.rows.setdefault(op.key, {}).update(op.columns)
        return True


def _partitions(count: int) -> bytes:
    """An entry of ``count`` partition rows' before-images, much alike (as a batch's are)."""
    images = [
        RowImage("parts", b"t\x00ds=%08d" % n, True,
                 {b"c:o": b"sd=file:/warehouse/db/t/ds=%08d;cols=a,b,c;serde=parquet;" % n * 8},
                 {b"c:o": None})  # fmt: skip
        for n in range(count)
    ]
    return intent_entries.encode(images)


def _kept(entry: bytes) -> tuple[_Store, bytes, list[bytes]]:
    store = _Store()
    rows = IntentRows(reads=store, write=store.write)  # type: ignore[arg-type]
    value, chunks = rows.entry_value(KEY, 3, entry)
    assert rows.entry_bytes(KEY, 3, value) == entry
    return store, value, chunks


def test_a_batch_of_partitions_is_kept_deflated_and_inline() -> None:
    entry = _partitions(2000)
    assert len(entry) > INLINE_BYTES  # as it is, it would need chunk rows
    store, value, chunks = _kept(entry)
    assert chunks == [] and store.writes == 0
    assert value[:1] == b"\x02" and len(value) * 5 < len(entry)


def test_an_entry_that_does_not_deflate_is_kept_as_it_is() -> None:
    noise = random.Random(7).randbytes(4 * DEFLATE_FROM_BYTES)
    entry = intent_entries.encode([RowImage("t", b"k", False, {b"c:x": noise}, {b"c:x": None})])
    _, value, chunks = _kept(entry)
    assert chunks == [] and value == b"\x00" + entry


def test_small_entries_are_kept_as_they_are() -> None:
    entry = _partitions(1)
    assert len(entry) < DEFLATE_FROM_BYTES
    assert _kept(entry)[1] == b"\x00" + entry


@pytest.mark.parametrize("compressible", [False, True])
def test_entries_too_large_for_a_cell_go_to_chunk_rows(compressible: bool) -> None:
    size = CHUNK_BYTES + INLINE_BYTES
    data = random.Random(3).randbytes(size)
    if compressible:  # four bits a byte: deflated to about half, still past the inline size
        data = bytes(byte & 0x0F for byte in data)
    entry = intent_entries.encode([RowImage("t", b"k", False, {b"c:x": data}, {b"c:x": None})])
    store, value, chunks = _kept(entry)
    assert value[:1] == (b"\x03" if compressible else b"\x01") and len(chunks) >= 1
    assert set(chunks) <= set(store.rows)


def test_cells_written_before_deflating_are_read_alike() -> None:
    entry = _partitions(500)
    store = _Store()
    rows = IntentRows(reads=store, write=store.write)  # type: ignore[arg-type]
    assert rows.entry_bytes(KEY, 1, b"\x00" + entry) == entry
    half = len(entry) // 2
    prefix = KEY + b"/" + (1).to_bytes(4, "big")
    store.rows[prefix + (0).to_bytes(4, "big")] = {b"i:c": entry[:half]}
    store.rows[prefix + (1).to_bytes(4, "big")] = {b"i:c": entry[half:]}
    assert rows.entry_bytes(KEY, 1, b"\x01" + (2).to_bytes(4, "big")) == entry


def test_a_deflated_inline_entry_reads_as_no_chunks_to_older_servers() -> None:
    """Servers built before entries were deflated read any cell not marked inline as a chunk
    count: they find none, and their decoding of no bytes fails as a truncated entry."""
    _, value, _ = _kept(_partitions(2000))
    assert value[1:5] == b"\x00\x00\x00\x00"
    with pytest.raises(ValueError, match="truncated"):
        intent_entries.decode(b"")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (b"\x02\x00\x00\x00\x00" + zlib.compress(_partitions(100))[:-40], "cut short"),
        (b"\x02\x00\x00\x00\x00" + zlib.compress(_partitions(100)) + b"more", "run on"),
        (b"\x02\x00\x00\x00\x00" + b"not deflated at all", "damaged entry 4"),
        (b"\x02" + zlib.compress(_partitions(100)), "unknown form"),  # no count of no chunks
        (b"\x07" + bytes(10), "unknown form"),
        (b"", "unknown form"),
        (b"\x01\xff\xff\xff\xff", "4294967295 chunks"),
        (b"\x03\x00\x00\x00\x00", "0 chunks"),
        (b"\x01\x00\x00\x00\x02", "lacks chunks"),
    ],
)
def test_a_damaged_cell_is_a_clear_error(value: bytes, says: str) -> None:
    """Whatever the damage, a ValueError naming the entry, at once (no read of billions of
    chunk rows)."""
    rows = IntentRows(reads=_Store(), write=_Store().write)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as caught:
        rows.entry_bytes(KEY, 4, value)
    assert "entry 4" in str(caught.value) and says in str(caught.value)
