"""Residuals as HBase filter-language strings: exact strings, and (by a small interpreter of the
subset we emit) a superset of the rows the Python predicate keeps — exact where it can be."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner.ast import And, Expr, Leaf, Literal, Op, Or
from metastore_server.planner.errors import FilterError, UnknownKeyError
from metastore_server.planner.evaluate import Domain, comparison_domain, compile_predicate
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.types import DEFAULT_PARTITION_NAME, KeyKind, key_kind, parse_typed
from metastore_server.storage.codec import encode_value
from metastore_server.storage.filters import hbase_filter, hbase_filter_bytes, residual_predicate
from support.hbase_filter_language import java_to_python_regex

DEFAULT = DEFAULT_PARTITION_NAME
KEYS = [("ds", "string"), ("hr", "int"), ("d", "date")]
SEVEN = "\x10\x80\x00\x00\x00\x00\x00\x00\x07"  # INTEGRAL tag, then 7 with the sign bit flipped


def scvf(index: int, op: str, comparator: str) -> str:
    """One expected filter call; ``comparator`` holds one character per byte (Latin-1)."""
    return f"SingleColumnValueFilter('k', '{index}', {op}, '{comparator}', true, true)"


DS_A = scvf(0, "=", "binary:\x02a\x00\x00")
DS_B = scvf(0, "=", "binary:\x02b\x00\x00")
HR_TYPED = scvf(1, "<", "binary:\x11")  # below the raw tag: a typed value, never the default
HR_LT_7 = scvf(1, "<", "binary:" + SEVEN)
HR_NE_7 = scvf(1, "!=", "binaryprefix:" + SEVEN)
D_AFTER = scvf(2, ">=", "binary:\x20\x80\x00\x4d\x10")  # DATE tag, day 19727 + 1 (2024-01-06)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('ds = "a"', DS_A),
        ('ds < "it\'s"', scvf(0, "<", "binary:\x02it''s\x00\x00")),
        ("hr = 7", scvf(1, "=", "binaryprefix:" + SEVEN)),
        ('hr = "007"', scvf(1, "=", "binaryprefix:" + SEVEN)),
        ("hr < 7", HR_LT_7),
        ("hr <= 7", scvf(1, "<", "binary:" + SEVEN[:-1] + "\x08")),
        ("hr >= 7", scvf(1, ">=", "binary:" + SEVEN) + " AND " + HR_TYPED),
        ("hr != 7", HR_NE_7 + " AND " + HR_TYPED),
        (f'hr = "{DEFAULT}"', scvf(1, "=", f"binary:\x11{DEFAULT}\x00\x00")),
        ("d > 2024-01-05", D_AFTER + " AND " + scvf(2, "<", "binary:\x21")),
        ('ds like "a.*"', scvf(0, "=", "regexstring:^\\x02(?:a.*)\\x00\\x00$|\\uFFFD")),
        ('hr like "1.*"', HR_TYPED),
        ('ds = "a" and (hr = 7 or hr > "abc")', DS_A),
        ('ds = "a" or hr < 7 and ds = "b"', f"{DS_A} OR ({HR_LT_7} AND {DS_B})"),
        (
            '(hr != 7 or ds = "a") and ds = "b"',
            f"(({HR_NE_7} AND {HR_TYPED}) OR {DS_A}) AND {DS_B}",
        ),
    ],
)
def test_exact_filter_strings(text: str, expected: str) -> None:
    assert hbase_filter(parse_filter(text), KEYS) == expected


def test_leaves_binary_comparators_cannot_say_widen_to_no_filter() -> None:
    assert hbase_filter(parse_filter('hr > "abc"'), KEYS) is None
    assert hbase_filter(parse_filter('hr > "abc" or ds = "a"'), KEYS) is None
    assert hbase_filter(None, KEYS) is None


def test_a_filter_that_matches_nothing_rejects_every_row() -> None:
    huge = Leaf("hr", Op.EQ, Literal.integer(2**70))
    assert hbase_filter(huge, KEYS) == scvf(0, "<", "binary:")
    assert hbase_filter(Or((huge, Leaf("ds", Op.EQ, Literal.string("a")))), KEYS) == DS_A
    assert hbase_filter(Leaf("hr", Op.LT, Literal.integer(2**70)), KEYS) == HR_TYPED


def test_sql_like_patterns_are_translated() -> None:
    got = hbase_filter(parse_filter('ds like "a%b_c.d"'), KEYS, like="sql")
    assert got == scvf(0, "=", "regexstring:^\\x02(?:a.*b.c\\.d)\\x00\\x00$|\\uFFFD")


@pytest.mark.parametrize(
    ("text", "like"),
    [('ds like "(a+)+b"', "regex"), ('ds like "(x|xx)*y"', "regex"),
     ('ds like ".*a.*b.*c.*d"', "regex"), ('ds like "%a%b%c%d"', "sql")],
)  # fmt: skip
def test_patterns_that_backtrack_are_not_sent_to_region_servers(text: str, like: str) -> None:
    """Region servers run Java's backtracking matcher: a regex bomb stays here (RE2)."""
    assert hbase_filter(parse_filter(text), KEYS, like=like) is None
    assert hbase_filter(parse_filter(f'{text} and ds = "b"'), KEYS, like=like) == DS_B
    assert hbase_filter(parse_filter('ds like ".*a.*b.*c"'), KEYS) is not None


