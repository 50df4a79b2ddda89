"""A small Thrift binary-protocol encoder for tests that need to place bytes of their own at a
chosen point of an otherwise valid call: an extra field at the end of any struct, or another
header in place of any list, set or map header.

Positions are paths of field names from the arguments struct (list elements by index, map
entries as ``"key"``/``"value"`` plus their index), e.g. ``("new_parts", 0, "sd", "serdeInfo")``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from thriftpy2.thrift import TMessageType, TType

Path = tuple[Any, ...]

CALL = 0x80010000 | TMessageType.CALL
_FIXED = {TType.BOOL: "!?", TType.BYTE: "!b", TType.I16: "!h", TType.I32: "!i",
          TType.I64: "!q", TType.DOUBLE: "!d"}  # fmt: skip


#: Unknown fields of every kind, well formed (a newer client's): an i32, an empty struct holding
#: an i64, a list of two strings, an empty map.
VALID_UNKNOWN_FIELDS = b"".join([
    struct.pack("!bhi", 8, 77, 5),
    struct.pack("!bh", 12, 78), struct.pack("!bhq", 10, 1, 9), b"\x00",
    struct.pack("!bhbi", 15, 79, 11, 2), struct.pack("!i", 1), b"a", struct.pack("!i", 0),
    struct.pack("!bhbbi", 13, 80, 11, 15, 0),
])  # fmt: skip


def bomb_field(element_type: int = 1, size: int = 2**31 - 1) -> bytes:
    """An unknown field (id 99): a list of ``size`` elements of ``element_type``."""
    return struct.pack("!BhBi", 15, 99, element_type, size)


@dataclass(frozen=True)
class Splice:
    """Bytes to put in a message: ``tail`` before the stop byte of the struct at ``path``, or
    ``header`` (and nothing of the original contents) for the container at ``path``."""

    path: Path
    tail: bytes = b""
    header: bytes | None = None


def message(name: str, args: Any, splice: Splice | None = None, seqid: int = 1) -> bytes:
    """The bytes of a call of ``name`` with ``args``, with ``splice`` applied."""
    head = struct.pack("!I", CALL) + _string(name.encode()) + struct.pack("!i", seqid)
    return head + _struct(args, (), splice)


def struct_paths(args: Any) -> Iterator[Path]:
    """The path of every struct in ``args`` (itself included)."""
    yield from (path for path, kind in _walk(args, ()) if kind == TType.STRUCT)


def container_paths(args: Any) -> Iterator[tuple[Path, int]]:
    """The path and type (LIST, SET or MAP) of every non-empty container in ``args``."""
    yield from ((path, kind) for path, kind in _walk(args, ()) if kind != TType.STRUCT)


def _walk(obj: Any, path: Path) -> Iterator[tuple[Path, int]]:
    yield path, TType.STRUCT
    for _fid, spec in sorted(obj.thrift_spec.items()):
        value = getattr(obj, spec[1], None)
        if value is not None:
            yield from _walk_value(spec[0], spec[2] if len(spec) > 3 else None, value,
                                   path + (spec[1],))  # fmt: skip


def _walk_value(ttype: int, spec: Any, value: Any, path: Path) -> Iterator[tuple[Path, int]]:
    if ttype == TType.STRUCT:
        yield from _walk(value, path)
    elif ttype in (TType.LIST, TType.SET) and value:
        yield path, ttype
        etype, espec = _split(spec)
        for index, item in enumerate(value):
            yield from _walk_value(etype, espec, item, path + (index,))
    elif ttype == TType.MAP and value:
        yield path, ttype
        (ktype, kspec), (vtype, vspec) = _split(spec[0]), _split(spec[1])
        for index, (key, item) in enumerate(value.items()):
            yield from _walk_value(ktype, kspec, key, path + ("key", index))
            yield from _walk_value(vtype, vspec, item, path + ("value", index))


def _split(spec: Any) -> tuple[int, Any]:
    return (spec, None) if isinstance(spec, int) else (spec[0], spec[1])


def _string(data: bytes) -> bytes:
    return struct.pack("!i", len(data)) + data


def _struct(obj: Any, path: Path, splice: Splice | None) -> bytes:
    out = bytearray()
    for fid, spec in sorted(obj.thrift_spec.items()):
        value = getattr(obj, spec[1], None)
        if value is None:
            continue
        out += struct.pack("!bh", spec[0], fid)
        out += _value(spec[0], spec[2] if len(spec) > 3 else None, value, path + (spec[1],),
                      splice)  # fmt: skip
    if splice is not None and splice.path == path:
        out += splice.tail
    return bytes(out + b"\x00")


def _value(ttype: int, spec: Any, value: Any, path: Path, splice: Splice | None) -> bytes:
    if ttype in _FIXED:
        return struct.pack(_FIXED[ttype], value)
    if ttype == TType.STRING:
        return _string(value if isinstance(value, bytes) else value.encode())
    if ttype == TType.STRUCT:
        return _struct(value, path, splice)
    if splice is not None and splice.header is not None and splice.path == path:
        return splice.header
    if ttype in (TType.LIST, TType.SET):
        etype, espec = _split(spec)
        items = b"".join(_value(etype, espec, item, path + (i,), splice)
                         for i, item in enumerate(value))  # fmt: skip
        return struct.pack("!bi", etype, len(value)) + items
    (ktype, kspec), (vtype, vspec) = _split(spec[0]), _split(spec[1])
    entries = b"".join(
        _value(ktype, kspec, key, path + ("key", i), splice)
        + _value(vtype, vspec, item, path + ("value", i), splice)
        for i, (key, item) in enumerate(value.items())
    )
    return struct.pack("!bbi", ktype, vtype, len(value)) + entries
