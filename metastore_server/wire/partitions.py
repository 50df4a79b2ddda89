"""Partitions of an add request kept as the Thrift binary bytes they came in (see
``docs/design.md``, "Adding partitions stores the bytes as they came").

The server hands ``add_partitions`` and ``add_partitions_req`` the request's partitions as
:class:`WirePartition` objects when the message was walked whole on the binary protocol: each
holds where its fields lie in the message and decodes only what an add reads (values, names,
times, parameters, location). The add then stores :func:`stored_bytes`: the fields it sets
encoded anew (values, times, parameters, location, the storage defaults HMS fills), every other
field of the partition and of its storage descriptor copied as it came. Decoded, they are the
partition the add of a decoded request stores. Anything the fast path does not cover (a
partition without a storage descriptor, a dependent table, any error) is done by decoding the
partitions (``WirePartition.decode``) and adding them the usual way, errors included.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence

from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes
from metastore_server.wire.walk import struct_fields, value_end

_STRING = 11
_I32 = 8
_BOOL = 2
_MAP = 13
_LIST = 15

#: Field id -> wire type of the partition's and the storage descriptor's fields (the others,
#: and a field of another type, are skipped by a decoder: they are left out).
_PARTITION_TYPES = {fid: spec[0] for fid, spec in hms.Partition.thrift_spec.items()}
_SD_TYPES = {fid: spec[0] for fid, spec in hms.StorageDescriptor.thrift_spec.items()}
#: Partition fields an add sets (values, names, times, sd, parameters, catalog).
_SET_BY_ADD = frozenset({1, 2, 3, 4, 5, 6, 7, 9})
_PARAMETERS = 7
_SD_LOCATION = 2
_SD_SKEWED = 11
_SD_SUBDIRS = 12
#: The fields an add keeps as they came follow those it sets, in id order.
assert min(set(_PARTITION_TYPES) - _SET_BY_ADD) > _PARAMETERS
#: The storage defaults HMS fills when absent (``tables.fill_storage_defaults``), encoded.
_EMPTY_SKEW = struct.pack("!bh", 12, _SD_SKEWED) + to_bytes(
    hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
)
_NOT_SUBDIRS = struct.pack("!bhb", _BOOL, _SD_SUBDIRS, 0)
#: Packers of field headers and lengths.
_I32_FIELD = struct.Struct("!bhi").pack
_STRING_HEAD = struct.Struct("!bhi").pack
_LIST_HEAD = struct.Struct("!bhbi").pack
_MAP_HEAD = struct.Struct("!bhbbi").pack
_LENGTH = struct.Struct("!i").pack


#: Bytes of memory a partition read takes, at least: its object (with its numbers and its
#: empty field table), and each field noted.
PARTITION_COST = 400
FIELD_COST = 100


class NotFast(Exception):
    """A partition the fast path does not cover: the request is decoded instead."""


class WireSd:
    """The storage descriptor of a :class:`WirePartition`: its location (what the fast
    statistics read) and where its fields lie."""

    __slots__ = ("location", "buf", "start", "whole", "has_defaults")

    def __init__(
        self,
        location: str | None,
        buf: bytes = b"",
        start: int = 0,
        whole: tuple[int, int] | None = None,
        has_defaults: bool = False,
    ) -> None:
        self.location = location
        #: The message, and where its first field lies in it.
        self.buf, self.start = buf, start
        #: Where its fields and stop byte lie when they are all kept, each once, in id order
        #: (copied as they are then); None else.
        self.whole = whole
        #: Whether it holds both storage defaults HMS fills (skewed info, subdirectories).
        self.has_defaults = has_defaults

    def spans(self) -> dict[int, tuple[int, int]]:
        """Field id -> (start of its header, end of its value) of the fields a decoder reads
        (of their type; the last of an id wins)."""
        found, _ = struct_fields(self.buf, self.start)
        return {fid: (at - 3, end) for fid, ftype, at, end in found
                if _SD_TYPES.get(fid) == ftype}  # fmt: skip


class WirePartition:
    """One partition of an add request: the fields an add reads, decoded, and where every
    field lies in the message (``buf``). Attribute names are ``hms.Partition``'s."""

    __slots__ = ("buf", "start", "end", "fields", "values", "dbName", "tableName", "catName",
                 "createTime", "lastAccessTime", "parameters", "sd")  # fmt: skip

    def __init__(self, buf: bytes, start: int) -> None:
        self.buf = buf
        self.start = start
        self.values: list[str] | None = None
        self.dbName: str | None = None
        self.tableName: str | None = None
        self.catName: str | None = None
        self.createTime: int | None = None
        self.lastAccessTime: int | None = None
        self.parameters: dict[str, str] | None = None
        self.sd: WireSd | None = None
        #: Field id -> (id, wire type, start of the value, end of the value) of the fields a
        #: decoder reads (of their type); the last of an id wins.
        self.fields: dict[int, tuple[int, int, int, int]] = {}
        self.end = _read_fields(self, buf, start)

    def decode(self) -> hms.Partition:
        """The partition as a decoder makes it from the request."""
        return from_bytes(hms.Partition, self.buf[self.start : self.end])


