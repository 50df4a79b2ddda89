"""The tokens of the filter dialect: one regular expression each, and the AST value of a match.

Keys are ``[A-Za-z0-9_]+`` other than a keyword, or back-quoted with ```` for a back-quote.
Literals are strings in either quote (escapes kept, not undone: HMS only strips the quotes),
64-bit integers with an optional minus, dates ``yyyy-mm-dd`` bare or as ``DATE 'yyyy-mm-dd'``,
timestamps ``yyyy-mm-dd hh:mm:ss[.f]`` bare or as ``TIMESTAMP '...'``. Keywords are
case-insensitive. A malformed date, timestamp or integer stops the parse at once
(pyparsing's ParseFatalException), since no other reading of the text could make it valid.
"""

from __future__ import annotations

import re

import pyparsing as pp
from metastore_server.planner.ast import RESERVED_WORDS, Literal, Op, parse_date_text

#: The blanks pyparsing skips between tokens (its default), for patterns spanning tokens.
BLANKS = r"[ \t\n\r]*"
_WORD_END = r"(?![A-Za-z0-9_])"
_NOT_KEYWORD = r"(?!(?i:" + "|".join(sorted(RESERVED_WORDS)) + r")" + _WORD_END + r")"

# Possessive loops never backtrack: a 10 MB literal or key, terminated or not, is one linear
# pass with no regex stack per character or per escape.
STRING = r"'[^'\\]*+(?:\\[\s\S][^'\\]*+)*+'" + "|" + r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"'
QUOTED_KEY = r"`(?:[^`]++|``)++`"
#: Any quoted text: a string literal or a back-quoted key.
QUOTED = STRING + "|" + QUOTED_KEY
ANY_KEY = r"(?:" + QUOTED_KEY + "|" + _NOT_KEYWORD + r"[A-Za-z0-9_]+" + _WORD_END + r")"
KEY = r"(?P<key>" + ANY_KEY + r")"
OPERATOR = r"(?P<op><=>|<=|<>|<|>=|>|==|=|!=|(?i:like)" + _WORD_END + r")"
LITERAL = (
    r"(?:(?i:timestamp)" + BLANKS + r"(?P<tq>['\"])(?P<ts>[^'\"]*)(?P=tq)"
    r"|(?i:date)" + BLANKS + r"(?P<dq>['\"])(?P<date>[^'\"]*)(?P=dq)"
    r"|(?P<bare_ts>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?)"
    r"(?![\w:.])"
    r"|(?P<bare_date>[0-9]+-[0-9]+-[0-9]+)(?![\w:.-])"
    r"|(?P<int>-?[0-9]+)(?![\w.-])"
    r"|(?P<str>" + STRING + "))"
)
#: The tokens met most, as one pattern: AND, OR, ')', a '(' that cannot open a condition (one
#: that can is ``(key) IN`` or ``(STRUCT(...)) IN``), and a whole ``key op literal`` condition.
FAST = (
    r"(?i:(?P<and>and)|(?P<or>or))" + _WORD_END + r"|(?P<close>\))"
    r"|(?P<open>\()(?!" + BLANKS + r"(?:" + ANY_KEY + BLANKS + r"\)|(?i:struct)" + BLANKS + r"\())"
    r"|" + KEY + BLANKS + OPERATOR + BLANKS + LITERAL
)

_INT64 = (-(2**63), 2**63 - 1)
_INT64_DIGITS = 19
_OPERATORS = {"=": Op.EQ, "==": Op.EQ, "!=": Op.NE, "<>": Op.NE, "<": Op.LT, "<=": Op.LE,
              ">": Op.GT, ">=": Op.GE, "LIKE": Op.LIKE}  # fmt: skip


def key_of(m: re.Match[str]) -> str:
    """The key a KEY match names, back-quotes removed."""
    text = m["key"]
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


def operator_of(m: re.Match[str]) -> Op:
    """The operator of an OPERATOR match; ``<=>`` is refused as HMS 4 does."""
    if m["op"] == "<=>":
        reason = "Unsupported comparison operator '<=>'"
        raise pp.ParseFatalException(m.string, m.start("op"), reason)
    return _OPERATORS[m["op"].upper()]


def literal_of(m: re.Match[str]) -> Literal:
    """The literal of a LITERAL match."""
    if m["str"] is not None:
        return Literal.string(m["str"][1:-1])
    if m["int"] is not None:
        # Python refuses int() of more than 4300 digits: anything past 19 digits is out anyway.
        digits = m["int"].lstrip("-").lstrip("0") or "0"
        if len(digits) <= _INT64_DIGITS:
            value = -int(digits) if m["int"].startswith("-") else int(digits)
            if _INT64[0] <= value <= _INT64[1]:
                return Literal.integer(value)
        digits = m["int"] if len(m["int"]) <= 40 else f"{m['int'][:20]}... ({len(m['int'])} digits)"
        reason = f"integer literal {digits} is out of the 64-bit range"
        raise pp.ParseFatalException(m.string, m.start("int"), reason)
    group = next(name for name in ("date", "bare_date", "ts", "bare_ts") if m[name] is not None)
    text = m[group]
    if group in ("date", "bare_date"):
        day = parse_date_text(text)
        if day is not None:
            return Literal.date(day)
        reason = f"invalid date literal {text!r} (expected a real yyyy-mm-dd date)"
    else:
        try:
            return Literal.timestamp(text)
        except ValueError:
            reason = f"invalid timestamp literal {text!r} (expected yyyy-mm-dd hh:mm:ss[.f])"
    raise pp.ParseFatalException(m.string, m.start(group), reason)
