"""LIKE patterns as Python matchers: Java regular expressions (Hive 2.3/3.x) and SQL LIKE (Hive 4).

Hive 2.3/3.x evaluate ``key LIKE 'p'`` as Java ``value.matches(p)``: the whole value must match p
as a regular expression (Spark sends ``.*`` for its wildcards). Hive 4 pushes LIKE down as SQL
``LIKE p ESCAPE '\\'``: ``%`` is any run of characters, ``_`` one character, ``\\x`` a literal x.
Either way the result is a function of the raw value; matching is one ``re.fullmatch``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from planner.errors import FilterError

Matcher = Callable[[str], bool]


def regex_matcher(pattern: str) -> Matcher:
    """Java ``String.matches(pattern)`` semantics. Raises FilterError for an invalid pattern."""
    try:
        compiled = re.compile(java_to_python_regex(pattern))
    except re.error as err:
        raise FilterError(
            f"Invalid LIKE pattern {pattern!r} (a Java regular expression): {err}"
        ) from None
    return lambda value: compiled.fullmatch(value) is not None


def sql_like_matcher(pattern: str) -> Matcher:
    """SQL ``LIKE pattern ESCAPE '\\'`` semantics (a trailing lone backslash is a literal one)."""
    compiled = re.compile(sql_like_to_python_regex(pattern), re.DOTALL)
    return lambda value: compiled.fullmatch(value) is not None


def any_matcher(patterns: Sequence[str], dialect: str) -> Matcher | None:
    """One matcher that is true when any of ``patterns`` (of ``dialect``, "regex" or "sql")
    matches: a single compiled alternation, one match in C per value instead of one per
    pattern. None when they cannot be joined without changing a meaning: a pattern with groups
    (its back-references would be renumbered), inline flags, or an invalid one."""
    translate, flags = _TRANSLATIONS[dialect]
    parts = []
    for pattern in patterns:
        try:
            regex = translate(pattern)
            if re.compile(regex, flags).groups:
                return None
        except re.error:
            return None
        parts.append(f"(?:{regex})")
    try:
        compiled = re.compile("|".join(parts), flags)
    except re.error:
        return None
    return lambda value: compiled.fullmatch(value) is not None


def sql_like_to_python_regex(pattern: str) -> str:
    """The Python regular expression of a SQL LIKE pattern. O(len(pattern))."""
    parts: list[str] = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            parts.append(re.escape(next(chars, "\\")))
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


def java_to_python_regex(pattern: str) -> str:
    """A Java regular expression rewritten where Python spells the same thing differently.

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


_TRANSLATIONS: dict[str, tuple[Callable[[str], str], int]] = {
    "regex": (java_to_python_regex, 0),
    "sql": (sql_like_to_python_regex, re.DOTALL),
}
