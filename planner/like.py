"""LIKE patterns as Python matchers: Java regular expressions (Hive 2.3/3.x) and SQL LIKE (Hive 4).

Hive 2.3/3.x evaluate ``key LIKE 'p'`` as Java ``value.matches(p)``: the whole value must match p
as a regular expression (Spark sends ``.*`` for its wildcards). Hive 4 pushes LIKE down as SQL
``LIKE p ESCAPE '\\'``: ``%`` is any run of characters, ``_`` one character, ``\\x`` a literal x.
Either way the result is a function of the raw value; matching is one RE2 ``fullmatch``, in time
linear in the value whatever the pattern (``planner.java_regex``: a Java construct that needs
backtracking is refused as an invalid pattern).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from metastore_server.planner.errors import FilterError
from metastore_server.planner.java_regex import (
    RegexError,
    compile_java,
    compile_re2,
    escape,
    matcher_of,
    translate,
)

Matcher = Callable[[str], bool]


def regex_matcher(pattern: str) -> Matcher:
    """Java ``String.matches(pattern)`` semantics. Raises FilterError for an invalid pattern
    (or one that needs backtracking)."""
    try:
        compiled = compile_java(pattern)
    except RegexError as err:
        raise FilterError(
            f"Invalid LIKE pattern {pattern!r} (a Java regular expression): {err}"
        ) from None
    return matcher_of(compiled)


def sql_like_matcher(pattern: str) -> Matcher:
    """SQL ``LIKE pattern ESCAPE '\\'`` semantics (a trailing lone backslash is a literal one)."""
    return matcher_of(compile_re2(sql_like_to_re2(pattern), dot_matches_newline=True))


def any_matcher(patterns: Sequence[str], dialect: str) -> Matcher | None:
    """One matcher that is true when any of ``patterns`` (of ``dialect``, "regex" or "sql")
    matches: a single compiled alternation, one match per value instead of one per pattern
    (each pattern in a group of its own, so its inline flags keep to it). None when one is
    invalid."""
    to_re2 = translate if dialect == "regex" else sql_like_to_re2
    try:
        parts = [f"(?:{to_re2(pattern)})" for pattern in patterns]
        compiled = compile_re2("|".join(parts), dot_matches_newline=dialect == "sql")
    except RegexError:
        return None
    return matcher_of(compiled)


def sql_like_to_re2(pattern: str) -> str:
    """The RE2 regular expression of a SQL LIKE pattern (``.`` to match line breaks too).
    O(len(pattern))."""
    parts: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            parts.append(escape(next(chars, "\\")))
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(escape(char))
    return "".join(parts)

