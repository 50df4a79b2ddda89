"""Partition filter plans: which key ranges to scan, and what to check on the rows found there.

Entry point::

    plan_filter(expr, keys, *, like="regex") -> MultiScanPlan

``expr`` is a parsed filter (``planner.grammar.parse_filter``; None matches everything), ``keys``
the table's partition keys as (name, Hive type), ``like`` the LIKE dialect ("regex" for Hive
2.3/3.x clients, "sql" for Hive 4). Raises UnknownKeyError for a key the table does not have and
FilterError for an invalid LIKE pattern, as ``planner.evaluate.compile_predicate`` does. The
plan selects exactly the partitions ``compile_predicate(expr, keys)`` accepts.

The plan algebra (all immutable; ``FilterPlan.and_``/``or_``, also ``&``/``|``, combine plans):

* ``ScanPlan(lower, upper, residual)``: the keys between two ``planner.bounds.Bound``, each row
  of which must also pass ``residual`` (None: every row there matches). Bounds are in value
  space (see ``planner.bounds``); ``storage.codec.bound_range`` turns them into row keys.
* ``Get``: a ScanPlan over exactly one full value tuple, every key fixed by equality. A typed
  value stands for all its spellings ("7", "007"), so a Get of a tuple with typed values is a
  tiny range holding the rows of that tuple in every spelling (usually one); when every value
  is a text, ``storage.codec.exact_key`` gives its one row key (a point read).
* ``MultiScanPlan(scans, filter)``: the union of disjoint scans sorted in key order (so rows come
  out sorted, without duplicates), and the normalized filter it was planned from.

How a filter is planned (``planner.dnf``): the tree is expanded into a disjunctive normal form of
at most ``MAX_TERMS`` conjuncts, each kept as allowed intervals per key. A conjunct becomes key
ranges by prefix narrowing: leading keys fixed to a few values multiply into points (IN lists,
ORs of equalities; at most ``MAX_POINTS``), the next constrained key bounds the range, the rest is
residual. Typed and text values narrow alike: the codec keeps the rows of any leading values
(typed ones in every spelling) in one contiguous run, spellings ordered after all the values, so
``ds in ("a", "b") and hr = 2 and region = "x"`` is two gets and nothing else.
``!=``, NOT IN and NOT BETWEEN split into ranges. The ranges of all conjuncts are then cut at
every boundary and merged into disjoint ranges; where conjuncts overlap, the residual is the OR
of theirs (None if one of them needs none). If a conjunct has no bound on the leading key,
the plan is one scan of the whole table with the whole filter as residual (the HBase design's
rule). Past the caps, the plan is the key-by-key hull of the filter with the whole filter as
residual. A contradiction (``ds = "a" and ds = "b"``) plans no scan at all.

Cost: O(size of the tree) to normalize and to build the hull; the DNF adds the product sizes
(capped) and O(r log r) to merge r ranges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from metastore_server.planner.ast import And, Expr, Leaf, Op, Or, conjunction, disjunction
from metastore_server.planner.bounds import TABLE_END, TABLE_START, Bound, Component, Edge, point_of
from metastore_server.planner.dnf import (
    MAX_POINTS,
    MAX_RANGES,
    MAX_TERMS,
    BoxBuilder,
    Range,
    TooManyTerms,
)
from metastore_server.planner.errors import UnknownKeyError
from metastore_server.planner.like import regex_matcher
from metastore_server.planner.types import key_kind

__all__ = [
    "MAX_POINTS",
    "MAX_RANGES",
    "MAX_TERMS",
    "FilterPlan",
    "Get",
    "MultiScanPlan",
    "ScanPlan",
    "normalize",
    "plan_filter",
]

_LIKE_DIALECTS = ("regex", "sql")


class FilterPlan:
    """A set of rows as scans. Subclasses provide ``scans``: disjoint, in key order."""

    scans: tuple[ScanPlan, ...]

    @property
    def is_empty(self) -> bool:
        """No scan at all: the filter matches nothing."""
        return not self.scans

    @property
    def is_full_scan(self) -> bool:
        """One scan over the whole table."""
        return len(self.scans) == 1 and self.scans[0].lower == self.scans[0].upper == Bound(
            (), True
        )

    def and_(self, other: FilterPlan) -> MultiScanPlan:
        """The rows of both plans: ranges intersected pairwise, residuals ANDed. O(n * m)."""
        ranges = []
        for a in self.scans:
            for b in other.scans:
                start = max(Edge.lower(a.lower), Edge.lower(b.lower), key=_key)
                stop = min(Edge.upper(a.upper), Edge.upper(b.upper), key=_key)
                ranges.append((start, stop, _join(And, a.residual, b.residual)))
        scans = merge_ranges(ranges, _get_width(self, other))
        return MultiScanPlan(scans, _combined_filter(And, self, other))

    def or_(self, other: FilterPlan) -> MultiScanPlan:
        """The rows of either plan: ranges merged, residuals ORed where they overlap."""
        ranges = [_as_range(s) for s in self.scans + other.scans]
        scans = merge_ranges(ranges, _get_width(self, other))
        return MultiScanPlan(scans, _combined_filter(Or, self, other))

    def __and__(self, other: FilterPlan) -> MultiScanPlan:
        return self.and_(other)

    def __or__(self, other: FilterPlan) -> MultiScanPlan:
        return self.or_(other)


@dataclass(frozen=True, slots=True)
class ScanPlan(FilterPlan):
    """Scan from ``lower`` to ``upper``; keep the rows that pass ``residual`` (None: all)."""

    lower: Bound
    upper: Bound
    residual: Expr | None = None

    @property
    # A field of MultiScanPlan, a property here: one scan is its own one-scan plan.
    def scans(self) -> tuple[ScanPlan, ...]:  # type: ignore[override]
        return (self,)

    @property
    def kind(self) -> str:
        """How EXPLAIN names this scan."""
        return "scan"


@dataclass(frozen=True, slots=True)
class Get(ScanPlan):
    """A scan over one full value tuple (``lower == upper``, both inclusive)."""

    @property
    def values(self) -> tuple[Component, ...]:
        """The value of every key."""
        return self.lower.values

    @property
    def kind(self) -> str:
        return "get"


@dataclass(frozen=True, slots=True)
class MultiScanPlan(FilterPlan):
    """Disjoint scans in key order, and the normalized filter they were planned from (None:
    every row, or not known for plans combined with ``and_``/``or_`` from bare scans)."""

    scans: tuple[ScanPlan, ...]
    filter: Expr | None = None


def plan_filter(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> MultiScanPlan:
    """The scans that find exactly the partitions ``expr`` selects (see the module docstring)."""
    normalized = normalize(expr, keys, like=like)
    whole = (Bound((), True), Bound((), True), None)
    if normalized is None:
        return MultiScanPlan((ScanPlan(*whole),), None)
    kinds = [key_kind(hive_type) for _, hive_type in keys]
    index = {name.lower(): i for i, (name, _) in enumerate(keys)}
    builder = BoxBuilder(kinds, index, like)
    builder.remember_order(normalized)
    try:
        ranges = [r for box in builder.visit(normalized) for r in builder.lower(box)]
        if len(ranges) > MAX_RANGES:
            raise TooManyTerms
    except TooManyTerms:
        hull = builder.hull(normalized)
        ranges = [] if hull is None else builder.lower(hull)
    full = [r for r in ranges if r[0].key == TABLE_START.key and r[1].key == TABLE_END.key]
    if full:
        residual = None if any(r[2] is None for r in full) else normalized
        return MultiScanPlan((ScanPlan(whole[0], whole[1], residual),), normalized)
    return MultiScanPlan(merge_ranges(ranges, len(keys), order=builder.position), normalized)


def normalize(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> Expr | None:
    """``expr`` with every key spelled as the table declares it; LIKE patterns validated.

    Raises UnknownKeyError, FilterError (invalid pattern), ValueError (unknown ``like``). O(n).
    """
    if like not in _LIKE_DIALECTS:
        raise ValueError(f"like must be one of {list(_LIKE_DIALECTS)}, not {like!r}")
    if expr is None:
        return None
    names = {name.lower(): name for name, _ in keys}
    checked: set[str] = set()

    def rename(node: Expr) -> Expr:
        if isinstance(node, And | Or):
            return type(node)(tuple(rename(child) for child in node.children))
        name = names.get(node.key.lower())
        if name is None:
            raise UnknownKeyError(node.key)
        if node.op is Op.LIKE and like == "regex" and node.value.text not in checked:
            regex_matcher(node.value.text)
            checked.add(node.value.text)
        return node if name == node.key else Leaf(name, node.op, node.value)

    return rename(expr)


# --- merging ranges into disjoint, sorted scans --------------------------------------------------


def merge_ranges(
    ranges: Iterable[Range],
    width: int | None,
    *,
    order: Callable[[Expr], int] | None = None,
) -> tuple[ScanPlan, ...]:
    """Disjoint scans in key order covering exactly the rows of ``ranges``.

    Ranges are cut at every boundary; a piece covered by several keeps the OR of their residuals
    (None if one has none), ordered by ``order``. Neighbouring pieces with the same residual are
    joined, except two single blocks (``k in (4, 5)`` stays two gets). A point of ``width`` keys
    is a ``Get``.
    O(r log r + pieces * overlap).
    """
    live = [r for r in ranges if r[0].key < r[1].key]
    events: dict[tuple[object, ...], tuple[list[Range], list[Range]]] = {}
    for r in live:
        events.setdefault(r[0].key, ([], []))[0].append(r)
        events.setdefault(r[1].key, ([], []))[1].append(r)
    pieces: list[Range] = []
    open_none = 0
    # Open residuals by identity (hashing a big residual costs its size): id -> (expr, count).
    open_residuals: dict[int, tuple[Expr, int]] = {}
    start: Edge | None = None
    for key in sorted(events):
        starting, stopping = events[key]
        if start is not None and (open_none or open_residuals):
            stop = stopping[0][1] if stopping else starting[0][0]
            pieces.append((start, stop, _overlap(open_none, open_residuals, order)))
        for r in stopping:
            if r[2] is None:
                open_none -= 1
                continue
            expr, count = open_residuals[id(r[2])]
            if count == 1:
                del open_residuals[id(r[2])]
            else:
                open_residuals[id(r[2])] = (expr, count - 1)
        for r in starting:
            if r[2] is None:
                open_none += 1
            else:
                count = open_residuals.get(id(r[2]), (r[2], 0))[1]
                open_residuals[id(r[2])] = (r[2], count + 1)
        start = starting[0][0] if starting else stopping[0][1]
    return tuple(_scan(r, width) for r in _join_neighbours(pieces))


def _overlap(
    open_none: int,
    open_residuals: dict[int, tuple[Expr, int]],
    order: Callable[[Expr], int] | None,
) -> Expr | None:
    """The residual of a piece: None if a covering range needs none, else the OR of theirs."""
    if open_none:
        return None
    residuals = [expr for expr, _ in open_residuals.values()]
    if len(residuals) == 1:
        return residuals[0]
    residuals = list(dict.fromkeys(residuals))
    if order is not None:
        residuals.sort(key=order)
    return disjunction(residuals)


def _join_neighbours(pieces: list[Range]) -> list[Range]:
    """Touching pieces with equal residuals as one, single blocks left alone."""
    joined: list[Range] = []
    for piece in pieces:
        if joined:
            last = joined[-1]
            if (
                last[1].key == piece[0].key
                and (last[2] is piece[2] or last[2] == piece[2])
                and (point_of(last[0], last[1]) is None or point_of(piece[0], piece[1]) is None)
            ):
                joined[-1] = (last[0], piece[1], last[2])
                continue
        joined.append(piece)
    return joined


def _scan(piece: Range, width: int | None) -> ScanPlan:
    """The ScanPlan (a Get when it is one full value tuple) of a piece."""
    start, stop, residual = piece
    point = point_of(start, stop)
    if point is not None and width and len(point) == width:
        bound = Bound(point, True)
        return Get(bound, bound, residual)
    return ScanPlan(start.as_lower(), stop.as_upper(), residual)


def _key(edge: Edge) -> tuple[object, ...]:
    return edge.key


def _as_range(scan: ScanPlan) -> Range:
    return Edge.lower(scan.lower), Edge.upper(scan.upper), scan.residual


def _join(kind: type[And] | type[Or], a: Expr | None, b: Expr | None) -> Expr | None:
    """``a kind b`` where None is TRUE (for And: the other side; for Or: None)."""
    if kind is And:
        parts = [e for e in (a, b) if e is not None]
        return conjunction(parts) if parts else None
    return None if a is None or b is None else Or((a, b))


def _combined_filter(kind: type[And] | type[Or], a: FilterPlan, b: FilterPlan) -> Expr | None:
    """The filter of a combined plan, when both plans know theirs (else None: unknown)."""
    first, second = (p.filter if isinstance(p, MultiScanPlan) else None for p in (a, b))
    return None if first is None or second is None else kind((first, second))


def _get_width(*plans: FilterPlan) -> int | None:
    """The key count the plans' gets reveal (None: no get seen)."""
    for plan in plans:
        for scan in plan.scans:
            if isinstance(scan, Get):
                return len(scan.values)
    return None
