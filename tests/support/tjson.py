"""A strict reader of Apache Thrift's JSON protocol (``TJSONProtocol``, what Java's
``TDeserializer(new TJSONProtocol.Factory())`` reads: HMS's ``*ObjJson`` message fields), for
tests. It refuses what Java's reader would refuse or silently lose: text that is not JSON (a bare
``NaN``), a field id the struct does not declare or a type tag other than its declared type's
(Java skips such a field: the value is lost), a count that is not the number of elements, a
boolean other than 0/1, a missing required field (Java's ``validate()``), a union without
exactly one member. thriftpy2's own JSON protocol writes another format, so it cannot serve.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from thriftpy2.thrift import TType

TAGS = {
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
_RANGES = {TType.BYTE: 8, TType.I16: 16, TType.I32: 32, TType.I64: 64}
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
#: The unions of the IDL (exactly one member set).
UNIONS = frozenset({"ColumnStatisticsData", "FireEventRequestData"})


class TJSONError(ValueError):
    """Text a Java TJSONProtocol reader would refuse or read with a field lost."""


def decode(text: str, cls: type) -> Any:  # noqa: ANN401 - a Thrift struct
    """The struct of class ``cls`` that ``text`` encodes (TJSONError when it does not)."""
    if not isinstance(text, str):
        raise TJSONError(f"expected the JSON text of a {cls.__name__}, got {type(text).__name__}")
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_refused)
    except json.JSONDecodeError as exc:
        raise TJSONError(f"not JSON: {exc}") from exc
    return _struct(value, cls, cls.__name__)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise TJSONError(f"a key twice in one object: {keys}")
    return dict(pairs)


def _refused(constant: str) -> Any:  # noqa: ANN401
    raise TJSONError(f"a bare {constant} (Java's reader takes only quoted special doubles)")


def _struct(value: Any, cls: type, where: str) -> Any:  # noqa: ANN401
    if not isinstance(value, dict):
        raise TJSONError(f"{where}: a struct is an object, not {value!r}")
    obj = cls()
    spec = cls.thrift_spec
    for key, field in value.items():
        if not key.isdigit() or int(key) not in spec:
            raise TJSONError(f"{where}: field id {key!r} is not one of {cls.__name__}'s")
        declared = spec[int(key)]
        ttype, name = declared[0], declared[1]
        element = declared[2] if len(declared) > 3 else None
        if not isinstance(field, dict) or len(field) != 1:
            raise TJSONError(f"{where}.{name}: a field is {{tag: value}}, not {field!r}")
        ((tag, raw),) = field.items()
        if tag != TAGS[ttype]:
            raise TJSONError(f"{where}.{name}: tag {tag!r}, declared {TAGS[ttype]!r}")
        setattr(obj, name, _value(ttype, element, raw, f"{where}.{name}"))
    for declared in spec.values():
        if declared[-1] is True and getattr(obj, declared[1]) is None:
            raise TJSONError(f"{where}: required field {declared[1]!r} is unset")
    if cls.__name__ in UNIONS and len(value) != 1:
        raise TJSONError(f"{where}: a union sets one member, not {len(value)}")
    return obj


def _split(spec: Any) -> tuple[int, Any]:  # noqa: ANN401
    return (spec[0], spec[1]) if isinstance(spec, tuple) else (spec, None)


def _value(ttype: int, element: Any, raw: Any, where: str) -> Any:  # noqa: ANN401, C901, PLR0911
    if ttype in _RANGES:
        bits = _RANGES[ttype]
        if type(raw) is not int or not -(1 << (bits - 1)) <= raw < (1 << (bits - 1)):
            raise TJSONError(f"{where}: not an i{bits}: {raw!r}")
        return raw
    if ttype == TType.BOOL:
        if type(raw) is not int or raw not in (0, 1):
            raise TJSONError(f"{where}: a boolean is 1 or 0, not {raw!r}")
        return bool(raw)
    if ttype == TType.DOUBLE:
        if isinstance(raw, str) and raw in _SPECIAL:
            return _SPECIAL[raw]
        if type(raw) not in (int, float):
            raise TJSONError(f"{where}: not a double: {raw!r}")
        return float(raw)
    if ttype == TType.STRING:
        if not isinstance(raw, str):
            raise TJSONError(f"{where}: not a string: {raw!r}")
        return raw
    if ttype == TType.BINARY:
        if not isinstance(raw, str):
            raise TJSONError(f"{where}: binary is base64 text, not {raw!r}")
        return base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
    if ttype == TType.STRUCT:
        return _struct(raw, element, where)
    if ttype in (TType.LIST, TType.SET):
        return _sequence(ttype, element, raw, where)
    if ttype == TType.MAP:
        return _map(element, raw, where)
    raise TJSONError(f"{where}: type {ttype} unknown")


def _sequence(ttype: int, element: Any, raw: Any, where: str) -> Any:  # noqa: ANN401
    elem_type, elem_spec = _split(element)
    if not isinstance(raw, list) or len(raw) < 2 or raw[0] != TAGS[elem_type]:
        raise TJSONError(f"{where}: a list is [{TAGS[elem_type]!r}, count, ...], not {raw!r}")
    items = raw[2:]
    if raw[1] != len(items):
        raise TJSONError(f"{where}: count {raw[1]} for {len(items)} elements")
    values = [_value(elem_type, elem_spec, item, f"{where}[{i}]") for i, item in enumerate(items)]
    return values if ttype == TType.LIST else set(values)


def _map(element: Any, raw: Any, where: str) -> dict[Any, Any]:  # noqa: ANN401
    (key_type, key_spec), (val_type, val_spec) = _split(element[0]), _split(element[1])
    shape = [TAGS[key_type], TAGS[val_type]]
    if not isinstance(raw, list) or len(raw) != 4 or raw[:2] != shape:
        raise TJSONError(f"{where}: a map is [{shape}, count, {{...}}], not {raw!r}")
    if not isinstance(raw[3], dict) or raw[2] != len(raw[3]):
        raise TJSONError(f"{where}: count {raw[2]} for {raw[3]!r}")
    found = {}
    for key, value in raw[3].items():
        parsed = key if key_type in (TType.STRING, TType.BINARY) else json.loads(key)
        found[_value(key_type, key_spec, parsed, where)] = _value(
            val_type, val_spec, value, f"{where}[{key}]"
        )
    return found
