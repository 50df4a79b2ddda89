"""The HMS partition filter dialect (Hive 2.3/3.x ``Filter.g`` plus the 4.x additions) in pyparsing.

    filter    := orExpr?                        orExpr := andExpr (OR andExpr)*
    andExpr   := term (AND term)*               term   := '(' orExpr ')' | condition
    condition := key op literal | literal op key
               | key NOT? BETWEEN literal AND literal
               | ('(' key ')' | key) NOT? IN '(' literal (',' literal)* ')'
               | ('(' struct ')' | struct) NOT? IN '(' row (',' row)* ')'
    struct    := STRUCT '(' key (',' key)* ')'
    row       := CONST? STRUCT '(' literal (',' literal)* ')'
    op        := = | == | != | <> | < | <= | > | >= | LIKE       (<=> is refused)

Keys and literals are described in ``planner.tokens``. The special forms are rewritten on the
spot: ``k BETWEEN a AND b`` is ``k >= a AND k <= b`` (NOT: ``k < a OR k > b``), ``k IN (a, b)``
is ``k = a OR k = b`` (NOT: ``k != a AND k != b``), a STRUCT IN is an OR of ANDs, and
``v op k`` is ``k op' v`` with the operator flipped. ``'v' LIKE k`` is refused (as HMS does).

pyparsing reads the text as a flat stream of conditions, AND, OR and parentheses, and
``planner.precedence`` builds the tree from it with an explicit stack, so nothing recurses per
nesting level. A run of the most common tokens is one regular expression match, which keeps
parsing O(n) with a small constant: a 10,000-term OR parses in about 0.1 s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import accumulate

import pyparsing as pp
from metastore_server.planner import tokens as tk
from metastore_server.planner.ast import And, Expr, Leaf, Op, Or, conjunction, disjunction
from metastore_server.planner.errors import FilterSyntaxError, UnsupportedFilterError
from metastore_server.planner.precedence import StructureError, Token, TokenKind, assemble

# --- building the tree of one condition ---------------------------------------------------------


def _key_first(_s: str, _loc: int, t: pp.ParseResults) -> Leaf:
    key, op, value = t
    return Leaf(key, op, value)


def _value_first(s: str, loc: int, t: pp.ParseResults) -> Leaf:
    value, op, key = t
    if op is Op.LIKE:
        raise UnsupportedFilterError(
            f"Error parsing partition filter: LIKE needs the partition key on its left and the "
            f"pattern on its right, not {value} LIKE {key} (at position {loc})"
        )
    return Leaf(key, op.flipped(), value)


def _between(_s: str, _loc: int, t: pp.ParseResults) -> Expr:
    key, low, high = t["key"], t["low"], t["high"]
    if "negated" in t:
        return Or((Leaf(key, Op.LT, low), Leaf(key, Op.GT, high)))
    return And((Leaf(key, Op.GE, low), Leaf(key, Op.LE, high)))


def _in(_s: str, _loc: int, t: pp.ParseResults) -> Expr:
    key = t["key"]
    if "negated" in t:
        return conjunction(Leaf(key, Op.NE, value) for value in t["values"])
    return disjunction(Leaf(key, Op.EQ, value) for value in t["values"])


def _struct_in(s: str, loc: int, t: pp.ParseResults) -> Expr:
    keys, negated = list(t["keys"]), "negated" in t
    rows = []
    for row in t["rows"]:
        if len(row) != len(keys):
            reason = f"STRUCT IN names {len(keys)} keys but a struct has {len(row)} values"
            raise pp.ParseFatalException(s, loc, reason)
        pairs = zip(keys, row, strict=True)
        if negated:
            rows.append(disjunction(Leaf(k, Op.NE, v) for k, v in pairs))
        else:
            rows.append(conjunction(Leaf(k, Op.EQ, v) for k, v in pairs))
    return conjunction(rows) if negated else disjunction(rows)


# --- the grammar -------------------------------------------------------------------------------


def _token(
    pattern: str, name: str, value: Callable[[re.Match[str]], object]
) -> pp.ParserElement:
    """A token: a regular expression whose match ``value`` turns into an AST value."""
    element = pp.Regex(pattern, as_match=True).set_name(name)
    return element.set_parse_action(lambda _s, _loc, t: value(t[0]))


AND, OR, NOT, IN, BETWEEN, STRUCT, CONST = (
    pp.CaselessKeyword(word).set_name(word)
    for word in ("AND", "OR", "NOT", "IN", "BETWEEN", "STRUCT", "CONST")
)
LPAR, RPAR = pp.Suppress("(").set_name("'('"), pp.Suppress(")").set_name("')'")
KEY = _token(tk.KEY, "partition key", tk.key_of)
OPERATOR = _token(tk.OPERATOR, "comparison operator", tk.operator_of)
LITERAL = _token(tk.LITERAL, "literal", tk.literal_of)


def _list_of(item: pp.ParserElement) -> pp.ParserElement:
    """``( item, item, ... )`` as one group."""
    return pp.Group(LPAR + pp.DelimitedList(item) + RPAR)


_NEGATED = pp.Opt(NOT)("negated")
_STRUCT = STRUCT + _list_of(KEY)("keys")
_ROW = pp.Opt(CONST).suppress() + STRUCT.suppress() + _list_of(LITERAL)

# fmt: off
#: Every condition, token by token (also used to explain why text is not a condition).
CONDITION = (
    (KEY + OPERATOR + LITERAL).set_parse_action(_key_first)
    | (KEY("key") + _NEGATED + BETWEEN + LITERAL("low") + AND + LITERAL("high"))
        .set_parse_action(_between)
    | ((LPAR + KEY("key") + RPAR | KEY("key")) + _NEGATED + IN + _list_of(LITERAL)("values"))
        .set_parse_action(_in)
    | ((LPAR + _STRUCT + RPAR | _STRUCT) + _NEGATED + IN + _list_of(_ROW)("rows"))
        .set_parse_action(_struct_in)
    | (LITERAL + OPERATOR + KEY).set_parse_action(_value_first)
).set_name("condition")

#: The filter as a stream: runs of fast tokens (one match however long the run), conditions and
#: '(' in any order, then the position where reading stopped.
STREAM = (
    pp.ZeroOrMore(
        pp.Regex("(?:" + tk.BLANKS + "(?:" + tk.FAST + "))+", as_match=True)
            .set_parse_action(lambda _s, _loc, t: _fast_tokens(t[0]))
        | CONDITION.copy()
            .add_parse_action(lambda _s, loc, t: Token(TokenKind.CONDITION, loc, t[0]))
        | pp.Literal("(").set_parse_action(lambda _s, loc, t: Token(TokenKind.OPEN, loc))
    )
    + pp.Empty().set_parse_action(lambda _s, loc, t: Token(TokenKind.END, loc))
).parse_with_tabs()
# fmt: on

_BLANKS = " \t\n\r"  # what pyparsing skips between tokens
#: The deepest nesting of parentheses a filter may have (redundant ones included).
MAX_PARENTHESES = 100_000
#: Most comparisons a filter may have (an IN list counts one per value).
MAX_CONDITIONS = 50_000
_COMPARISON_MARKS = re.compile(r"<=>|<=|<>|>=|!=|==|[=<>,]|(?i:\b(?:like|in|between)\b)")
_QUOTED = re.compile(tk.QUOTED)
_NOT_PARENTHESES = re.compile(r"[^()]+")
_DEPTH_STEP = {"(": 1, ")": -1}
_DIAGNOSE = CONDITION.copy().parse_with_tabs()
_FAST_ONE = re.compile(tk.BLANKS + "(?P<at>)(?:" + tk.FAST + ")")
_FAST_KINDS = {"and": TokenKind.AND, "or": TokenKind.OR, "close": TokenKind.CLOSE,
               "open": TokenKind.OPEN}  # fmt: skip


def _fast_tokens(run: re.Match[str]) -> list[Token]:
    """The stream tokens of a run of fast tokens, split by the same pattern one at a time."""
    found, position, text = [], run.start(), run.string
    while position < run.end():
        m = _FAST_ONE.match(text, position)
        assert m is not None
        kind = _FAST_KINDS.get(m.lastgroup or "")  # a condition ends in a literal's group
        if kind is None:
            leaf = Leaf(tk.key_of(m), tk.operator_of(m), tk.literal_of(m))
            found.append(Token(TokenKind.CONDITION, m.start("at"), leaf))
        else:
            found.append(Token(kind, m.start("at")))
        position = m.end()
    return found


# --- parsing -----------------------------------------------------------------------------------


def parse_filter(text: str | bytes) -> Expr | None:
    """The tree of a filter, or None when it is empty (match every partition). O(n).

    Blank text is not empty: like HMS, it is a syntax error. Raises FilterSyntaxError (message
    starting "Error parsing partition filter") for text that is not in the dialect (bytes that
    are not UTF-8, parentheses nested deeper than ``MAX_PARENTHESES``, more than
    ``MAX_CONDITIONS`` comparisons, ...), and
    UnsupportedFilterError for a reversed LIKE (``'a%' LIKE key``).
    """
    if isinstance(text, bytes | bytearray):
        text = _decoded(bytes(text))
    if not text:
        return None
    if not text.strip(_BLANKS):
        raise FilterSyntaxError("the filter is blank", text=text, position=0)
    _check_size(text)
    try:
        stream = list(STREAM.parse_string(text))
    except pp.ParseBaseException as err:
        raise FilterSyntaxError(err.msg, text=text, position=err.loc) from None
    if stream[-1].position < len(text.rstrip(_BLANKS)):
        stream[-1] = Token(TokenKind.JUNK, stream[-1].position)
    try:
        return assemble(stream)
    except StructureError as err:
        reason, position = err.reason, err.position
        if err.wants_condition:
            reason, position = _why_not_a_condition(text, position)
        raise FilterSyntaxError(reason, text=text, position=position) from None


def _decoded(data: bytes) -> str:
    """Filter bytes as text (a Thrift string that is not UTF-8 arrives as bytes)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        reason = (
            f"the filter is not UTF-8 text (byte 0x{data[err.start]:02x} at byte offset "
            f"{err.start}: {err.reason})"
        )
        raise FilterSyntaxError(reason) from None