def _read_fields(part: WirePartition, buf: bytes, start: int) -> int:
    """Note where the partition's fields lie and decode those an add reads; its end."""
    found, end = struct_fields(buf, start)
    fields = part.fields
    for item in found:
        fid, ftype, at, stop = item
        if _PARTITION_TYPES.get(fid) != ftype:
            continue  # a decoder skips it
        fields[fid] = item
        if fid == 1:
            part.values = _strings(buf, at)
        elif fid == 2:
            part.dbName = buf[at + 4 : stop].decode("utf-8")
        elif fid == 3:
            part.tableName = buf[at + 4 : stop].decode("utf-8")
        elif fid == 4:
            part.createTime = _i32(buf, at)
        elif fid == 5:
            part.lastAccessTime = _i32(buf, at)
        elif fid == 6:
            part.sd = _sd(buf, at)
        elif fid == 7:
            part.parameters = _string_map(buf, at)
        elif fid == 9:
            part.catName = buf[at + 4 : stop].decode("utf-8")
    return end


def read_partitions(
    buf: bytes, start: int, charge: Callable[[int], None] | None = None
) -> tuple[list[WirePartition], int]:
    """The partitions of a Thrift binary list of partitions whose header is at ``start``, and
    where the list ends. NotFast for a list of anything else; ValueError when malformed.
    ``charge`` is told the memory each partition takes, roughly, as it is read (a decode
    budget)."""
    if buf[start] != 12:
        raise NotFast("not a list of structs")
    count = _i32(buf, start + 1)
    p = start + 5
    parts = []
    for _ in range(count):
        part = WirePartition(buf, p)
        if charge is not None:
            charge(PARTITION_COST + FIELD_COST * len(part.fields))
        parts.append(part)
        p = part.end
    return parts, p


def stored_bytes(
    part: WirePartition,
    values: Sequence[str],
    create_time: int,
    last_access_time: int,
    parameters: Mapping[str, str],
    location: str | None,
    defaults: bool,
) -> bytes:
    """The partition's encoding as an add stores it (``defaults``: with the storage defaults
    HMS fills) or answers it: without its database, table and catalog names, with these
    values, times, parameters and location, and its other fields as they came."""
    buf, sd, fields = part.buf, part.sd, part.fields
    assert sd is not None
    kept = [fid for fid in fields if fid not in _SET_BY_ADD]  # (ids above 7: they go last)
    if len(kept) > 1:
        kept.sort()
    out: list[bytes] = []
    _add_values(out, values)
    out.append(_I32_FIELD(_I32, 4, create_time))
    out.append(_I32_FIELD(_I32, 5, last_access_time))
    out.append(_sd_bytes(buf, sd, fields[6][2] - 3, location, defaults))
    _add_map(out, _PARAMETERS, parameters)
    for fid in kept:
        item = fields[fid]
        out.append(buf[item[2] - 3 : item[3]])
    out.append(b"\x00")
    return b"".join(out)


