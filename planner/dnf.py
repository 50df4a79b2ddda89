"""A filter as a capped union of boxes, and each box as key ranges with a residual.

A ``Box`` is one conjunct of the filter's disjunctive normal form, kept per key: for each key an
``IntervalSet`` of the components it may take, the leaves that say so exactly (``sources``), and
the ``residual`` conditions no interval captures (LIKE, text comparisons on typed keys, ...).

``BoxBuilder.visit`` walks the tree once: a leaf is one box; AND intersects boxes key by key
(a product of the children's box lists); OR concatenates them, folding comparisons of one key
into one interval set (``k in (1, 2, 3)`` is one box, not three) and merging boxes that differ
on one key only. More than ``MAX_TERMS`` boxes anywhere raises ``TooManyTerms``; the caller then
plans ``BoxBuilder.hull``: one box that over-approximates the whole filter key by key, with the
whole filter as residual. Both are O(size of the tree) plus the product sizes, which the cap
bounds.

``BoxBuilder.lower`` turns a box into ranges of key tuples: leading keys fixed to finitely many
values multiply into points (at most ``MAX_POINTS``), the next constrained key bounds each of
them (at most ``MAX_POINTS`` ranges in all), and every constraint left over (on later keys, or
past a cap) joins the residual. A typed point (7, a date) is the block of all its spellings
("7", "007", "+7"); ``storage.codec`` keeps that block contiguous with the later keys ordered
inside it, so narrowing goes on under typed points exactly as under texts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeAlias

from metastore_server.planner.ast import And, Expr, Leaf, Or, conjunction, disjunction
from metastore_server.planner.bounds import Component, Edge
from metastore_server.planner.intervals import IntervalSet, leaf_constraint
from metastore_server.planner.types import KeyKind

#: Most conjuncts the DNF may have, at any node.
MAX_TERMS = 256
#: Most pairs an AND may combine on its way to MAX_TERMS (contradictions prune pairs).
MAX_PAIRS = 4 * MAX_TERMS
#: Most points one box multiplies out of equality sets on its leading keys (and most ranges it
#: lowers into: past it, the next key is bounded by its hull and left to the residual).
MAX_POINTS = 1024
#: Most ranges a plan may have before it falls back to the hull.
MAX_RANGES = 4096

Range: TypeAlias = tuple[Edge, Edge, Expr | None]


class TooManyTerms(Exception):
    """The disjunctive normal form outgrew MAX_TERMS (or MAX_PAIRS, MAX_RANGES)."""


class Box:
    """One conjunct: allowed components per key, their exact sources, and the residual."""

    __slots__ = ("sets", "sources", "residual")

    def __init__(
        self,
        sets: dict[int, IntervalSet],
        sources: dict[int, tuple[Expr, ...]],
        residual: tuple[Expr, ...],
    ) -> None:
        self.sets = sets
        self.sources = sources
        self.residual = residual

    def __repr__(self) -> str:
        return f"Box({self.sets!r}, {self.sources!r}, {self.residual!r})"


TRUE_BOX = Box({}, {}, ())


def and_boxes(a: Box, b: Box) -> Box | None:
    """The conjunction of two boxes; None when they contradict. O(keys + b's sources).

    Sources and residuals are concatenated, repeats kept (a box never holds more of them than
    its conjunct has leaves); their consumers drop repeats once, where it costs O(n) once.
    """
    sets = dict(a.sets)
    for key, allowed in b.sets.items():
        if key in sets:
            allowed = sets[key].intersect(allowed)
            if not allowed:
                return None
        sets[key] = allowed
    sources = dict(a.sources)
    for key, exprs in b.sources.items():
        sources[key] = sources.get(key, ()) + exprs
    return Box(sets, sources, a.residual + b.residual)


def and_all(boxes: Sequence[Box]) -> Box | None:
    """The conjunction of many boxes; None when they contradict. O(n log n) in their size,
    where folding ``and_boxes`` costs O(n) per box (an AND of 10,000 ``!=``: O(n^2))."""
    if len(boxes) == 1:
        return boxes[0]
    per_key: dict[int, list[IntervalSet]] = {}
    sources: dict[int, list[Expr]] = {}
    residual: list[Expr] = []
    for box in boxes:
        for key, allowed in box.sets.items():
            per_key.setdefault(key, []).append(allowed)
        for key, exprs in box.sources.items():
            sources.setdefault(key, []).extend(exprs)
        residual.extend(box.residual)
    sets = {}
    for key, allowed_sets in per_key.items():
        allowed = IntervalSet.intersect_all(allowed_sets)
        if not allowed:
            return None
        sets[key] = allowed
    return Box(sets, {k: _unique(v) for k, v in sources.items()}, _unique(residual))


def _unique(exprs: Iterable[Expr]) -> tuple[Expr, ...]:
    """``exprs`` without repeats, first occurrences kept in order."""
    items = tuple(exprs)
    return items if len(items) < 2 else tuple(dict.fromkeys(items))


def _only_exact_key(box: Box) -> int | None:
    """The one key a box bounds, when it bounds only that key, exactly, with no residual."""
    if box.residual or len(box.sets) != 1:
        return None
    (key,) = box.sets
    return key if box.sources.get(key) else None


class _OrMerger:
    """Collects the boxes of an OR, merging a box into an earlier one when both have the same
    residual and constrained keys and differ on at most one key. O(keys) per box."""

    def __init__(self) -> None:
        self.boxes: list[Box] = []
        self._index: dict[tuple[object, ...], int] = {}

    def add(self, box: Box) -> None:
        for skip in (None, *box.sets):
            position = self._index.get(_signature(box, skip))
            if position is not None:
                self._merge(position, box, skip)
                return
        self.boxes.append(box)
        for skip in (None, *box.sets):
            self._index[_signature(box, skip)] = len(self.boxes) - 1
        if len(self.boxes) > MAX_TERMS:
            raise TooManyTerms

    def _merge(self, position: int, box: Box, key: int | None) -> None:
        if key is None:
            return  # the same box again
        old = self.boxes[position]
        sets = dict(old.sets)
        sets[key] = old.sets[key].union(box.sets[key])
        sources = dict(old.sources)
        mine, theirs = old.sources.get(key, ()), box.sources.get(key, ())
        if mine and theirs:
            either = [conjunction(_unique(mine)), conjunction(_unique(theirs))]
            sources[key] = (disjunction(either),)
        else:
            sources.pop(key, None)
        if len(sets[key]) > MAX_POINTS:
            raise TooManyTerms  # each further merge would cost O(intervals)
        merged = Box(sets, sources, old.residual)
        for skip in (None, *old.sets):
            if skip == key:
                continue
            stale = _signature(old, skip)
            if self._index.get(stale) == position:
                del self._index[stale]
            self._index.setdefault(_signature(merged, skip), position)
        self.boxes[position] = merged

    def result(self) -> list[Box]:
        return self.boxes


def _signature(box: Box, skip: int | None) -> tuple[object, ...]:
    """What two boxes must share to merge on key ``skip`` (None: to be the same box)."""
    others = tuple(sorted((k, s) for k, s in box.sets.items() if k != skip))
    return frozenset(box.residual), frozenset(box.sets), skip, others


class BoxBuilder:
    """Plans one filter over one table's partition keys (see the module docstring)."""

    def __init__(self, kinds: Sequence[KeyKind], index: dict[str, int], like: str) -> None:
        self.kinds = list(kinds)
        self.index = index
        self.like = like
        self.order: dict[int, int] = {}
        self._tree: Expr | None = None

    # --- the tree to boxes ------------------------------------------------------------------

    def visit(self, expr: Expr) -> list[Box]:
        """The boxes whose union is ``expr``; raises TooManyTerms past the caps."""
        if isinstance(expr, Leaf):
            box = self.leaf(expr)
            return [] if box is None else [box]
        if isinstance(expr, And):
            return self._and(expr)
        return self._or(expr)

    def leaf(self, leaf: Leaf) -> Box | None:
        """The box of one comparison (None: it matches nothing)."""
        key = self.index[leaf.key.lower()]
        constraint = leaf_constraint(self.kinds[key], leaf, self.like)
        if constraint is None:
            return Box({}, {}, (leaf,))
        if not constraint.allowed:
            return None
        if constraint.exact:
            return Box({key: constraint.allowed}, {key: (leaf,)}, ())
        return Box({key: constraint.allowed}, {}, (leaf,))

    def _and(self, node: And) -> list[Box]:
        singles: list[Box] = []
        products: list[list[Box]] = []
        for child in node.children:
            boxes = self.visit(child)
            if not boxes:
                return []
            if len(boxes) > 1:
                products.append(boxes)
            else:
                singles.append(boxes[0])
        base = and_all(singles) if singles else TRUE_BOX
        if base is None:
            return []
        terms = [base]
        for boxes in sorted(products, key=len):
            if len(terms) * len(boxes) > MAX_PAIRS:
                raise TooManyTerms
            terms = [c for t in terms for b in boxes if (c := and_boxes(t, b)) is not None]
            if len(terms) > MAX_TERMS:
                raise TooManyTerms
            if not terms:
                return []
        return terms

    def _or(self, node: Or) -> list[Box]:
        merger = _OrMerger()
        # Children that only bound one key exactly (``hr = 1``, ``(hr > 2 and hr < 5)``) are
        # unioned per key at the end, in O(n log n): merging them one by one is O(n^2).
        same_key: dict[int, list[tuple[Expr, IntervalSet]]] = {}
        for child in node.children:
            for box in self.visit(child):
                key = _only_exact_key(box)
                if key is None:
                    merger.add(box)
                else:
                    same_key.setdefault(key, []).append(
                        (conjunction(_unique(box.sources[key])), box.sets[key])
                    )
        for key, items in same_key.items():
            allowed = IntervalSet.of(i for _, s in items for i in s.intervals)
            source = disjunction(_unique(expr for expr, _ in items))
            merger.add(Box({key: allowed}, {key: (source,)}, ()))
        return merger.result()

    # --- one box over-approximating the whole filter ---------------------------------------

    def hull(self, expr: Expr) -> Box | None:
        """A box holding every row ``expr`` matches, with ``expr`` as its residual; None when
        ``expr`` can match nothing. O(size of the tree)."""
        sets = self._project(expr)
        return None if sets is None else Box(sets, {}, (expr,))

    def _project(self, expr: Expr) -> dict[int, IntervalSet] | None:
        """Per key, a superset of the components the rows of ``expr`` take (None: no rows)."""
        if isinstance(expr, Leaf):
            box = self.leaf(expr)
            return None if box is None else dict(box.sets)
        parts = [self._project(child) for child in expr.children]
        if isinstance(expr, And):
            known = [p for p in parts if p is not None]
            if len(known) < len(parts):
                return None
            merged = TRUE_BOX
            for sets in known:
                box = and_boxes(merged, Box(sets, {}, ()))
                if box is None:
                    return None
                merged = box
            return merged.sets
        live = [p for p in parts if p is not None]
        if not live:
            return None
        shared = set(live[0]).intersection(*live[1:])
        return {k: IntervalSet.of(i for p in live for i in p[k].intervals) for k in sorted(shared)}

    # --- a box to ranges --------------------------------------------------------------------

    def lower(self, box: Box) -> list[Range]:
        """The key ranges of a box, each with the box's residual for them. O(ranges)."""
        prefixes: list[tuple[Component, ...]] = [()]
        captured: set[int] = set()
        bounds: list[tuple[Edge, Edge]] | None = None
        for key in range(len(self.kinds)):
            allowed = box.sets.get(key)
            if allowed is None:
                break
            points = allowed.points()
            if points is not None and len(prefixes) * len(points) <= MAX_POINTS:
                captured.add(key)
                prefixes = [p + (v,) for p in prefixes for v in points]
                continue
            intervals = allowed.intervals
            if len(prefixes) * len(intervals) <= MAX_POINTS:
                captured.add(key)
            else:
                intervals = (allowed.hull(),)
            bounds = [(a.under(p), b.under(p)) for p in prefixes for a, b in intervals]
            break
        if bounds is None:
            bounds = [(Edge(p, False), Edge(p, True)) for p in prefixes]
        parts = list(box.residual)
        for key, exprs in box.sources.items():
            if key not in captured:
                parts.extend(exprs)
        residual = self.conjunction(parts)
        return [(start, stop, residual) for start, stop in bounds]

    def conjunction(self, parts: Sequence[Expr]) -> Expr | None:
        """The AND of ``parts`` in filter order, repeats dropped (None: no parts)."""
        if len(parts) <= 1:
            return parts[0] if parts else None
        return conjunction(sorted(_unique(parts), key=self.position))

    def position(self, expr: Expr) -> int:
        """Where ``expr`` (or its first leaf) occurs in the planned filter. O(depth)."""
        found = self.order.get(id(expr))
        while found is None and not isinstance(expr, Leaf):
            expr = expr.children[0]
            found = self.order.get(id(expr))
        return len(self.order) if found is None else found

    def remember_order(self, expr: Expr) -> None:
        """Number the nodes of the filter in reading order (residuals keep it). Nodes are
        known by identity: residuals are nodes of this very tree, and hashing a big tree
        costs O(its size) every time. O(size of the tree)."""
        self._tree = expr  # keeps the numbered nodes (and so their ids) alive
        pending = [expr]
        while pending:
            node = pending.pop()
            self.order.setdefault(id(node), len(self.order))
            if not isinstance(node, Leaf):
                pending.extend(reversed(node.children))
