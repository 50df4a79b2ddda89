"""Property tests of storage.codec: encoding preserves the typed order, round-trips exactly,
and the keys of equal leading values (any spellings) form one prefix range."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from metastore_server.planner.types import (
    DEFAULT_PARTITION_NAME,
    KeyKind,
    parse_date,
    parse_integral,
)
from metastore_server.storage.codec import (
    decode_values,
    encode_id,
    encode_prefix,
    encode_value,
    encode_values,
    has_spelling,
    is_unparsed_part,
    prefix_successor,
    split_order_parts,
    typed_span,
)

INT64 = (-(2**63), 2**63 - 1)

# -- strategies ---------------------------------------------------------------------------------

tricky_chars = st.sampled_from(
    ["\x00", "\x01", "a", "b", "0", "7", "-", " ", "\x7f", "\xff", "\u07ff", "\ud800", "\udfff",
     "\ue000", "\uffff", "\U00010000", "\U0010ffff"]
)
strings = st.one_of(st.text(), st.text(tricky_chars, max_size=6))
unparseable = st.one_of(
    strings,
    st.just(DEFAULT_PARTITION_NAME),
    st.integers(2**63, 2**80).map(str),
    st.integers(-(2**80), -(2**63) - 1).map(str),
)


def respell_int(n: int, zeros: int, plus: bool, pad: str) -> str:
    """Another spelling of ``n``: leading zeros, a plus sign, surrounding blanks."""
    digits = "0" * zeros + str(abs(n))
    sign = "-" if n < 0 else ("+" if plus else "")
    return pad + sign + digits + pad


numbers = st.one_of(st.integers(*INT64), st.integers(-3, 3))
integrals = st.one_of(
    numbers.map(str),
    st.builds(respell_int, numbers, st.integers(0, 3), st.booleans(), st.sampled_from(["", " "])),
    st.sampled_from(["-0", "+0", "00", "7", "007", "+7", " 7", "8"]),
    unparseable,
)


def respell_date(day: dt.date, pad_month: bool, pad_day: bool, blank: str) -> str:
    """Another spelling of ``day``: unpadded month or day, surrounding blanks."""
    month = f"{day.month:02d}" if pad_month else str(day.month)
    dom = f"{day.day:02d}" if pad_day else str(day.day)
    return f"{blank}{day.year:04d}-{month}-{dom}{blank}"


dates = st.one_of(
    st.dates().map(dt.date.isoformat),
    st.builds(respell_date, st.dates(), st.booleans(), st.booleans(), st.sampled_from(["", " "])),
    st.sampled_from(["2024-01-05", "2024-1-5", "2024-01-5", "2024-02-30", "24-01-05"]),
    unparseable,
)

RAWS = {KeyKind.STRING: strings, KeyKind.INTEGRAL: integrals, KeyKind.DATE: dates}
kinds = st.sampled_from(list(KeyKind))


def typed_order(kind: KeyKind, raw: str) -> tuple:
    """The order the encoding must keep: typed values by value, the canonical spelling first,
    other spellings by text; then everything that does not parse, by text."""
    if kind is KeyKind.STRING:
        return (0, 0, 0, raw)
    if kind is KeyKind.INTEGRAL:
        number = parse_integral(raw)
        canonical = None if number is None else str(number)
    else:
        day = parse_date(raw)
        number = None if day is None else day.toordinal()
        canonical = None if day is None else day.isoformat()
    if number is None:
        return (1, 0, 0, raw)
    if raw == canonical:
        return (0, number, 0, "")
    return (0, number, 1, raw)


def canonical(kind: KeyKind, raw: str) -> str:
    """The canonical spelling of a parseable value (a STRING value is its own)."""
    if kind is KeyKind.STRING:
        return raw
    if kind is KeyKind.INTEGRAL:
        return str(parse_integral(raw))
    day = parse_date(raw)
    assert day is not None
    return day.isoformat()


def sign(value: int) -> int:
    return (value > 0) - (value < 0)


def compare(a, b) -> int:
    return sign((a > b) - (a < b))


# -- single values ------------------------------------------------------------------------------


@given(st.data(), kinds)
def test_encoding_preserves_typed_order(data: st.DataObject, kind: KeyKind) -> None:
    a, b = data.draw(RAWS[kind]), data.draw(RAWS[kind])
    ea, eb = encode_value(kind, a), encode_value(kind, b)
    assert compare(ea, eb) == compare(typed_order(kind, a), typed_order(kind, b))
    assert (ea == eb) == (a == b)


@given(st.data(), kinds)
def test_values_round_trip_exactly(data: st.DataObject, kind: KeyKind) -> None:
    raw = data.draw(RAWS[kind])
    encoded = encode_value(kind, raw)
    assert encoded[0] < 0xFF
    assert decode_values([kind], encoded) == [raw]


@pytest.mark.parametrize(
    ("kind", "ascending"),
    [
        (KeyKind.STRING, ["", "\x00", "\x00\x00", "\x01", "a", "a\x00", "a\x00b", "ab", "\xff"]),
        (KeyKind.INTEGRAL, [str(INT64[0]), "-8", "-7", "-007", "-1", "0", "+0", "-0", "7", " 7",
                            "+7", "007", "8", str(INT64[1]), str(2**70), DEFAULT_PARTITION_NAME,
                            "abc"]),
        (KeyKind.DATE, ["0001-01-01", "1969-12-31", "1970-01-01", "2024-01-05", "2024-1-5",
                        "2024-01-06", "9999-12-31", "2024-02-30", DEFAULT_PARTITION_NAME]),
    ],
)
def test_examples_sort_as_documented(kind: KeyKind, ascending: list[str]) -> None:
    encoded = [encode_value(kind, raw) for raw in ascending]
    assert encoded == sorted(encoded)
    assert len(set(encoded)) == len(encoded)


# -- tuples -------------------------------------------------------------------------------------


@st.composite
def tuple_pairs(draw: st.DrawFn) -> tuple[list[KeyKind], list[str], list[str]]:
    """A kind list and two value tuples for it, often sharing leading values, some of them
    spelled differently ("007" in one, "7" in the other)."""
    key_kinds = draw(st.lists(kinds, min_size=1, max_size=4))
    first = [draw(RAWS[kind]) for kind in key_kinds]
    shared = draw(st.integers(0, len(key_kinds)))
    second = [
        canonical(kind, raw) if typed_order(kind, raw)[0] == 0 and draw(st.booleans()) else raw
        for kind, raw in zip(key_kinds[:shared], first, strict=False)
    ] + [draw(RAWS[kind]) for kind in key_kinds[shared:]]
    return key_kinds, first, second


def tuple_order(key_kinds: list[KeyKind], raws: list[str]) -> tuple:
    """The order keys must keep: the values component by component (typed ones by value), and
    only among equal values, the spellings component by component."""
    values, spellings = [], []
    for kind, raw in zip(key_kinds, raws, strict=True):
        order = typed_order(kind, raw)
        typed = kind is not KeyKind.STRING and order[0] == 0
        values.append(order[:2] if typed else order)
        spellings.append(order[2:] if typed else ())
    return tuple(values), tuple(spellings)


def same_values(key_kinds: list[KeyKind], a: list[str], b: list[str]) -> bool:
    """Whether two tuples hold equal values (typed ones in any spelling)."""
    return tuple_order(key_kinds, a)[0] == tuple_order(key_kinds, b)[0]


@given(tuple_pairs())
def test_tuples_keep_value_order_then_spelling_order(
    pair: tuple[list[KeyKind], list[str], list[str]],
) -> None:
    key_kinds, a, b = pair
    ea, eb = encode_values(key_kinds, a), encode_values(key_kinds, b)
    assert compare(ea, eb) == compare(tuple_order(key_kinds, a), tuple_order(key_kinds, b))
    assert (ea == eb) == (a == b)  # distinct spellings, distinct keys


@given(st.data(), kinds)
def test_a_value_alone_is_its_one_value_tuple(data: st.DataObject, kind: KeyKind) -> None:
    # The k:<i> columns (storage.filters) hold encode_value: tag + fixed part + form.
    raw = data.draw(RAWS[kind])
    assert encode_value(kind, raw) == encode_values([kind], [raw])


def test_spellings_come_after_all_values() -> None:
    key_kinds = [KeyKind.STRING, KeyKind.INTEGRAL, KeyKind.STRING, KeyKind.DATE]
    ascending = [
        ["a", "7", "x", "2024-01-05"],
        ["a", "7", "x", "2024-1-5"],
        ["a", "+7", "x", "2024-01-05"],
        ["a", "007", "x", "2024-01-05"],
        ["a", "007", "x", "2024-1-5"],
        ["a", "7", "y", "2024-01-05"],
        ["a", " 8", "a", "2024-01-05"],
        ["a", DEFAULT_PARTITION_NAME, "a", "2024-01-05"],
        ["b", "-1", "", DEFAULT_PARTITION_NAME],
    ]
    encoded = [encode_values(key_kinds, raws) for raws in ascending]
    assert encoded == sorted(encoded) and len(set(encoded)) == len(encoded)
    # The order parts of the values, then one form per typed value: 0x00 or 0x01 + esc(raw).
    seven = b"\x10" + (2**63 + 7).to_bytes(8, "big")
    assert encode_values(key_kinds[:3], ["a", "007", "x"]) == (
        b"\x02a\x00\x00" + seven + b"\x02x\x00\x00" + b"\x01007\x00\x00"
    )
    assert encode_values(key_kinds[:3], ["a", "7", "x"]).endswith(b"\x02x\x00\x00\x00")
    assert encode_prefix(key_kinds, ["a", "+7"]) == b"\x02a\x00\x00" + seven


@given(tuple_pairs())
def test_tuples_round_trip_exactly(pair: tuple[list[KeyKind], list[str], list[str]]) -> None:
    key_kinds, a, _ = pair
    assert decode_values(key_kinds, encode_values(key_kinds, a)) == a


@given(tuple_pairs())
def test_order_parts_split_a_tuple_into_its_values(
    pair: tuple[list[KeyKind], list[str], list[str]],
) -> None:
    key_kinds, a, _ = pair
    data = encode_values(key_kinds, a)
    parts, suffix = split_order_parts(key_kinds, data)
    assert b"".join(parts) + suffix == data
    assert parts == [encode_prefix([k], [v]) for k, v in zip(key_kinds, a, strict=True)]
    assert [is_unparsed_part(p) for p in parts] == [
        k is not KeyKind.STRING and typed_order(k, v)[0] != 0
        for k, v in zip(key_kinds, a, strict=True)
    ]
    respelled = any(
        k is not KeyKind.STRING and typed_order(k, v)[0] == 0 and canonical(k, v) != v
        for k, v in zip(key_kinds, a, strict=True)
    )
    assert has_spelling(key_kinds, data) == respelled


@given(tuple_pairs(), st.data())
def test_prefix_range_holds_exactly_the_keys_with_those_leading_values(
    pair: tuple[list[KeyKind], list[str], list[str]], data: st.DataObject
) -> None:
    key_kinds, a, b = pair
    n = data.draw(st.integers(0, len(key_kinds)))
    prefix = encode_prefix(key_kinds, a[:n])
    stop = prefix_successor(prefix)
    for other in (a, b):
        key = encode_values(key_kinds, other)
        inside = prefix <= key and (stop is None or key < stop)
        assert inside == same_values(key_kinds[:n], other[:n], a[:n])


@given(tuple_pairs(), st.data())
def test_keys_of_respelled_leading_values_share_the_prefix(
    pair: tuple[list[KeyKind], list[str], list[str]], data: st.DataObject
) -> None:
    # Leading values in other spellings (typed ones in the middle too) are in the same range.
    key_kinds, a, _ = pair
    n = data.draw(st.integers(0, len(key_kinds)))
    respelled = [
        canonical(kind, raw) if typed_order(kind, raw)[0] == 0 else raw
        for kind, raw in zip(key_kinds, a, strict=True)
    ]
    prefix = encode_prefix(key_kinds, a[:n])
    assert prefix == encode_prefix(key_kinds, respelled[:n])
    assert encode_values(key_kinds, respelled).startswith(prefix)
    assert encode_values(key_kinds, a).startswith(prefix)



@given(st.data(), kinds)
def test_successor_of_a_value_bounds_exactly_the_greater_values(
    data: st.DataObject, kind: KeyKind
) -> None:
    a, b = data.draw(RAWS[kind]), data.draw(RAWS[kind])
    stop = prefix_successor(encode_value(kind, a))
    assert stop is not None
    assert (encode_value(kind, b) >= stop) == (typed_order(kind, b) > typed_order(kind, a))


def test_arity_is_checked() -> None:
    with pytest.raises(ValueError):
        encode_values([KeyKind.STRING], ["a", "b"])
    with pytest.raises(ValueError):
        encode_prefix([KeyKind.STRING], ["a", "b"])
    assert encode_prefix([KeyKind.STRING, KeyKind.DATE], []) == b""


@pytest.mark.parametrize(
    ("kind_list", "data"),
    [
        ([KeyKind.STRING], b""),
        ([KeyKind.STRING], b"\x02abc"),
        ([KeyKind.STRING], b"\x10" + b"\x00" * 9),
        ([KeyKind.INTEGRAL], b"\x10\x80\x00"),
        ([KeyKind.INTEGRAL], b"\x10" + b"\x80" + b"\x00" * 7 + b"\x07"),
        ([KeyKind.DATE], b"\x02a\x00"),
        ([KeyKind.STRING], b"\x02a\x00\x02"),
        ([KeyKind.STRING], b"\x02a\x00\x00\x02"),
        ([KeyKind.STRING], b"\x02a\x00\xff\x00"),
        ([KeyKind.STRING], b"\x02\xc3\x00\x00"),
        ([KeyKind.INTEGRAL], b"\x10\x80" + b"\x00" * 7),  # no spelling suffix
        ([KeyKind.INTEGRAL, KeyKind.STRING], b"\x10\x80" + b"\x00" * 8 + b"\x02x\x00\x00"),
        ([KeyKind.INTEGRAL, KeyKind.DATE], b"\x10\x80" + b"\x00" * 7 + b"\x20\x80\x00\x00\x00\x00"),
        ([KeyKind.DATE], b"\x20\xff\xff\xff\xff\x00"),  # no such day
    ],
)
def test_malformed_keys_are_value_errors(kind_list: list[KeyKind], data: bytes) -> None:
    with pytest.raises(ValueError):
        decode_values(kind_list, data)


@pytest.mark.parametrize(
    ("kind_list", "data"),
    [
        ([KeyKind.STRING], b""),
        ([KeyKind.STRING], b"\x02abc"),  # no terminator
        ([KeyKind.STRING], b"\x02a\x00"),  # half a terminator
        ([KeyKind.STRING], b"\x02a\x00\x02"),  # 0x00 neither escape nor terminator
        ([KeyKind.STRING], b"\x10" + b"\x00" * 9),  # a type code of another kind
        ([KeyKind.INTEGRAL], b"\x10\x80\x00"),  # a cut fixed-width value
        ([KeyKind.DATE], b"\x02a\x00\x00"),
        ([KeyKind.INTEGRAL, KeyKind.STRING], b"\x10\x80" + b"\x00" * 7),  # a value missing
    ],
)
def test_splitting_malformed_order_parts_is_a_value_error(
    kind_list: list[KeyKind], data: bytes
) -> None:
    with pytest.raises(ValueError):
        split_order_parts(kind_list, data)


# -- typed ranges, successors, ids --------------------------------------------------------------


@given(st.data(), st.sampled_from([KeyKind.INTEGRAL, KeyKind.DATE]))
def test_typed_span_holds_every_parseable_value(data: st.DataObject, kind: KeyKind):
    b = data.draw(RAWS[kind])
    encoded = encode_value(kind, b)
    start, stop = typed_span(kind)
    assert (start <= encoded < stop) == (typed_order(kind, b)[0] == 0)


@given(st.binary(max_size=6), st.binary(max_size=6), st.integers(0, 6))
def test_prefix_successor_bounds_exactly_the_extensions(prefix: bytes, tail: bytes, cut: int):
    stop = prefix_successor(prefix)
    for candidate in (prefix + tail, prefix[:cut] + tail, tail, stop or b""):
        extends = candidate.startswith(prefix)
        assert extends == (prefix <= candidate and (stop is None or candidate < stop))


def test_prefix_successor_examples() -> None:
    assert prefix_successor(b"ab") == b"ac"
    assert prefix_successor(b"a\xff\xff") == b"b"
    assert prefix_successor(b"\x00") == b"\x01"
    assert prefix_successor(b"\xff\xff") is None
    assert prefix_successor(b"") is None


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_ids_are_fixed_width_and_ordered(a: int, b: int) -> None:
    assert len(encode_id(a)) == 8
    assert int.from_bytes(encode_id(a), "big") == a
    assert compare(encode_id(a), encode_id(b)) == compare(a, b)


@pytest.mark.parametrize("bad", [-1, 2**64])
def test_ids_out_of_range_are_refused(bad: int) -> None:
    with pytest.raises(ValueError):
        encode_id(bad)
