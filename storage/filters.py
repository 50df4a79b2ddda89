"""Residual filters: one AST, two executors.

``compile_residual`` compiles a residual once for a table's keys into everything a read needs
(``CompiledResidual``): the Python predicate, the HBase filter string, the key needles and the
keys the residual reads. The functions below give one of them each.

* ``residual_predicate``: the residual evaluated in Python on a row's raw values (the embedded
  backend, and the final check of every backend): ``planner.evaluate.compile_predicate``.
* ``hbase_filter``: the residual as a standard HBase filter-language string that region servers
  run on the per-key columns ``k:<i>`` (family ``k``, qualifier the key's index in decimal, value
  ``storage.codec.encode_value(kind, raw)``), using only stock filters::

      SingleColumnValueFilter('k', '<i>', <op>, '<comparator>', true, true)

  (filterIfMissing and latestVersionOnly both true) joined by AND / OR with parentheses.

Leaf by leaf:

* STRING keys, and ``=`` / ``!=`` with unparseable text on typed keys: the encoding keeps order
  and equality, so ``binary:<encode_value(kind, literal)>`` with the same operator is exact.
* typed comparisons: ``binaryprefix:<tag + fixed part>`` for ``=`` and ``!=`` (all spellings of
  a number share it), ``binary`` bounds for the others, and ``< <first raw byte>`` wherever a
  typed comparison could otherwise let an unparseable value (the default partition) through.
* LIKE on a STRING key: ``regexstring:^\\x02(?:p)\\x00\\x00$|\\uFFFD``. HBase runs Java's
  ``find`` (with DOTALL) on the cell decoded as UTF-8; the anchors and the tag/terminator bytes
  make it a whole-value match, and a cell whose text does not decode cleanly (a NUL or a lone
  surrogate in the value) always passes. SQL LIKE patterns (``like="sql"``) are translated.
  A pattern a backtracking engine could take exponential (or high polynomial) time on
  (``planner.java_regex.backtracking_safe``: a quantified group, more than three unbounded
  repetitions) is not sent: one hostile filter must not stall region servers. It is dropped
  (TRUE) and matched in this process only, with RE2 in linear time.
* What binary comparators cannot say (text order or LIKE on a typed key) is widened: LIKE on a
  typed key keeps the typed values, the rest is dropped (TRUE). A dropped leaf under AND just
  disappears; under OR it makes the whole OR TRUE. So the server-side filter is always a SUPERSET
  of the residual, and the backend re-checks every row it returns with ``residual_predicate``.
  (Java and Python regular expressions differ in rare constructs; the superset argument assumes
  they agree on the pattern, as HMS itself evaluates LIKE with Java.)

HBase reads the quoted argument's bytes as they are (a single quote is doubled), so the binary
values go into the filter raw. ``hbase_filter`` returns them as text with one character per byte
(Latin-1); ``hbase_filter_bytes`` gives the bytes to send (never encode the text as UTF-8).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias, cast

from metastore_server.planner.ast import And, Expr, Leaf, Op, Or
from metastore_server.planner.bounds import INT64_MAX, INT64_MIN
from metastore_server.planner.errors import UnknownKeyError
from metastore_server.planner.evaluate import (
    Domain,
    Predicate,
    comparison_domain,
    compile_predicate,
    referenced_keys,
)
from metastore_server.planner.java_regex import backtracking_safe
from metastore_server.planner.like import regex_matcher
from metastore_server.planner.types import KeyKind, key_kind, parse_typed
from metastore_server.storage.codec import (
    encode_component,
    encode_value,
    prefix_successor,
    typed_span,
)

FAMILY = "k"

_OPERATORS = {Op.EQ: "=", Op.NE: "!=", Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">="}
_ASCII_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


Columns: TypeAlias = "dict[str, tuple[int, KeyKind]]"
"""The partition keys by lower-cased name: (index, kind)."""


@dataclass(frozen=True)
class CompiledResidual:
    """A residual compiled for one table's partition keys (``compile_residual``)."""

    #: The residual as a test of a row's raw values, in key order (the final word on a row).
    predicate: Predicate
    #: The HBase filter string as the bytes to send (``hbase_filter_bytes``: its text is their
    #: Latin-1 decoding), matching a superset of the residual's rows; None when none helps.
    hbase_filter: bytes | None
    #: Groups of byte strings every passing row key holds one of each (``key_needles``).
    needles: tuple[tuple[bytes, ...], ...]
    #: The indexes of the partition keys the residual reads, ascending.
    keys: tuple[int, ...]


