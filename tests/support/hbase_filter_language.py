"""The part of HBase's filter language the HBase test double understands (a test helper, not
HBase: it stands in for HBase's ``ParseFilter`` in CI).

Supported, with HBase's meaning:

* ``SingleColumnValueFilter('family', 'qualifier', <op>, '<type>:<value>'
  [, filterIfMissing, latestVersionOnly])``: a row passes when its cell ``family:qualifier``
  compares to the value with ``op`` (``<  <=  =  !=  >=  >``), the cell on the left; a row
  without the cell passes unless ``filterIfMissing`` is true (the four-argument form: false).
  Comparators: ``binary`` (unsigned byte order), ``binaryprefix`` (the cell's first
  len(value) bytes), ``regexstring`` (Java regex ``find`` with DOTALL on the cell decoded as
  UTF-8, malformed bytes becoming U+FFFD; ``=`` found, ``!=`` not found) and ``substring``
  (case-insensitive containment); ``regexstring`` and ``substring`` only with ``=`` / ``!=``.
* ``AND`` / ``OR`` (AND binds tighter), parentheses, whitespace anywhere between tokens.
* Quoted arguments are raw bytes between single quotes, a quote doubled inside.

Anything else (other filter names, SKIP / WHILE, bad syntax) raises ``FilterLanguageError``
with HBase's wording where it has one ("Filter Name X not supported"). A filter is parsed once
into a test of a row (``{b"family:qualifier": value}``, latest versions only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

RowTest = Callable[[Mapping[bytes, bytes]], bool]

_OPERATORS = (b"<=", b">=", b"!=", b"<", b">", b"=")
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_COMPARISONS: dict[bytes, Callable[[int], bool]] = {
    b"<": lambda c: c < 0,
    b"<=": lambda c: c <= 0,
    b"=": lambda c: c == 0,
    b"!=": lambda c: c != 0,
    b">=": lambda c: c >= 0,
    b">": lambda c: c > 0,
}


class FilterLanguageError(ValueError):
    """A filter string the double (or HBase) does not accept."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "quoted", "op", "(", ")", ","
    value: bytes
    at: int


def _tokens(text: bytes) -> list[_Token]:
    """The tokens of a filter string. O(len(text))."""
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i : i + 1]
        if char in b" \t\r\n":
            i += 1
        elif char in (b"(", b")", b","):
            out.append(_Token(char.decode(), char, i))
            i += 1
        elif char == b"'":
            start, i, parts = i, i + 1, []
            while True:
                end = text.find(b"'", i)
                if end < 0:
                    raise FilterLanguageError(f"unterminated quoted argument at {start}")
                parts.append(text[i:end])
                if text[end + 1 : end + 2] == b"'":
                    parts.append(b"'")
                    i = end + 2
                else:
                    i = end + 1
                    break
            out.append(_Token("quoted", b"".join(parts), start))
        else:
            for op in _OPERATORS:
                if text.startswith(op, i):
                    out.append(_Token("op", op, i))
                    i += len(op)
                    break
            else:
                word = _WORD.match(text, i)
                if word is None:
                    raise FilterLanguageError(f"unexpected {text[i : i + 10]!r} at {i}")
                out.append(_Token("word", word.group(), i))
                i = word.end()
    return out


