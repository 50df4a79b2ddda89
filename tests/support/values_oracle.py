"""A brute-force oracle of ``get_partition_values``, written from the specification only.

The specification is the module docstring of ``metastore_server.api.values``;
nothing here imports the server, the planner or the storage code. Given a table's partition keys
(name, Hive type), its partitions' raw values and a request, :func:`expected_rows` answers the
rows the server must send, in order:

* the partitions are the ones matching the request's filter; the caller passes that set
  (``matching``; None: every partition). What "matching" means is defined by
  ``get_partitions_by_filter``, which is tested on its own;
* they are sorted by a comparison written out key by key (:func:`compare_partitions`): the order
  keys (repeats counted once), then the table's other keys in table order; integers compare as
  numbers, dates as dates, strings by code point; a value that does not parse as its key's type
  comes after every value that does, in both directions, and such values compare by text;
  partitions equal at every key (spellings of one number or date) come canonical spelling first,
  then by text, key by key in table order; descending reverses every comparison but
  "unparseable last";
* each sorted partition gives the row of its requested keys' raw values; with distinct a row is
  kept only where it first occurs; ``max_parts`` > 0 keeps that many rows, 0 or less keeps all.

What parses (the rules of planner/types.py, restated): an integer is an optional sign and ASCII
digits within 64 bits (whatever the declared width, tinyint to bigint); a date is ``yyyy-M-d``
(four digits of year, one or two of month and day) naming a real day; both may have whitespace
around them. Their canonical spellings are ``str(number)`` and ``date.isoformat()``. Every text
is a string, so on a string key nothing is unparseable and every spelling is canonical: there
``__HIVE_DEFAULT_PARTITION__`` is a text like any other, ordered by code point.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
INTEGER_RANGE = range(-(2**63), 2**63)


class InvalidRequest(ValueError):
    """A request the server must refuse with a MetaException (no or unknown keys)."""


@dataclass(frozen=True)
class ValuesRequest:
    """The fields of a ``PartitionValuesRequest`` the oracle reads.

    ``keys`` and ``order`` are key names as sent (any case); ``order`` None means "not given",
    and so does an empty list (the specification does not say; ordering by no key at all is
    no reading a client could mean).
    ``distinct``/``ascending``/``max_parts`` None mean "not given" (true, true, -1).
    """

    keys: Sequence[str]
    order: Sequence[str] | None = None
    distinct: bool | None = True
    ascending: bool | None = True
    max_parts: int | None = -1

    @classmethod
    def of(cls, request: Any) -> ValuesRequest:
        """The oracle's view of a Thrift ``PartitionValuesRequest`` (read by field names)."""
        order = request.partitionOrder
        return cls(
            keys=[field.name for field in request.partitionKeys or []],
            order=None if order is None else [field.name for field in order],
            distinct=request.applyDistinct,
            ascending=request.ascending,
            max_parts=request.maxParts,
        )


def _kind(hive_type: str) -> str:
    base = hive_type.strip().lower().split("(")[0].strip()
    if base in INTEGER_TYPES:
        return "integer"
    return "date" if base == "date" else "string"


def _ascii_digits(text: str) -> bool:
    return text != "" and all("0" <= ch <= "9" for ch in text)


def as_integer(raw: str) -> int | None:
    """The 64-bit integer ``raw`` spells, or None."""
    text = raw.strip()
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not _ascii_digits(digits):
        return None
    number = int(text)
    return number if number in INTEGER_RANGE else None


def as_date(raw: str) -> dt.date | None:
    """The day ``raw`` spells as yyyy-M-d, or None."""
    parts = raw.strip().split("-")
    if len(parts) != 3 or not all(_ascii_digits(p) for p in parts):
        return None
    year, month, day = parts
    if len(year) != 4 or not 1 <= len(month) <= 2 or not 1 <= len(day) <= 2:
        return None
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:
        return None


