"""Plan shapes: prefix narrowing, points, merged ranges, splits, the DNF cap, contradictions."""

from __future__ import annotations

import datetime as dt

import pytest
from metastore_server.planner.ast import Leaf, Literal, Op
from metastore_server.planner.bounds import TYPED_END, Bound
from metastore_server.planner.errors import FilterError, UnknownKeyError
from metastore_server.planner.explain import explain
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.plan import (
    MAX_TERMS,
    Get,
    MultiScanPlan,
    ScanPlan,
    normalize,
    plan_filter,
)
from metastore_server.planner.types import DEFAULT_PARTITION_NAME

DEFAULT = DEFAULT_PARTITION_NAME
KEYS = [("ds", "string"), ("hr", "int"), ("region", "string")]
START, END = Bound((), True), Bound((), True)


def plan(text: str, keys=KEYS, *, like: str = "regex") -> MultiScanPlan:
    return plan_filter(parse_filter(text), keys, like=like)


def shape(p: MultiScanPlan) -> list[tuple]:
    """Each scan as (kind, lower, upper, residual text); bounds as (values, inclusive)."""
    return [
        (
            scan.kind,
            (scan.lower.values, scan.lower.inclusive),
            (scan.upper.values, scan.upper.inclusive),
            None if scan.residual is None else scan.residual.to_filter_string(),
        )
        for scan in p.scans
    ]


def get(*values, residual=None) -> tuple:
    return ("get", (values, True), (values, True), residual)


def scan(lower, upper, residual=None) -> tuple:
    return ("scan", lower, upper, residual)


# --- normalization and errors -------------------------------------------------------------------


def test_keys_are_spelled_as_the_table_declares_them() -> None:
    p = plan('DS = "a" and Hr = 3', [("ds", "string"), ("HR", "int")])
    assert p.filter is not None
    assert p.filter.to_filter_string() == 'ds = "a" and HR = 3'
    assert shape(p) == [get("a", 3)]


def test_no_filter_is_one_full_scan() -> None:
    p = plan_filter(None, KEYS)
    assert p.is_full_scan and p.filter is None
    assert shape(p) == [scan(((), True), ((), True))]


def test_unknown_key_invalid_pattern_and_dialect_are_refused() -> None:
    with pytest.raises(UnknownKeyError):
        plan('ds = "a" or nope = 1')
    with pytest.raises(FilterError):
        plan('ds like "(unclosed"')
    with pytest.raises(ValueError):
        plan('ds = "a"', like="glob")
    assert normalize(None, KEYS) is None


# --- prefix narrowing -----------------------------------------------------------------------------


def test_equality_then_a_range_is_one_scan_without_residual() -> None:
    p = plan('ds = "a" and hr >= 3 and hr < 7')
    assert shape(p) == [scan((("a", 3), True), (("a", 7), False))]
    assert isinstance(p.scans[0], ScanPlan) and not isinstance(p.scans[0], Get)


def test_narrowing_does_not_depend_on_leaf_order() -> None:
    assert shape(plan('hr < 7 and region = "x" and hr >= 3 and ds = "a"')) == [
        scan((("a", 3), True), (("a", 7), False), 'region = "x"')
    ]


def test_a_typed_range_stops_before_the_raw_texts() -> None:
    # hr < 5 never matches the default partition: the scan ends inside the typed region.
    assert shape(plan("hr < 5", [("hr", "int")])) == [scan(((), True), ((5,), False))]
    assert shape(plan("hr > 5", [("hr", "int")])) == [scan(((5,), False), ((TYPED_END,), False))]


def test_default_partition_is_a_point_of_its_own() -> None:
    keys = [("hr", "int"), ("ds", "string")]
    assert shape(plan(f'hr = "{DEFAULT}" and ds = "a"', keys)) == [get(DEFAULT, "a")]


def test_every_spelling_of_a_typed_value_is_found() -> None:
    # hr=7 is the block of "7", "007", "+7" ...; the keys after it narrow inside that block.
    assert shape(plan('ds = "a" and hr = "007" and region = "x"')) == [get("a", 7, "x")]
    assert shape(plan('ds = "a" and hr = 7')) == [scan((("a", 7), True), (("a", 7), True))]


def test_typed_points_in_the_middle_narrow_like_texts() -> None:
    # No extra scans for other spellings: one get per point, no residual.
    assert shape(plan('ds in ("a", "b") and hr = 2 and region = "x"')) == [
        get("a", 2, "x"),
        get("b", 2, "x"),
    ]
    assert shape(plan('ds = "a" and hr = 2 and region > "m"')) == [
        scan((("a", 2, "m"), False), (("a", 2), True))
    ]
    assert shape(plan('ds = "a" and hr in (1, 2) and region >= "m" and region < "p"')) == [
        scan((("a", 1, "m"), True), (("a", 1, "p"), False)),
        scan((("a", 2, "m"), True), (("a", 2, "p"), False)),
    ]
    keys = [("d", "date"), ("hr", "int"), ("region", "string")]
    assert shape(plan('d = 2024-01-05 and hr = 7 and region like "e.*"', keys)) == [
        scan(
            ((dt.date(2024, 1, 5), 7, "e"), True),
            ((dt.date(2024, 1, 5), 7, "f"), False),
            'region like "e.*"',
        )
    ]


