"""Evaluating filters with HMS direct-SQL semantics, against a brute-force reference."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner.ast import And, Expr, Leaf, Literal, LiteralKind, Op, Or
from metastore_server.planner.errors import FilterError, UnknownKeyError
from metastore_server.planner.evaluate import (
    Domain,
    comparison_domain,
    compile_predicate,
    referenced_keys,
)
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.like import any_matcher, regex_matcher, sql_like_matcher
from metastore_server.planner.types import DEFAULT_PARTITION_NAME, KeyKind

DEFAULT = DEFAULT_PARTITION_NAME
KEYS = [("ds", "string"), ("hr", "int"), ("d", "date")]


def select(text: str, partitions: Sequence[Sequence[str]], *, like: str = "regex",
           keys: Sequence[tuple[str, str]] = KEYS) -> list[list[str]]:  # fmt: skip
    """The partitions a filter selects, in input order."""
    test = compile_predicate(parse_filter(text), keys, like=like)
    return [list(values) for values in partitions if test(values)]


# --- the Spark smoke table (reference/spark-calls.md) ------------------------------------------

SPARK_TABLE = [("ds", "string"), ("hr", "int")]
SPARK_PARTITIONS = [
    ["2024-01-01", "1"],
    ["2024-01-01", "2"],
    ["2024-01-01", "3"],
    ["2024-01-02", "1"],
    ["2024-01-03", "5"],
    ["2024-03-01", "7"],
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('ds = "2024-01-01" and hr = 1', [0]),
        ("hr = 2", [1]),
        ('ds > "2024-01-01" and ds <= "2024-01-03"', [3, 4]),
        ("hr >= 2 and hr < 5", [1, 2]),
        ("hr >= 1 and hr <= 2", [0, 1, 3]),
        ('(ds) in ("2024-01-02", "2024-01-03")', [3, 4]),
        ("(hr) in (1, 5)", [0, 3, 4]),
        ('ds like "2024-01.*"', [0, 1, 2, 3, 4]),
        ('ds like ".*-02"', [3]),
        ('ds like ".*01-0.*"', [0, 1, 2, 3, 4]),
        ('(ds = "2024-01-02" or hr = 3)', [2, 3]),
        ('ds != "2024-01-01"', [3, 4, 5]),
        ('ds = "2024-03-01" and hr = 7', [5]),
    ],
)
def test_spark_filters_select_what_spark_expects(text: str, expected: list[int]) -> None:
    chosen = select(text, SPARK_PARTITIONS, keys=SPARK_TABLE)
    assert chosen == [SPARK_PARTITIONS[i] for i in expected]


# --- ordering by key type ----------------------------------------------------------------------


def test_integral_keys_compare_numerically_string_keys_lexicographically() -> None:
    keys = [("s", "string"), ("n", "bigint")]
    rows = [["9", "9"], ["10", "10"], ["-1", "-1"], ["09", "09"]]
    assert select("n > 9", rows, keys=keys) == [["10", "10"]]
    assert select("s >= 9", rows, keys=keys) == [["9", "9"]]  # "10" < "9" as strings
    assert select("s < '9'", rows, keys=keys) == [["10", "10"], ["-1", "-1"], ["09", "09"]]
    assert select("n = 9", rows, keys=keys) == [["9", "9"], ["09", "09"]]
    assert select("n < 0", rows, keys=keys) == [["-1", "-1"]]
    assert select("n between 9 and 10", rows, keys=keys) == [["9", "9"], ["10", "10"], ["09", "09"]]


@pytest.mark.parametrize("hive_type", ["tinyint", "smallint", "int", "integer", "bigint", "INT"])
def test_every_integral_type_is_numeric(hive_type: str) -> None:
    keys = [("hr", hive_type)]
    assert select("hr >= 10", [["9"], ["10"], ["100"]], keys=keys) == [["10"], ["100"]]


@pytest.mark.parametrize("hive_type", ["varchar(10)", "char(2)", "decimal(5,2)", "timestamp"])
def test_other_types_compare_as_strings(hive_type: str) -> None:
    keys = [("k", hive_type)]
    assert select("k >= 10", [["9"], ["10"], ["100"]], keys=keys) == [["9"], ["10"], ["100"]]
    assert select("k < '2'", [["9"], ["10"], ["100"]], keys=keys) == [["10"], ["100"]]


def test_date_keys_compare_as_dates() -> None:
    keys = [("d", "date")]
    rows = [["2024-01-09"], ["2024-1-10"], ["2024-01-10"], ["2023-12-31"]]
    assert select("d > 2024-01-09", rows, keys=keys) == [["2024-1-10"], ["2024-01-10"]]
    assert select("d = '2024-01-10'", rows, keys=keys) == [["2024-1-10"], ["2024-01-10"]]
    assert select("d < DATE '2024-01-01'", rows, keys=keys) == [["2023-12-31"]]
    # a string literal that is not a date compares the raw text
    assert select("d < 'a'", rows, keys=keys) == rows


# --- the default partition ---------------------------------------------------------------------

ROWS_WITH_DEFAULT = [["a", "1", "2024-01-01"], [DEFAULT, DEFAULT, DEFAULT]]


@pytest.mark.parametrize(
    "text",
    ["hr = 1", "hr != 1", "hr <> 5", "hr > 0", "hr < 100", "hr >= -5", "hr between 0 and 9",
     "hr not between 5 and 9", "(hr) not in (7, 8)", "d != 2020-01-01", "d > '2000-01-01'",
     "d <= 2099-01-01", "hr like '.*'", "d like '.*'", "hr like '1'"],
)  # fmt: skip
def test_default_partition_never_matches_typed_comparisons(text: str) -> None:
    assert DEFAULT not in [row[1] for row in select(text, ROWS_WITH_DEFAULT)]


@pytest.mark.parametrize(
    ("text", "selected"),
    [
        (f"hr = '{DEFAULT}'", [1]),
        (f'hr = "{DEFAULT}"', [1]),
        (f"d = '{DEFAULT}'", [1]),
        (f"ds = '{DEFAULT}'", [1]),
        (f"hr != '{DEFAULT}'", [0]),
        ("ds != 'a'", [1]),
        ("ds like '.*'", [0, 1]),
        ("ds like '__HIVE.*'", [1]),
        ("ds > 'Z'", [0, 1]),
        ("hr = 'x'", []),
        ("hr != 'x'", [0, 1]),
        ("hr = '1' or hr > 0", [0]),
    ],
)
def test_string_comparisons_see_the_default_partition(text: str, selected: list[int]) -> None:
    assert select(text, ROWS_WITH_DEFAULT) == [ROWS_WITH_DEFAULT[i] for i in selected]


# --- literal kinds against key kinds -----------------------------------------------------------

S, N, D, T = Literal.string, Literal.integer, Literal.date, Literal.timestamp


@pytest.mark.parametrize(
    ("kind", "literal", "expected"),
    [
        (KeyKind.INTEGRAL, N(5), (Domain.INTEGRAL, 5)),
        (KeyKind.INTEGRAL, S("5"), (Domain.INTEGRAL, 5)),
        (KeyKind.INTEGRAL, S("-05"), (Domain.INTEGRAL, -5)),
        (KeyKind.INTEGRAL, S("5x"), (Domain.TEXT, "5x")),
        (KeyKind.INTEGRAL, D(dt.date(2024, 1, 2)), (Domain.TEXT, "2024-01-02")),
        (KeyKind.DATE, D(dt.date(2024, 1, 2)), (Domain.DATE, dt.date(2024, 1, 2))),
        (KeyKind.DATE, S("2024-1-2"), (Domain.DATE, dt.date(2024, 1, 2))),
        (KeyKind.DATE, S("2024-13-02"), (Domain.TEXT, "2024-13-02")),
        (KeyKind.DATE, N(20240102), (Domain.TEXT, "20240102")),
        (KeyKind.DATE, T("2024-01-02 00:00:00"), (Domain.TEXT, "2024-01-02 00:00:00")),
        (KeyKind.STRING, N(-7), (Domain.TEXT, "-7")),
        (KeyKind.STRING, D(dt.date(2024, 1, 2)), (Domain.TEXT, "2024-01-02")),
        (KeyKind.STRING, S("x"), (Domain.TEXT, "x")),
    ],
)
def test_comparison_domain(kind: KeyKind, literal: Literal, expected: tuple) -> None:
    assert comparison_domain(kind, literal) == expected


def test_string_key_with_int_and_date_literals_compares_text() -> None:
    rows = [["7", "0", "2024-01-01"], ["2024-01-01", "0", "2024-01-01"], ["10", "0", "2024-01-01"]]
    assert select("ds = 7", rows) == [rows[0]]
    assert select("ds = 2024-01-01", rows) == [rows[1]]
    assert select("ds < 7", rows) == [rows[1], rows[2]]  # "2024-01-01" < "7", "10" < "7"


def test_integral_key_with_unparseable_raw_value_and_text_literal() -> None:
    keys = [("hr", "int")]
    rows = [["1"], ["x1"], [DEFAULT]]
    assert select("hr = 'x1'", rows, keys=keys) == [["x1"]]
    assert select("hr > 0", rows, keys=keys) == [["1"]]
    assert select("hr != 1", rows, keys=keys) == []


# --- keys --------------------------------------------------------------------------------------


def test_keys_match_case_insensitively() -> None:
    keys = [("Ds", "string"), ("HR", "int")]
    rows = [["a", "1"], ["b", "2"]]
    assert select("ds = 'a' or hR = 2", rows, keys=keys) == rows


def test_unknown_key() -> None:
    with pytest.raises(UnknownKeyError) as caught:
        compile_predicate(parse_filter("ds = 'a' and Region = 'x'"), KEYS)
    assert str(caught.value) == "Specified key <Region> is not a partitioning key for the table"
    assert caught.value.key == "Region"
    with pytest.raises(UnknownKeyError):  # inside an IN list (the set-lookup path) too
        compile_predicate(parse_filter("(zz) in (1, 2)"), KEYS)
    with pytest.raises(UnknownKeyError):
        compile_predicate(parse_filter("(zz) not in (1, 2)"), KEYS)


def test_no_filter_matches_everything() -> None:
    test = compile_predicate(None, KEYS)
    assert test(["a", "1", "2024-01-01"]) and test([DEFAULT, DEFAULT, DEFAULT])


def test_referenced_keys() -> None:
    assert referenced_keys(parse_filter("DS = 'a' and (hr = 1 or Hr = 2)")) == {"ds", "hr"}
    assert referenced_keys(None) == frozenset()


# --- LIKE --------------------------------------------------------------------------------------


def test_like_regex_matches_the_whole_value() -> None:
    keys = [("ds", "string")]
    rows = [["2024-01-01"], ["x2024-01-01"], ["2024-01"]]
    assert select("ds like '2024-01'", rows, keys=keys) == [["2024-01"]]
    assert select("ds like '2024-01.*'", rows, keys=keys) == [["2024-01-01"], ["2024-01"]]
    assert select("ds like '.*-01'", rows, keys=keys) == rows
    assert select("ds like '2024-0[12]-01'", rows, keys=keys) == [["2024-01-01"]]
    assert select("ds like '2024%'", rows, keys=keys) == []  # % is no wildcard in a regex


def test_like_regex_java_spellings() -> None:
    assert regex_matcher(r"\Qa.b\E.*")("a.bc") and not regex_matcher(r"\Qa.b\E.*")("axbc")
    assert regex_matcher(r"\Qa.b")("a.b")
    assert regex_matcher(r"(?<year>\d{4})-.*\z")("2024-01")
    assert regex_matcher(r"a\Z")("a\n") and not regex_matcher(r"a\z")("a\n")
    assert regex_matcher(r"\p{Alpha}+[\p{Digit}]")("ab1")
    keys = [("ds", "string")]
    assert select(r"ds like '\Q2024.01\E.*'", [["2024.01x"], ["2024-01x"]], keys=keys) == [
        ["2024.01x"]
    ]


@pytest.mark.parametrize("pattern", ["(", "[a-", "*a", r"\p{Nope}+"])
def test_invalid_regex_is_a_filter_error(pattern: str) -> None:
    with pytest.raises(FilterError, match="Invalid LIKE pattern"):
        compile_predicate(parse_filter(f"ds like '{pattern}'"), KEYS)


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [(r"(a)\1", "back-references"), ("(?=a).*", "look-ahead"), ("(?<!a)b", "look-behind"),
     ("a*+", "possessive"), ("(?>a)", "atomic group"), ("[a-z&&[^b]]", "intersection")],
)  # fmt: skip
def test_constructs_that_need_backtracking_are_refused(pattern: str, construct: str) -> None:
    with pytest.raises(FilterError, match=f"Invalid LIKE pattern.*{construct}"):
        compile_predicate(parse_filter(f"ds like '{pattern}'"), KEYS)


def test_a_regex_bomb_matches_in_linear_time() -> None:
    """(a+)+b against a long run of a: exponential in a backtracking engine, linear here (a
    result at all is the proof: a backtracking engine would not finish)."""
    test = compile_predicate(parse_filter("ds like '(a+)+b'"), KEYS)
    assert not test(["a" * 100_000, "1", "2024-01-01"])
    assert test(["a" * 1000 + "b", "1", "2024-01-01"])


def test_like_sql() -> None:
    keys = [("ds", "string")]
    rows = [["2024-01-01"], ["2024-02-01"], ["2024_01"], ["a%b"], ["line\nbreak"]]
    assert select("ds like '2024-01%'", rows, keys=keys, like="sql") == [["2024-01-01"]]
    assert select("ds like '%-01'", rows, keys=keys, like="sql") == rows[:2]
    assert select("ds like '2024_01'", rows, keys=keys, like="sql") == [["2024_01"]]
    assert select(r"ds like '2024\_01'", rows, keys=keys, like="sql") == [["2024_01"]]
    assert select(r"ds like '%\%%'", rows, keys=keys, like="sql") == [["a%b"]]
    assert select("ds like 'line%'", rows, keys=keys, like="sql") == [["line\nbreak"]]
    assert select("ds like '2024-01.*'", rows, keys=keys, like="sql") == []
    assert select("ds like '(['", [["(["]], keys=keys, like="sql") == [["(["]]


def test_like_dialect_is_checked() -> None:
    with pytest.raises(ValueError):
        compile_predicate(None, KEYS, like="glob")


def _sql_like_reference(pattern: str, value: str) -> bool:
    """SQL LIKE by dynamic programming over the pattern's elements."""
    elements: list[str | None] = []  # None: %, "": _, else the literal character
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            elements.append(pattern[i + 1] if i + 1 < len(pattern) else "\\")
            i += 2
            continue
        elements.append(None if char == "%" else "" if char == "_" else char)
        i += 1
    reachable = {0}
    for element in elements:
        if element is None:
            start = min(reachable) if reachable else len(value) + 1
            reachable = set(range(start, len(value) + 1))
        elif element == "":
            reachable = {p + 1 for p in reachable if p < len(value)}
        else:
            reachable = {p + 1 for p in reachable if p < len(value) and value[p] == element}
    return len(value) in reachable


