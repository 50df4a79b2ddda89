"""Value-space bounds as row keys: a byte range holds exactly the keys its value range holds."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metastore_server.planner.bounds import TYPED_END, Bound
from metastore_server.planner.types import DEFAULT_PARTITION_NAME, KeyKind, parse_typed
from metastore_server.storage.codec import (
    bound_range,
    encode_bound,
    encode_id,
    encode_values,
    exact_key,
    prefix_successor,
)

DEFAULT = DEFAULT_PARTITION_NAME

RAW_POOLS = {
    KeyKind.STRING: ["", "\x00", "a", "a\x00", "ab", "b", "7", "\uffff", DEFAULT],
    KeyKind.INTEGRAL: ["-8", "-7", "0", "-0", "7", "007", "+7", " 7", "8", str(2**63 - 1),
                       str(-(2**63)), str(2**70), DEFAULT, "abc", ""],
    KeyKind.DATE: ["0001-01-01", "2024-01-05", "2024-1-5", "2024-01-06", "9999-12-31",
                   "2024-02-30", DEFAULT, ""],
}  # fmt: skip

TEXTS = {
    KeyKind.STRING: st.sampled_from(["", "\x00", "a", "a\x00", "ab", "b", "7", DEFAULT]),
    KeyKind.INTEGRAL: st.sampled_from([DEFAULT, "abc", "", str(2**70)]),
    KeyKind.DATE: st.sampled_from([DEFAULT, "2024-02-30", ""]),
}
TYPED = {
    KeyKind.INTEGRAL: st.sampled_from([-8, -7, 0, 7, 8, 2**63 - 1, -(2**63)]),
    KeyKind.DATE: st.sampled_from(
        [dt.date(1, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 1, 6), dt.date(9999, 12, 31)]
    ),
}


def cmp(a, b) -> int:
    return (a > b) - (a < b)


def compare_component(kind: KeyKind, raw: str, bound) -> int:
    """Where a stored raw value lies relative to one bound component (0: inside its block).

    Written independently of planner.bounds: typed values by value (a value's block holds all
    its spellings); then TYPED_END; then unparseable texts by text.
    """
    if kind is KeyKind.STRING:
        return cmp(raw, bound)
    value = parse_typed(kind, raw)
    if bound is TYPED_END:
        return -1 if value is not None else 1
    if isinstance(bound, str):
        return -1 if value is not None else cmp(raw, bound)
    if value is None:
        return 1
    return cmp(value, bound)


def compare(kinds, raws, values: tuple) -> int:
    """A stored tuple against a bound's values, lexicographically (0: inside the block)."""
    for kind, raw, bound in zip(kinds, raws, values, strict=False):
        order = compare_component(kind, raw, bound)
        if order:
            return order
    return 0


def inside(kinds, raws, lower: Bound, upper: Bound) -> bool:
    low, high = compare(kinds, raws, lower.values), compare(kinds, raws, upper.values)
    return (low > 0 or (low == 0 and lower.inclusive)) and (
        high < 0 or (high == 0 and upper.inclusive)
    )


@st.composite
def cases(draw: st.DrawFn):
    kinds = draw(st.lists(st.sampled_from(list(KeyKind)), min_size=1, max_size=3))
    rows = draw(st.lists(st.tuples(*(st.sampled_from(RAW_POOLS[k]) for k in kinds)), max_size=25))

    def value(kind: KeyKind):
        if kind is KeyKind.STRING:
            return TEXTS[kind]
        return st.one_of(TEXTS[kind], TYPED[kind])

    def bound() -> Bound:
        # Values (texts and typed values) anywhere; TYPED_END only last (see Bound).
        n = draw(st.integers(0, len(kinds)))
        values = tuple(draw(value(k)) for k in kinds[:n])
        last = kinds[n - 1] if n else KeyKind.STRING
        if last is not KeyKind.STRING and draw(st.booleans()):
            values = values[:-1] + (TYPED_END,)
        return Bound(values, draw(st.booleans()))

    lower, upper = bound(), bound()
    if not lower.values and not lower.inclusive:
        lower = Bound((), True)
    return kinds, rows, lower, upper


@settings(max_examples=250, deadline=None)
@given(cases(), st.sampled_from([b"", encode_id(7)]))
def test_byte_range_holds_exactly_the_value_range(case, prefix: bytes) -> None:
    kinds, rows, lower, upper = case
    start, stop = bound_range(kinds, lower, upper, prefix)
    for raws in rows:
        key = prefix + encode_values(kinds, list(raws))
        in_bytes = start <= key and (stop is None or key < stop)
        assert in_bytes == inside(kinds, raws, lower, upper), raws


def test_bound_ends() -> None:
    kinds = [KeyKind.STRING, KeyKind.INTEGRAL]
    a = encode_values(kinds[:1], ["a"])
    assert encode_bound(kinds, Bound((), True), upper=False) == b""
    assert encode_bound(kinds, Bound((), True), upper=True) is None
    assert encode_bound(kinds, Bound((), False), upper=True) == b""
    assert encode_bound(kinds, Bound(("a",), True), upper=False) == a
    assert encode_bound(kinds, Bound(("a",), False), upper=False) == prefix_successor(a)
    assert encode_bound(kinds, Bound(("a",), True), upper=True) == prefix_successor(a)
    typed_end = encode_bound(kinds, Bound(("a", TYPED_END), True), upper=True)
    assert typed_end == encode_bound(kinds, Bound(("a", TYPED_END), False), upper=False)
    assert typed_end == a + b"\x11"
    with pytest.raises(ValueError):
        encode_bound(kinds, Bound((), False), upper=False)
    with pytest.raises(TypeError):
        encode_bound(kinds, Bound((7,), True), upper=False)
    with pytest.raises(ValueError):
        Bound((TYPED_END, "x"), True)  # a position, not a block
    assert Bound((7, "x"), True).values == (7, "x")  # typed values may be anywhere
    with pytest.raises(ValueError):
        encode_bound(kinds, Bound(("a", 2**64), True), upper=False)
    assert bound_range(kinds, Bound((), True), Bound((), True), b"\x01") == (b"\x01", b"\x02")


def test_exact_key_only_for_texts() -> None:
    kinds = [KeyKind.STRING, KeyKind.INTEGRAL]
    assert exact_key(kinds, ("a", DEFAULT)) == encode_values(kinds, ["a", DEFAULT])
    assert exact_key(kinds[:1], ("a",)) == encode_values(kinds[:1], ["a"])
    assert exact_key(kinds, ("a", 7)) is None  # "7", "007", "+7" ...: a range
    assert exact_key(kinds, ("a", "7")) is None  # a parseable text is never a raw value
    assert exact_key(kinds, ("a",)) is None
    assert exact_key(kinds, ("a", TYPED_END)) is None


def test_a_point_with_typed_values_is_the_range_of_its_spellings() -> None:
    # A Get on (a, 7, x): every spelling of 7 with region x, nothing else, in one range.
    kinds = [KeyKind.STRING, KeyKind.INTEGRAL, KeyKind.STRING]
    point = Bound(("a", 7, "x"), True)
    start, stop = bound_range(kinds, point, point, encode_id(7))
    rows = [(ds, hr, region) for ds in ("a", "b") for hr in ("7", "007", "+7", "8", DEFAULT)
            for region in ("", "x", "x\x00", "y")]  # fmt: skip
    found = sorted(
        raws for raws in rows if start <= encode_id(7) + encode_values(kinds, list(raws)) < stop
    )
    assert found == [("a", "+7", "x"), ("a", "007", "x"), ("a", "7", "x")]
