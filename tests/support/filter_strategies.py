"""Hypothesis strategies of partition tables and filters over the whole filter grammar, shared
by the planner's property tests and the execution tests on each storage backend."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence

from hypothesis import strategies as st
from metastore_server.planner.ast import And, Expr, Leaf, Literal, Op, Or
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.types import DEFAULT_PARTITION_NAME, KeyKind

DEFAULT = DEFAULT_PARTITION_NAME
HIVE_TYPES = {KeyKind.STRING: ["string", "varchar(10)"], KeyKind.INTEGRAL: ["int", "bigint"],
              KeyKind.DATE: ["date"]}  # fmt: skip
VALUES = {
    KeyKind.STRING: ["", "a", "ab", "b", "a\x00", "7", "2024-01-05", DEFAULT],
    KeyKind.INTEGRAL: ["0", "1", "7", "007", "+7", " 7", "-3", "12", DEFAULT, "abc",
                       str(2**70)],
    KeyKind.DATE: ["2024-01-05", "2024-1-5", "2024-01-06", "2023-12-31", DEFAULT,
                   "2024-02-30"],
}  # fmt: skip
STRING_LITERALS = ["", "a", "ab", "b", "7", "007", "12", "-3", "2024-01-05", "2024-1-6", DEFAULT,
                   "abc", "1.*", "a.*", "2024-01.*", str(2**70)]  # fmt: skip
INT_LITERALS = [-3, 0, 1, 7, 12, 2**63 - 1, -(2**63), 2**70]
DATE_LITERALS = [dt.date(2024, 1, 5), dt.date(2024, 1, 6), dt.date(2023, 12, 31)]
PATTERNS = {
    "regex": ["a.*", ".*", "1.*", "7", "0*7", "2024-01.*", "(a|b).*", "[ab]", "ab?", "a"],
    "sql": ["a%", "%", "_", "1%", "7", "2024-01%", "a", "a\\%"],
}


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[tuple[str, ...]]]:
    """Partition keys (1-3, of string/int/date kinds) and a set of partitions."""
    kinds = draw(st.lists(st.sampled_from(list(KeyKind)), min_size=1, max_size=3))
    names = ["ds", "hr", "region"][: len(kinds)]
    types = [draw(st.sampled_from(HIVE_TYPES[k])) for k in kinds]
    keys = list(zip(names, types, strict=True))
    rows = draw(st.lists(st.tuples(*(st.sampled_from(VALUES[k]) for k in kinds)), max_size=30))
    return keys, sorted(set(rows))


def literals() -> st.SearchStrategy[Literal]:
    return st.one_of(
        st.sampled_from(STRING_LITERALS).map(Literal.string),
        st.sampled_from(INT_LITERALS).map(Literal.integer),
        st.sampled_from(DATE_LITERALS).map(Literal.date),
        st.just(Literal.timestamp("2024-01-05 00:00:00")),
    )


def leaves(names: Sequence[str], like: str) -> st.SearchStrategy[Leaf]:
    key = st.sampled_from(list(names)).flatmap(lambda n: st.sampled_from([n, n.upper()]))
    comparisons = st.builds(
        Leaf, key, st.sampled_from([op for op in Op if op is not Op.LIKE]), literals()
    )
    likes = st.builds(
        Leaf, key, st.just(Op.LIKE), st.sampled_from(PATTERNS[like]).map(Literal.string)
    )
    return st.one_of(comparisons, comparisons, likes)


@functools.cache
def filters(names: tuple[str, ...], like: str) -> st.SearchStrategy[Expr]:
    """Random trees over the whole grammar's leaves (built once per key list: drawing is cheap,
    building strategies is not)."""

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        group = st.lists(children, min_size=2, max_size=4).map(tuple)
        return st.one_of(group.map(And), group.map(Or))

    return st.recursive(leaves(names, like), extend, max_leaves=12)


@functools.cache
def text_filters(names: tuple[str, ...]) -> st.SearchStrategy[Expr]:
    """Filter text with the special forms: (NOT) IN, (NOT) BETWEEN, reversed comparisons."""
    key = st.sampled_from(list(names))
    value = st.sampled_from(["1", "7", "12", '"a"', '"b"', '"007"', f'"{DEFAULT}"', "2024-01-05"])
    forms = st.one_of(
        st.builds(lambda k, vs, n: f"{k} {n}in ({', '.join(vs)})", key,
                  st.lists(value, min_size=1, max_size=4), st.sampled_from(["", "not "])),
        st.builds(lambda k, a, b, n: f"{k} {n}between {a} and {b}", key, value, value,
                  st.sampled_from(["", "not "])),
        st.builds(lambda k, v, op: f"{v} {op} {k}", key, value,
                  st.sampled_from(["<", "<=", ">", ">=", "=", "!=", "<>"])),
    )  # fmt: skip
    joined = st.lists(forms, min_size=1, max_size=4).flatmap(
        lambda parts: st.lists(
            st.sampled_from([" and ", " or "]), min_size=len(parts) - 1, max_size=len(parts) - 1
        ).map(lambda ops: parts[0] + "".join(op + p for op, p in zip(ops, parts[1:], strict=True)))
    )
    return joined.map(parse_filter)
