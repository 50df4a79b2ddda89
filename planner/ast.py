"""The filter expression tree: ``Leaf(key, op, literal)``, ``And`` and ``Or``, all immutable.

The tree is canonical: an ``And`` never has an ``And`` child and an ``Or`` never an ``Or`` child
(the constructors splice them in), and both have at least two children. ``to_filter_string()``
prints filter text that ``planner.grammar.parse_filter`` reads back to an equal tree.
"""

from __future__ import annotations

import datetime as _dt
import enum
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeAlias

#: Words that cannot be bare partition keys (they are keywords of the dialect).
RESERVED_WORDS = frozenset({"and", "or", "not", "in", "between", "like"})

_BARE_KEY = re.compile(r"[A-Za-z0-9_]+")
# Possessive loops: linear, with no regex stack per character, for literals of any size.
_DOUBLE_QUOTABLE = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
_SINGLE_QUOTABLE = re.compile(r"[^'\\]*+(?:\\.[^'\\]*+)*+", re.DOTALL)
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP_TEXT = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}) ([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,9})?"
)


class Op(enum.Enum):
    """A comparison operator; the value is how it is printed."""

    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    LIKE = "like"

    def flipped(self) -> Op:
        """The operator of the same test with the operands swapped (``5 < k`` is ``k > 5``)."""
        if self is Op.LIKE:
            raise ValueError("LIKE cannot be flipped")
        return _FLIPPED.get(self, self)

    def negated(self) -> Op:
        """The operator of the complementary test (``=`` and ``!=``, ``<`` and ``>=``, ...)."""
        if self is Op.LIKE:
            raise ValueError("LIKE has no negated operator")
        return _NEGATED[self]


_FLIPPED = {Op.LT: Op.GT, Op.LE: Op.GE, Op.GT: Op.LT, Op.GE: Op.LE}
_NEGATED = {Op.EQ: Op.NE, Op.NE: Op.EQ, Op.LT: Op.GE, Op.GE: Op.LT, Op.LE: Op.GT, Op.GT: Op.LE}


class LiteralKind(enum.Enum):
    """The kinds of constant a filter can contain."""

    STRING = "string"
    INTEGER = "integer"
    DATE = "date"
    TIMESTAMP = "timestamp"


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: string text (quotes stripped, escapes kept), int, date, or timestamp text."""

    kind: LiteralKind
    value: str | int | _dt.date

    def __post_init__(self) -> None:
        if not _VALUE_CHECKS[self.kind](self.value):
            raise ValueError(f"invalid {self.kind.value} literal: {self.value!r}")

    @classmethod
    def string(cls, text: str) -> Literal:
        """A string literal with ``text`` between the quotes (backslash escapes not undone)."""
        return cls(LiteralKind.STRING, text)

    @classmethod
    def integer(cls, value: int) -> Literal:
        """An integer literal."""
        return cls(LiteralKind.INTEGER, value)

    @classmethod
    def date(cls, value: _dt.date) -> Literal:
        """A date literal."""
        return cls(LiteralKind.DATE, value)

    @classmethod
    def timestamp(cls, text: str) -> Literal:
        """A timestamp literal ``yyyy-mm-dd hh:mm:ss[.fffffffff]``, kept as its text."""
        return cls(LiteralKind.TIMESTAMP, text)

    @property
    def text(self) -> str:
        """The literal as a string: a string's text, an int in decimal, a date as yyyy-mm-dd."""
        if isinstance(self.value, _dt.date):
            return self.value.isoformat()
        return str(self.value)

    def to_filter_string(self) -> str:
        """The literal as filter text (strings double-quoted unless they need single quotes)."""
        if self.kind is LiteralKind.STRING:
            return quote_string(self.text)
        if self.kind is LiteralKind.TIMESTAMP:
            return f"TIMESTAMP '{self.text}'"
        return self.text

    def __str__(self) -> str:
        return self.to_filter_string()


