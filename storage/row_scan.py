"""The per-row inner loops of big reads: packed rows to column tuples, row keys to their parts.

A listing of a million partitions spends its time in what it does once per row: step the
SQLite cursor, find the wanted columns in the packed row, test the key, keep the result. Written
as one flat loop each, with static types in ``row_scan.pxd``, Cython compiles this module at
install (``setup.py``); without a C compiler it runs as the same plain Python, slower. It does
no I/O and knows nothing of partitions: only the packed-row format of ``storage.embedded``, the
order-part format of ``storage.codec``,.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = [
    "PartMemo",
    "compiled",
    "length_prefixed",
    "packed_columns",
    "order_parts",
    "passing",
]

_ROW_VERSION = 1
_HEADER = 5  # version byte, then the column count as a big-endian u32
#: What ``_columns`` answers for a blob that ends before the wanted columns (a row's head).
_CUT = -2

# Tags of the order parts (storage.codec): fixed-width typed values, and escaped texts.
_INTEGRAL = 0x10
_DATE = 0x20
_INTEGRAL_WIDTH = 9
_DATE_WIDTH = 5

#: Distinct parts a memo keeps verdicts for; past that it tests without remembering.
MEMO_LIMIT = 65536


def compiled() -> bool:
    """Whether this module runs compiled (Cython) rather than as plain Python."""
    return not __file__.endswith(".py")


def _u32(buf: bytes, p: int) -> int:
    return (buf[p] << 24) | (buf[p + 1] << 16) | (buf[p + 2] << 8) | buf[p + 3]


def _same(buf: bytes, p: int, name: bytes) -> bool:
    """Whether ``buf[p : p + len(name)]`` is ``name`` (the caller checked the length)."""
    for i in range(len(name)):  # noqa: SIM110 - a C loop once compiled; all() is not
        if buf[p + i] != name[i]:
            return False
    return True


def _columns(blob: bytes, columns: tuple[bytes, ...], values: list[bytes | None]) -> int:
    """Fill ``values`` with the packed row's values of ``columns`` (None: absent); how many
    were found, or ``_CUT`` when the blob ends before the walk could tell (a row's head,
    ``storage.embedded``). ValueError for a row of another format."""
    size = len(blob)
    if size < _HEADER or blob[0] != _ROW_VERSION:
        raise ValueError("a packed row of an unknown format")
    count = _u32(blob, 1)
    lengths = _HEADER
    pos = _HEADER + 8 * count
    wanted = len(columns)
    found = 0
    for i in range(wanted):
        values[i] = None
    if pos > size:
        return _CUT
    for _ in range(count):
        name_len = _u32(blob, lengths)
        value_len = _u32(blob, lengths + 4)
        lengths += 8
        value_at = pos + name_len
        if value_at + value_len > size:
            return _CUT
        for j in range(wanted):
            column = columns[j]
            if len(column) == name_len and _same(blob, pos, column):
                values[j] = blob[value_at : value_at + value_len]
                found += 1
                break
        if found == wanted:
            break
        pos = value_at + value_len
    return found


def packed_columns(
    pairs: Iterable[tuple[bytes, bytes]],
    columns: Sequence[bytes],
    key_test: Callable[[bytes], bool] | None = None,
    limit: int = -1,
    keys: bool = True,
    cut: list[bytes] | None = None,
) -> tuple[list[tuple[bytes | None, ...]], int, int]:
    """For (key, packed row) pairs in order: a tuple ``(value of each column..., key)`` per row
    whose key passes ``key_test`` and that holds at least one of ``columns`` (an absent column
    is None), up to ``limit`` tuples (-1: all); how many rows were read; and how many of the
    tuples lack a column. With ``keys=False`` the key is kept only in tuples that lack a
    column (None in the others): a big listing then holds no copy of every key.

    ``cut``: the blobs may be the first bytes of packed rows (heads, ``storage.embedded``):
    the key of a row whose head ends before its wanted columns are told goes into this list
    instead (it needs its whole row). Without it such a row is a ValueError."""
    wanted = tuple(columns)
    width = len(wanted)
    values: list[bytes | None] = [None] * width
    out: list[tuple[bytes | None, ...]] = []
    read = 0
    incomplete = 0
    for pair in pairs:
        key = pair[0]
        read += 1
        if key_test is not None and not key_test(key):
            continue
        found = _columns(pair[1], wanted, values)
        if found <= 0:
            if found == _CUT:
                if cut is None:
                    raise ValueError("a packed row ends inside its columns")
                cut.append(key)
            continue
        if found < width:
            incomplete += 1
        kept = key if keys or found < width else None
        if width == 1:
            out.append((values[0], kept))
        elif width == 2:
            out.append((values[0], values[1], kept))
        else:
            out.append((*values, kept))
        if len(out) == limit:
            break
    return out, read, incomplete


def passing(keys: Sequence[bytes], key_test: Callable[[bytes], bool]) -> list[int]:
    """The positions of the keys that pass ``key_test``, in order."""
    out: list[int] = []
    for i in range(len(keys)):
        if key_test(keys[i]):
            out.append(i)
    return out


#: The 4-byte big-endian lengths of short strings, made once.
_LENGTHS = [n.to_bytes(4, "big") for n in range(4096)]


def length_prefixed(items: list[bytes]) -> bytes:
    """The items joined, each after its length as a big-endian u32: the body of a Thrift
    binary list of strings (a listing of partition names goes to the wire as it is)."""
    pieces: list[bytes] = []
    lengths = _LENGTHS
    for i in range(len(items)):
        item = items[i]
        n = len(item)
        pieces.append(lengths[n] if n < 4096 else n.to_bytes(4, "big"))
        pieces.append(item)
    return b"".join(pieces)


def packed_row(row: Mapping[bytes, bytes]) -> bytes:
    """A row as the embedded store keeps it (``embedded_rows.pack_row``): the format version,
    the column count, each column's name and value lengths, then the names and values, in
    name order; counts and lengths big-endian u32."""
    names = sorted(row)
    lengths = _LENGTHS
    pieces: list[bytes] = [_VERSION_BYTE, _length(len(names))]
    body: list[bytes] = []
    for i in range(len(names)):
        name = names[i]
        value = row[name]
        n = len(name)
        pieces.append(lengths[n] if n < 4096 else _length(n))
        n = len(value)
        pieces.append(lengths[n] if n < 4096 else _length(n))
        body.append(name)
        body.append(value)
    pieces.extend(body)
    return b"".join(pieces)


def _length(n: int) -> bytes:
    return n.to_bytes(4, "big")


_VERSION_BYTE = bytes((_ROW_VERSION,))


def _text_end(data: bytes, pos: int, size: int) -> int:
    """The position after the escaped text starting at ``pos`` (after its 0x00 0x00)."""
    while pos + 1 < size:
        if data[pos] == 0:
            if data[pos + 1] == 0:
                return pos + 2
            if data[pos + 1] != 0xFF:
                raise ValueError("a 0x00 in an encoded string is neither escape nor terminator")
            pos += 2
        else:
            pos += 1
    raise ValueError("unterminated string in encoded key")


def _part_end(data: bytes, pos: int, size: int) -> int:
    """Where the order part starting at ``pos`` ends."""
    if pos >= size:
        raise ValueError("encoded key ends before its last value")
    tag = data[pos]
    if tag == _INTEGRAL:
        end = pos + _INTEGRAL_WIDTH
    elif tag == _DATE:
        end = pos + _DATE_WIDTH
    else:
        return _text_end(data, pos + 1, size)
    if end > size:
        raise ValueError("encoded key ends inside a fixed-width value")
    return end


def order_parts(data: bytes, start: int, count: int) -> list[bytes]:
    """The first ``count`` order parts of the encoded value tuple at ``data[start:]``, then
    the rest (the spelling suffix and any later parts): ``count + 1`` pieces. The tags say
    where a part ends; which kinds the tags are allowed for is the decoder's business."""
    parts: list[bytes] = []
    size = len(data)
    pos = start
    for _ in range(count):
        end = _part_end(data, pos, size)
        parts.append(data[pos:end])
        pos = end
    parts.append(data[pos:])
    return parts


