"""What one comparison allows of one key: a set of disjoint intervals of components.

An ``Interval`` is ``[start, stop)`` between two one-component ``Edge`` positions (``()`` is
minus infinity as a start and plus infinity as a stop), so it is placed under any prefix of
leading values by ``Edge.under``. ``IntervalSet`` keeps its intervals sorted, disjoint and
non-empty; intersection and union are linear merges.

``leaf_constraint`` turns a comparison into the set of components it allows, following
``planner.evaluate.comparison_domain`` (HMS direct-SQL semantics):

* typed comparisons (int with int, date with date) allow typed values only, never raw texts:
  ``hr < 5`` is ``[-inf, 5)``, ``hr != 5`` is ``[-inf, 5) + (5, TYPED_END)``;
* text comparisons on STRING keys are ranges of ``str``; ``ds != "a"`` is two ranges;
* on a typed key a text comparison only has a range when it is ``=`` or ``!=`` with text that
  does not parse as the type (``hr = "__HIVE_DEFAULT_PARTITION__"``: one raw point);
* LIKE, and the other text comparisons on typed keys, have no exact range. They get a *hint*, a
  superset that never decides alone: LIKE on a typed key allows typed values only, and a LIKE
  whose pattern starts with literal text on a STRING key allows the strings with that prefix.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

from metastore_server.planner.ast import Leaf, Op
from metastore_server.planner.bounds import (
    INT64_MAX,
    INT64_MIN,
    TYPED_END,
    Component,
    Edge,
    point_of,
)
from metastore_server.planner.evaluate import Domain, comparison_domain
from metastore_server.planner.types import KeyKind, parse_typed

Interval = tuple[Edge, Edge]

_MINUS_INF = Edge((), False)
_PLUS_INF = Edge((), True)
_TYPED_STOP = Edge((TYPED_END,), False)
_MAX_CHAR = chr(0x10FFFF)
# Characters that stand for themselves at the top level of Java and Python regular expressions.
_REGEX_LITERAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:/ ,=@")


def _before(value: Component) -> Edge:
    return Edge((value,), False)


def _after(value: Component) -> Edge:
    return Edge((value,), True)


class IntervalSet:
    """Sorted, disjoint, non-empty intervals of one key's components. Immutable."""

    __slots__ = ("intervals", "_hash")

    def __init__(self, intervals: Sequence[Interval]) -> None:
        self.intervals: tuple[Interval, ...] = tuple(intervals)
        self._hash: int | None = None

    @classmethod
    def of(cls, intervals: Iterable[Interval]) -> IntervalSet:
        """The union of any intervals (empty ones dropped). O(n log n)."""
        items = sorted((i for i in intervals if i[0].key < i[1].key), key=lambda i: i[0].key)
        merged: list[Interval] = []
        for start, stop in items:
            if merged and start.key < merged[-1][1].key:
                if stop.key > merged[-1][1].key:
                    merged[-1] = (merged[-1][0], stop)
            else:
                merged.append((start, stop))
        return cls(merged)

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __len__(self) -> int:
        return len(self.intervals)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IntervalSet) and self.intervals == other.intervals

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.intervals)
        return self._hash

    def __repr__(self) -> str:
        return f"IntervalSet({list(self.intervals)!r})"

    def intersect(self, other: IntervalSet) -> IntervalSet:
        """Components in both sets. O(len(self) + len(other))."""
        a, b, out = self.intervals, other.intervals, []
        i = j = 0
        while i < len(a) and j < len(b):
            start = a[i][0] if a[i][0].key >= b[j][0].key else b[j][0]
            stop = a[i][1] if a[i][1].key <= b[j][1].key else b[j][1]
            if start.key < stop.key:
                out.append((start, stop))
            if a[i][1].key <= b[j][1].key:
                i += 1
            else:
                j += 1
        return IntervalSet(out)

    @classmethod
    def intersect_all(cls, sets: Sequence[IntervalSet]) -> IntervalSet:
        """Components in every one of ``sets`` (at least one), by one sweep over all their
        edges: O(n log n) for n intervals in all, where folding ``intersect`` is O(n * sets)."""
        if len(sets) == 1:
            return sets[0]
        if len(sets) == 2:
            return sets[0].intersect(sets[1])
        # Stops sort before starts at the same position: [a, b) and [b, c) do not overlap.
        edges = [
            (edge.key, rank, edge)
            for allowed in sets
            for start, stop in allowed.intervals
            for rank, edge in ((1, start), (0, stop))
        ]
        edges.sort(key=lambda item: item[:2])
        out: list[Interval] = []
        depth, opened = 0, None
        for _, rank, edge in edges:
            if rank:
                depth += 1
                if depth == len(sets):
                    opened = edge
            else:
                if depth == len(sets) and opened is not None and opened.key < edge.key:
                    out.append((opened, edge))
                depth -= 1
        return cls(out)

    def union(self, other: IntervalSet) -> IntervalSet:
        """Components in either set (touching intervals stay apart). O((n + m) log(n + m))."""
        return IntervalSet.of(self.intervals + other.intervals)

    def points(self) -> list[Component] | None:
        """The components of a set made of single points only, else None. O(n)."""
        found = []
        for start, stop in self.intervals:
            point = point_of(start, stop)
            if point is None:
                return None
            found.append(point[0])
        return found

    def hull(self) -> Interval:
        """The smallest interval holding the whole (non-empty) set."""
        return self.intervals[0][0], self.intervals[-1][1]


