"""The HMS partition filter grammar: every construct, the errors, printing, and the guards."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner.ast import (
    And,
    Expr,
    Leaf,
    Literal,
    LiteralKind,
    Op,
    Or,
    conjunction,
    depth,
    disjunction,
    format_key,
    iter_leaves,
    quote_string,
)
from metastore_server.planner.errors import FilterError, FilterSyntaxError, UnsupportedFilterError
from metastore_server.planner.grammar import CONDITION, parse_filter
from metastore_server.planner.precedence import MAX_DEPTH

S, N, D = Literal.string, Literal.integer, Literal.date


def leaf(key: str, op: Op, value: Literal) -> Leaf:
    return Leaf(key, op, value)


# --- the filter strings Spark sends (reference/spark-calls.md) and other real clients ----------

SPARK_FILTERS = {
    'ds = "2024-01-01" and hr = 1': And(
        (leaf("ds", Op.EQ, S("2024-01-01")), leaf("hr", Op.EQ, N(1)))
    ),
    "hr = 2": leaf("hr", Op.EQ, N(2)),
    'ds > "2024-01-01" and ds <= "2024-01-03"': And(
        (leaf("ds", Op.GT, S("2024-01-01")), leaf("ds", Op.LE, S("2024-01-03")))
    ),
    "hr >= 2 and hr < 5": And((leaf("hr", Op.GE, N(2)), leaf("hr", Op.LT, N(5)))),
    "hr >= 1 and hr <= 2": And((leaf("hr", Op.GE, N(1)), leaf("hr", Op.LE, N(2)))),
    '(ds) in ("2024-01-02", "2024-01-03")': Or(
        (leaf("ds", Op.EQ, S("2024-01-02")), leaf("ds", Op.EQ, S("2024-01-03")))
    ),
    "(hr) in (1, 5)": Or((leaf("hr", Op.EQ, N(1)), leaf("hr", Op.EQ, N(5)))),
    'ds like "2024-01.*"': leaf("ds", Op.LIKE, S("2024-01.*")),
    'ds like ".*-02"': leaf("ds", Op.LIKE, S(".*-02")),
    'ds like ".*01-0.*"': leaf("ds", Op.LIKE, S(".*01-0.*")),
    '(ds = "2024-01-02" or hr = 3)': Or(
        (leaf("ds", Op.EQ, S("2024-01-02")), leaf("hr", Op.EQ, N(3)))
    ),
    'ds != "2024-01-01"': leaf("ds", Op.NE, S("2024-01-01")),
    'ds = "2024-03-01" and hr = 7': And(
        (leaf("ds", Op.EQ, S("2024-03-01")), leaf("hr", Op.EQ, N(7)))
    ),
    # HiveShim's own example, and its other shapes (NOT IN, large InSet, a value with ")
    'ds = "2024-01-01" and (hr = 1 or hr = 2) and name like "ab.*"': And(
        (
            leaf("ds", Op.EQ, S("2024-01-01")),
            Or((leaf("hr", Op.EQ, N(1)), leaf("hr", Op.EQ, N(2)))),
            leaf("name", Op.LIKE, S("ab.*")),
        )
    ),
    "(hr != 1 and hr != 2)": And((leaf("hr", Op.NE, N(1)), leaf("hr", Op.NE, N(2)))),
    "(hr >= 0 and hr <= 2000)": And((leaf("hr", Op.GE, N(0)), leaf("hr", Op.LE, N(2000)))),
    "name = 'say \"hi\"'": leaf("name", Op.EQ, S('say "hi"')),
    'ds like "%-02"': leaf("ds", Op.LIKE, S("%-02")),
}

OTHER_CLIENT_FILTERS = {
    # Apache Lens
    "dt='2015-01-01' and region='us'": And(
        (leaf("dt", Op.EQ, S("2015-01-01")), leaf("region", Op.EQ, S("us")))
    ),
    # Hive's expression display strings (get_partitions_by_expr), MSCK's partition expression
    "(ds = '2008-04-08')": leaf("ds", Op.EQ, S("2008-04-08")),
    "(c) IN ('a', 'b')": Or((leaf("c", Op.EQ, S("a")), leaf("c", Op.EQ, S("b")))),
    "(k1='v1' AND k2='v2') OR (k1='v3' AND k2='v4')": Or(
        (
            And((leaf("k1", Op.EQ, S("v1")), leaf("k2", Op.EQ, S("v2")))),
            And((leaf("k1", Op.EQ, S("v3")), leaf("k2", Op.EQ, S("v4")))),
        )
    ),
}


@pytest.mark.parametrize("text", sorted(SPARK_FILTERS))
def test_spark_filter_strings(text: str) -> None:
    assert parse_filter(text) == SPARK_FILTERS[text]


@pytest.mark.parametrize("text", sorted(OTHER_CLIENT_FILTERS))
def test_other_client_filter_strings(text: str) -> None:
    assert parse_filter(text) == OTHER_CLIENT_FILTERS[text]


def test_empty_filter_is_none() -> None:
    assert parse_filter("") is None


@pytest.mark.parametrize("text", ["   ", "\t\n"])
def test_blank_filter_is_a_syntax_error(text: str) -> None:
    with pytest.raises(FilterSyntaxError, match="^Error parsing partition filter"):
        parse_filter(text)


# --- constructs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("symbol", "op"),
    [("=", Op.EQ), ("==", Op.EQ), ("!=", Op.NE), ("<>", Op.NE), ("<", Op.LT), ("<=", Op.LE),
     (">", Op.GT), (">=", Op.GE), ("like", Op.LIKE), ("LIKE", Op.LIKE), ("LiKe", Op.LIKE)],
)  # fmt: skip
@pytest.mark.parametrize("spacing", [" ", "", "  \t"])
def test_operators(symbol: str, op: Op, spacing: str) -> None:
    if op is Op.LIKE and not spacing:
        spacing = " "
    text = f"k{spacing}{symbol}{spacing}'v'"
    assert parse_filter(text) == leaf("k", op, S("v"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5 < hr", leaf("hr", Op.GT, N(5))),
        ("5 <= hr", leaf("hr", Op.GE, N(5))),
        ("5 > hr", leaf("hr", Op.LT, N(5))),
        ("5 >= hr", leaf("hr", Op.LE, N(5))),
        ("5 = hr", leaf("hr", Op.EQ, N(5))),
        ("5 != hr", leaf("hr", Op.NE, N(5))),
        ("'x' <> ds", leaf("ds", Op.NE, S("x"))),
        ('"2024-01-01" < ds', leaf("ds", Op.GT, S("2024-01-01"))),
        ("2024-01-01 >= ds", leaf("ds", Op.LE, D(dt.date(2024, 1, 1)))),
        ("-7 < hr and hr < 7", And((leaf("hr", Op.GT, N(-7)), leaf("hr", Op.LT, N(7))))),
    ],
)
def test_reversed_operands_flip_the_operator(text: str, expected: Expr) -> None:
    assert parse_filter(text) == expected


@pytest.mark.parametrize("text", ["'a.*' like ds", '"x" LIKE ds', "5 like hr"])
def test_reversed_like_is_refused(text: str) -> None:
    with pytest.raises(UnsupportedFilterError) as caught:
        parse_filter(text)
    assert isinstance(caught.value, FilterError)
    assert "LIKE" in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "ds = 'a' AND hr = 1 OR hr = 2",
        "ds = 'a' and hr = 1 or hr = 2",
        "ds = 'a' aNd hr = 1 oR hr = 2",
        "DS = 'a' And HR = 1 Or HR = 2",
    ],
)
def test_keywords_are_case_insensitive_and_keys_keep_their_case(text: str) -> None:
    tree = parse_filter(text)
    assert isinstance(tree, Or)
    first = tree.children[0]
    assert isinstance(first, And)
    assert [leaf_.key.lower() for leaf_ in iter_leaves(tree)] == ["ds", "hr", "hr"]
    assert {leaf_.key for leaf_ in iter_leaves(tree)} <= {"ds", "hr", "DS", "HR"}


def test_and_binds_tighter_than_or() -> None:
    a, b, c, d = (leaf(k, Op.EQ, N(1)) for k in "abcd")
    assert parse_filter("a = 1 or b = 1 and c = 1 or d = 1") == Or((a, And((b, c)), d))
    assert parse_filter("(a = 1 or b = 1) and c = 1") == And((Or((a, b)), c))
    assert parse_filter("a = 1 and (b = 1 or c = 1 and d = 1)") == And((a, Or((b, And((c, d))))))


def test_redundant_parentheses_and_same_kind_nesting_flatten() -> None:
    a, b, c = (leaf(k, Op.EQ, N(1)) for k in "abc")
    assert parse_filter("(((a = 1)))") == a
    assert parse_filter("((a = 1 or b = 1) or c = 1)") == Or((a, b, c))
    assert parse_filter("a = 1 and (b = 1 and (c = 1))") == And((a, b, c))


@pytest.mark.parametrize("quote", ["'", '"'])
def test_both_quote_styles_keep_text_and_escapes(quote: str) -> None:
    other = '"' if quote == "'" else "'"
    assert parse_filter(f"k = {quote}a b{quote}") == leaf("k", Op.EQ, S("a b"))
    assert parse_filter(f"k = {quote}{quote}") == leaf("k", Op.EQ, S(""))
    assert parse_filter(f"k = {quote}it{other}s{quote}") == leaf("k", Op.EQ, S(f"it{other}s"))
    # HMS strips the quotes only: backslash escapes stay as written
    escaped = f"a\\{quote}b\\\\c\\n"
    assert parse_filter(f"k = {quote}{escaped}{quote}") == leaf("k", Op.EQ, S(escaped))
    assert parse_filter(f"k = {quote}tab\there{quote}") == leaf("k", Op.EQ, S("tab\there"))


def test_keywords_inside_strings_are_text() -> None:
    assert parse_filter("k = 'a and b or (c)'") == leaf("k", Op.EQ, S("a and b or (c)"))


@pytest.mark.parametrize(
    ("text", "value"),
    [("hr = 0", 0), ("hr = -1", -1), ("hr=-42", -42), ("hr = 007", 7),
     ("hr = 9223372036854775807", 2**63 - 1), ("hr = -9223372036854775808", -(2**63))],
)  # fmt: skip
def test_integer_literals(text: str, value: int) -> None:
    assert parse_filter(text) == leaf("hr", Op.EQ, N(value))


@pytest.mark.parametrize(
    "text",
    ["ds = 2024-02-29", "ds = DATE '2024-02-29'", 'ds = date "2024-02-29"', "ds=DaTe'2024-02-29'"],
)
def test_date_literals(text: str) -> None:
    assert parse_filter(text) == leaf("ds", Op.EQ, D(dt.date(2024, 2, 29)))


def test_quoted_date_is_a_string() -> None:
    assert parse_filter("ds = '2024-02-29'") == leaf("ds", Op.EQ, S("2024-02-29"))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("ts = 2024-01-01 10:20:30", "2024-01-01 10:20:30"),
        ("ts = TIMESTAMP '2024-01-01 10:20:30.5'", "2024-01-01 10:20:30.5"),
        ('ts < timestamp "2024-01-01 00:00:00"', "2024-01-01 00:00:00"),
    ],
)
def test_timestamp_literals(text: str, value: str) -> None:
    tree = parse_filter(text)
    assert isinstance(tree, Leaf)
    assert tree.value == Literal.timestamp(value)
    assert tree.value.kind is LiteralKind.TIMESTAMP


def test_between_and_not_between() -> None:
    assert parse_filter("hr BETWEEN 1 AND 5") == And(
        (leaf("hr", Op.GE, N(1)), leaf("hr", Op.LE, N(5)))
    )
    assert parse_filter("hr not between 1 and 5") == Or(
        (leaf("hr", Op.LT, N(1)), leaf("hr", Op.GT, N(5)))
    )
    assert parse_filter("ds between 2024-01-01 and '2024-12-31' and hr = 1") == And(
        (
            leaf("ds", Op.GE, D(dt.date(2024, 1, 1))),
            leaf("ds", Op.LE, S("2024-12-31")),
            leaf("hr", Op.EQ, N(1)),
        )
    )
    assert parse_filter("a = 1 or hr not between 1 and 5") == Or(
        (leaf("a", Op.EQ, N(1)), leaf("hr", Op.LT, N(1)), leaf("hr", Op.GT, N(5)))
    )


@pytest.mark.parametrize("key_form", ["(hr)", "hr", "( hr )", "(`hr`)"])
def test_in_and_not_in(key_form: str) -> None:
    assert parse_filter(f"{key_form} IN (1, 2, 3)") == Or(
        tuple(leaf("hr", Op.EQ, N(v)) for v in (1, 2, 3))
    )
    assert parse_filter(f"{key_form} not in (1, 2)") == And(
        (leaf("hr", Op.NE, N(1)), leaf("hr", Op.NE, N(2)))
    )
    assert parse_filter(f"{key_form} in (7)") == leaf("hr", Op.EQ, N(7))
    assert parse_filter(f"{key_form} NOT IN (7)") == leaf("hr", Op.NE, N(7))


def test_in_inside_parentheses_and_combined() -> None:
    assert parse_filter("((hr) in (1, 2)) and ds = 'x'") == And(
        (Or((leaf("hr", Op.EQ, N(1)), leaf("hr", Op.EQ, N(2)))), leaf("ds", Op.EQ, S("x")))
    )


def test_struct_in() -> None:
    expected = Or(
        (
            And((leaf("a", Op.EQ, N(1)), leaf("b", Op.EQ, S("x")))),
            And((leaf("a", Op.EQ, N(2)), leaf("b", Op.EQ, S("y")))),
        )
    )
    assert (
        parse_filter("(STRUCT(a, b)) IN (CONST STRUCT(1, 'x'), CONST STRUCT(2, 'y'))") == expected
    )
    assert parse_filter("(struct(a,b)) in (const struct(1,'x'),const struct(2,'y'))") == expected
    assert parse_filter("struct(a, b) in (struct(1, 'x'), struct(2, 'y'))") == expected
    assert parse_filter(
        "(struct(a, b)) not in (const struct(1, 'x'), const struct(2, 'y'))"
    ) == And(
        (
            Or((leaf("a", Op.NE, N(1)), leaf("b", Op.NE, S("x")))),
            Or((leaf("a", Op.NE, N(2)), leaf("b", Op.NE, S("y")))),
        )
    )
    assert parse_filter("(struct(a, b)) in (const struct(1, 'x'))") == And(
        (leaf("a", Op.EQ, N(1)), leaf("b", Op.EQ, S("x")))
    )


def test_identifiers() -> None:
    assert parse_filter("_x9 = 1") == leaf("_x9", Op.EQ, N(1))
    assert parse_filter("9x = 1") == leaf("9x", Op.EQ, N(1))
    assert parse_filter("`my key` = 1") == leaf("my key", Op.EQ, N(1))
    assert parse_filter("`a``b` = 1") == leaf("a`b", Op.EQ, N(1))
    assert parse_filter("`and` = 1") == leaf("and", Op.EQ, N(1))
    assert parse_filter("android = 1 or order = 2") == Or(
        (leaf("android", Op.EQ, N(1)), leaf("order", Op.EQ, N(2)))
    )
    # words that are keywords only inside typed literals and STRUCT IN stay usable as keys
    for word in ("date", "timestamp", "struct", "const", "DATE"):
        assert parse_filter(f"{word} = '2024-01-01'") == leaf(word, Op.EQ, S("2024-01-01"))
    assert parse_filter("date in ('a')") == leaf("date", Op.EQ, S("a"))


# --- errors ------------------------------------------------------------------------------------

SYNTAX_ERRORS = {
    "ds = 'abc": "unterminated string literal",
    'ds = "abc': "unterminated string literal",
    "`ds = 1": "unterminated back-quoted key",
    "hr =": "expected literal",
    "hr = 1 and": "expected a condition",
    "and hr = 1": "expected a condition",
    "hr = 1 or or hr = 2": "expected a condition",
    "()": "expected a condition",
    "hr = 1 and ()": "expected a condition",
    "hr <=> 1": "Unsupported comparison operator",
    "ds = 2020-13-45": "invalid date literal",
    "ds = 2021-02-29": "invalid date literal",
    "ds = DATE '2020-1-1'": "invalid date literal",
    "ts = 2020-01-01 24:00:00": "invalid timestamp literal",
    "hr = 9223372036854775808": "out of the 64-bit range",
    "(hr = 1": "missing ')'",
    "hr = 1)": "without a matching '('",
    "hr = 1 hr = 2": "expected AND, OR or ')'",
    "(hr) in ()": "expected literal",
    "(hr) in (1, 2": "expected ')'",
    "hr between 1 or 2": "expected AND",
    "(struct(a, b)) in (const struct(1))": "STRUCT IN names 2 keys",
    "not hr = 1": "expected a condition",
    "hr is null": "expected",
    "hr = 1.5": "expected literal",
    "hr = x": "expected literal",
    "(hr) = 1": "expected IN",
    "f(hr) = 1": "expected",
    "hr = 1 ;": "expected AND, OR or ')'",
    "and = 1": "expected a condition",
}


@pytest.mark.parametrize("text", sorted(SYNTAX_ERRORS))
def test_syntax_errors(text: str) -> None:
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter(text)
    message = str(caught.value)
    assert message.startswith("Error parsing partition filter")
    assert SYNTAX_ERRORS[text] in message
    assert caught.value.message == message


def test_syntax_error_points_at_the_problem() -> None:
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("hr = 1 and ds = ")
    assert caught.value.position == 16
    assert "at position 16" in str(caught.value)
    assert "found end of filter" in str(caught.value)
    with pytest.raises(FilterSyntaxError) as caught:
        parse_filter("hr = 1 and ds = 2020-13-45")
    assert caught.value.position == 16
    assert "'2020-13-45'" in str(caught.value)


# --- printing and the round trip ---------------------------------------------------------------


def test_printing() -> None:
    tree = parse_filter("(ds) in ('a', \"b'c\") and not_x between 1 and 2 or d < 2024-01-01")
    assert tree is not None
    assert tree.to_filter_string() == (
        '((ds = "a" or ds = "b\'c") and not_x >= 1 and not_x <= 2) or d < 2024-01-01'
    )
    assert str(tree) == tree.to_filter_string()
    assert str(leaf("my key", Op.LIKE, S("a.*"))) == '`my key` like "a.*"'
    assert str(leaf("t", Op.GE, Literal.timestamp("2024-01-01 00:00:00"))) == (
        "t >= TIMESTAMP '2024-01-01 00:00:00'"
    )


def test_quote_string_and_format_key() -> None:
    assert quote_string("plain") == '"plain"'
    assert quote_string('say "hi"') == "'say \"hi\"'"
    assert quote_string('esc \\" ok') == '"esc \\" ok"'
    with pytest.raises(ValueError):
        quote_string("both \" and '")
    with pytest.raises(ValueError):
        quote_string("trailing \\")
    assert format_key("ds") == "ds"
    assert format_key("OR") == "`OR`"
    assert format_key("a-b`c") == "`a-b``c`"


def test_tree_invariants() -> None:
    a, b = leaf("a", Op.EQ, N(1)), leaf("b", Op.EQ, N(1))
    with pytest.raises(ValueError):
        And((a,))
    with pytest.raises(TypeError):
        Or((a, "b = 1"))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Leaf("", Op.EQ, N(1))
    with pytest.raises(ValueError):
        Literal(LiteralKind.INTEGER, True)
    with pytest.raises(ValueError):
        Literal(LiteralKind.DATE, dt.datetime(2024, 1, 1))
    with pytest.raises(ValueError):
        Literal.timestamp("2024-01-01")
    assert And([a, And((b, a))]).children == (a, b, a)  # type: ignore[arg-type]
    assert conjunction([a]) is a and disjunction([a, b]) == Or((a, b))
    assert Op.LT.flipped() is Op.GT and Op.EQ.flipped() is Op.EQ
    assert Op.LE.negated() is Op.GT and Op.NE.negated() is Op.EQ
    with pytest.raises(ValueError):
        Op.LIKE.flipped()
    assert hash(parse_filter("a = 1 or b = 1")) == hash(Or((a, b)))


def _writable(text: str) -> bool:
    try:
        quote_string(text)
    except ValueError:
        return False
    return True


_KEYS = st.one_of(
    st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True),
    st.sampled_from(["and", "OR", "Not", "in", "BETWEEN", "like", "date", "struct", "timestamp"]),
    st.text(min_size=1, max_size=6),
)
_LITERALS = st.one_of(
    st.text(alphabet=st.sampled_from("ab Z09'\"\\%_.*-\t\n(é)"), max_size=8)
    .filter(_writable)
    .map(Literal.string),
    st.integers(-(2**63), 2**63 - 1).map(Literal.integer),
    st.dates().map(Literal.date),
    st.datetimes().map(lambda t: Literal.timestamp(t.isoformat(" "))),
)
_LEAVES = st.builds(Leaf, _KEYS, st.sampled_from(list(Op)), _LITERALS)
_TREES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=4).map(lambda xs: And(tuple(xs))),
        st.lists(inner, min_size=2, max_size=4).map(lambda xs: Or(tuple(xs))),
    ),
    max_leaves=24,
)


@given(_TREES)
@settings(max_examples=300, deadline=None)
def test_round_trip(tree: Expr) -> None:
    assert parse_filter(tree.to_filter_string()) == tree


@st.composite
def _spaced_conditions(draw: st.DrawFn) -> str:
    key = draw(st.sampled_from(["ds", "HR", "`a b`", "x_1", "date"]))
    op = draw(st.sampled_from(["=", "==", "!=", "<>", "<", "<=", ">", ">=", "like", "LIKE"]))
    literal = draw(
        st.sampled_from(
            ["1", "-20", "'a'", '"b c"', "2024-01-31", "DATE '2024-01-31'",
             "2024-01-31 01:02:03", "TIMESTAMP '2024-01-31 01:02:03.5'", "''"]
        )
    )  # fmt: skip
    blank = st.sampled_from(["", " ", "\t", "\n "])
    before, after = draw(blank), draw(blank)
    if op.isalpha():
        before, after = before or " ", after or " "
    return f"{draw(blank)}{key}{before}{op}{after}{literal}{draw(blank)}"


@given(_spaced_conditions())
@settings(max_examples=200, deadline=None)
def test_fast_path_agrees_with_the_token_grammar(text: str) -> None:
    # the stream reads ``key op literal`` as one regular expression; CONDITION reads it token
    # by token: both must give the same leaf
    slow = CONDITION.copy().parse_with_tabs().parse_string(text, parse_all=True)[0]
    assert parse_filter(text) == slow
    assert parse_filter(f"({text}) or {text}") == Or((slow, slow))


# --- guards against pathological input (plain correctness tests; they just must end quickly) ---


def test_ten_thousand_term_or() -> None:
    text = " or ".join(f"hr = {i}" for i in range(10_000))
    tree = parse_filter(text)
    assert isinstance(tree, Or) and len(tree.children) == 10_000
    assert tree.children[-1] == leaf("hr", Op.EQ, N(9_999))


def test_ten_thousand_term_or_of_ands() -> None:
    text = " or ".join(f"(ds = 'd{i}' and hr = {i})" for i in range(10_000))
    tree = parse_filter(text)
    assert isinstance(tree, Or) and len(tree.children) == 10_000
    assert depth(tree) == 2


def test_ten_thousand_value_in_list() -> None:
    text = "(hr) not in (" + ", ".join(str(i) for i in range(10_000)) + ")"
    tree = parse_filter(text)
    assert isinstance(tree, And) and len(tree.children) == 10_000


def test_thousands_of_redundant_parentheses() -> None:
    assert parse_filter("(" * 20_000 + "hr = 1" + ")" * 20_000) == leaf("hr", Op.EQ, N(1))
    assert parse_filter("(" * 5_000 + "(hr) in (1)" + ")" * 5_000) == leaf("hr", Op.EQ, N(1))


def test_nested_binary_ors_flatten() -> None:
    left = "(" * 5_000 + "a = 0" + "".join(f" or a = {i})" for i in range(1, 5_001))
    right = "".join(f"a = {i} or (" for i in range(5_000)) + "a = 5000" + ")" * 5_000
    for text in (left, right):
        tree = parse_filter(text)
        assert isinstance(tree, Or) and len(tree.children) == 5_001
        assert [leaf_.value.value for leaf_ in iter_leaves(tree)] == list(range(5_001))


def test_deep_alternating_nesting_is_refused() -> None:
    levels = 2_000
    text = "a = 1 and (b = 1 or " * levels + "c = 1" + ")" * levels
    with pytest.raises(FilterSyntaxError, match="nested deeper than"):
        parse_filter(text)


def test_alternating_nesting_up_to_the_limit_parses() -> None:
    def nested(levels: int) -> str:  # depth 2 * levels: each level adds an AND and an OR
        return "a = 1 and (b = 1 or " * levels + "c = 1" + ")" * levels

    tree = parse_filter(nested(MAX_DEPTH // 2))
    assert tree is not None and depth(tree) == MAX_DEPTH
    assert parse_filter(tree.to_filter_string()) == tree
    with pytest.raises(FilterSyntaxError, match="nested deeper than"):
        parse_filter(nested(MAX_DEPTH // 2 + 1))


@pytest.mark.parametrize(
    "text",
    [
        "(" * 20_000 + "hr = 1",
        "hr = 1" + ")" * 20_000,
        "(" * 20_000 + "x",
        "(" * 20_000,
        "!" * 100_000,
        "a" * 100_000,
        "hr = '" + "x" * 100_000,
        "hr = 1 or " * 10_000,
    ],
)
def test_pathological_errors_end(text: str) -> None:
    with pytest.raises(FilterSyntaxError):
        parse_filter(text)