def typed_value(hive_type: str, raw: str) -> int | dt.date | str | None:
    """The value ``raw`` denotes for a key of ``hive_type`` (None: it does not parse)."""
    kind = _kind(hive_type)
    if kind == "integer":
        return as_integer(raw)
    if kind == "date":
        return as_date(raw)
    return raw


def canonical(hive_type: str, raw: str) -> str | None:
    """The canonical spelling of ``raw``'s value (None when it does not parse)."""
    value = typed_value(hive_type, raw)
    if value is None:
        return None
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def _sign(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def compare_values(hive_type: str, a: str, b: str, descending: bool) -> int:
    """-1/0/1: how raw ``a`` sorts against raw ``b`` at one key (0: equal typed values)."""
    ta, tb = typed_value(hive_type, a), typed_value(hive_type, b)
    if ta is None and tb is not None:
        return 1  # unparseable last, in both directions
    if tb is None and ta is not None:
        return -1
    result = _sign(a, b) if ta is None else _sign(ta, tb)
    return -result if descending else result


def compare_spellings(hive_type: str, a: str, b: str, descending: bool) -> int:
    """-1/0/1 between two spellings of one value: canonical first, then by text."""
    result = _sign(canonical(hive_type, a) != a, canonical(hive_type, b) != b) or _sign(a, b)
    return -result if descending else result


def _positions(names: Sequence[str], table_names: Sequence[str]) -> list[int]:
    positions = []
    for name in names:
        lowered = name.lower()
        if lowered not in table_names:
            raise InvalidRequest(f"{name} is not a partition key of the table")
        positions.append(table_names.index(lowered))
    return positions


def sort_order(table_keys: Sequence[tuple[str, str]], request: ValuesRequest) -> list[int]:
    """Positions of every table key in comparison order: order keys (first occurrence of each),
    then the others in table order."""
    names = [name.lower() for name, _ in table_keys]
    if not request.keys:
        raise InvalidRequest("no partition keys requested")
    columns = _positions(request.keys, names)
    order = _positions(request.order, names) if request.order else columns
    seen: list[int] = []
    for position in [*order, *range(len(names))]:
        if position not in seen:
            seen.append(position)
    return seen


def compare_partitions(
    table_keys: Sequence[tuple[str, str]],
    order: Sequence[int],
    descending: bool,
    a: Sequence[str],
    b: Sequence[str],
) -> int:
    """-1/0/1: how partition ``a`` sorts against ``b`` (raw values in table key order)."""
    for position in order:
        result = compare_values(table_keys[position][1], a[position], b[position], descending)
        if result:
            return result
    for position, (_, hive_type) in enumerate(table_keys):
        result = compare_spellings(hive_type, a[position], b[position], descending)
        if result:
            return result
    return 0


def expected_rows(
    table_keys: Sequence[tuple[str, str]],
    partitions: Iterable[Sequence[str]],
    request: ValuesRequest,
    matching: Collection[Sequence[str]] | None = None,
) -> list[list[str]]:
    """The rows ``get_partition_values`` must answer, in order.

    ``partitions`` are every partition's raw values in table key order; ``matching`` those the
    request's filter selects (None: all). Raises :class:`InvalidRequest` where the server must
    refuse the request.
    """
    order = sort_order(table_keys, request)
    columns = _positions(request.keys, [name.lower() for name, _ in table_keys])
    selected = {tuple(values) for values in partitions}
    if matching is not None:
        selected &= {tuple(values) for values in matching}
    descending = request.ascending is False
    ordered = sorted(
        selected,
        key=functools.cmp_to_key(
            lambda a, b: compare_partitions(table_keys, order, descending, a, b)
        ),
    )
    rows: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    distinct = request.distinct is not False
    for values in ordered:
        row = tuple(values[position] for position in columns)
        if distinct and row in seen:
            continue
        seen.add(row)
        rows.append(list(row))
    limit = request.max_parts if request.max_parts is not None else -1
    return rows[:limit] if limit > 0 else rows
