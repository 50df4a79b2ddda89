"""Hostile filter text against the parser and planner: whatever comes in, parse + plan either
answers or raises FilterError with a helpful message, within a hang guard and a memory bound.

The time limits here are hang guards (a thread given 30 s), not speed targets.
"""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metastore_server.planner.ast import Leaf, Literal, Op
from metastore_server.planner.errors import FilterError
from metastore_server.planner.evaluate import compile_predicate
from metastore_server.planner.grammar import MAX_CONDITIONS, MAX_PARENTHESES, parse_filter
from metastore_server.planner.intervals import IntervalSet, leaf_constraint
from metastore_server.planner.plan import MultiScanPlan, plan_filter
from metastore_server.planner.types import KeyKind, key_kind
from metastore_server.storage.codec import bound_range, encode_id, encode_values
from support.filter_strategies import filters

KEYS = [("ds", "string"), ("hr", "int")]
HANG_GUARD_S = 30.0
MEMORY_BOUND = 200 * 1024 * 1024
T = TypeVar("T")


def guarded(work: Callable[[], T]) -> T:
    """``work()`` in a thread; fails when it has not finished within HANG_GUARD_S."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), f"no answer within {HANG_GUARD_S} s (hang guard)"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def plan_or_error(text: str | bytes, keys=KEYS) -> MultiScanPlan | FilterError:
    """The plan of ``text``, or the FilterError it raises; any other exception fails."""

    def work() -> MultiScanPlan | FilterError:
        try:
            return plan_filter(parse_filter(text), keys)
        except FilterError as exc:
            return exc

    result = guarded(work)
    if isinstance(result, FilterError):
        assert str(result).strip(), "a FilterError needs a message"
    return result


def refused(text: str | bytes, *words: str) -> str:
    """The message of the FilterError ``text`` must raise; it must mention each of ``words``."""
    result = plan_or_error(text)
    assert isinstance(result, FilterError), f"expected a FilterError, got {result!r}"[:300]
    message = str(result)
    for word in words:
        assert word.lower() in message.lower(), message[:300]
    return message


def peak_memory(work: Callable[[], object]) -> int:
    """Peak bytes traced while ``work()`` runs."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --- random text and mutations of valid filters ---------------------------------------------

ALPHABET = st.sampled_from(list("dsh r=<>!'\"`()\\,-0129aAnNdDoOrR_\x00\t\n") + ["\ud800", "é"])
TOKENS = st.sampled_from(
    ["ds", "hr", "zz", "`ds`", "=", "==", "<>", "!=", "<=>", "<", ">=", "like", "LIKE", "and",
     "OR", "not", "in", "between", "struct", "const", "(", ")", ",", "'a'", '"b"', "'", '"',
     "`", "7", "-3", "99999999999999999999", "2024-01-05", "2024-02-30", "date", "timestamp",
     "'2024-01-05 00:00:00'", "'\\'", "\x00", "\ud800", " "]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.text(ALPHABET, max_size=60))
def test_random_text_is_answered_or_refused(text: str) -> None:
    plan_or_error(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=25).map(" ".join))
