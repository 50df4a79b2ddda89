"""Value-space bounds over partition key tuples, in exactly the order ``storage.codec`` gives bytes.

A *component* is one partition value as the planner sees it:

* on a STRING key, a ``str``: the raw text, ordered as Python orders ``str``;
* on an INTEGRAL or DATE key, an ``int`` or ``datetime.date``: the block of every spelling of
  that value ("7", "007", "+7" are one point), ordered by value; then ``TYPED_END``, the end of
  the typed region; then a ``str``: a raw text that does not parse as the key's type (the
  default partition ``__HIVE_DEFAULT_PARTITION__``, say), ordered as Python orders ``str``.

A ``Bound`` is a tuple of components on the leading keys plus ``inclusive``. It names a *block*:
all keys whose leading components equal ``values`` (typed ones in any spelling; ``storage.codec``
puts the spellings after all the values, so every such block is one run of row keys, wherever
its typed values are). A lower bound starts before the block (inclusive) or after it
(exclusive); an upper bound stops after the block (inclusive) or before it (exclusive).
``Bound((), True)`` is the start of the table as a lower bound and its end as an upper bound. A
``TYPED_END`` component is a position, not a block: inclusive or not, a bound ending in it sits
between the last typed value and the first raw text of that key, so it may only end a bound.

``Edge`` is the same thing said once for both sides: the position just before (``after`` False)
or just after (``after`` True) a block. ``Edge.key`` is a sort key under which two edges compare
as their positions do; equivalent positions get equal keys (just after 7 is just before 8).
"""

from __future__ import annotations

import datetime as _dt
import enum
from dataclasses import dataclass
from typing import TypeAlias

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_ONE_DAY = _dt.timedelta(days=1)


class Marker(enum.Enum):
    """Positions that are not values."""

    TYPED_END = "typed end"

    def __repr__(self) -> str:
        return self.name


#: The end of the typed region of an INTEGRAL or DATE key (the start of its raw texts).
TYPED_END = Marker.TYPED_END


Component: TypeAlias = str | int | _dt.date | Marker
_EXACT = (bool, str, Marker)

# Ranks: markers before/after a block wrap the ranks of components (see _rank).
_BEFORE = (-1,)
_AFTER = (3,)


def _rank(component: Component) -> tuple[object, ...]:
    """Sort key of one component: typed values, then TYPED_END, then raw texts. O(1)."""
    if isinstance(component, str):
        return (2, component)
    if component is TYPED_END:
        return (1,)
    return (0, component)


def successor(component: Component) -> Component | None:
    """The next component of a discrete typed value (``TYPED_END`` after the last one), or
    None when there is no next block to name (texts, TYPED_END). O(1)."""
    if isinstance(component, _EXACT):
        return None
    if isinstance(component, int):
        return component + 1 if component < INT64_MAX else TYPED_END
    return component + _ONE_DAY if component < _dt.date.max else TYPED_END


@dataclass(frozen=True, slots=True)
class Bound:
    """One end of a scan: the block of keys whose leading components are ``values``, included
    or not. See the module docstring."""

    values: tuple[Component, ...]
    inclusive: bool

    def __post_init__(self) -> None:
        if any(c is TYPED_END for c in self.values[:-1]):
            raise ValueError("TYPED_END can only be a bound's last component")


class Edge:
    """The position just before (``after`` False) or just after a block of keys. Immutable."""

    __slots__ = ("values", "after", "key")

    def __init__(self, values: tuple[Component, ...], after: bool) -> None:
        self.values = values
        self.after = after
        self.key = _edge_key(values, after)

    @classmethod
    def lower(cls, bound: Bound) -> Edge:
        """Where a lower bound starts."""
        return cls(bound.values, not bound.inclusive)

    @classmethod
    def upper(cls, bound: Bound) -> Edge:
        """Where an upper bound stops."""
        return cls(bound.values, bound.inclusive)

    def as_lower(self) -> Bound:
        """This position as a lower bound."""
        return Bound(self.values, not self.after)

    def as_upper(self) -> Bound:
        """This position as an upper bound."""
        return Bound(self.values, self.after)

    def under(self, prefix: tuple[Component, ...]) -> Edge:
        """The same position inside the block ``prefix`` (``values`` appended to it)."""
        return Edge(prefix + self.values, self.after)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Edge) and (self.values, self.after) == (other.values, other.after)

    def __hash__(self) -> int:
        return hash((self.values, self.after))

    def __repr__(self) -> str:
        return f"Edge({self.values!r}, {'after' if self.after else 'before'})"


def _edge_key(values: tuple[Component, ...], after: bool) -> tuple[object, ...]:
    """Sort key of a position; just after a typed value is just before its successor. O(len)."""
    if after and values and type(values[-1]) is not str:
        last = values[-1]
        if last is TYPED_END:
            after = False
        else:
            nxt = successor(last)
            if nxt is not None:
                values, after = values[:-1] + (nxt,), False
    return (*map(_rank, values), _AFTER if after else _BEFORE)


def point_of(start: Edge, stop: Edge) -> tuple[Component, ...] | None:
    """The block ``[start, stop)`` is exactly, when it is one block of real values. O(len)."""
    values = start.values
    if start.after:
        if not values:
            return None
        nxt = successor(values[-1])
        if nxt is None or nxt is TYPED_END:
            return None
        values = values[:-1] + (nxt,)
    if not values or values[-1] is TYPED_END:
        return None
    return values if _edge_key(values, True) == stop.key else None


TABLE_START = Edge((), False)
TABLE_END = Edge((), True)