def test_dates_compare_as_dates() -> None:
    keys = [("d", "date")]
    assert shape(plan('d >= "2024-1-5" and d < 2024-02-01', keys)) == [
        scan(((dt.date(2024, 1, 5),), True), ((dt.date(2024, 2, 1),), False))
    ]
    assert shape(plan("d > 2024-01-04 and d < 2024-01-06", keys)) == [get(dt.date(2024, 1, 5))]


def test_text_comparisons_on_typed_keys_stay_residual() -> None:
    assert shape(plan('ds = "a" and hr > "abc"')) == [
        scan((("a",), True), (("a",), True), 'hr > "abc"')
    ]
    # LIKE on a typed key can only match typed values.
    assert shape(plan('ds = "a" and hr like "1.*"')) == [
        scan((("a",), True), (("a", TYPED_END), False), 'hr like "1.*"')
    ]


def test_like_with_a_literal_prefix_narrows_a_string_key() -> None:
    assert shape(plan('ds like "2024-01.*"')) == [
        scan((("2024-01",), True), (("2024-02",), False), 'ds like "2024-01.*"')
    ]
    assert shape(plan('ds like "2024-01%"', like="sql")) == [
        scan((("2024-01",), True), (("2024-02",), False), 'ds like "2024-01%"')
    ]
    # No literal prefix (alternation, a leading wildcard): the whole table.
    assert plan('ds like "a|b"').is_full_scan
    assert plan('ds like ".*x"').is_full_scan


# --- points ---------------------------------------------------------------------------------------


def test_in_lists_multiply_into_sorted_gets() -> None:
    p = plan('ds in ("b", "a") and region in ("y", "x") and hr = "7"', [
        ("ds", "string"), ("region", "string"), ("hr", "int")])  # fmt: skip
    assert shape(p) == [get("a", "x", 7), get("a", "y", 7), get("b", "x", 7), get("b", "y", 7)]


def test_ors_of_equalities_are_gets() -> None:
    keys = [("ds", "string"), ("hr", "int")]
    p = plan('(ds = "b" and hr = 2) or (ds = "a" and hr = 1) or (ds = "a" and hr = 1)', keys)
    assert shape(p) == [get("a", 1), get("b", 2)]
    assert shape(plan("hr in (5, 4)", [("hr", "int")])) == [get(4), get(5)]


def test_too_many_points_fall_back_to_a_bounded_range() -> None:
    values = ", ".join(f'"v{i:04d}"' for i in range(2000))
    p = plan(f"ds in ({values})", [("ds", "string")])
    assert shape(p) == [scan((("v0000",), True), (("v1999",), True), p.filter.to_filter_string())]


# --- merging --------------------------------------------------------------------------------------


def test_overlapping_ranges_merge() -> None:
    assert shape(plan('(ds >= "a" and ds <= "c") or (ds >= "b" and ds <= "d") or ds = "b"')) == [
        scan((("a",), True), (("d",), True))
    ]


def test_overlaps_with_different_residuals_are_cut_at_the_boundaries() -> None:
    p = plan('(ds >= "a" and ds <= "c" and region = "x") or (ds >= "b" and ds <= "d")')
    assert shape(p) == [
        scan((("a",), True), (("b",), False), 'region = "x"'),
        scan((("b",), True), (("d",), True)),
    ]
    p = plan('(ds >= "a" and ds <= "c" and region = "x") or (ds >= "b" and region = "y")')
    assert shape(p) == [
        scan((("a",), True), (("b",), False), 'region = "x"'),
        scan((("b",), True), (("c",), True), 'region = "x" or region = "y"'),
        scan((("c",), False), ((), True), 'region = "y"'),
    ]


def test_a_point_inside_a_range_keeps_its_own_residual() -> None:
    p = plan('(ds = "a" and hr = 1) or (ds = "a" and region = "x")')
    assert shape(p) == [
        scan((("a",), True), (("a", 1), False), 'region = "x"'),
        scan((("a", 1), True), (("a", 1), True)),
        scan((("a", 1), False), (("a",), True), 'region = "x"'),
    ]


# --- negations split ----------------------------------------------------------------------------


def test_not_equal_splits_into_two_ranges() -> None:
    assert shape(plan('ds != "a"')) == [
        scan(((), True), (("a",), False)),
        scan((("a",), False), ((), True)),
    ]
    # A typed != never matches the default partition.
    assert shape(plan('ds = "a" and hr != 5')) == [
        scan((("a",), True), (("a", 5), False)),
        scan((("a", 5), False), (("a", TYPED_END), False)),
    ]