class _Parser:
    def __init__(self, text: bytes) -> None:
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, kind: str, what: str) -> _Token:
        token = self.peek()
        if token is None or token.kind != kind:
            found = "the end" if token is None else repr(token.value)
            raise FilterLanguageError(f"expected {what}, found {found}")
        self.pos += 1
        return token

    def keyword(self, word: bytes) -> bool:
        token = self.peek()
        if token is not None and token.kind == "word" and token.value == word:
            self.pos += 1
            return True
        return False

    def parse(self) -> RowTest:
        if not self.tokens:
            raise FilterLanguageError("an empty filter string")
        test = self.disjunction()
        if self.peek() is not None:
            raise FilterLanguageError(f"unexpected {self.peek().value!r}")  # type: ignore[union-attr]
        return test

    def disjunction(self) -> RowTest:
        parts = [self.conjunction()]
        while self.keyword(b"OR"):
            parts.append(self.conjunction())
        if len(parts) == 1:
            return parts[0]
        return lambda row: any(part(row) for part in parts)

    def conjunction(self) -> RowTest:
        parts = [self.factor()]
        while self.keyword(b"AND"):
            parts.append(self.factor())
        if len(parts) == 1:
            return parts[0]
        return lambda row: all(part(row) for part in parts)

    def factor(self) -> RowTest:
        token = self.peek()
        if token is not None and token.kind == "(":
            self.pos += 1
            inner = self.disjunction()
            self.take(")", "')'")
            return inner
        name = self.take("word", "a filter").value
        if name != b"SingleColumnValueFilter":
            raise FilterLanguageError(f"Filter Name {name.decode('latin-1')} not supported")
        return self.single_column_value_filter()

    def single_column_value_filter(self) -> RowTest:
        self.take("(", "'(' after the filter name")
        family = self.take("quoted", "a quoted family").value
        self.take(",", "','")
        qualifier = self.take("quoted", "a quoted qualifier").value
        self.take(",", "','")
        op = self.take("op", "a compare operator").value
        self.take(",", "','")
        comparator = self.take("quoted", "a quoted comparator").value
        if_missing = False
        token = self.peek()
        if token is not None and token.kind == ",":
            self.pos += 1
            if_missing = self.boolean()
            self.take(",", "','")
            self.boolean()  # latestVersionOnly: the double keeps one version
        self.take(")", "')'")
        return _single_column_value(family + b":" + qualifier, op, comparator, if_missing)

    def boolean(self) -> bool:
        word = self.take("word", "true or false").value.lower()
        if word not in (b"true", b"false"):
            raise FilterLanguageError(f"expected true or false, found {word!r}")
        return word == b"true"


def _single_column_value(column: bytes, op: bytes, comparator: bytes, if_missing: bool) -> RowTest:
    kind, colon, value = comparator.partition(b":")
    if not colon:
        raise FilterLanguageError(f"comparator {comparator!r} has no type")
    compare = _comparator(kind, op, value)
    holds = _COMPARISONS[op]

    def test(row: Mapping[bytes, bytes]) -> bool:
        cell = row.get(column)
        if cell is None:
            return not if_missing
        return holds(compare(cell))

    return test


def _comparator(kind: bytes, op: bytes, value: bytes) -> Callable[[bytes], int]:
    """cell -> the sign of (cell compared to value)."""
    if kind in (b"regexstring", b"substring") and op not in (b"=", b"!="):
        raise FilterLanguageError(
            "A regexstring comparator and substring comparator can only be used with EQUAL "
            "and NOT_EQUAL"
        )
    if kind == b"binary":
        return lambda cell: (cell > value) - (cell < value)
    if kind == b"binaryprefix":
        width = len(value)
        return lambda cell: (cell[:width] > value) - (cell[:width] < value)
    if kind == b"regexstring":
        try:
            pattern = re.compile(java_to_python_regex(value.decode("utf-8")), re.DOTALL)
        except (re.error, UnicodeDecodeError) as error:
            raise FilterLanguageError(f"bad regular expression {value!r}: {error}") from error
        return lambda cell: 0 if pattern.search(cell.decode("utf-8", "replace")) else 1
    if kind == b"substring":
        needle = value.decode("utf-8", "replace").lower()
        return lambda cell: 0 if needle in cell.decode("utf-8", "replace").lower() else 1
    raise FilterLanguageError(f"Incorrect comparatorType {kind.decode('latin-1')}")


def parse_filter(text: bytes) -> RowTest:
    """The test of a row that a filter string stands for; FilterLanguageError when the double
    (or HBase) refuses it. O(len(text))."""
    if not isinstance(text, bytes):
        raise TypeError("a filter string is bytes")
    return _Parser(text).parse()


def java_to_python_regex(pattern: str) -> str:
    """A Java regular expression rewritten where Python spells the same thing differently (the
    double runs regexstring comparators with Python's backtracking ``re``, as HBase runs them
    with Java's).

    Handled: ``\\Q...\\E`` quoting, ``(?<name>`` named groups, ``\\z`` (end of input). Everything
    else is passed through; Java-only constructs Python lacks (``\\p{Alpha}``, ...) then fail to
    compile and surface as an invalid pattern. O(len(pattern)).
    """
    parts: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            end = n if end < 0 else end
            parts.append(re.escape(pattern[i + 2 : end]))
            i = end + 2
        elif pattern.startswith("\\z", i):
            parts.append("\\Z")
            i += 2
        elif pattern[i] == "\\":
            parts.append(pattern[i : i + 2])
            i += 2
        elif pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3].isalpha():
            parts.append("(?P<")
            i += 3
        else:
            parts.append(pattern[i])
            i += 1
    return "".join(parts)
