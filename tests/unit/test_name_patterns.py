"""``names.NamePattern``: the glob fast path and the key ranges it narrows a listing to give
the regex's answers (``pattern_to_regex``) for every pattern and name, whatever the case,
alternatives, stars, non-ASCII letters and line breaks."""

from __future__ import annotations

import itertools

import pytest

from metastore_server.catalog.basics import names

PATTERNS = [
    None, "*", "", "t*", "T*", "*_1", "sales", "SALES", "s*", "sa*es", "*a*", "a*|b*", "a|b",
    " t1 | T2 ", "x*|*", "**", "a**b", "t_*_x", "tmp_s*", "b*|a*|ab*", "t.*", "t[0-9]+",
    "(?i)T1", "a|", "|", "st*", "k*", "*s",
]  # fmt: skip
NAMES = [
    "t", "t1", "t2", "t_1", "t_a_x", "sales", "sa_es", "saes", "a", "ab", "abc", "b", "ba",
    "x", "tmp_sx", "tmp_x", "ſales", "ſt", "kelvin", "éa", "a\nb", "s", "st", "", "t9",
    "t_s_x", "as",
]  # fmt: skip


@pytest.mark.parametrize("pattern", PATTERNS)
def test_matches_as_the_regex(pattern: str | None) -> None:
    regex = names.pattern_to_regex(pattern)
    matcher = names.NamePattern(pattern)
    for name in NAMES:
        assert matcher.matches(name) == (regex.fullmatch(name) is not None), (pattern, name)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_match_starts_with_a_prefix(pattern: str | None) -> None:
    """A listing narrowed to the prefixes' key ranges misses no name the regex takes (the
    long s, which matches ``s`` case-insensitively, included)."""
    regex = names.pattern_to_regex(pattern)
    prefixes = names.NamePattern(pattern).prefixes()
    if prefixes is None:
        return
    assert prefixes == sorted(prefixes)
    for first, second in itertools.combinations(prefixes, 2):
        assert not second.startswith(first)
    for name in NAMES:
        if regex.fullmatch(name) is not None:
            assert any(name.startswith(prefix) for prefix in prefixes), (pattern, name)


def test_narrowing_stops_at_an_s() -> None:
    assert names.NamePattern("tmp_s*").prefixes() == ["tmp_"]
    assert names.NamePattern("sales*").prefixes() is None
    assert names.NamePattern("Ab*|a*|C").prefixes() == ["a", "c"]
    assert names.NamePattern("a*|*").prefixes() is None
    assert names.NamePattern("t[0-9]").prefixes() is None  # a regex: no glob, no narrowing


UPPER_NAMES = ["T1", "SALES", "Tmp_SX", "AB"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_select_picks_what_matches_picks(pattern: str | None) -> None:
    """A listing's names tested at once: plain names only (the compiled regex of the globs),
    and with names the globs leave to the regex (non-ASCII, line breaks) among them."""
    matcher = names.NamePattern(pattern)
    plain = [name for name in NAMES if name.isascii() and "\n" not in name] + UPPER_NAMES
    assert names.all_plain(plain)
    for found in (plain, NAMES, NAMES[::-1], [], ["ſt"], ["a\nb", "t1"]):
        assert matcher.select(found) == [i for i, name in enumerate(found) if matcher.matches(name)]


def test_all_plain_tells_names_the_globs_match_alone() -> None:
    assert names.all_plain(["a", "b_1", ""]) and names.all_plain(["x"])
    assert not names.all_plain(["a", "é"])
    assert not names.all_plain(["a", "b\nc"])
    assert not names.all_plain(["\n"])
    assert not names.all_plain([])
