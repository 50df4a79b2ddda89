"""The filter of a scan-planning request (the spec's JSON expression form) read strictly into
pyiceberg's unbound expressions: every node must be one of the spec's shapes with exactly its
keys and value types; anything else (an unknown type or key, a transform term, a value that is
not a JSON scalar, a tree too deep or too large) is a 400. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyiceberg.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
)

from metastore_server.rest.errors import bad_request

#: Bounds on what a filter may hold: nesting, nodes in all, values of one set, a name's length.
MAX_DEPTH = 64
MAX_NODES = 10_000
MAX_SET_VALUES = 10_000
MAX_NAME = 1024
#: A JSON integer must fit a long (the widest integer type of a table).
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

UNARY: dict[str, Callable[..., BooleanExpression]] = {
    "is-null": IsNull, "not-null": NotNull, "is-nan": IsNaN, "not-nan": NotNaN,
}  # fmt: skip
LITERAL: dict[str, Callable[..., BooleanExpression]] = {
    "lt": LessThan, "lt-eq": LessThanOrEqual, "gt": GreaterThan, "gt-eq": GreaterThanOrEqual,
    "eq": EqualTo, "not-eq": NotEqualTo, "starts-with": StartsWith,
    "not-starts-with": NotStartsWith,
}  # fmt: skip
SET: dict[str, Callable[..., BooleanExpression]] = {"in": In, "not-in": NotIn}


class _Budget:
    """The nodes a filter may still hold."""

    def __init__(self) -> None:
        self.left = MAX_NODES

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise bad_request(f"filter: more than {MAX_NODES} expression nodes")


def parse_filter(document: Any) -> BooleanExpression:
    """The pyiceberg expression of a spec filter (400 for any shape not in the spec)."""
    return _node(document, 0, _Budget())


def _node(node: Any, depth: int, budget: _Budget) -> BooleanExpression:
    budget.take()
    if depth > MAX_DEPTH:
        raise bad_request(f"filter: nested deeper than {MAX_DEPTH}")
    if isinstance(node, bool):
        return AlwaysTrue() if node else AlwaysFalse()
    if not isinstance(node, dict):
        raise bad_request("filter: an expression must be an object or a boolean")
    kind = node.get("type")
    if not isinstance(kind, str):
        raise bad_request("filter: an expression needs a string 'type'")
    if kind in ("true", "false"):
        _keys(node, kind, ())
        return AlwaysTrue() if kind == "true" else AlwaysFalse()
    if kind in ("and", "or"):
        _keys(node, kind, ("left", "right"))
        left, right = (_node(node[k], depth + 1, budget) for k in ("left", "right"))
        return And(left, right) if kind == "and" else Or(left, right)
    if kind == "not":
        _keys(node, kind, ("child",))
        return Not(_node(node["child"], depth + 1, budget))
    if kind in UNARY:
        _keys(node, kind, ("term",))
        return UNARY[kind](_term(node["term"]))
    if kind in LITERAL:
        _keys(node, kind, ("term", "value"))
        return LITERAL[kind](_term(node["term"]), _scalar(node["value"]))
    if kind in SET:
        _keys(node, kind, ("term", "values"))
        return SET[kind](_term(node["term"]), _values(node["values"], budget))
    raise bad_request(f"filter: unknown expression type {kind[:40]!r}")


def _keys(node: dict[str, Any], kind: str, needed: tuple[str, ...]) -> None:
    """400 unless ``node`` has exactly ``type`` and ``needed``."""
    have = set(node) - {"type"}
    if have != set(needed):
        missing, extra = set(needed) - have, have - set(needed)
        what = f"missing {sorted(missing)}" if missing else f"unexpected {sorted(extra)[:5]}"
        raise bad_request(f"filter: a {kind!r} expression with {what}")


def _term(term: Any) -> str:
    """A term: a column reference (a name). A transform term is refused."""
    if isinstance(term, dict) and term.get("type") == "transform":
        raise bad_request("filter: transform terms are not supported; filter on the column")
    if not isinstance(term, str) or not term or len(term) > MAX_NAME:
        raise bad_request(f"filter: a term must be a column name (1 to {MAX_NAME} characters)")
    return term


def _scalar(value: Any) -> Any:
    """A literal: a JSON string, number or boolean (a long at most)."""
    if isinstance(value, bool | str | float):
        return value
    if isinstance(value, int):
        if not LONG_MIN <= value <= LONG_MAX:
            raise bad_request("filter: an integer literal does not fit a long")
        return value
    raise bad_request("filter: a literal must be a JSON string, number or boolean")


def _values(values: Any, budget: _Budget) -> list[Any]:
    if not isinstance(values, list) or not values:
        raise bad_request("filter: 'values' must be a non-empty list")
    if len(values) > MAX_SET_VALUES:
        raise bad_request(f"filter: a set of more than {MAX_SET_VALUES} values")
    for _ in values:
        budget.take()
    return [_scalar(value) for value in values]