def test_unclosed_quote_in_a_regex_is_closed() -> None:
    got = hbase_filter(parse_filter('ds like "a\\Q.*"'), KEYS)  # \Q without \E
    assert got == scvf(0, "=", "regexstring:^\\x02(?:a\\Q.*\\E)\\x00\\x00$|\\uFFFD")


def test_bytes_are_the_text_in_latin_1_and_utf_8_for_regexes() -> None:
    expr = parse_filter('ds = "é" or ds like "é.*"')
    data = hbase_filter_bytes(expr, KEYS)
    assert data is not None
    assert data == hbase_filter(expr, KEYS).encode("latin-1")  # type: ignore[union-attr]
    assert b"binary:\x02\xc3\xa9\x00\x00'" in data
    assert "regexstring:^\\x02(?:é.*)".encode() in data


def test_errors_match_the_python_predicate() -> None:
    with pytest.raises(UnknownKeyError):
        hbase_filter(parse_filter("nope = 1"), KEYS)
    with pytest.raises(FilterError):
        hbase_filter(parse_filter('ds like "(unclosed"'), KEYS)
    assert residual_predicate(parse_filter('ds = "a"'), KEYS)(["a", "1", "2024-01-05"])


# --- an interpreter of the emitted subset ---------------------------------------------------------

Row = dict[int, bytes]


def interpret(text: str) -> Callable[[Row], bool]:
    """The rows a filter string keeps, read the way HBase's ParseFilter reads our subset:
    AND binds tighter than OR, quoted arguments with '' for a quote, comparators binary,
    binaryprefix and regexstring (Java find with DOTALL on the cell decoded as UTF-8)."""
    pos = 0

    def expect(token: str) -> None:
        nonlocal pos
        assert text.startswith(token, pos), (text[pos:], token)
        pos += len(token)

    def disjunction() -> Callable[[Row], bool]:
        parts = [conjunction()]
        while text.startswith(" OR ", pos):
            expect(" OR ")
            parts.append(conjunction())
        return lambda row: any(p(row) for p in parts)

    def conjunction() -> Callable[[Row], bool]:
        parts = [factor()]
        while text.startswith(" AND ", pos):
            expect(" AND ")
            parts.append(factor())
        return lambda row: all(p(row) for p in parts)

    def factor() -> Callable[[Row], bool]:
        if text.startswith("(", pos):
            expect("(")
            inner = disjunction()
            expect(")")
            return inner
        return call()

    def quoted() -> bytes:
        nonlocal pos
        expect("'")
        out = []
        while True:
            if text.startswith("''", pos):
                out.append("'")
                pos += 2
            elif text[pos] == "'":
                pos += 1
                return "".join(out).encode("latin-1")
            else:
                out.append(text[pos])
                pos += 1

    def call() -> Callable[[Row], bool]:
        nonlocal pos
        expect("SingleColumnValueFilter(")
        assert quoted() == b"k"
        expect(", ")
        index = int(quoted())
        expect(", ")
        end = text.index(",", pos)
        op, pos = text[pos:end], end
        expect(", ")
        kind, _, value = quoted().partition(b":")
        expect(", true, true)")
        return _test(index, op, kind.decode(), value)

    result = disjunction()
    assert pos == len(text), text[pos:]
    return result


_CMP = {"=": lambda c: c == 0, "!=": lambda c: c != 0, "<": lambda c: c < 0,
        "<=": lambda c: c <= 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0}  # fmt: skip


def _test(index: int, op: str, kind: str, value: bytes) -> Callable[[Row], bool]:
    if kind == "regexstring":
        pattern = re.compile(java_to_python_regex(value.decode("utf-8")), re.DOTALL)
        found = lambda row: pattern.search(row[index].decode("utf-8", "replace")) is not None  # noqa: E731
        return found if op == "=" else (lambda row: not found(row))
    width = len(value) if kind == "binaryprefix" else None

    def test(row: Row) -> bool:
        cell = row[index][:width] if width is not None else row[index]
        return _CMP[op]((cell > value) - (cell < value))

    return test