@given(st.text(alphabet="ab%_\\.", max_size=8), st.text(alphabet="ab%_\\.\n", max_size=8))
@settings(max_examples=400, deadline=None)
def test_sql_like_against_reference(pattern: str, value: str) -> None:
    assert sql_like_matcher(pattern)(value) == _sql_like_reference(pattern, value)


# --- brute-force reference on random partitions and filters ------------------------------------

REF_KEYS = [("s", "string"), ("n", "int"), ("d", "date"), ("v", "varchar(5)")]
_RAW = {
    "s": ["", "a", "B", "10", "9", "2024-01-01", DEFAULT],
    "n": ["0", "1", "9", "10", "-3", "007", " 5", DEFAULT, "x"],
    "d": ["2024-01-01", "2024-1-2", "2023-12-31", "2024-02-30", DEFAULT],
    "v": ["a", "10", DEFAULT],
}
_REF_LITERALS = st.one_of(
    st.sampled_from(["1", "9", "10", "a", "2024-01-01", "2024-1-2", DEFAULT, "007", "x"]).map(S),
    st.sampled_from([-3, 0, 1, 5, 7, 9, 10]).map(N),
    st.sampled_from([dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2023, 12, 31)]).map(D),
    st.just(T("2024-01-01 00:00:00")),
)
_REF_PATTERNS = st.sampled_from([".*", "1.*", "a", "2024-.*", "[0-9]+", "__HIVE.*", ".*1"]).map(S)


