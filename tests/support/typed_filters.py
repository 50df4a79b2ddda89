"""Generated partition filters over a table keyed by (d date, b bigint, s string), and an oracle.

The filters are small trees of comparisons, BETWEEN and IN joined by AND/OR, with literals of the
key's own type (dates unquoted or quoted, integers, strings). ``matches`` evaluates a tree the
way HMS's direct SQL does, written independently of the server's planner and evaluator: dates
compare as dates, bigints as numbers, strings as strings. It is the referee wherever the
reference metastore refuses a filter it cannot push down.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from typing import Any

KEYS = (("d", "date"), ("b", "bigint"), ("s", "string"))

PARTS = [
    [f"2024-0{month}-{day:02d}", str(number), text]
    for month, day, number, text in [
        (1, 1, 1, "a"),
        (1, 2, 20, "b"),
        (1, 2, -3, "a b"),
        (1, 15, 7, "B"),
        (2, 1, 3, "a"),
        (2, 1, 100, "c"),
        (2, 28, 0, "b"),
        (3, 1, 42, "a"),
    ]
]

Tree = tuple[Any, ...]
_OPS = ("=", "!=", "<", "<=", ">", ">=")
_DAYS = ["2024-01-01", "2024-01-02", "2024-01-15", "2024-02-01", "2024-02-15", "2024-03-01"]
_NUMBERS = [-3, 0, 1, 3, 7, 20, 42, 100]
_TEXTS = ["a", "a b", "b", "B", "c", "ab"]


def _literal(key: str, rng: random.Random, quoted: bool | None = None) -> tuple[str, Any]:
    """(filter text, typed value) of a literal for ``key``; a date is written quoted or bare
    (``quoted``; None: either)."""
    if key == "d":
        day = rng.choice(_DAYS)
        if quoted is None:
            quoted = rng.random() < 0.5
        return (f'"{day}"' if quoted else day), dt.date.fromisoformat(day)
    if key == "b":
        number = rng.choice(_NUMBERS)
        return str(number), number
    text = rng.choice(_TEXTS)
    return f'"{text}"', text


def _leaf(rng: random.Random) -> tuple[str, Tree]:
    key = rng.choice([k for k, _ in KEYS])
    shape = rng.random()
    if shape < 0.6:
        op = rng.choice(_OPS)
        text, value = _literal(key, rng)
        return f"{key} {op} {text}", ("cmp", key, op, value)
    # The literals of one BETWEEN or IN are of one kind, as HMS 2.3's grammar requires.
    quoted = rng.random() < 0.5
    if shape < 0.8:
        (low_text, low), (high_text, high) = sorted(
            (_literal(key, rng, quoted) for _ in range(2)), key=lambda pair: pair[1]
        )
        negated = rng.random() < 0.3
        word = "not between" if negated else "between"
        return f"{key} {word} {low_text} and {high_text}", ("between", key, low, high, negated)
    literals = [_literal(key, rng, quoted) for _ in range(rng.randint(2, 3))]
    negated = rng.random() < 0.3
    word = "not in" if negated else "in"
    text = ", ".join(t for t, _ in literals)
    return f"({key}) {word} ({text})", ("in", key, [v for _, v in literals], negated)


def _tree(rng: random.Random, depth: int) -> tuple[str, Tree]:
    if depth == 0 or rng.random() < 0.4:
        return _leaf(rng)
    word = rng.choice(["and", "or"])
    (left_text, left), (right_text, right) = _tree(rng, depth - 1), _tree(rng, depth - 1)
    return f"({left_text}) {word} ({right_text})", (word, left, right)


def generated_filters(count: int = 40, seed: int = 20261123) -> list[tuple[str, Tree]]:
    """``count`` (filter text, tree) pairs, the same every run."""
    rng = random.Random(seed)
    return [_tree(rng, 2) for _ in range(count)]


_COMPARE = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _typed(key: str, raw: str) -> Any:
    if key == "d":
        return dt.date.fromisoformat(raw)
    if key == "b":
        return int(raw)
    return raw


def matches(tree: Tree, values: Sequence[str]) -> bool:
    """Whether a partition with raw ``values`` (d, b, s) satisfies ``tree``."""
    row = {key: _typed(key, raw) for (key, _), raw in zip(KEYS, values, strict=True)}
    kind = tree[0]
    if kind == "and":
        return matches(tree[1], values) and matches(tree[2], values)
    if kind == "or":
        return matches(tree[1], values) or matches(tree[2], values)
    if kind == "cmp":
        _, key, op, value = tree
        return _COMPARE[op](row[key], value)
    if kind == "between":
        _, key, low, high, negated = tree
        return (low <= row[key] <= high) != negated
    _, key, options, negated = tree
    return (row[key] in options) != negated


def expected_values(tree: Tree) -> list[list[str]]:
    """The partition values of PARTS that satisfy ``tree``, sorted."""
    return sorted(values for values in PARTS if matches(tree, values))