def test_the_interpreter_reads_the_examples() -> None:
    keep = interpret(hbase_filter(parse_filter('hr >= 7 and ds like "a.*"'), KEYS) or "")
    row = {0: encode_value(KeyKind.STRING, "ab"), 1: encode_value(KeyKind.INTEGRAL, "007")}
    assert keep(row)
    row[1] = encode_value(KeyKind.INTEGRAL, DEFAULT)
    assert not keep(row)


# --- superset (and exactness) against the Python predicate --------------------------------------

POOLS = {
    KeyKind.STRING: ["", "a", "ab", "b", "a'b", "é", "7", "2024-01-05", DEFAULT, "a\x00", "a\nb",
                     "\ud800"],
    KeyKind.INTEGRAL: ["0", "1", "7", "007", "+7", " 7", "-3", "12", DEFAULT, "abc", str(2**70),
                       str(2**63 - 1)],
    KeyKind.DATE: ["2024-01-05", "2024-1-5", "2024-01-06", "2023-12-31", DEFAULT, "2024-02-30"],
}  # fmt: skip
CLEAN = {k: [v for v in vs if "\x00" not in v and "\n" not in v and "\ud800" not in v]
         for k, vs in POOLS.items()}  # fmt: skip
LITERALS = st.one_of(
    st.sampled_from(["", "a", "ab", "a'b", "7", "007", "abc", DEFAULT, "2024-01-05", "é"]).map(
        Literal.string
    ),
    st.sampled_from([-3, 0, 7, 12, 2**63 - 1, 2**70, -(2**70)]).map(Literal.integer),
    st.sampled_from([dt.date(2024, 1, 5), dt.date(2023, 12, 31)]).map(Literal.date),
)
PATTERNS = {"regex": ["a.*", ".*", "1.*", "(a|b).*", "[ab]", "a'b", "é.*", "a\\Q.*", "a.b"],
            "sql": ["a%", "%", "_", "1%", "a'b", "é%", "a\\%", "a_b"]}  # fmt: skip


@functools.cache
def filters(names: tuple[str, ...], like: str) -> st.SearchStrategy[Expr]:
    key = st.sampled_from(names)
    operators = st.sampled_from([o for o in Op if o is not Op.LIKE])
    comparisons = st.builds(Leaf, key, operators, LITERALS)
    patterns = st.sampled_from(PATTERNS[like]).map(Literal.string)
    likes = st.builds(Leaf, key, st.just(Op.LIKE), patterns)

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        group = st.lists(children, min_size=2, max_size=3).map(tuple)
        return st.one_of(group.map(And), group.map(Or))

    return st.recursive(st.one_of(comparisons, comparisons, likes), extend, max_leaves=8)


def expressible(expr: Expr, keys: Sequence[tuple[str, str]]) -> bool:
    """Whether every leaf has an exact binary/regex form (so the filter is exact)."""
    kinds = {n: key_kind(t) for n, t in keys}
    pending = [expr]
    while pending:
        node = pending.pop()
        if not isinstance(node, Leaf):
            pending.extend(node.children)
            continue
        kind = kinds[node.key]
        if kind is KeyKind.STRING:
            continue
        if node.op is Op.LIKE:
            return False
        domain, operand = comparison_domain(kind, node.value)
        if domain is Domain.TEXT and not (
            node.op in (Op.EQ, Op.NE) and parse_typed(kind, str(operand)) is None
        ):
            return False
    return True


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list(KeyKind)), min_size=1, max_size=3),
       st.sampled_from(["regex", "sql"]), st.data())  # fmt: skip
def test_the_filter_keeps_a_superset_and_is_exact_when_expressible(kinds, like, data) -> None:
    names = ("ds", "hr", "d")[: len(kinds)]
    keys = [(n, {KeyKind.STRING: "string", KeyKind.INTEGRAL: "int", KeyKind.DATE: "date"}[k])
            for n, k in zip(names, kinds, strict=True)]  # fmt: skip
    expr = data.draw(filters(names, like))
    rows = data.draw(st.lists(st.tuples(*(st.sampled_from(POOLS[k]) for k in kinds)), max_size=20))
    text = hbase_filter(expr, keys, like=like)
    truth = compile_predicate(expr, keys, like=like)
    keep = interpret(text) if text is not None else (lambda row: True)
    exact = expressible(expr, keys)
    for raws in rows:
        cells = {i: encode_value(k, r) for i, (k, r) in enumerate(zip(kinds, raws, strict=True))}
        expected = truth(raws)
        if expected:
            assert keep(cells), (text, raws)
        clean = all(r in CLEAN[k] for k, r in zip(kinds, raws, strict=True))
        if exact and clean:
            assert keep(cells) == expected, (text, raws)