@st.composite
def _ref_leaves(draw: st.DrawFn) -> Leaf:
    key = draw(st.sampled_from(["s", "n", "d", "v", "S", "N", "D"]))
    op = draw(st.sampled_from(list(Op)))
    value = draw(_REF_PATTERNS if op is Op.LIKE else _REF_LITERALS)
    return Leaf(key, op, value)


_REF_TREES = st.recursive(
    _ref_leaves(),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=5).map(lambda xs: And(tuple(xs))),
        st.lists(inner, min_size=2, max_size=5).map(lambda xs: Or(tuple(xs))),
    ),
    max_leaves=12,
)
_REF_ROWS = st.lists(
    st.tuples(*(st.sampled_from(_RAW[name]) for name, _ in REF_KEYS)).map(list),
    min_size=1,
    max_size=12,
)


def _ref_int(raw: str) -> int | None:
    stripped = raw.strip()
    if not re.fullmatch(r"[-+]?\d+", stripped) or not -(2**63) <= int(stripped) < 2**63:
        return None
    return int(stripped)


def _ref_date(raw: str) -> dt.date | None:
    stripped = raw.strip()
    if not re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", stripped):
        return None
    try:
        return dt.date(*map(int, stripped.split("-")))
    except ValueError:
        return None


_REF_OPS = {
    Op.EQ: lambda a, b: a == b, Op.NE: lambda a, b: a != b, Op.LT: lambda a, b: a < b,
    Op.LE: lambda a, b: a <= b, Op.GT: lambda a, b: a > b, Op.GE: lambda a, b: a >= b,
}  # fmt: skip


