"""HMS naming rules: normalised names, catalog-prefixed database names, partition names.

Partition names are ``k1=v1/k2=v2`` with keys lower-cased and keys and values path-escaped the
way HMS does it (``%XX``, upper-case hex) so that a name is also a relative directory path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from metastore_server.planner import java_regex
from metastore_server.planner.types import DEFAULT_PARTITION_NAME

DEFAULT_CATALOG = "hive"
_CATALOG_MARKER = "@"
_CATALOG_SEPARATOR = "#"
_EMPTY_DB_MARKER = "!"

_VALID_NAME = re.compile(r"[\w_]+", re.UNICODE)
_ESCAPED = frozenset(
    [chr(c) for c in range(0x01, 0x20)]
    + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)
#: Finds the first character of a text that ``escape_path_name`` escapes.
_NEEDS_ESCAPE = re.compile("[" + re.escape("".join(sorted(_ESCAPED))) + "]")
_ESCAPE_SEQUENCE = re.compile(r"%([0-9A-Fa-f]{2})")
_NAME_COMPONENT = re.compile(r"(.+)=(.+)", re.DOTALL)


def normalize(name: str | None) -> str:
    """Lower-cased, trimmed identifier (HMS stores db, table and column names lower-case)."""
    return (name or "").strip().lower()


def is_valid_name(name: str) -> bool:
    """True for names HMS accepts for databases and tables: word characters only."""
    return bool(name) and _VALID_NAME.fullmatch(name) is not None


def split_catalog(db_name: str | None) -> tuple[str, str]:
    """Split a possibly catalog-prefixed database name (``@hive#db``) into (catalog, db).

    Hive 3+ clients prepend the catalog to the database argument of legacy calls; ``!`` stands
    for an empty database name. Names without the marker belong to the default catalog.
    """
    text = db_name or ""
    if not text.startswith(_CATALOG_MARKER):
        return DEFAULT_CATALOG, normalize(text)
    catalog, sep, db = text[1:].partition(_CATALOG_SEPARATOR)
    if not sep:
        return normalize(catalog), ""
    if db == _EMPTY_DB_MARKER:
        db = ""
    return normalize(catalog), normalize(db)


def split_catalog_pattern(argument: str | None) -> tuple[str, str | None]:
    """Split the argument of ``get_databases`` into (catalog, pattern).

    Hive 3+ clients send ``@cat#pattern``: nothing after ``#`` (or no ``#``) means every
    database of the catalog (None), ``!`` the empty pattern. Without the marker the whole
    argument is the pattern, in the default catalog. The pattern keeps its case (patterns
    match case-insensitively).
    """
    if argument is None or not argument.startswith(_CATALOG_MARKER):
        return DEFAULT_CATALOG, argument
    catalog, _, pattern = argument[1:].partition(_CATALOG_SEPARATOR)
    if pattern == _EMPTY_DB_MARKER:
        return normalize(catalog), ""
    return normalize(catalog), pattern or None


def escape_path_name(text: str) -> str:
    """Escape a key or value for use in a partition name / directory name (HMS rules)."""
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text)


def unescape_path_name(text: str) -> str:
    """Undo :func:`escape_path_name`; malformed ``%`` sequences are kept as they are."""
    if "%" not in text:
        return text
    return _ESCAPE_SEQUENCE.sub(lambda m: chr(int(m.group(1), 16)), text)


def make_partition_name(keys: Sequence[str], values: Sequence[str]) -> str:
    """``k1=v1/k2=v2`` for the given key names and raw values (empty value: default partition)."""
    parts = []
    for key, value in zip(keys, values, strict=True):
        shown = value if value else DEFAULT_PARTITION_NAME
        parts.append(f"{escape_path_name(key.lower())}={escape_path_name(shown)}")
    return "/".join(parts)


def parse_partition_name(name: str | None) -> list[tuple[str, str]]:
    """The (key, value) pairs of a partition name ``k1=v1/k2=v2``, unescaped, in order.

    Lenient like HMS: a component that is not ``key=value`` is skipped, and in ``a=b=c`` the
    value is what follows the last ``=`` (the key is ``a=b``). A later duplicate key wins.
    """
    spec: dict[str, str] = {}
    for component in (name or "").split("/"):
        match = _NAME_COMPONENT.fullmatch(component)
        if match is None:
            continue
        key = unescape_path_name(match.group(1))
        spec.pop(key, None)
        spec[key] = unescape_path_name(match.group(2))
    return list(spec.items())


class NameMatcher(Protocol):
    """A compiled name pattern."""

    def fullmatch(self, text: str) -> object | None: ...


def pattern_to_regex(pattern: str | None) -> NameMatcher:
    """The regex of an HMS name pattern: ``*`` is any run, ``|`` separates alternatives.

    As in HMS, the rest of each alternative is a Java-style regex (``.`` is any character),
    matching is case-insensitive and whole-name, None means every name and an empty pattern
    matches no name. An alternative that is not a valid regex (or needs backtracking, which
    RE2 does not do: matching is linear in the name, whatever the pattern) is matched
    literally.
    """
    if pattern is None:
        everything: NameMatcher = java_regex.compile_re2(".*")
        return everything
    alternatives = []
    for alternative in pattern.split("|"):
        regex = alternative.strip().replace("*", ".*")
        try:
            java_regex.compile_java(regex)
            regex = java_regex.translate(regex)
        except java_regex.RegexError:
            pieces = alternative.strip().split("*")
            regex = ".*".join(java_regex.escape(piece) for piece in pieces)
        alternatives.append(f"(?:{regex})")
    matcher: NameMatcher = java_regex.compile_re2("(?i)(?:" + "|".join(alternatives) + ")")
    return matcher


#: A pattern alternative matched without a regex: letters, digits, ``_`` and ``*`` only.
_PLAIN_ALTERNATIVE = re.compile(r"[A-Za-z0-9_*]*")
#: The one ASCII letter whose case-insensitive match (RE2's case folding) also takes a stored
#: (lower-case) character outside ASCII: ``s`` matches U+017F, the long s. A literal start
#: narrows a key range only up to it.
_FOLDS_BEYOND_ASCII = "s"


class NamePattern:
    """An HMS name pattern (``pattern_to_regex``'s semantics) with what makes a listing cheap.

    The usual patterns (``None``, ``*``, ``t_*``, ``a*|b*``: each alternative letters, digits,
    ``_`` and ``*``) are matched as globs on lower-cased text, a few string operations a name;
    the others through the regex. A name outside ASCII, or holding a line break, always goes
    through the regex (RE2's case folding and ``.`` decide there), so the answers are the
    regex's in every case. ``prefixes`` says which key ranges hold every possible match."""

    __slots__ = ("_regex", "_globs", "_plain_regex", "everything")

    def __init__(self, pattern: str | None) -> None:
        self._regex = pattern_to_regex(pattern)
        self._globs: tuple[tuple[str, ...], ...] | None = None
        self._plain_regex: re.Pattern[str] | None = None
        if pattern is None:
            self._globs = (("", ""),)
        else:
            alternatives = [alternative.strip() for alternative in pattern.split("|")]
            if all(_PLAIN_ALTERNATIVE.fullmatch(a) for a in alternatives):
                self._globs = tuple(tuple(a.lower().split("*")) for a in alternatives)
        if self._globs is not None and all(len(pieces) <= 2 for pieces in self._globs):
            # Globs of one star at most as one regex over plain names (ASCII, one line), where
            # its ASCII-only case folding is the lower-casing ``_glob_matches`` does. With one
            # ``.*`` an alternative cannot backtrack more than once over a name; with more it
            # could (``*a*a*a*b``), so those stay with ``_glob_matches``, linear in the name.
            regex = "|".join(".*".join(map(re.escape, pieces)) for pieces in self._globs)
            self._plain_regex = re.compile(f"(?:{regex})", re.ASCII | re.IGNORECASE)
        #: Whether every plain name matches (no need to test them).
        self.everything = self._globs is not None and ("", "") in self._globs

    def matches(self, name: str) -> bool:
        """Whether ``name`` matches the whole pattern (case-insensitively)."""
        globs = self._globs
        if globs is None or not name.isascii() or "\n" in name:
            return self._regex.fullmatch(name) is not None
        if self.everything:
            return True
        text = name.lower()
        return any(_glob_matches(pieces, text) for pieces in globs)

    def select(self, found: list[str]) -> list[int]:
        """The positions of the names in ``found`` that match, in order (``matches`` of each,
        with the usual patterns tested by one compiled regex a name)."""
        if self._globs is None:
            test = self._regex.fullmatch
            return [i for i, name in enumerate(found) if test(name) is not None]
        plain = self._plain_regex
        if (plain is not None or self.everything) and all_plain(found):
            if self.everything or plain is None:  # (no plain regex: every name matches)
                return list(range(len(found)))
            plain_test = plain.fullmatch
            return [i for i, name in enumerate(found) if plain_test(name) is not None]
        matches = self.matches
        return [i for i, name in enumerate(found) if matches(name)]

    def prefixes(self) -> list[str] | None:
        """Lower-case starts such that every name that matches begins with one of them
        (sorted, none a prefix of another); None when any name may match."""
        if self._globs is None:
            return None
        starts = set()
        for pieces in self._globs:
            start = pieces[0].split(_FOLDS_BEYOND_ASCII, 1)[0]
            if not start:
                return None
            starts.add(start)
        kept: list[str] = []
        for start in sorted(starts):
            if not kept or not start.startswith(kept[-1]):
                kept.append(start)
        return kept


def all_plain(found: list[str]) -> bool:
    """Whether every name is ASCII on one line (what ``NamePattern`` matches as a glob)."""
    joined = "\n".join(found)
    return joined.isascii() and joined.count("\n") == len(found) - 1


def _glob_matches(pieces: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` is ``pieces`` joined by runs of any characters (one piece: equal)."""
    if len(pieces) == 1:
        return text == pieces[0]
    first, last = pieces[0], pieces[-1]
    if len(text) < len(first) + len(last) or not text.startswith(first):
        return False
    if not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True
