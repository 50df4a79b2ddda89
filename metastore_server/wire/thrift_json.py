"""Apache Thrift's JSON protocol (``TJSONProtocol``) encoding of a struct, as Java's
``TSerializer(new TJSONProtocol.Factory())`` writes it: HMS puts objects into notification
messages this way (``tableObjJson``), and Java readers decode them with that protocol.

The form, for the record: a struct is an object keyed by field id, each value an object of one
entry ``{type tag: value}``; a list or set is ``[elem tag, count, elems...]``; a map is
``[key tag, value tag, count, {key: value}]`` with keys written as strings; booleans are 1/0;
binary is base64 without padding; a double that is not finite is the string ``NaN``,
``Infinity`` or ``-Infinity``. Unset fields are left out.

Why not thriftpy2's own (checked by tests/unit/test_thrift_json.py): its ``TJSONProtocol`` is
another format (field names under ``payload``); its ``TApacheJSONProtocol`` (0.7) writes only
a message (``[1, name, type, seqid, struct]``, no bare struct) and cannot write a Table at
all: it raises on ``SkewedInfo`` (a ``map<list<string>,string>`` and ``list<list<string>>``),
which every table's StorageDescriptor carries. It also writes a non-finite double as bare
``NaN``/``Infinity`` (not JSON: Java's reader refuses it), pads base64, escapes non-ASCII text
and writes a double held as a Python int as an integer.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from thriftpy2.thrift import TType

_TAGS = {
    TType.BOOL: "tf",
    TType.BYTE: "i8",
    TType.I16: "i16",
    TType.I32: "i32",
    TType.I64: "i64",
    TType.DOUBLE: "dbl",
    TType.STRING: "str",
    TType.BINARY: "str",
    TType.STRUCT: "rec",
    TType.LIST: "lst",
    TType.SET: "set",
    TType.MAP: "map",
}


def to_json(obj: Any) -> str:
    """The struct ``obj`` in Thrift's JSON protocol, compact."""
    return json.dumps(_struct(obj), separators=(",", ":"), ensure_ascii=False)


def _struct(obj: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for field_id in sorted(obj.thrift_spec):
        spec = obj.thrift_spec[field_id]
        value = getattr(obj, spec[1], None)
        if value is None:
            continue
        ttype = spec[0]
        element = spec[2] if len(spec) > 3 else None
        fields[str(field_id)] = {_TAGS[ttype]: _value(ttype, element, value)}
    return fields


def _split(spec: Any) -> tuple[int, Any]:
    """A container's element spec as (type, its own element spec)."""
    if isinstance(spec, tuple):
        return spec[0], spec[1]
    return spec, None


def _value(ttype: int, element: Any, value: Any) -> Any:
    if ttype == TType.BOOL:
        return 1 if value else 0
    if ttype == TType.DOUBLE:
        return _double(value)
    if ttype == TType.STRUCT:
        return _struct(value)
    if ttype in (TType.STRING, TType.BINARY):
        if isinstance(value, bytes):
            return base64.b64encode(value).decode("ascii").rstrip("=")
        return value
    if ttype in (TType.LIST, TType.SET):
        elem_type, elem_spec = _split(element)
        items = [_value(elem_type, elem_spec, item) for item in value]
        return [_TAGS[elem_type], len(items), *items]
    if ttype == TType.MAP:
        key_type, key_spec = _split(element[0])
        val_type, val_spec = _split(element[1])
        entries = {
            _key(_value(key_type, key_spec, k)): _value(val_type, val_spec, v)
            for k, v in value.items()
        }
        return [_TAGS[key_type], _TAGS[val_type], len(entries), entries]
    return value


def _double(value: float) -> float | str:
    """A double as Java's protocol writes it: a number, or quoted when not finite."""
    if math.isfinite(value):
        return float(value)
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _key(value: Any) -> str:
    """Map keys are JSON strings; numbers are written as their text."""
    return value if isinstance(value, str) else json.dumps(value)
