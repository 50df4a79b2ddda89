"""Values printed the way Java prints them, for error messages that HMS words that way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def java_list(values: Sequence[Any]) -> str:
    """A list as Java prints it: ``[a, b]``."""
    return "[" + ", ".join(java_text(value) for value in values) + "]"


def java_items(values: Sequence[str]) -> str:
    """Items each followed by ``, ``, as HMS prints keys and values in its arity error."""
    return "".join(f"{value}, " for value in values)


def java_text(value: Any) -> str:
    """``value`` as Java's ``toString`` of the matching type (Thrift structs included)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set, frozenset)):
        return java_list(list(value))
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_text(k)}={java_text(v)}" for k, v in value.items()) + "}"
    spec = getattr(value, "thrift_spec", None)
    if spec is not None:
        return thrift_struct_text(value)
    return str(value)


def thrift_struct_text(struct: Any) -> str:
    """A Thrift struct as Thrift's Java ``toString``: ``Name(field:value, ...)``; fields that
    are not set are left out."""
    fields = []
    for field_id in sorted(struct.thrift_spec):
        name = struct.thrift_spec[field_id][1]
        value = getattr(struct, name, None)
        if value is not None:
            fields.append(f"{name}:{java_text(value)}")
    return f"{type(struct).__name__}({', '.join(fields)})"
