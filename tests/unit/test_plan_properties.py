"""Plans against brute force: executing a plan over encoded keys selects exactly what
``compile_predicate`` selects, in key order, without duplicates, scanning only planned ranges."""

from __future__ import annotations

import bisect
from itertools import pairwise
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner import dnf
from metastore_server.planner import plan as plan_module
from metastore_server.planner.ast import And, Expr, Leaf, Literal, Op, Or
from metastore_server.planner.evaluate import compile_predicate
from metastore_server.planner.plan import FilterPlan, Get, plan_filter
from metastore_server.planner.types import KeyKind, key_kind
from metastore_server.storage.codec import bound_range, encode_id, encode_values, exact_key
from support.filter_strategies import (
    DATE_LITERALS,
    DEFAULT,
    STRING_LITERALS,
    filters,
    tables,
    text_filters,
)

TABLE = encode_id(42)


# --- executing a plan over an in-memory sorted table ---------------------------------------------


def encoded_table(keys, rows) -> list[tuple[bytes, tuple[str, ...]]]:
    kinds = [key_kind(t) for _, t in keys]
    return sorted((TABLE + encode_values(kinds, list(r)), r) for r in rows)


def execute(plan: FilterPlan, keys, table, like: str) -> tuple[list[bytes], int, list]:
    """Rows found (keys), rows scanned, and each scan's byte range."""
    kinds = [key_kind(t) for _, t in keys]
    row_keys = [k for k, _ in table]
    found, scanned, ranges = [], 0, []
    for scan in plan.scans:
        start, stop = bound_range(kinds, scan.lower, scan.upper, TABLE)
        ranges.append((start, stop))
        lo = bisect.bisect_left(row_keys, start)
        hi = len(row_keys) if stop is None else bisect.bisect_left(row_keys, stop)
        if isinstance(scan, Get):
            point = exact_key(kinds, scan.values)
            if point is not None:  # a point read finds what the range holds
                assert [k for k, _ in table[lo:hi]] in ([], [TABLE + point]), scan
        test = compile_predicate(scan.residual, keys, like=like)
        for key, values in table[lo:hi]:
            scanned += 1
            if test(values):
                found.append(key)
    return found, scanned, ranges


def brute_force(expr, keys, table, like: str) -> list[bytes]:
    test = compile_predicate(expr, keys, like=like)
    return [key for key, values in table if test(values)]


def check(expr, keys, rows, like: str) -> tuple[FilterPlan, int, int]:
    """Assert the plan of ``expr`` is exact, ordered and disjoint; (plan, scanned, returned)."""
    table = encoded_table(keys, rows)
    plan = plan_filter(expr, keys, like=like)
    found, scanned, ranges = execute(plan, keys, table, like)
    assert found == brute_force(expr, keys, table, like), plan
    assert found == sorted(set(found))
    for (_, stop), (start, _) in pairwise(ranges):
        assert stop is not None and stop <= start, plan  # disjoint, in key order
    assert scanned <= len(table)
    return plan, scanned, len(found)


@settings(max_examples=200, deadline=None)
@given(tables(), st.sampled_from(["regex", "sql"]), st.data())
def test_plans_select_exactly_the_brute_force_partitions(table, like, data) -> None:
    keys, rows = table
    expr = data.draw(filters(tuple(n for n, _ in keys), like))
    check(expr, keys, rows, like)


@settings(max_examples=100, deadline=None)
@given(tables(), st.data())
def test_plans_of_filter_text_with_special_forms(table, data) -> None:
    keys, rows = table
    expr = data.draw(text_filters(tuple(n for n, _ in keys)))
    check(expr, keys, rows, "regex")


@settings(max_examples=60, deadline=None)
@given(tables(), st.data())
def test_and_or_of_plans_match_brute_force(table, data) -> None:
    keys, rows = table
    names = tuple(n for n, _ in keys)
    a, b = data.draw(filters(names, "regex")), data.draw(filters(names, "regex"))
    encoded = encoded_table(keys, rows)
    plan_a, plan_b = plan_filter(a, keys), plan_filter(b, keys)
    for combined, expr in ((plan_a & plan_b, And((a, b))), (plan_a | plan_b, Or((a, b)))):
        found, _, ranges = execute(combined, keys, encoded, "regex")
        assert found == brute_force(expr, keys, encoded, "regex")
        for (_, stop), (start, _) in pairwise(ranges):
            assert stop is not None and stop <= start


@settings(max_examples=100, deadline=None)
@given(tables(), st.data())
def test_plans_stay_exact_past_tiny_caps(table, data) -> None:
    """With caps of a few terms, points and ranges, the fallbacks (hull, bounded points) run."""
    keys, rows = table
    expr = data.draw(filters(tuple(n for n, _ in keys), "regex"))
    with (
        mock.patch.multiple(dnf, MAX_TERMS=2, MAX_PAIRS=4, MAX_POINTS=3),
        mock.patch.object(plan_module, "MAX_RANGES", 4),
    ):
        check(expr, keys, rows, "regex")


# --- filters on leading keys only: no residual, nothing scanned in vain --------------------------


def typed_literal(kind: KeyKind) -> st.SearchStrategy[Literal]:
    if kind is KeyKind.INTEGRAL:
        return st.one_of(
            st.sampled_from([-3, 0, 1, 7, 12]).map(Literal.integer),
            st.sampled_from(["7", "007", "12"]).map(Literal.string),
        )
    if kind is KeyKind.DATE:
        return st.sampled_from(DATE_LITERALS).map(Literal.date)
    return st.sampled_from(STRING_LITERALS).map(Literal.string)


@st.composite
def prefix_filters(draw: st.DrawFn, keys) -> Expr:
    """An OR of conjunctions: equality on keys 0..j-1 (IN lists too), ranges on key j."""
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        j = draw(st.integers(0, len(keys) - 1))
        parts: list[Expr] = []
        for name, hive_type in keys[:j]:
            kind = key_kind(hive_type)
            values = st.one_of(typed_literal(kind), st.just(Literal.string(DEFAULT)))
            chosen = draw(st.lists(values, min_size=1, max_size=3))
            eqs = [Leaf(name, Op.EQ, v) for v in chosen]
            parts.append(eqs[0] if len(eqs) == 1 else Or(tuple(eqs)))
        name, hive_type = keys[j]
        ops = st.sampled_from([Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE])
        for _ in range(draw(st.integers(0 if j else 1, 2))):
            parts.append(Leaf(name, draw(ops), draw(typed_literal(key_kind(hive_type)))))
        if not parts:
            parts.append(Leaf(keys[0][0], Op.GE, Literal.string("")))
        terms.append(parts[0] if len(parts) == 1 else And(tuple(parts)))
    return terms[0] if len(terms) == 1 else Or(tuple(terms))


@settings(max_examples=150, deadline=None)
@given(tables(), st.data())
def test_filters_on_leading_keys_scan_nothing_in_vain(table, data) -> None:
    # Rows in every spelling ("007", "+7", "2024-1-5" ...): typed points anywhere in the leading
    # keys cover all spellings in one range, so no scan needs a residual or reads a row in vain.
    keys, rows = table
    expr = data.draw(prefix_filters(keys))
    plan, scanned, returned = check(expr, keys, rows, "regex")
    assert scanned == returned  # so also <= returned + len(plan.scans)
    for scan in plan.scans:
        assert scan.residual is None, plan