TYPED_ONLY = IntervalSet([(_MINUS_INF, _TYPED_STOP)])


@dataclass(frozen=True, slots=True)
class Constraint:
    """What a leaf allows of its key: ``allowed``, exactly the leaf when ``exact``, else a
    superset (the leaf must still be checked on every row)."""

    allowed: IntervalSet
    exact: bool


def leaf_constraint(kind: KeyKind, leaf: Leaf, like: str) -> Constraint | None:
    """The components of a key of ``kind`` that ``leaf`` allows; None when nothing narrower
    than every value can be said. ``like`` is "regex" or "sql". O(1) (LIKE: O(len(pattern)))."""
    if leaf.op is Op.LIKE:
        return _like_hint(kind, leaf.value.text, like)
    domain, operand = comparison_domain(kind, leaf.value)
    if domain is not Domain.TEXT:
        # Every domain but TEXT has a typed operand (comparison_domain).
        typed = cast(int | _dt.date, operand)
        return Constraint(IntervalSet.of(_typed(leaf.op, typed)), exact=True)
    if kind is KeyKind.STRING:
        return Constraint(IntervalSet.of(_ordered(leaf.op, operand, None)), exact=True)
    if leaf.op in (Op.EQ, Op.NE) and parse_typed(kind, str(operand)) is None:
        return Constraint(IntervalSet.of(_ordered(leaf.op, operand, None)), exact=True)
    return None


def _typed(op: Op, value: int | _dt.date) -> list[Interval]:
    """A typed comparison: typed values only (int operands clamped to the 64-bit range)."""
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        below = value < INT64_MIN
        everything = op is Op.NE or (op in (Op.GT, Op.GE) if below else op in (Op.LT, Op.LE))
        return [(_MINUS_INF, _TYPED_STOP)] if everything else []
    return _ordered(op, value, _TYPED_STOP)


def _ordered(op: Op, value: Component, stop: Edge | None) -> list[Interval]:
    """``key op value`` over components up to ``stop`` (None: up to plus infinity)."""
    end = _PLUS_INF if stop is None else stop
    before, after = _before(value), _after(value)
    if op is Op.EQ:
        return [(before, after)]
    if op is Op.NE:
        return [(_MINUS_INF, before), (after, end)]
    if op is Op.LT:
        return [(_MINUS_INF, before)]
    if op is Op.LE:
        return [(_MINUS_INF, after)]
    if op is Op.GT:
        return [(after, end)]
    return [(before, end)]


def _like_hint(kind: KeyKind, pattern: str, like: str) -> Constraint | None:
    """A superset of what LIKE allows: typed values on typed keys, a text prefix on strings."""
    if kind is not KeyKind.STRING:
        return Constraint(TYPED_ONLY, exact=False)
    prefix = regex_prefix(pattern) if like == "regex" else sql_like_prefix(pattern)
    if not prefix:
        return None
    stop = _prefix_stop(prefix)
    return Constraint(IntervalSet([(_before(prefix), stop)]), exact=False)


def regex_prefix(pattern: str) -> str:
    """Literal text every full match of a regular expression starts with ("" when unsure).

    Conservative: plain letters, digits and a few punctuation marks up to the first other
    character; a quantified last character is dropped; any ``|`` gives up. O(len(pattern)).
    """
    if "|" in pattern:
        return ""
    end = 0
    while end < len(pattern) and pattern[end] in _REGEX_LITERAL:
        end += 1
    if end < len(pattern) and pattern[end] in "*?{":
        end -= 1
    return pattern[: max(end, 0)]


def sql_like_prefix(pattern: str) -> str:
    """Literal text every SQL LIKE match starts with (``\\x`` is a literal x). O(len(pattern))."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char in "%_":
            break
        if char == "\\":
            out.append(pattern[i + 1] if i + 1 < len(pattern) else "\\")
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _prefix_stop(prefix: str) -> Edge:
    """The position before the first string greater than every string starting with ``prefix``."""
    trimmed = prefix.rstrip(_MAX_CHAR)
    if not trimmed:
        return _PLUS_INF
    return _before(trimmed[:-1] + chr(ord(trimmed[-1]) + 1))