def test_random_token_soup_is_answered_or_refused(text: str) -> None:
    plan_or_error(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(filters(("ds", "hr"), "regex"), st.data())
def test_mutated_valid_filters_are_answered_or_refused(tree, data) -> None:
    text = tree.to_filter_string()
    plan_or_error(text)  # valid but for integers past 64 bits, which the strategy draws
    cut = data.draw(st.integers(0, len(text)))
    insert = data.draw(st.sampled_from(["", "(", ")", "'", '"', "`", " and", " or ", "\x00", "\\"]))
    drop = data.draw(st.integers(0, 3))
    plan_or_error(text[:cut] + insert + text[cut + drop :])


def test_non_utf8_bytes_are_refused_with_the_offset() -> None:
    assert "not UTF-8" in refused(b"ds = '\xff\xfe'", "0xff", "offset 6")
    assert "not UTF-8" in refused(b"ds = '\xed\xa0\x80'")  # an encoded lone surrogate
    assert isinstance(plan_or_error(b"ds = 'a'"), MultiScanPlan)


def test_nul_bytes_and_lone_surrogates() -> None:
    assert isinstance(plan_or_error("ds = 'a\x00b'"), MultiScanPlan)
    assert isinstance(plan_or_error("ds = '\ud800'"), MultiScanPlan)
    refused("d\x00s = 'a'", "position 1")
    refused("`\ud800` = 'a'", "not a partitioning key")


def test_unknown_keys_and_type_mismatches() -> None:
    refused("zz = 1", "<zz>", "partitioning key")
    refused("ds = 'a' or ZZ > 3", "<ZZ>")
    mismatch = plan_or_error("hr = 'abc' or hr > 'x' or ds > 5 or hr like 'x' or ds = 2024-01-05")
    assert isinstance(mismatch, MultiScanPlan)
    refused("ds like '(('", "invalid like pattern")
    refused("'a%' like ds", "like")
    refused("ds <=> 'a'", "<=>")


def test_unterminated_quotes() -> None:
    refused("ds = 'abc", "unterminated string literal")
    refused('ds = "abc', "unterminated string literal")
    refused("`ds = 'abc'", "unterminated back-quoted key")
    refused("ds = '" + "\\" * 100_001, "unterminated string literal")
    refused("'" * 100_000, "position")


# --- deep nesting ------------------------------------------------------------------------------


def test_ten_thousand_nested_parentheses_are_answered() -> None:
    plan = plan_or_error("(" * 10_000 + "ds = 'a'" + ")" * 10_000)
    assert isinstance(plan, MultiScanPlan) and len(plan.scans) == 1


def test_parentheses_past_the_limit_are_refused_cheaply() -> None:
    deep = MAX_PARENTHESES + 1
    refused("(" * deep + "ds = 'a'" + ")" * deep, "nested too deeply", str(MAX_PARENTHESES))
    refused("(" * 10_000_000, "nested too deeply")
    # Parentheses inside a literal are not nesting.
    assert isinstance(plan_or_error("ds = '" + "(" * (deep + 5) + "'"), MultiScanPlan)
    refused("ds = '" + "(" * (deep + 5), "unterminated string literal")


def test_unbalanced_parentheses() -> None:
    refused("(" * 10_000 + "ds = 'a'", "missing ')'")
    refused("ds = 'a'" + ")" * 10_000, "without a matching '('")
    refused("( " * 10_000 + "ds = 'a' and", "expected a condition")


def test_ten_thousand_nots_are_refused() -> None:
    refused("not " * 10_000 + "ds = 'a'", "expected a condition")
    refused("not (" * 10_000 + "ds = 'a'" + ")" * 10_000, "expected a condition")


def test_deep_and_or_alternation_is_refused() -> None:
    text = "(ds = 'a' and (hr = 1 or " * 5_000 + "ds = 'z'" + "))" * 5_000
    refused(text, "nested deeper than")


# --- big, valid filters ---------------------------------------------------------------------


def ors(template: str, n: int = 10_000) -> str:
    return " or ".join(template.format(i=i, j=2 * i, k=2 * i + 5) for i in range(n))


def ands(template: str, n: int = 10_000) -> str:
    return " and ".join(template.format(i=i) for i in range(n))


BIG_FILTERS = {
    "or of equalities on the first key": ors("ds = 'v{i}'"),
    "or of equalities on both keys": ors("(ds = 'v{i}' and hr = {i})"),
    "or of equalities on the second key": ors("hr = {i}"),
    "or of ranges on the second key": ors("(hr > {j} and hr < {k})"),
    "or of ranges on the first key": ors("(ds >= 'a{i}' and ds < 'b{i}')"),
    "or of ors on different keys": ors("(ds = 'v{i}' or hr = {i})"),
    "or of not between": ors("hr not between {j} and {k}"),
    "or of likes": ors("ds like 'a{i}.*'"),
    "and of !=": ands("hr != {i}"),
    "and of != on strings": ands("ds != 'x{i}'"),
    "and of >": ands("hr > {i}"),
    "and of ors": ands("(ds = 'a{i}' or hr = {i})"),
    "in list": "(hr) in (" + ", ".join(str(i) for i in range(10_000)) + ")",
    "not in list": "(hr) not in (" + ", ".join(str(i) for i in range(10_000)) + ")",
    "struct in": "(struct(ds, hr)) in ("
    + ", ".join(f"struct('a{i}', {i})" for i in range(10_000))
    + ")",
}
ROWS = [(ds, hr) for ds in ("a1", "a7", "v3", "v9999", "v10000", "x5", "zz") for hr in
        ("0", "1", "3", "7", "9999", "10000", "20001", "abc")]  # fmt: skip


@pytest.mark.parametrize("name", list(BIG_FILTERS))
def test_ten_thousand_term_filters_are_planned_exactly(name: str) -> None:
    """Answered (not refused), and the plan keeps exactly the brute-force rows."""
    text = BIG_FILTERS[name]
    plan = plan_or_error(text)
    assert isinstance(plan, MultiScanPlan), str(plan)[:300]
    expected = compile_predicate(parse_filter(text), KEYS)
    kinds = [key_kind(t) for _, t in KEYS]
    table = encode_id(1)
    scans = [
        (*bound_range(kinds, scan.lower, scan.upper, table), compile_predicate(scan.residual, KEYS))
        for scan in plan.scans
    ]
    for row in ROWS:
        key = table + encode_values(kinds, list(row))
        found = any(
            start <= key and (stop is None or key < stop) and residual(row)
            for start, stop, residual in scans
        )
        assert found == expected(row), (name, row)


def test_too_many_comparisons_are_refused_cheaply() -> None:
    text = " or ".join(["ds = 'a'"] * (MAX_CONDITIONS + 1))
    refused(text, "too complex", str(MAX_CONDITIONS))


# --- huge literals --------------------------------------------------------------------------


def test_huge_literals() -> None:
    assert isinstance(plan_or_error("ds = '" + "x" * 10_000_000 + "'"), MultiScanPlan)
    assert isinstance(plan_or_error("ds = '" + "\\a" * 5_000_000 + "'"), MultiScanPlan)
    refused("ds = '" + "x" * 10_000_000, "unterminated string literal")
    refused("`" + "d" * 10_000_000, "unterminated back-quoted key")
    refused("d" * 10_000_000 + " = 'a'", "not a partitioning key")
    refused("hr = " + "9" * 1000, "out of the 64-bit range", "1000 digits")
    assert isinstance(plan_or_error("hr = -" + "0" * 5000 + "7"), MultiScanPlan)
    refused("hr = " + "9" * 10_000_000, "out of the 64-bit range")
    refused("hr between 1 and " + "1" * 5000, "out of the 64-bit range")
    refused("ds = " + "9" * 5000 + "-01-01", "invalid date literal")
    # A string literal of 5000 digits on an int key compares as text (Python's int() would
    # refuse more than 4300 digits).
    assert isinstance(plan_or_error("hr = '" + "9" * 5000 + "'"), MultiScanPlan)
    assert isinstance(plan_or_error("hr < '-" + "0" * 5000 + "7'"), MultiScanPlan)


def test_huge_blank_runs() -> None:
    refused(" " * 10_000_000, "blank")
    refused(" " * 10_000_000 + "x", "position")
    assert isinstance(plan_or_error("ds = 'a' " + " " * 1_000_000 + "or hr = 1"), MultiScanPlan)


# --- memory ---------------------------------------------------------------------------------

PATHOLOGICAL = {
    "10 MB literal": "ds = '" + "x" * 10_000_000 + "'",
    "10 MB unterminated literal": "ds = '" + "x" * 10_000_000,
    "10 MB of escapes": "ds = '" + "\\a" * 5_000_000 + "'",
    "10 MB of '('": "(" * 10_000_000,
    "10,000 nested parentheses": "(" * 10_000 + "ds = 'a'" + ")" * 10_000,
    "10,000-term or": BIG_FILTERS["or of ranges on the first key"],
    "10,000-term and": BIG_FILTERS["and of != on strings"],
}


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_pathological_filters_stay_within_memory(name: str) -> None:
    text = PATHOLOGICAL[name]
    peak = peak_memory(lambda: plan_or_error(text))
    assert peak < MEMORY_BOUND, f"{name}: peak {peak / 2**20:.0f} MiB"


# --- the linear-time AND fold -------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(-5, 5), min_size=1, max_size=4), min_size=1, max_size=5))
def test_intersect_all_is_folded_intersect(specs: list[list[int]]) -> None:
    ops = [Op.NE, Op.LT, Op.GE, Op.EQ, Op.LE, Op.GT]
    sets = []
    for spec in specs:
        parts = [
            leaf_constraint(
                KeyKind.INTEGRAL, Leaf("hr", ops[v % len(ops)], Literal.integer(v)), "regex"
            )
            for v in spec
        ]
        sets.append(IntervalSet.of(i for c in parts if c for i in c.allowed.intervals))
    folded = sets[0]
    for other in sets[1:]:
        folded = folded.intersect(other)
    swept = IntervalSet.intersect_all(sets)
    assert [(a.key, b.key) for a, b in swept.intervals] == [
        (a.key, b.key) for a, b in folded.intervals
    ]
