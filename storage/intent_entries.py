"""What an intent records of one write, and how a row is put back from it (pure logic, no I/O).

An entry lists every row one ``mutate`` touches (``RowImage``): the columns it touches, their
values before the write (the before-image) and short digests of the values it writes (the
after-image: enough to tell "still as this write left it" from "changed by someone since",
without storing the new values twice). ``encode`` and ``decode`` give an entry's bytes.

``restore`` is the undo rule: a row whose touched columns each still hold either their value
before or the value the write put there (a write that landed in part included) is put back as
it was before; a row where some touched column holds anything else was changed by another
writer since, and is left as it is (None).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

Row = dict[bytes, bytes]

_U8 = struct.Struct(">B")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_DIGEST_BYTES = 8
_WHOLE = 1


def digest(value: bytes) -> bytes:
    """The after-image of one value."""
    return hashlib.blake2b(value, digest_size=_DIGEST_BYTES).digest()


class RowChange(Protocol):
    """The net change of one row a write makes: after ``whole`` (the row emptied), put
    ``puts`` and delete ``deletes``."""

    table: str
    key: bytes
    whole: bool
    puts: dict[bytes, bytes]
    deletes: set[bytes]


@dataclass(frozen=True)
class RowImage:
    """One row of an entry: its touched columns before the write, and after it (a digest, or
    None for a column the write deletes)."""

    table: str
    key: bytes
    whole: bool
    before: Mapping[bytes, bytes]
    after: Mapping[bytes, bytes | None] = field(default_factory=dict)

    @property
    def touched(self) -> frozenset[bytes]:
        return frozenset(self.before) | frozenset(self.after)


def image(change: RowChange, current: Row | None) -> RowImage:
    """The image of ``change`` on a row that holds ``current`` (None: no row)."""
    current = current or {}
    after: dict[bytes, bytes | None] = {c: digest(v) for c, v in change.puts.items()}
    if change.whole:
        before = dict(current)
        after.update({c: None for c in current if c not in change.puts})
    else:
        after.update({c: None for c in change.deletes})
        before = {c: current[c] for c in after if c in current}
    return RowImage(change.table, change.key, change.whole, before, after)


def restore(row: RowImage, current: Row | None) -> tuple[Row, list[bytes]] | None:
    """The puts and column deletes that put ``row`` back as it was before its write, given
    what it holds now (both empty: it already is); None when another writer changed it
    since (see the module docstring)."""
    current = current or {}
    touched = row.touched
    for column in touched:
        now = current.get(column)
        if now == row.before.get(column):
            continue
        done = row.after.get(column)
        if (None if now is None else digest(now)) != done:
            return None
    if row.whole and any(column not in touched for column in current):
        return None  # a column no write of this row made: someone else's
    puts = {c: v for c, v in row.before.items() if current.get(c) != v}
    deletes = sorted(c for c in touched if c not in row.before and c in current)
    return puts, deletes


# -- bytes ------------------------------------------------------------------------------------


def encode(rows: Iterable[RowImage]) -> bytes:
    """An entry's bytes."""
    rows = list(rows)
    out = [_U32.pack(len(rows))]
    for row in rows:
        table = row.table.encode()
        out += [_U16.pack(len(table)), table, _U32.pack(len(row.key)), row.key]
        out += [_U8.pack(_WHOLE if row.whole else 0), _U32.pack(len(row.before))]
        for column, value in row.before.items():
            out += [_U16.pack(len(column)), column, _U32.pack(len(value)), value]
        out.append(_U32.pack(len(row.after)))
        for column, done in row.after.items():
            out += [_U16.pack(len(column)), column]
            out.append(b"\x00" if done is None else b"\x01" + done)
    return b"".join(out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._at = 0

    def take(self, size: int) -> bytes:
        end = self._at + size
        if end > len(self._data):
            raise ValueError("a truncated intent entry")
        chunk = bytes(self._data[self._at : end])
        self._at = end
        return chunk

    def number(self, shape: struct.Struct) -> int:
        return int(shape.unpack(self.take(shape.size))[0])

    def sized(self, shape: struct.Struct) -> bytes:
        return self.take(self.number(shape))

    def done(self) -> bool:
        return self._at == len(self._data)


def decode(data: bytes) -> list[RowImage]:
    """The rows of an entry's bytes; ValueError when they are not an entry."""
    reader = _Reader(data)
    rows = []
    for _ in range(reader.number(_U32)):
        table = reader.sized(_U16).decode()
        key = reader.sized(_U32)
        whole = reader.number(_U8) == _WHOLE
        before = {}
        for _ in range(reader.number(_U32)):
            column = reader.sized(_U16)
            before[column] = reader.sized(_U32)
        after: dict[bytes, bytes | None] = {}
        for _ in range(reader.number(_U32)):
            column = reader.sized(_U16)
            after[column] = reader.take(_DIGEST_BYTES) if reader.number(_U8) else None
        rows.append(RowImage(table, key, whole, before, after))
    if not reader.done():
        raise ValueError("trailing bytes after an intent entry")
    return rows


def split(data: bytes, size: int) -> Sequence[bytes]:
    """``data`` in pieces of at most ``size`` bytes (at least one piece)."""
    return [data[at : at + size] for at in range(0, max(len(data), 1), size)]
