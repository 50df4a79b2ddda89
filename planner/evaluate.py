"""Compile a filter tree into a predicate over a partition's raw values, with HMS direct-SQL rules.

How a leaf compares (``comparison_domain``):

* an integral key (tinyint .. bigint) compares numerically with an integer literal, or with a
  string literal that reads as an integer; a date key compares as a date with a date literal, or
  with a string literal that reads as a yyyy-mm-dd date;
* in a typed comparison a raw value that does not parse as the key's type (the default partition
  ``__HIVE_DEFAULT_PARTITION__``, say) is SQL NULL: it matches nothing, ``!=`` included;
* everything else compares the raw value as a string with the literal's text, code point by code
  point (so ``hr = "__HIVE_DEFAULT_PARTITION__"`` selects the default partition of an int key);
* LIKE matches the raw text (as a Java regex or as SQL LIKE, see ``planner.like``), but on typed
  keys a value that does not parse as the type never matches.

Compiling is O(size of the tree); the predicate costs O(leaves) per partition, except that
``=`` leaves under one OR (an IN list) and ``!=`` leaves under one AND (a NOT IN list) on the same
key become one set lookup, and LIKE leaves under one OR on the same key one regular expression
(an alternation, matched in C) when their patterns can be joined.
"""

from __future__ import annotations

import datetime as _dt
import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

from metastore_server.planner.ast import And, Expr, Leaf, Literal, LiteralKind, Op, iter_leaves
from metastore_server.planner.errors import UnknownKeyError
from metastore_server.planner.like import Matcher, any_matcher, regex_matcher, sql_like_matcher
from metastore_server.planner.types import KeyKind, key_kind, parse_date, parse_integral

Predicate = Callable[[Sequence[str]], bool]
Operand = str | int | _dt.date

_LIKE_DIALECTS: dict[str, Callable[[str], Matcher]] = {
    "regex": regex_matcher,
    "sql": sql_like_matcher,
}
#: Both operands are of one domain (two texts, integers or dates).
_COMPARE: dict[Op, Callable[[Any, Any], bool]] = {
    Op.EQ: operator.eq,
    Op.NE: operator.ne,
    Op.LT: operator.lt,
    Op.LE: operator.le,
    Op.GT: operator.gt,
    Op.GE: operator.ge,
}


class Domain(enum.Enum):
    """What a leaf compares: the raw text, or the value parsed as an integer or a date."""

    TEXT = "text"
    INTEGRAL = "integral"
    DATE = "date"


_PARSE: dict[Domain, Callable[[str], Operand | None]] = {
    Domain.INTEGRAL: parse_integral,
    Domain.DATE: parse_date,
}


def comparison_domain(kind: KeyKind, literal: Literal) -> tuple[Domain, Operand]:
    """How a key of ``kind`` compares with ``literal``: the domain and the operand in it."""
    string = literal.kind is LiteralKind.STRING
    if kind is KeyKind.INTEGRAL:
        if literal.kind is LiteralKind.INTEGER:
            return Domain.INTEGRAL, literal.value
        number = parse_integral(literal.text) if string else None
        if number is not None:
            return Domain.INTEGRAL, number
    elif kind is KeyKind.DATE:
        if literal.kind is LiteralKind.DATE:
            return Domain.DATE, literal.value
        day = parse_date(literal.text) if string else None
        if day is not None:
            return Domain.DATE, day
    return Domain.TEXT, literal.text


def referenced_keys(expr: Expr | None) -> frozenset[str]:
    """The lower-cased keys a filter names. O(size of the tree)."""
    return frozenset(leaf.key.lower() for leaf in iter_leaves(expr))