def _is_timestamp_text(value: object) -> bool:
    """Whether ``value`` is ``yyyy-mm-dd hh:mm:ss[.f]`` naming a real instant."""
    if not isinstance(value, str):
        return False
    match = _TIMESTAMP_TEXT.fullmatch(value)
    if match is None:
        return False
    try:
        _dt.datetime.strptime(f"{match[1]} {match[2]}", "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return False
    return True


_VALUE_CHECKS = {
    LiteralKind.STRING: lambda v: isinstance(v, str),
    LiteralKind.INTEGER: lambda v: isinstance(v, int) and not isinstance(v, bool),
    LiteralKind.DATE: lambda v: isinstance(v, _dt.date) and not isinstance(v, _dt.datetime),
    LiteralKind.TIMESTAMP: _is_timestamp_text,
}


def parse_date_text(text: str) -> _dt.date | None:
    """The date a strict ``yyyy-mm-dd`` text names, or None (wrong shape or no such day)."""
    if not _DATE_TEXT.fullmatch(text):
        return None
    try:
        return _dt.date(int(text[0:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return None


def quote_string(text: str) -> str:
    """``text`` in double quotes, or single quotes when it holds an unescaped double quote.

    Raises ValueError when neither quoting reads back as ``text`` (an unescaped quote of each kind,
    or a trailing lone backslash): such a string cannot be written in the dialect.
    """
    if _DOUBLE_QUOTABLE.fullmatch(text):
        return f'"{text}"'
    if _SINGLE_QUOTABLE.fullmatch(text):
        return f"'{text}'"
    raise ValueError(f"string cannot be written as a filter literal: {text!r}")


def format_key(key: str) -> str:
    """A partition key as filter text, back-quoted when it is a keyword or has other characters."""
    if _BARE_KEY.fullmatch(key) and key.lower() not in RESERVED_WORDS:
        return key
    return "`" + key.replace("`", "``") + "`"


@dataclass(frozen=True, slots=True)
class Leaf:
    """``key op value``: one comparison of a partition key (named as written) with a constant."""

    key: str
    op: Op
    value: Literal

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise ValueError(f"a leaf needs a non-empty key, got {self.key!r}")

    def to_filter_string(self) -> str:
        """The comparison as filter text, key first."""
        return f"{format_key(self.key)} {self.op.value} {self.value.to_filter_string()}"

    def __str__(self) -> str:
        return self.to_filter_string()


@dataclass(frozen=True, slots=True)
class And:
    """All children hold. At least two children, none of them an ``And``."""

    children: tuple[Expr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", _splice(And, self.children))

    def to_filter_string(self) -> str:
        """The conjunction as filter text; compound children are parenthesised."""
        return " and ".join(_operand_text(child) for child in self.children)

    def __str__(self) -> str:
        return self.to_filter_string()


@dataclass(frozen=True, slots=True)
class Or:
    """Some child holds. At least two children, none of them an ``Or``."""

    children: tuple[Expr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", _splice(Or, self.children))

    def to_filter_string(self) -> str:
        """The disjunction as filter text; compound children are parenthesised."""
        return " or ".join(_operand_text(child) for child in self.children)

    def __str__(self) -> str:
        return self.to_filter_string()


Expr: TypeAlias = Leaf | And | Or


def _splice(kind: type[And] | type[Or], children: Iterable[Expr]) -> tuple[Expr, ...]:
    """``children`` with each child of the same ``kind`` replaced by its own children."""
    spliced: list[Expr] = []
    for child in children:
        if isinstance(child, kind):
            spliced.extend(child.children)
        elif isinstance(child, Leaf | And | Or):
            spliced.append(child)
        else:
            raise TypeError(f"not a filter expression: {child!r}")
    if len(spliced) < 2:
        raise ValueError(f"{kind.__name__} needs at least two children")
    return tuple(spliced)


def _operand_text(child: Expr) -> str:
    """A child's filter text, parenthesised when it is compound."""
    text = child.to_filter_string()
    return text if isinstance(child, Leaf) else f"({text})"


def conjunction(children: Iterable[Expr]) -> Expr:
    """The ``And`` of ``children``, or the only child when there is one (none: ValueError)."""
    items = tuple(children)
    if not items:
        raise ValueError("an empty conjunction has no expression")
    return items[0] if len(items) == 1 else And(items)


def disjunction(children: Iterable[Expr]) -> Expr:
    """The ``Or`` of ``children``, or the only child when there is one (none: ValueError)."""
    items = tuple(children)
    if not items:
        raise ValueError("an empty disjunction has no expression")
    return items[0] if len(items) == 1 else Or(items)


def iter_leaves(expr: Expr | None) -> Iterator[Leaf]:
    """Every leaf of ``expr``, left to right, without recursion. O(size of the tree)."""
    if expr is None:
        return
    pending: list[Expr] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, Leaf):
            yield node
        else:
            pending.extend(reversed(node.children))


def depth(expr: Expr) -> int:
    """Levels of And/Or above the deepest leaf (a leaf is 0), without recursion. O(size)."""
    deepest = 0
    pending: list[tuple[Expr, int]] = [(expr, 0)]
    while pending:
        node, level = pending.pop()
        if isinstance(node, Leaf):
            deepest = max(deepest, level)
        else:
            pending.extend((child, level + 1) for child in node.children)
    return deepest