def _check_size(text: str) -> None:
    """Refuse, before parsing, parentheses nested deeper than MAX_PARENTHESES (each open one
    holds memory until it closes) and more than MAX_CONDITIONS comparisons. Quoted text is
    left out. O(n) in C, and only run on text long or nested enough to need it."""
    deep = text.count("(") > MAX_PARENTHESES
    if not deep and len(text) <= 2 * MAX_CONDITIONS:  # a comparison takes 2 characters or more
        return
    bare = _QUOTED.sub("", text)
    unmatched = min((i for i in map(bare.find, "'\"`") if i >= 0), default=len(bare))
    bare = bare[:unmatched]  # the rest is inside an unterminated literal (an error anyway)
    if deep:
        parentheses = _NOT_PARENTHESES.sub("", bare)
        depths = accumulate(map(_DEPTH_STEP.__getitem__, parentheses))
        if any(depth > MAX_PARENTHESES for depth in depths):  # stops at the first too deep
            raise FilterSyntaxError(
                f"filter nested too deeply: parentheses deeper than {MAX_PARENTHESES} levels"
            )
    # Every comparison has an operator, IN, BETWEEN or a comma (IN lists): count those.
    if len(_COMPARISON_MARKS.findall(bare)) > MAX_CONDITIONS:
        raise FilterSyntaxError(f"filter too complex: more than {MAX_CONDITIONS} comparisons")


def _why_not_a_condition(text: str, position: int) -> tuple[str, int]:
    """Why no condition starts at ``position``, and where the text stops making sense.

    A condition may also have started at a '(' just before (``(key) IN (...)``); the diagnosis
    that gets furthest wins.
    """
    starts = [position]
    before = text[:position].rstrip()
    if before.endswith("("):
        starts.append(len(before) - 1)
    reason, furthest = "expected a condition or '('", position
    for start in starts:
        try:
            _DIAGNOSE.parse_string(text[start:])
        except pp.ParseBaseException as err:
            if err.loc > 0 and start + err.loc > furthest:
                reason, furthest = err.msg[:1].lower() + err.msg[1:], start + err.loc
    furthest += len(text[furthest:]) - len(text[furthest:].lstrip(_BLANKS))
    quote = text[furthest : furthest + 1]
    if quote in ("'", '"', "`") and text.find(quote, furthest + 1) < 0:
        reason = "unterminated " + ("back-quoted key" if quote == "`" else "string literal")
    return reason, furthest