def compile_predicate(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> Predicate:
    """A test of a partition's raw values (in key order) against ``expr``; None matches all.

    ``keys`` are the table's partition keys as (name, Hive type); names match case-insensitively.
    ``like`` is "regex" (Hive 2.3/3.x clients) or "sql" (Hive 4 clients). Raises UnknownKeyError
    for a key that is not a partition key and FilterError for an invalid LIKE pattern.
    """
    if like not in _LIKE_DIALECTS:
        raise ValueError(f"like must be one of {sorted(_LIKE_DIALECTS)}, not {like!r}")
    if expr is None:
        return _match_all
    columns = {
        name.lower(): (index, key_kind(hive_type)) for index, (name, hive_type) in enumerate(keys)
    }
    return _Compiler(columns, like).compile(expr)


def _match_all(values: Sequence[str]) -> bool:
    return True


class _Compiler:
    """Turns tree nodes into closures over the table's key positions and kinds."""

    def __init__(self, columns: dict[str, tuple[int, KeyKind]], dialect: str) -> None:
        self._columns = columns
        self._dialect = dialect
        self._matcher = _LIKE_DIALECTS[dialect]

    def compile(self, expr: Expr) -> Predicate:
        """The predicate of ``expr``."""
        if isinstance(expr, Leaf):
            return self._leaf(expr)
        is_and = isinstance(expr, And)
        # Under AND, != leaves on one key share a NOT IN set; under OR, = leaves share an IN set.
        grouped_op = Op.NE if is_and else Op.EQ
        sets: dict[tuple[int, Domain], set[Operand]] = {}
        likes: dict[int, list[Leaf]] = {}  # under OR: LIKE leaves per key
        branches: list[And] = []  # under OR: the AND children
        tests: list[Predicate] = []
        for child in expr.children:
            if isinstance(child, Leaf) and child.op is grouped_op:
                index, kind = self._column(child.key)
                domain, operand = comparison_domain(kind, child.value)
                sets.setdefault((index, domain), set()).add(operand)
            elif isinstance(child, Leaf) and child.op is Op.LIKE and not is_and:
                likes.setdefault(self._column(child.key)[0], []).append(child)
            elif isinstance(child, And) and not is_and:
                branches.append(child)
            else:
                tests.append(self.compile(child))
        tests.extend(self._branches(branches))
        for (index, domain), operands in sets.items():
            tests.append(_membership(index, domain, frozenset(operands), negated=is_and))
        for leaves in likes.values():
            tests.extend(self._any_like(leaves))
        return _all_of(tests) if is_and else _any_of(tests)

    def _branches(self, branches: list[And]) -> list[Predicate]:
        """Tests of the AND children of an OR. When many of them fix one key by ``=`` (Spark's
        several partition specs: ``(ds = 'a' and hr = 1) or (ds = 'b' and hr = 2) or ...``),
        they are indexed by that key's value, so a partition tests only the branches its value
        selects: O(1) dictionary lookups instead of O(branches) per partition."""
        fixed: list[dict[tuple[int, Domain], tuple[Leaf, Operand]]] = []
        counts: dict[tuple[int, Domain], int] = {}
        for branch in branches:
            equalities: dict[tuple[int, Domain], tuple[Leaf, Operand]] = {}
            for child in branch.children:
                if isinstance(child, Leaf) and child.op is Op.EQ:
                    index, kind = self._column(child.key)
                    domain, operand = comparison_domain(kind, child.value)
                    equalities.setdefault((index, domain), (child, operand))
            fixed.append(equalities)
            for column in equalities:
                counts[column] = counts.get(column, 0) + 1
        best = max(counts, key=lambda column: counts[column], default=None)
        if best is None or counts[best] < _MIN_INDEXED_BRANCHES:
            return [self.compile(branch) for branch in branches]
        indexed: dict[Operand, list[Predicate]] = {}
        tests: list[Predicate] = []
        for branch, equalities in zip(branches, fixed, strict=True):
            if best not in equalities:
                tests.append(self.compile(branch))
                continue
            leaf, operand = equalities[best]
            rest = [child for child in branch.children if child is not leaf]
            indexed.setdefault(operand, []).append(
                self.compile(And(tuple(rest))) if len(rest) > 1
                else self.compile(rest[0]) if rest else _match_all
            )  # fmt: skip
        tests.append(_indexed(best[0], best[1], indexed))
        return tests

    def _any_like(self, leaves: list[Leaf]) -> list[Predicate]:
        """Tests of LIKE leaves on one key under an OR: one joined pattern when possible."""
        joined = (
            any_matcher([leaf.value.text for leaf in leaves], self._dialect)
            if len(leaves) > 1
            else None
        )
        if joined is None:
            return [self._leaf(leaf) for leaf in leaves]
        index, kind = self._column(leaves[0].key)
        return [_like(index, kind, joined)]

    def _column(self, key: str) -> tuple[int, KeyKind]:
        column = self._columns.get(key.lower())
        if column is None:
            raise UnknownKeyError(key)
        return column

    def _leaf(self, leaf: Leaf) -> Predicate:
        index, kind = self._column(leaf.key)
        if leaf.op is Op.LIKE:
            return _like(index, kind, self._matcher(leaf.value.text))
        domain, operand = comparison_domain(kind, leaf.value)
        compare = _COMPARE[leaf.op]
        parse = _PARSE.get(domain)
        if parse is None:
            return lambda values: compare(values[index], operand)

        def typed(values: Sequence[str]) -> bool:
            value = parse(values[index])
            return value is not None and compare(value, operand)

        return typed


def _like(index: int, kind: KeyKind, matches: Matcher) -> Predicate:
    """LIKE on the raw text; on a typed key, values not of the type never match."""
    parse = {KeyKind.INTEGRAL: parse_integral, KeyKind.DATE: parse_date}.get(kind)
    if parse is None:
        return lambda values: matches(values[index])
    return lambda values: parse(values[index]) is not None and matches(values[index])


def _membership(
    index: int, domain: Domain, operands: frozenset[Operand], *, negated: bool
) -> Predicate:
    """``value IN operands`` (or NOT IN); an unparseable typed value is NULL and matches neither."""
    parse = _PARSE.get(domain)
    if parse is None:
        if negated:
            return lambda values: values[index] not in operands
        return lambda values: values[index] in operands

    def test(values: Sequence[str]) -> bool:
        value = parse(values[index])
        return value is not None and (value in operands) != negated

    return test


#: Fewest OR branches fixing one key by ``=`` that are worth a dictionary of branches.
_MIN_INDEXED_BRANCHES = 8


def _indexed(index: int, domain: Domain, branches: dict[Operand, list[Predicate]]) -> Predicate:
    """True when one of the branches under the partition's value of key ``index`` holds (an
    unparseable typed value is NULL: it selects no branch)."""
    parse = _PARSE.get(domain)

    def test(values: Sequence[str]) -> bool:
        value = parse(values[index]) if parse is not None else values[index]
        if value is None:
            return False
        return any(branch(values) for branch in branches.get(value, ()))

    return test


def _all_of(tests: list[Predicate]) -> Predicate:
    if len(tests) == 1:
        return tests[0]

    def test(values: Sequence[str]) -> bool:
        return all(t(values) for t in tests)

    return test


def _any_of(tests: list[Predicate]) -> Predicate:
    if len(tests) == 1:
        return tests[0]

    def test(values: Sequence[str]) -> bool:
        return any(t(values) for t in tests)

    return test