def _reference(expr: Expr, row: list[str]) -> bool:
    """The brute-force meaning of a filter on one partition, rule by rule."""
    if isinstance(expr, And):
        return all(_reference(child, row) for child in expr.children)
    if isinstance(expr, Or):
        return any(_reference(child, row) for child in expr.children)
    index = [name for name, _ in REF_KEYS].index(expr.key.lower())
    hive_type, raw, literal = REF_KEYS[index][1], row[index], expr.value
    parse = {"int": _ref_int, "date": _ref_date}.get(hive_type)
    if expr.op is Op.LIKE:
        if parse is not None and parse(raw) is None:
            return False
        return re.fullmatch(str(literal.value), raw) is not None
    typed_operand = None
    if hive_type == "int" and literal.kind is LiteralKind.INTEGER:
        typed_operand = literal.value
    elif hive_type == "int" and literal.kind is LiteralKind.STRING:
        typed_operand = _ref_int(str(literal.value))
    elif hive_type == "date" and literal.kind is LiteralKind.DATE:
        typed_operand = literal.value
    elif hive_type == "date" and literal.kind is LiteralKind.STRING:
        typed_operand = _ref_date(str(literal.value))
    if typed_operand is None or parse is None:
        text = literal.value.isoformat() if literal.kind is LiteralKind.DATE else str(literal.value)
        return _REF_OPS[expr.op](raw, text)
    value = parse(raw)
    return value is not None and _REF_OPS[expr.op](value, typed_operand)