def _sd_bytes(buf: bytes, sd: WireSd, at: int, location: str | None, defaults: bool) -> bytes:
    """The storage descriptor field as stored (its header at ``at`` in ``buf``)."""
    whole = sd.whole
    if whole is not None and location is None and (not defaults or sd.has_defaults):
        return buf[at : whole[1]]  # as it came, its header included (the usual case)
    sd_pieces = {fid: buf[start:end] for fid, (start, end) in sd.spans().items()}
    if location is not None:
        sd_pieces[_SD_LOCATION] = _string_field(_SD_LOCATION, location)
    if defaults:
        sd_pieces.setdefault(_SD_SKEWED, _EMPTY_SKEW)
        sd_pieces.setdefault(_SD_SUBDIRS, _NOT_SUBDIRS)
    return b"\x0c\x00\x06" + _joined(sd_pieces)


def _joined(pieces: dict[int, bytes]) -> bytes:
    """The fields in field id order (as a Thrift encoder writes them), then the stop byte."""
    return b"".join([pieces[fid] for fid in sorted(pieces)]) + b"\x00"


def _i32(buf: bytes, p: int) -> int:
    value = (buf[p] << 24) | (buf[p + 1] << 16) | (buf[p + 2] << 8) | buf[p + 3]
    return value - 4294967296 if value >= 2147483648 else value


def _strings(buf: bytes, p: int) -> list[str]:
    if buf[p] != _STRING:
        raise NotFast("a list of values that are not strings")
    count = _i32(buf, p + 1)
    p += 5
    out = []
    for _ in range(count):
        n = _i32(buf, p)
        out.append(buf[p + 4 : p + 4 + n].decode("utf-8"))
        p += 4 + n
    return out


def _string_map(buf: bytes, p: int) -> dict[str, str]:
    if buf[p] != _STRING or buf[p + 1] != _STRING:
        raise NotFast("a map that is not of strings")
    count = _i32(buf, p + 2)
    p += 6
    out = {}
    for _ in range(count):
        n = _i32(buf, p)
        key = buf[p + 4 : p + 4 + n].decode("utf-8")
        p += 4 + n
        n = _i32(buf, p)
        out[key] = buf[p + 4 : p + 4 + n].decode("utf-8")
        p += 4 + n
    return out


def _sd(buf: bytes, p: int) -> WireSd:
    """The storage descriptor whose first field header is at ``p``, its fields walked in
    place (as ``struct_fields`` walks them, without noting each)."""
    start = p
    size = len(buf)
    location = None
    last = -32769
    in_order = True
    skewed = subdirs = False
    while True:
        if p + 1 > size or (buf[p] != 0 and p + 3 > size):
            raise ValueError("a malformed or cut Thrift struct")
        ftype = buf[p]
        if ftype == 0:
            break
        fid = (buf[p + 1] << 8) | buf[p + 2]
        if fid >= 32768:
            fid -= 65536
        end = value_end(buf, p + 3, ftype, 0)
        if end < 0:
            raise ValueError("a malformed or cut Thrift struct")
        if _SD_TYPES.get(fid) != ftype:
            in_order = False
        else:
            in_order = in_order and fid > last
            last = fid
            if fid == _SD_LOCATION:
                location = buf[p + 7 : end].decode("utf-8")
            elif fid == _SD_SKEWED:
                skewed = True
            elif fid == _SD_SUBDIRS:
                subdirs = True
        p = end
    whole = (start, p + 1) if in_order else None
    return WireSd(location, buf, start, whole, skewed and subdirs)


def _string_field(fid: int, text: str) -> bytes:
    data = text.encode("utf-8")
    return _STRING_HEAD(_STRING, fid, len(data)) + data


def _add_values(out: list[bytes], values: Sequence[str]) -> None:
    """The values field (a list of strings, field 1), in pieces."""
    out.append(_LIST_HEAD(_LIST, 1, _STRING, len(values)))
    for value in values:
        data = value.encode("utf-8")
        out.append(_LENGTH(len(data)))
        out.append(data)


def _add_map(out: list[bytes], fid: int, mapping: Mapping[str, str]) -> None:
    """A map of strings field, in pieces."""
    out.append(_MAP_HEAD(_MAP, fid, _STRING, _STRING, len(mapping)))
    for key, value in mapping.items():
        data = key.encode("utf-8")
        out.append(_LENGTH(len(data)))
        out.append(data)
        data = value.encode("utf-8")
        out.append(_LENGTH(len(data)))
        out.append(data)
