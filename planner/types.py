"""Partition key types: how a Hive column type compares, and how raw values parse.

Partition values always travel as strings. HMS direct SQL compares integral keys numerically,
date keys as dates and everything else as strings; a value that does not parse as its key's
type (most often the default partition) never matches a typed comparison.
"""

from __future__ import annotations

import datetime as _dt
import enum
import re

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

_INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
_INTEGRAL_RANGE = (-(2**63), 2**63 - 1)
_INTEGRAL_DIGITS = 19
_INTEGRAL_PATTERN = re.compile(r"[-+]?[0-9]+")
_DATE_PATTERN = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")


class KeyKind(enum.Enum):
    """How values of a partition key compare."""

    STRING = "string"
    INTEGRAL = "integral"
    DATE = "date"


def key_kind(hive_type: str) -> KeyKind:
    """The comparison kind of a Hive column type such as ``int``, ``varchar(10)`` or ``date``."""
    base = hive_type.strip().lower().split("(", 1)[0].strip()
    if base in _INTEGRAL_TYPES:
        return KeyKind.INTEGRAL
    if base == "date":
        return KeyKind.DATE
    return KeyKind.STRING


def parse_integral(raw: str) -> int | None:
    """The integer a raw partition value denotes, or None when it is not a 64-bit integer."""
    text = raw.strip()
    if not _INTEGRAL_PATTERN.fullmatch(text):
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > _INTEGRAL_DIGITS:
        return None  # out of range (and int() refuses more than 4300 digits)
    value = -int(digits) if text.startswith("-") else int(digits)
    if not _INTEGRAL_RANGE[0] <= value <= _INTEGRAL_RANGE[1]:
        return None
    return value


def parse_date(raw: str) -> _dt.date | None:
    """The date a raw ``yyyy-MM-dd`` partition value denotes, or None when it is not one."""
    text = raw.strip()
    if not _DATE_PATTERN.fullmatch(text):
        return None
    year, month, day = (int(part) for part in text.split("-"))
    try:
        return _dt.date(year, month, day)
    except ValueError:
        return None


def parse_typed(kind: KeyKind, raw: str) -> str | int | _dt.date | None:
    """The typed value of a raw partition value for its key kind (None: not of that type)."""
    if kind is KeyKind.INTEGRAL:
        return parse_integral(raw)
    if kind is KeyKind.DATE:
        return parse_date(raw)
    return raw