@given(_REF_TREES, _REF_ROWS)
@settings(max_examples=400, deadline=None)
def test_evaluator_matches_brute_force_reference(tree: Expr, rows: list[list[str]]) -> None:
    test = compile_predicate(tree, REF_KEYS)
    assert [test(row) for row in rows] == [_reference(tree, row) for row in rows]


@given(
    st.sampled_from(["s", "n", "d"]),
    st.lists(_REF_LITERALS, min_size=1, max_size=6),
    _REF_ROWS,
)
@settings(max_examples=200, deadline=None)
def test_in_lists_match_reference(key: str, values: list[Literal], rows: list[list[str]]) -> None:
    for negated in (False, True):
        text = f"({key}) {'not ' if negated else ''}in ({', '.join(map(str, values))})"
        tree = parse_filter(text)
        assert tree is not None
        test = compile_predicate(tree, REF_KEYS)
        assert [test(row) for row in rows] == [_reference(tree, row) for row in rows]


def test_ten_thousand_term_or_evaluates() -> None:
    tree = parse_filter(" or ".join(f"n = {i}" for i in range(10_000)))
    test = compile_predicate(tree, REF_KEYS)
    assert test(["", "9999", "", ""]) and test(["", "007", "", ""])
    assert not test(["", "10000", "", ""]) and not test(["", DEFAULT, "", ""])


