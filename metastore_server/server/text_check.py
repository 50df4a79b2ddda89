"""Strict text: every ``string`` a request carries must be valid UTF-8.

thriftpy2 decodes a ``string`` field as UTF-8 and, when the bytes are not UTF-8, leaves them as
``bytes``. Such a value would reach the catalog as something that is not text: stored as it is
(a table whose location no client can read back), or failing deep in a call with a Python error.
:func:`undecoded_field` finds the first such value of a decoded request, by its path
(``tbl.sd.location``, ``new_parts[3].values[0]``), so that the call is refused before it starts.

Fields that HMS 3+ turned from ``string`` into ``binary`` (the statistics' ``bitVectors``) may
hold any bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from thriftpy2.thrift import TPayload, TType

#: Fields declared ``string`` in HMS 2.3 that later versions send as ``binary``.
_BINARY_SINCE_3 = frozenset({"bitVectors"})

_Plan = tuple[tuple[str, int, Any], ...]


@functools.cache
def _plan(cls: type[TPayload]) -> _Plan:
    """The fields of ``cls`` that can hold text, with their type and element spec."""
    fields = []
    for spec in cls.thrift_spec.values():
        ttype, name = spec[0], spec[1]
        element = spec[2] if len(spec) > 3 else None
        if name in _BINARY_SINCE_3 or not _holds_text(ttype, element):
            continue
        fields.append((name, ttype, element))
    return tuple(fields)


def _split(spec: Any) -> tuple[int, Any]:
    return (spec[0], spec[1]) if isinstance(spec, tuple) else (spec, None)


def _holds_text(ttype: int, element: Any) -> bool:
    if ttype in (TType.STRING, TType.STRUCT):
        return True
    if ttype in (TType.LIST, TType.SET):
        return _holds_text(*_split(element))
    if ttype == TType.MAP:
        return _holds_text(*_split(element[0])) or _holds_text(*_split(element[1]))
    return False


def undecoded_field(obj: Any) -> str | None:
    """The path of the first ``string`` in the struct ``obj`` that is not valid UTF-8 (left
    as bytes by the decoder); None when all are text. A quick pass first (about 6 µs per
    decoded partition), the path only when there is one."""
    kind: type[TPayload] = type(obj)
    if not _struct_test(kind)(obj):
        return None
    return _path(obj)


_Test = Callable[[Any], bool]


def _is_bytes(value: Any) -> bool:
    return value.__class__ is bytes


@functools.cache
def _struct_test(cls: type[TPayload]) -> _Test:
    """Whether a ``cls`` holds an undecoded string: one closure per field, made once."""
    tests = [(name, _test(ttype, element)) for name, ttype, element in _plan(cls)]

    def holds(obj: Any) -> bool:
        for name, test in tests:
            value = getattr(obj, name)
            if value is not None and test(value):
                return True
        return False

    return holds


def _test(ttype: int, element: Any) -> _Test:
    if ttype == TType.STRING:
        return _is_bytes
    if ttype == TType.STRUCT:
        # Made when first used: a struct may hold itself (a Table's materialized-view
        # metadata holds its source Tables).
        return lambda obj: _struct_test(element)(obj)
    if ttype in (TType.LIST, TType.SET):
        inner = _test(*_split(element))
        if inner is _is_bytes:
            return lambda items: bytes in {item.__class__ for item in items}
        return lambda items: any(inner(item) for item in items)
    key_type, key_spec = _split(element[0])
    val_type, val_spec = _split(element[1])
    key_test = _test(key_type, key_spec) if _holds_text(key_type, key_spec) else None
    val_test = _test(val_type, val_spec) if _holds_text(val_type, val_spec) else None
    if key_test is _is_bytes and val_test is _is_bytes:
        return lambda items: bytes in {x.__class__ for x in items} or bytes in {
            x.__class__ for x in items.values()}  # fmt: skip
    return lambda items: any(
        (key_test is not None and key_test(key)) or (val_test is not None and val_test(item))
        for key, item in items.items()
    )


def _path(obj: Any) -> str | None:
    """The path of the first undecoded string in ``obj`` (the slow, precise walk)."""
    kind: type[TPayload] = type(obj)
    for name, ttype, element in _plan(kind):
        value = getattr(obj, name, None)
        if value is None:
            continue
        where = _check(value, ttype, element)
        if where is not None:
            return name + where
    return None


def _check(value: Any, ttype: int, element: Any) -> str | None:
    """The path (relative to ``value``) of an undecoded string in it, or None."""
    if ttype == TType.STRING:
        return "" if value.__class__ is bytes else None
    if ttype == TType.STRUCT:
        inner = _path(value)
        return None if inner is None else "." + inner
    if ttype in (TType.LIST, TType.SET):
        elem_type, elem_spec = _split(element)
        for index, item in enumerate(value):
            where = _check(item, elem_type, elem_spec)
            if where is not None:
                return f"[{index}]{where}"
        return None
    key_type, key_spec = _split(element[0])
    val_type, val_spec = _split(element[1])
    for key, item in value.items():
        if _holds_text(key_type, key_spec) and _check(key, key_type, key_spec) is not None:
            return f"[{key!r}] (key)"
        where = _check(item, val_type, val_spec)
        if where is not None:
            return f"[{key!r}]{where}"
    return None
