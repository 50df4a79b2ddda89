"""Java regular expressions matched in linear time, with RE2 (google-re2).

HMS takes several patterns from clients as Java regular expressions: ``LIKE`` in partition and
table filters (Java ``String.matches``), name patterns of ``get_tables``/``get_databases``, the
partition-name whitelist. Java (and Python's ``re``) backtrack, so ``(a+)+b`` against a long run
of ``a`` takes time doubling with each character: one call could hold a server for ever. RE2
matches in time linear in the text, whatever the pattern.

The price is what RE2 does not have. Java constructs that need backtracking are refused with
:class:`RegexError` naming them: back-references (``\\1``, ``\\k<name>``), look-around
(``(?=``, ``(?!``, ``(?<=``, ``(?<!``), possessive quantifiers (``a*+``) and atomic groups
(``(?>``), as are character-class intersections (``[a-z&&[^b]]``). Translated: ``\\Z`` (end but
for a final line break) and Java's POSIX classes ``\\p{Alpha}`` and friends. Everything else
is common to both (``\\Q..\\E``, ``(?<name>``, ``(?i)``, ``\\w`` and ``\\d`` as ASCII classes).
One difference remains: Java's ``.`` stops at any line terminator (``\\r``, ``\\u0085``, ...),
RE2's only at ``\\n``.
"""

from __future__ import annotations

from collections.abc import Callable

import re2

#: Java's POSIX character classes (``\\p{Name}``) as RE2's ``[:name:]``.
_POSIX = {
    "Lower": "lower", "Upper": "upper", "ASCII": "ascii", "Alpha": "alpha", "Digit": "digit",
    "Alnum": "alnum", "Punct": "punct", "Graph": "graph", "Print": "print", "Blank": "blank",
    "Cntrl": "cntrl", "XDigit": "xdigit", "Space": "space",
}  # fmt: skip
_UNSUPPORTED = (
    ("(?=", "look-ahead"),
    ("(?!", "negative look-ahead"),
    ("(?<=", "look-behind"),
    ("(?<!", "negative look-behind"),
    ("(?>", "an atomic group"),
)

Matcher = Callable[[str], bool]


class RegexError(ValueError):
    """A pattern that is not a valid regular expression, or needs backtracking."""


def _options(dot_matches_newline: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.dot_nl = dot_matches_newline
    return options


def translate(pattern: str) -> str:
    """``pattern`` (Java syntax) in RE2's syntax; RegexError for what RE2 cannot run.
    O(len(pattern))."""
    parts: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        char = pattern[i]
        if pattern.startswith("\\Q", i):  # quoted text: copied as is
            end = pattern.find("\\E", i + 2)
            end = n if end < 0 else end + 2
            parts.append(pattern[i:end])
            i = end
            continue
        if char == "\\" and i + 1 < n:
            parts.append(_escape(pattern, i, in_class))
            i += len(_escape_source(pattern, i))
            continue
        if in_class:
            if pattern.startswith("&&", i):
                raise RegexError("character-class intersection (&&) is not supported")
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            parts.append(char)
            i += 1
            if pattern.startswith("^", i):
                parts.append("^")
                i += 1
            if pattern.startswith("]", i):  # a leading ] is a literal one
                parts.append("\\]")
                i += 1
            continue
        elif char in "*+?}" and pattern.startswith("+", i + 1):
            raise RegexError("possessive quantifiers (such as a*+) are not supported")
        else:
            for opener, what in _UNSUPPORTED:
                if pattern.startswith(opener, i):
                    raise RegexError(f"{what} ({opener}) is not supported")
        parts.append(char)
        i += 1
    return "".join(parts)


def backtracking_safe(pattern: str, max_unbounded: int = 3) -> bool:
    """Whether a backtracking engine (Java's, on HBase region servers) runs ``pattern`` in
    bounded time on short values: no quantified group (``(a+)+``, ``(a|aa)*``: exponential) and
    at most ``max_unbounded`` unbounded quantifiers (``.*`` runs nest: polynomial of that
    degree). Conservative: False may be said of a harmless pattern. O(len(pattern))."""
    i, n = 0, len(pattern)
    in_class = False
    unbounded = 0
    while i < n:
        char = pattern[i]
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            i = n if end < 0 else end + 2
            continue
        if char == "\\":
            i += len(_escape_source(pattern, i)) if i + 1 < n else 1
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 2 if pattern.startswith(("[]", "[^"), i) else 1
            continue
        elif char == ")" and i + 1 < n and pattern[i + 1] in "*+?{":
            return False
        elif char in "*+" or (char == "{" and _open_ended(pattern, i)):
            unbounded += 1
        i += 1
    return unbounded <= max_unbounded


def _open_ended(pattern: str, i: int) -> bool:
    """Whether the ``{`` at ``i`` opens a repetition with no upper bound (``{2,}``)."""
    close = pattern.find("}", i)
    return close > i and pattern[close - 1] == ","


def _escape_source(pattern: str, i: int) -> str:
    """The escape sequence starting at ``i`` (a backslash) as written."""
    if pattern.startswith(("\\p{", "\\P{", "\\k<"), i):
        close = "}" if pattern[i + 2] == "{" else ">"
        end = pattern.find(close, i + 3)
        return pattern[i : len(pattern) if end < 0 else end + 1]
    return pattern[i : i + 2]


def _escape(pattern: str, i: int, in_class: bool) -> str:
    source = _escape_source(pattern, i)
    letter = source[1]
    if letter.isdigit() and letter != "0" or letter == "k":
        raise RegexError(f"back-references ({source}) are not supported")
    if letter == "Z" and not in_class:
        return "(?:\\n?\\z)"
    if letter in "pP" and source[2:3] == "{":
        name = source[3:-1].removeprefix("Is")
        if name in _POSIX:
            negate = "^" if letter == "P" else ""
            posix = f"[:{negate}{_POSIX[name]}:]"
            return posix if in_class else f"[{posix}]"
    return source


def compile_java(pattern: str, *, dot_matches_newline: bool = False) -> re2._Regexp:
    """A compiled RE2 pattern of the Java regular expression ``pattern``; RegexError when it is
    invalid or needs backtracking."""
    regex = translate(pattern)
    try:
        return re2.compile(regex, _options(dot_matches_newline))
    except re2.error as err:
        raise RegexError(_text(err)) from None


def compile_re2(regex: str, *, dot_matches_newline: bool = False) -> re2._Regexp:
    """A compiled RE2 pattern of ``regex`` (already in RE2's syntax); RegexError if invalid."""
    try:
        return re2.compile(regex, _options(dot_matches_newline))
    except re2.error as err:
        raise RegexError(_text(err)) from None


def full_matcher(pattern: str) -> Matcher:
    """Java ``String.matches(pattern)``: whether the whole value matches. RegexError as
    :func:`compile_java`."""
    return matcher_of(compile_java(pattern))


def matcher_of(compiled: re2._Regexp) -> Matcher:
    """Whether the whole value matches ``compiled``. A value holding a lone surrogate (not
    UTF-8, which RE2 reads) is matched with U+FFFD in its place, one character as in Java."""

    def matches(value: str) -> bool:
        try:
            return compiled.fullmatch(value) is not None
        except UnicodeEncodeError:
            scrubbed = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return compiled.fullmatch(scrubbed) is not None

    return matches


def escape(text: str) -> str:
    """``text`` as an RE2 pattern matching exactly it."""
    escaped: str = re2.escape(text)
    return escaped


def _text(err: re2.error) -> str:
    detail = err.args[0] if err.args else str(err)
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