def test_deeply_nested_filter_compiles() -> None:
    levels = 50
    text = "n = 1 and (s = 'a' or " * levels + "d = 2024-01-01" + ")" * levels
    test = compile_predicate(parse_filter(text), REF_KEYS)
    assert test(["a", "1", "2024-01-01", ""])
    assert not test(["a", "2", "2024-01-01", ""])


_LIKE_PATTERNS = st.lists(
    st.sampled_from(["a.*", ".*b", "a_%", "%c%", "x", ".", "a\\.b", "(a|b)c", "\\Qa.b\\E", "(x)\\1",
                     "%", "_b", "a\\%", "[ab]+", "(?i)ab"]),
    min_size=2, max_size=6,
)  # fmt: skip
_LIKE_VALUES = st.lists(st.text(alphabet="abcx.%_\\A", max_size=5), min_size=1, max_size=12)


@given(_LIKE_PATTERNS, _LIKE_VALUES, st.sampled_from(["regex", "sql"]))
@settings(max_examples=300, deadline=None)
def test_likes_under_one_or_match_as_each_alone(
    patterns: list[str], values: list[str], like: str
) -> None:
    """LIKE leaves on one key under an OR are joined into one pattern where that keeps every
    meaning (no groups, no inline flags): the answer is the OR of each leaf alone."""
    keys = [("s", "string")]
    quoted = [p.replace("\\", "\\\\").replace("'", "\\'") for p in patterns]
    try:
        joined = compile_predicate(
            parse_filter(" or ".join(f"s like '{p}'" for p in quoted)), keys, like=like
        )
    except FilterError:
        return  # an invalid pattern is refused either way
    alone = [compile_predicate(parse_filter(f"s like '{p}'"), keys, like=like) for p in quoted]
    for value in values:
        assert joined([value]) == any(test([value]) for test in alone), (patterns, value)


def test_ten_thousand_likes_under_one_or_evaluate_as_one_pattern() -> None:
    tree = parse_filter(" or ".join(f"s like 'v{i}.*'" for i in range(10_000)))
    test = compile_predicate(tree, REF_KEYS)
    assert test(["v9999x", "", "", ""]) and test(["v0", "", "", ""])
    assert not test(["w1", "", "", ""])
    assert any_matcher([f"v{i}.*" for i in range(10_000)], "regex") is not None
    assert any_matcher(["(a)\\1", "b"], "regex") is None  # a back-reference: refused
    either = any_matcher(["(?i)x.*", "y"], "regex")
    assert either is not None and either("Xa") and not either("Y")  # flags stay inside


@st.composite
def _indexed_ors(draw: st.DrawFn) -> Or:
    """ORs of at least 8 ANDs, most of which fix one key by ``=`` (indexed by that key)."""
    key = draw(st.sampled_from(["s", "n", "d", "v", "N"]))
    branches = []
    for _ in range(draw(st.integers(8, 14))):
        rest = draw(st.lists(_ref_leaves(), min_size=1, max_size=2))
        if draw(st.booleans()) or len(branches) < 8:
            rest.insert(draw(st.integers(0, len(rest))), Leaf(key, Op.EQ, draw(_REF_LITERALS)))
        branches.append(And(tuple(rest)) if len(rest) > 1 else rest[0])
    return Or(tuple(branches))


@given(_indexed_ors(), _REF_ROWS)
@settings(max_examples=300, deadline=None)
def test_or_branches_indexed_by_a_fixed_key_match_reference(tree: Or, rows) -> None:
    test = compile_predicate(tree, REF_KEYS)
    assert [test(row) for row in rows] == [_reference(tree, row) for row in rows]


def test_ten_thousand_partition_specs_evaluate() -> None:
    """Spark's many partition specs, indexed by their ``n`` value."""
    tree = parse_filter(" or ".join(f"(s like 'a{i}.*' and n = {i})" for i in range(10_000)))
    test = compile_predicate(tree, REF_KEYS)
    for i in range(0, 10_000, 7):
        assert test([f"a{i}x", str(i), "", ""])
        assert not test([f"a{i}x", str(i + 1), "", ""])
    assert not test(["a1x", DEFAULT, "", ""])