def test_not_in_and_not_between_split() -> None:
    assert len(plan('ds not in ("a", "b", "c")').scans) == 4
    assert shape(plan('ds = "a" and hr not between 3 and 7')) == [
        scan((("a",), True), (("a", 3), False)),
        scan((("a", 7), False), (("a", TYPED_END), False)),
    ]


def test_text_not_equal_on_a_typed_key_keeps_typed_values() -> None:
    assert shape(plan(f'hr != "{DEFAULT}"', [("hr", "int")])) == [
        scan(((), True), ((DEFAULT,), False)),
        scan(((DEFAULT,), False), ((), True)),
    ]


# --- full scans, the DNF cap, contradictions ----------------------------------------------------


def test_an_or_branch_without_a_leading_bound_scans_the_whole_table() -> None:
    p = plan('ds = "a" or hr = 1')
    assert shape(p) == [scan(((), True), ((), True), 'ds = "a" or hr = 1')]


def test_forty_clauses_past_the_dnf_cap_are_one_hull_scan() -> None:
    clauses = " and ".join(f'(ds > "c{i}" or hr > {i})' for i in range(40))
    p = plan(clauses)
    assert p.is_full_scan
    assert p.scans[0].residual == p.filter
    clauses = " and ".join(f'(hr > {i} or region > "r{i}")' for i in range(40))
    p = plan(f'ds = "a" and {clauses}')
    assert shape(p) == [scan((("a",), True), (("a",), True), p.filter.to_filter_string())]
    # Contradictions prune the product before it reaches the cap.
    clauses = " and ".join(f'(hr = {i} or region = "r{i}")' for i in range(40))
    assert plan(f'ds = "a" and {clauses}').is_empty


def test_small_products_are_expanded() -> None:
    # (a, x), (a, hr 2), (b, hr 1, x); (b, hr 1, hr 2) is a contradiction.
    p = plan('(ds = "a" or ds = "b" and hr = 1) and (region = "x" or hr = 2)')
    assert shape(p) == [
        scan((("a",), True), (("a", 2), False), 'region = "x"'),
        scan((("a", 2), True), (("a", 2), True)),
        scan((("a", 2), False), (("a",), True), 'region = "x"'),
        get("b", 1, "x"),
    ]
    assert MAX_TERMS == 256


def test_contradictions_plan_nothing() -> None:
    for text in (
        'ds = "a" and ds = "b"',
        'hr > 4 and hr < 5 and ds = "a"',
        'ds = "a" and hr = 5 and hr != 5',
        "hr > 9223372036854775806 and hr < 9223372036854775807",
        'ds < "a" and ds > "b" or ds = "c" and ds = "d"',
    ):
        assert plan(text).is_empty, text
    huge = Leaf("hr", Op.EQ, Literal.integer(2**70))
    assert plan_filter(huge, [("hr", "int")]).is_empty


# --- the algebra and EXPLAIN ----------------------------------------------------------------------


def test_plans_combine_with_and_and_or() -> None:
    a, b = plan('ds >= "a" and ds <= "c"'), plan('ds >= "b" and region = "x"')
    assert shape(a & b) == [scan((("b",), True), (("c",), True), 'region = "x"')]
    assert shape(a | b) == [
        scan((("a",), True), (("c",), True)),
        scan((("c",), False), ((), True), 'region = "x"'),
    ]
    assert (a & b).filter is not None
    assert (plan('ds = "a"') | plan('ds = "b"')).scans == plan('ds in ("a", "b")').scans


def test_explain_reads_like_the_filter() -> None:
    p = plan('ds = "a" and hr >= 3 and hr < 7 and region like "e.*"')
    assert explain(p, KEYS) == "\n".join([
        'filter: ds = "a" and hr >= 3 and hr < 7 and region like "e.*"',
        "plan: 1 scan",
        '  scan [ds="a", hr=3] .. [ds="a", hr=7)  where region like "e.*"',
    ])  # fmt: skip
    p = plan('ds in ("a", "b") and hr = 1 and region = "x" or ds > "c"')
    assert explain(p, KEYS).splitlines()[1:] == [
        "plan: 2 gets, 1 scan",
        '  get [ds="a", hr=1, region="x"]',
        '  get [ds="b", hr=1, region="x"]',
        '  scan (ds="c"] .. [<end>]',
    ]
    p = plan('ds = "a" and hr = 2 and region > "m"')
    assert explain(p, KEYS).splitlines()[2] == '  scan (ds="a", hr=2, region="m"] .. [ds="a", hr=2]'
    p = plan(f'ds = "a" and hr = "{DEFAULT}" and region = "x"')
    assert explain(p, KEYS).splitlines()[2] == f'  get [ds="a", hr="{DEFAULT}", region="x"]'
    assert explain(plan('ds = "a" and ds = "b"'), KEYS).splitlines()[1] == (
        "plan: empty (no partition can match)"
    )
    assert explain(plan("hr > 5", [("hr", "int")]), [("hr", "int")]).splitlines()[2] == (
        "  scan (hr=5] .. [hr=<typed end>)"
    )