def compile_residual(
    expr: Expr, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> CompiledResidual:
    """``expr`` compiled once for the partition keys ``keys`` ((name, Hive type), in key
    order): predicate, HBase filter, key needles and the keys it reads. Raises what
    ``compile_predicate`` raises (UnknownKeyError, FilterError). O(size of the tree)."""
    columns = _columns(keys)
    needles = _needle_groups(expr, columns, like)
    predicate = compile_predicate(expr, keys, like=like)
    text = _filter_text(expr, columns, like)
    named = referenced_keys(expr)
    return CompiledResidual(
        predicate=predicate,
        hbase_filter=None if text is None else text.encode("latin-1"),
        needles=needles,
        keys=tuple(i for i, (name, _type) in enumerate(keys) if name.lower() in named),
    )


def _columns(keys: Sequence[tuple[str, str]]) -> Columns:
    return {name.lower(): (i, key_kind(hive_type)) for i, (name, hive_type) in enumerate(keys)}


def residual_predicate(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> Predicate:
    """The residual as a test of a row's raw values (in key order); None passes every row."""
    return compile_predicate(expr, keys, like=like)


def hbase_filter(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> str | None:
    """The residual as an HBase filter string, one character per byte (Latin-1), matching a
    superset of its rows; None when no server-side filter helps. O(size of the tree)."""
    if expr is None:
        return None
    return _filter_text(expr, _columns(keys), like)


def _filter_text(expr: Expr, columns: Columns, like: str) -> str | None:
    node = _Translator(columns, like).translate(expr)
    if node is TRUE:
        return None
    if node is FALSE:
        return _scvf(0, "<", "binary", b"")  # no cell is below the empty string
    return _render(node)


def hbase_filter_bytes(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> bytes | None:
    """``hbase_filter`` as the bytes to send to HBase (e.g. happybase's ``filter=``)."""
    text = hbase_filter(expr, keys, like=like)
    return None if text is None else text.encode("latin-1")


# --- the tree of a filter string ----------------------------------------------------------------


class _Constant:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


TRUE = _Constant("TRUE")
FALSE = _Constant("FALSE")

# A node: TRUE, FALSE, one filter call (str), or ("AND" | "OR", children).
Node: TypeAlias = "_Constant | str | tuple[str, list[Node]]"


def _combine(op: str, children: Sequence[Node]) -> Node:
    """AND / OR of nodes with constants folded and same-operator children spliced."""
    absorbing, neutral = (FALSE, TRUE) if op == "AND" else (TRUE, FALSE)
    kept: list[Node] = []
    for child in children:
        if child is absorbing:
            return absorbing
        if child is neutral:
            continue
        if isinstance(child, tuple) and child[0] == op:
            kept.extend(child[1])
        else:
            kept.append(child)
    if not kept:
        return neutral
    return kept[0] if len(kept) == 1 else (op, kept)


def _render(node: Node) -> str:
    if isinstance(node, str):
        return node
    assert isinstance(node, tuple)
    op, children = node
    return f" {op} ".join(c if isinstance(c, str) else f"({_render(c)})" for c in children)


def _scvf(index: int, op: str, comparator: str, value: bytes) -> str:
    """One SingleColumnValueFilter on column ``k:<index>``."""
    argument = (comparator.encode("ascii") + b":" + value).decode("latin-1").replace("'", "''")
    return f"SingleColumnValueFilter('{FAMILY}', '{index}', {op}, '{argument}', true, true)"


class _Translator:
    """Leaves to filter calls over the columns ``{lower name: (index, kind)}``."""

    def __init__(self, columns: Columns, like: str) -> None:
        if like not in ("regex", "sql"):
            raise ValueError(f"like must be 'regex' or 'sql', not {like!r}")
        self.columns = columns
        self.like = like

    def translate(self, expr: Expr) -> Node:
        if isinstance(expr, Leaf):
            return self.leaf(expr)
        op = "AND" if isinstance(expr, And) else "OR"
        assert isinstance(expr, And | Or)
        return _combine(op, [self.translate(child) for child in expr.children])

    def leaf(self, leaf: Leaf) -> Node:
        column = self.columns.get(leaf.key.lower())
        if column is None:
            raise UnknownKeyError(leaf.key)
        index, kind = column
        if leaf.op is Op.LIKE:
            return self._like(index, kind, leaf.value.text)
        domain, operand = comparison_domain(kind, leaf.value)
        if domain is not Domain.TEXT:
            # Every domain but TEXT has a typed operand (comparison_domain).
            return _typed(index, kind, leaf.op, cast(int | _dt.date, operand))
        text = str(operand)
        if kind is KeyKind.STRING or (
            leaf.op in (Op.EQ, Op.NE) and parse_typed(kind, text) is None
        ):
            return _scvf(index, _OPERATORS[leaf.op], "binary", encode_value(kind, text))
        return TRUE  # text order on a typed key: not expressible, re-checked in Python

    def _like(self, index: int, kind: KeyKind, pattern: str) -> Node:
        if kind is not KeyKind.STRING:
            return _typed_only(index, kind)
        if self.like == "regex":
            regex_matcher(pattern)  # the same FilterError as the Python predicate
            body = _close_quote(pattern)
        else:
            body = sql_like_to_java_regex(pattern)
        if not backtracking_safe(body):
            return TRUE  # region servers backtrack (Java): matched here only, in linear time
        regex = "^\\x02(?:" + body + ")\\x00\\x00$|\\uFFFD"
        return _scvf(index, "=", "regexstring", regex.encode("utf-8", "surrogatepass"))


def _typed(index: int, kind: KeyKind, op: Op, value: int | _dt.date) -> Node:
    """A typed comparison on the encoded column, never passing unparseable values."""
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        below = value < INT64_MIN
        everything = op is Op.NE or (op in (Op.GT, Op.GE) if below else op in (Op.LT, Op.LE))
        return _typed_only(index, kind) if everything else FALSE
    fixed = encode_component(kind, value)
    following = prefix_successor(fixed)
    assert following is not None
    if op is Op.EQ:
        return _scvf(index, "=", "binaryprefix", fixed)
    if op is Op.LT:
        return _scvf(index, "<", "binary", fixed)
    if op is Op.LE:
        return _scvf(index, "<", "binary", following)
    if op is Op.NE:
        first = _scvf(index, "!=", "binaryprefix", fixed)
    elif op is Op.GT:
        first = _scvf(index, ">=", "binary", following)
    else:
        first = _scvf(index, ">=", "binary", fixed)
    return ("AND", [first, _typed_only(index, kind)])


def _typed_only(index: int, kind: KeyKind) -> str:
    """The column holds a typed value (not a raw text such as the default partition)."""
    return _scvf(index, "<", "binary", typed_span(kind)[1])


def _close_quote(pattern: str) -> str:
    """A Java regex with a final ``\\Q`` that has no ``\\E`` closed, so text appended after it
    is not quoted. O(len(pattern))."""
    i, quoting = 0, False
    while i < len(pattern):
        if quoting:
            if pattern.startswith("\\E", i):
                quoting = False
                i += 2
            else:
                i += 1
        elif pattern.startswith("\\Q", i):
            quoting = True
            i += 2
        elif pattern[i] == "\\":
            i += 2
        else:
            i += 1
    return pattern + "\\E" if quoting else pattern


def sql_like_to_java_regex(pattern: str) -> str:
    """A SQL ``LIKE ... ESCAPE '\\'`` pattern as a Java regular expression. O(len(pattern))."""
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            if char == "\\":
                i += 1
                char = pattern[i] if i < len(pattern) else "\\"
            parts.append(_java_literal(char))
        i += 1
    return "".join(parts)


def _java_literal(char: str) -> str:
    """One character matching itself in a Java regex (ASCII punctuation backslashed)."""
    if char.isascii() and char not in _ASCII_ALNUM:
        return "\\" + char
    return char


# --- needles: substrings every matching row key holds -------------------------------------------

#: Most needles one residual may give; past that the prefilter costs more than it saves.
MAX_NEEDLES = 64
#: Most groups (ANDed keys) one residual may give; the smallest are kept.
MAX_GROUPS = 4


def key_needles(
    expr: Expr | None, keys: Sequence[tuple[str, str]], *, like: str = "regex"
) -> tuple[tuple[bytes, ...], ...]:
    """Groups of byte strings such that every row key passing ``expr`` holds at least one
    string of each group (no group: nothing known): the order part of each value an ``=`` pins
    or the start of it a LIKE pattern's literal prefix pins, a group per ANDed key, one group
    joined over OR. A store tests them below its row loop
    (SQLite's ``instr``), so most rejected rows never reach Python; the residual still decides
    each row exactly. O(size of the tree)."""
    if expr is None:
        return ()
    return _needle_groups(expr, _columns(keys), like)


def _needle_groups(expr: Expr, columns: Columns, like: str) -> tuple[tuple[bytes, ...], ...]:
    groups = sorted(_needles(expr, columns, like), key=len)[:MAX_GROUPS]
    return tuple(tuple(sorted(group)) for group in groups)


Groups: TypeAlias = "list[frozenset[bytes]]"


def _needles(expr: Expr, columns: Columns, like: str) -> Groups:
    if isinstance(expr, Leaf):
        return _leaf_needles(expr, columns, like)
    children = [_needles(child, columns, like) for child in expr.children]
    if isinstance(expr, And):
        return [group for child in children for group in child]
    if not all(children):
        return []  # a child that pins nothing: the OR pins nothing either
    # OR: the key holds a string of every group of one child; of its smallest group then.
    union = frozenset().union(*(min(child, key=len) for child in children))
    return [union] if len(union) <= MAX_NEEDLES else []


def _leaf_needles(leaf: Leaf, columns: Columns, like: str) -> Groups:
    column = columns.get(leaf.key.lower())
    if column is None:
        raise UnknownKeyError(leaf.key)
    kind = column[1]
    if leaf.op is Op.LIKE and kind is KeyKind.STRING:
        start = _like_literal_prefix(leaf.value.text, like)
        # The value's encoding without its terminator: every matching value's starts with it.
        return [frozenset((encode_value(kind, start)[:-2],))] if start else []
    if leaf.op is not Op.EQ:
        return []
    domain, operand = comparison_domain(kind, leaf.value)
    if domain is Domain.TEXT:
        return [frozenset((encode_value(kind, str(operand)),))] if kind is KeyKind.STRING else []
    if isinstance(operand, int) and not INT64_MIN <= operand <= INT64_MAX:
        return []
    return [frozenset((encode_component(kind, operand),))]


#: Characters that are themselves in both LIKE dialects (a Java regex and SQL LIKE), outside
#: any construct: a literal prefix is a run of them.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-:/=@#,;'\"<>~")
_QUANTIFIERS = frozenset("?*+{")


def _like_literal_prefix(pattern: str, like: str) -> str:
    """The text every value matching ``pattern`` starts with ("" when none is sure): its
    leading plain characters, less the last one if a quantifier follows it. An alternation
    anywhere (regex ``|``) may bypass the prefix: then nothing is sure."""
    if like == "regex" and "|" in pattern:
        return ""
    plain = _PLAIN - {"_"} if like == "sql" else _PLAIN
    end = 0
    while end < len(pattern) and pattern[end] in plain:
        end += 1
    if like == "regex" and end < len(pattern) and pattern[end] in _QUANTIFIERS:
        end -= 1
    return pattern[:max(end, 0)]