def _nth_part(data: bytes, start: int, index: int) -> bytes:
    """The order part at ``index`` of the encoded value tuple at ``data[start:]``."""
    size = len(data)
    pos = start
    for _ in range(index):
        pos = _part_end(data, pos, size)
    return data[pos : _part_end(data, pos, size)]


class PartMemo:
    """A row-key test that remembers its verdicts by the key's parts that decide them.

    ``test(key)`` decides a row key alone; a verdict depends only on the order parts at
    ``indexes`` (and on the spelling suffix too when ``spelled``), so it is kept under those
    bytes: a filter on a key of few distinct values is tested once per value, and every other
    row costs a split of its key and a look-up. ``start`` is where the value tuple begins (after
    the table id); ``count`` how many parts to split off (the highest index + 1)."""

    def __init__(
        self,
        test: Callable[[bytes], bool],
        start: int,
        indexes: Sequence[int],
        spelled: bool,
    ) -> None:
        self.test = test
        self.start = start
        self.indexes = tuple(indexes)
        self.count = max(self.indexes, default=-1) + 1
        self.spelled = spelled
        self.verdicts: dict[object, bool] = {}

    def __call__(self, key: bytes) -> bool:
        if not self.spelled and len(self.indexes) == 1:
            memo_key: object = _nth_part(key, self.start, self.indexes[0])
            verdict = self.verdicts.get(memo_key)
            if verdict is not None:
                return verdict
            return self._tested(key, memo_key)
        parts = order_parts(key, self.start, self.count)
        if self.spelled:
            memo_key = (tuple([parts[i] for i in self.indexes]), parts[self.count])
        elif len(self.indexes) == 1:
            memo_key = parts[self.indexes[0]]
        else:
            memo_key = tuple([parts[i] for i in self.indexes])
        verdict = self.verdicts.get(memo_key)
        if verdict is None:
            return self._tested(key, memo_key)
        return verdict

    def _tested(self, key: bytes, memo_key: object) -> bool:
        verdict = bool(self.test(key))
        if len(self.verdicts) < MEMO_LIMIT:
            self.verdicts[memo_key] = verdict
        return verdict
