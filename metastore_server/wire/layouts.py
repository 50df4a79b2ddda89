"""The request and reply layouts of the two HMS client generations on the wire.

Our IDL follows HMS 4. Where HMS 3 changed a layout in place (same field id, other meaning),
the 2.3 layout is declared in ``hive_metastore_2_3_wire.thrift``. A request of a method whose
layout changed (``add_dynamic_partitions``, ``fire_listener_event``) shows its layout on the wire
(the wire type of a field both layouts require): it is read raw, then each struct built in the
layout it fits (:func:`read_arguments`); nothing is guessed. Replies: the catalog names HMS 4
fills and HMS 2.3.10 leaves unset (:func:`without_catalog_names`), ``get_open_txns`` in both
layouts at once (:func:`write_both_layouts`). Which client reads which layout is the server's
concern (``server/generations.py``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from thriftpy2.protocol import binary as _pybin
from thriftpy2.protocol.compact import TCompactProtocol
from thriftpy2.thrift import TMessageType, TPayload, TType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.thrift_api import hms, hms23
from metastore_server.wire.malformed import MalformedMessage

#: The structs HMS 3 changed in place -> their 2.3 layout.
_TWINS: dict[type, type] = {
    hms.AddDynamicPartitions: hms23.AddDynamicPartitions,
    hms.InsertEventRequestData: hms23.InsertEventRequestData,
}
_MAX_DEPTH = 64


def read_arguments(api: str, args: Any, iprot: Any) -> None:
    """Read the arguments of a call whose request may come in either generation's layout into
    ``args``: raw first, then each struct built in the layout its fields fit."""
    raw = _RawReader(iprot, api).struct(0)
    _fill(args, raw)


class _RawStruct(dict[int, tuple[int, Any]]):
    """Field id -> (wire type, raw value) of one struct as it came."""


class _RawReader:
    """Raw values of either protocol: structs as :class:`_RawStruct`, lists and sets as
    (element type, values), maps as (key type, value type, pairs), strings as bytes."""

    _field: Callable[[], tuple[int, int]]
    _list: Callable[[], tuple[int, int]]
    _map: Callable[[], tuple[int, int, int]]
    _string: Callable[[], bytes]
    _scalar: Callable[[int], Any]
    _begin: Callable[[], Any]
    _end: Callable[[], Any]

    def __init__(self, iprot: Any, api: str) -> None:
        self.api = api
        if isinstance(iprot, TCompactProtocol):
            self._field = lambda: iprot._read_field_begin()[1:]
            self._list, self._map = iprot._read_collection_begin, iprot._read_map_begin
            self._string, self._scalar = iprot._read_binary, iprot._read_val
            self._begin, self._end = iprot._read_struct_begin, iprot._read_struct_end
        else:
            trans = iprot.trans
            self._field = functools.partial(_pybin.read_field_begin, trans)
            self._list = functools.partial(_pybin.read_list_begin, trans)
            self._map = functools.partial(_pybin.read_map_begin, trans)
            self._string = functools.partial(_pybin.read_val, trans, TType.STRING, None, False)
            self._scalar = functools.partial(_pybin.read_val, trans)
            self._begin = self._end = _nothing

    def struct(self, depth: int) -> _RawStruct:
        """The fields of the struct that comes next."""
        if depth > _MAX_DEPTH:
            raise MalformedMessage(f"structs nested deeper than {_MAX_DEPTH}", self.api)
        self._begin()
        out = _RawStruct()
        while True:
            ftype, fid = self._field()
            if ftype == TType.STOP:
                break
            out[fid] = (ftype, self.value(ftype, depth))
        self._end()
        return out

    def value(self, ttype: int, depth: int) -> Any:
        """The value of wire type ``ttype`` that comes next."""
        if ttype == TType.STRUCT:
            return self.struct(depth + 1)
        if ttype in (TType.LIST, TType.SET):
            etype, size = self._list()
            return etype, [self.value(etype, depth) for _ in range(size)]
        if ttype == TType.MAP:
            ktype, vtype, size = self._map()
            pairs = [(self.value(ktype, depth), self.value(vtype, depth)) for _ in range(size)]
            return ktype, vtype, pairs
        if ttype == TType.STRING:
            return self._string()
        return self._scalar(ttype)


def _nothing() -> None:
    return None


def _same_wire(wire: int, declared: int) -> bool:
    strings = (TType.STRING, TType.BINARY)
    return wire == declared or (wire in strings and declared in strings)


def _fits(cls: type[TPayload], raw: _RawStruct) -> bool:
    """Whether ``raw`` reads as ``cls``: each field it has of ``cls``'s ids of the declared
    wire type, and each required field of ``cls`` there."""
    for fid, field in cls.thrift_spec.items():
        got = raw.get(fid)
        if got is None:
            if field[-1]:
                return False
        elif not _same_wire(got[0], field[0]):
            return False
    return True


def _fill(obj: Any, raw: _RawStruct) -> Any:
    for fid, field in obj.thrift_spec.items():
        got = raw.get(fid)
        if got is None or not _same_wire(got[0], field[0]):
            continue
        spec = field[2] if len(field) == 4 else None
        setattr(obj, field[1], _build(field[0], spec, got[1]))
    return obj


def _element(spec: Any) -> tuple[int, Any]:
    return (spec, None) if isinstance(spec, int) else (spec[0], spec[1])


def _build(ttype: int, spec: Any, raw: Any) -> Any:
    if ttype == TType.STRUCT:
        twin = _TWINS.get(spec)
        if twin is not None and not _fits(spec, raw) and _fits(twin, raw):
            return convert(_fill(twin(), raw), spec)
        return _fill(spec(), raw)
    if ttype in (TType.LIST, TType.SET):
        e_type, e_spec = _element(spec)
        wire, items = raw
        values = [_build(e_type, e_spec, item) for item in items if _same_wire(wire, e_type)]
        return values if ttype == TType.LIST else set(values)
    if ttype == TType.MAP:
        (k_type, k_spec), (v_type, v_spec) = _element(spec[0]), _element(spec[1])
        k_wire, v_wire, pairs = raw
        if not (_same_wire(k_wire, k_type) and _same_wire(v_wire, v_type)):
            return {}
        return {_build(k_type, k_spec, k): _build(v_type, v_spec, v) for k, v in pairs}
    if ttype == TType.STRING and isinstance(raw, bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw  # refused as text by the caller's check, as any undecodable string
    return raw


def convert(obj: Any, cls: type[TPayload]) -> Any:
    """``obj`` as an instance of ``cls``: the fields of the same name (sets and lists
    following ``cls``'s declaration)."""
    out = cls()
    for field in cls.thrift_spec.values():
        value = getattr(obj, field[1], None)
        if value is None:
            continue
        if field[0] == TType.LIST and isinstance(value, set):
            value = sorted(value)
        elif field[0] == TType.SET and isinstance(value, list):
            value = set(value)
        setattr(out, field[1], value)
    return out


# --------------------------------------------------------------------------- replies


_CATALOG_FIELDS = ("catName", "catalogName")


def without_catalog_names(value: Any) -> Any:
    """``value`` (a struct, or a list of them) with the catalog names of the structs in it
    unset, as HMS 2.3.10 answers; copies where it changes something (answers may be cached).
    Only the fields that can hold a catalog name are visited (:func:`_catalog_plan`)."""
    if isinstance(value, list):
        return [without_catalog_names(item) for item in value]
    kind: type[TPayload] = type(value)
    plan = _catalog_plan(kind) if hasattr(value, "thrift_spec") else None
    if not plan:
        return value
    out = copy.copy(value)
    for name, nested in plan:
        inner = getattr(value, name, None)
        if inner is not None:
            setattr(out, name, without_catalog_names(inner) if nested else None)
    return out


@functools.cache
def _catalog_plan(cls: type[TPayload]) -> tuple[tuple[str, bool], ...]:
    """The fields of ``cls`` to visit: (name, whether it is a struct or list that can hold a
    catalog name deeper, else a catalog name itself)."""
    return tuple(
        (field[1], not _is_catalog_name(field))
        for field in cls.thrift_spec.values()
        if _is_catalog_name(field) or _holds_catalog(field, frozenset({cls}))
    )


def _is_catalog_name(field: tuple[Any, ...]) -> bool:
    """Whether a field is an optional catalog name (a required one, as CreationMetadata's, is
    kept: a reader checks it is there)."""
    return field[1] in _CATALOG_FIELDS and not field[-1]


def _holds_catalog(field: tuple[Any, ...], seen: frozenset[type]) -> bool:
    """Whether a struct field (or a list of structs) can hold a catalog name."""
    if field[0] == TType.LIST and len(field) == 4 and isinstance(field[2], tuple):
        element = field[2]
        target = element[1] if element[0] == TType.STRUCT else None
    elif field[0] == TType.STRUCT and len(field) == 4:
        target = field[2]
    else:
        return False
    if target is None:
        return False
    if target in seen:  # a struct holding itself: it holds a catalog name if it has one
        return any(_is_catalog_name(f) for f in target.thrift_spec.values())
    return any(
        _is_catalog_name(f) or _holds_catalog(f, seen | {target})
        for f in target.thrift_spec.values()
    )




def write_both_layouts(api: str, result: Any, seqid: int, write: Callable[[bytes], None]) -> None:
    """Write a binary ``get_open_txns`` reply holding the open transactions twice under field
    2: as 2.3's set, then as HMS 3's list (with its abortedBits)."""
    answer = result.success
    buffer = TMemoryBuffer()
    _pybin.write_message_begin(buffer, api, TMessageType.REPLY, seqid)
    _pybin.write_field_begin(buffer, TType.STRUCT, 0)
    ids = list(answer.open_txns or [])
    _pybin.write_field_begin(buffer, TType.SET, 2)
    _pybin.write_list_begin(buffer, TType.I64, len(ids))
    for txn in ids:
        buffer.write(_pybin.pack_i64(txn))
    _pybin.write_val(buffer, TType.STRUCT, answer)  # fields 1..4 and the struct's stop
    _pybin.write_field_stop(buffer)  # the result's stop
    write(buffer.getvalue())
