"""Order-preserving, self-delimiting encoding of partition values (the tuple-layer idea).

A partition row key is a table id (``encode_id``) followed by the encoded value tuple of the
partition keys. An encoded tuple is the *order parts* of its values, in key order, then one
*spelling suffix*::

    order(v1) + order(v2) + ... + order(vn) + form(t1) + form(t2) + ...

where t1, t2, ... are the typed values that parse (INTEGRAL or DATE keys), in key order. For one
list of kinds, comparing two encoded tuples as unsigned bytes compares the value tuples
component by component (typed values by value), and among tuples of equal values, their
spellings; a decoder finds where each part ends without a length field. Leading values have
one contiguous range of keys: a key starts with ``encode_prefix(kinds, vs)`` exactly when its
leading values equal ``vs`` as values ("7", "007" and "+7" alike), however many leading keys,
typed or not, so ``[p, prefix_successor(p))`` is exactly the range of those keys. Decoding gives
back the exact original strings, and distinct raw tuples get distinct keys.

Order parts (the first byte is a type code; all codes are below 0xFF)::

    code  kind      value                      rest of the order part
    0x02  STRING    any string                 esc(utf8)
    0x10  INTEGRAL  a 64-bit integer           8 bytes big-endian, sign bit flipped
    0x11  INTEGRAL  text that is no integer    esc(raw)
    0x20  DATE      a yyyy-MM-dd date          4 bytes big-endian day number, sign bit flipped
    0x21  DATE      text that is no date       esc(raw)

    esc(s)  = UTF-8 of s with every 0x00 written 0x00 0xFF, then the terminator 0x00 0x00
    form    = 0x00 when the text is the canonical spelling ("7", "2024-01-05"),
              0x01 + esc(raw) otherwise ("007", "+7", " 7", "2024-1-5")

``encode_value(kind, raw)`` is one value on its own (the ``k:<i>`` column of a partition row, for
server-side filters): the one-value tuple, i.e. its order part, then its form if it is typed.

Ordering argument:

* esc: UTF-8 byte order is code point order, which is Python's ``str`` order. Escaping keeps
  it: where two strings first differ, a 0x00 byte (written 0x00 0xFF) still loses to any
  other byte at that position. When ``s`` is a proper prefix of ``t``, the terminator 0x00 0x00
  of ``esc(s)`` meets either a byte above 0x00 or the escape 0x00 0xFF in ``esc(t)``, and loses
  both times: "a" < "a\\0" < "ab". Inside a body 0x00 is always followed by 0xFF, so the
  decoder knows the terminator when it reads it, without looking at the bytes after it: no
  encoding is a proper prefix of another (a single 0x00 terminator would make ``esc("")`` a
  prefix of ``esc("\\0")`` and prefix ranges inexact).
* Fixed-width numbers: big-endian bytes of ``n + 2**63`` (flipping the sign bit) compare like
  the integers; the same holds for day numbers with ``2**31``. Equal widths mean the next
  part never starts inside this one.
* Raw tags: 0x11 > 0x10 and 0x21 > 0x20, so text that does not parse as its key's type
  (``__HIVE_DEFAULT_PARTITION__``, "abc", 2**70) sorts after every typed value, in one place,
  ordered by its text. A typed range scan therefore never meets it (HMS direct-SQL semantics).
* Order parts: two order parts of one kind are equal bytes iff they stand for the same value
  (the same number or day in any spelling; the same text for strings and raw texts), and when
  they differ neither is a prefix of the other, so the first differing byte lies inside both.
  So the first component whose values differ decides the order of the whole key, whatever
  follows it (the later order parts and the whole suffix); and the keys whose leading values
  are ``vs`` are exactly those starting with the order parts of ``vs``.
* Suffix: when all values are equal, both keys have the same order parts, hence the same typed
  components, and their suffixes are the forms of those components in key order. A form is
  0x00 or 0x01 + esc(raw): prefix-free, the canonical spelling first and the others by text. So
  the suffixes compare spelling by spelling ("7" < " 7" < "+7" < "007"), and they are equal
  bytes only for equal raw texts: keys are unique per raw tuple.
* Decoding reads the order parts (a typed one gives its value and canonical text), then one form
  per typed component: the canonical text or the raw text stored in the form.

The planner's value-space bounds (``planner.bounds``) map onto this order one to one: a bound's
components are values, so its block is the prefix of their order parts. ``encode_bound`` /
``bound_range`` turn a bound into the row key where a scan starts or stops.
"""

from __future__ import annotations

import datetime as _dt
import functools
import struct
from collections.abc import Sequence

from metastore_server.planner.bounds import TYPED_END, Bound, Component
from metastore_server.planner.types import KeyKind, parse_date, parse_integral, parse_typed

STRING = 0x02
INTEGRAL = 0x10
INTEGRAL_RAW = 0x11
DATE = 0x20
DATE_RAW = 0x21

_CANONICAL = 0x00
_NON_CANONICAL = 0x01

_TYPED_TAG = {KeyKind.STRING: STRING, KeyKind.INTEGRAL: INTEGRAL, KeyKind.DATE: DATE}
_RAW_TAG = {KeyKind.INTEGRAL: INTEGRAL_RAW, KeyKind.DATE: DATE_RAW}

_INT = struct.Struct(">Q")
_DAY = struct.Struct(">I")
_INT_BIAS = 2**63
_DAY_BIAS = 2**31
_EPOCH = _dt.date(1970, 1, 1).toordinal()
_ID_LIMIT = 2**64


def _esc(text: str) -> bytes:
    """esc(text): escaped, terminated UTF-8 (lone surrogates pass through). O(len)."""
    return text.encode("utf-8", "surrogatepass").replace(b"\x00", b"\x00\xff") + b"\x00\x00"


def _unesc(data: bytes, pos: int) -> tuple[str, int]:
    """The string esc-encoded at ``pos`` and the position after its terminator. O(len)."""
    parts = []
    while True:
        end = data.find(b"\x00", pos)
        if end < 0:
            raise ValueError("unterminated string in encoded key")
        parts.append(data[pos:end])
        follower = data[end + 1 : end + 2]
        if follower == b"\x00":
            return b"".join(parts).decode("utf-8", "surrogatepass"), end + 2
        if follower != b"\xff":
            raise ValueError("a 0x00 in an encoded string is neither escape nor terminator")
        parts.append(b"\x00")
        pos = end + 2


def _form(raw: str, canonical: str) -> bytes:
    """The form marker: 0x00 for the canonical spelling, else 0x01 + esc(raw)."""
    if raw == canonical:
        return bytes((_CANONICAL,))
    return bytes((_NON_CANONICAL,)) + _esc(raw)


def _typed_body(kind: KeyKind, raw: str) -> tuple[bytes, str] | None:
    """Tag + fixed-width part of a parseable value, and its canonical text (None: no parse)."""
    if kind is KeyKind.INTEGRAL:
        number = parse_integral(raw)
        if number is None:
            return None
        return bytes((INTEGRAL,)) + _INT.pack(number + _INT_BIAS), str(number)
    date = parse_date(raw)
    if date is None:
        return None
    return bytes((DATE,)) + _DAY.pack(date.toordinal() - _EPOCH + _DAY_BIAS), date.isoformat()


#: Distinct (kind, value) pairs whose order parts are remembered, for values of at most
#: ``MEMO_TEXT`` characters: an add of a thousand partitions repeats a few values of each key (a
#: day, its hours), each encoded twice per partition (the row key, the value columns), and
#: parsing a typed value is the dearest step.
ORDER_PART_MEMO = 8192
MEMO_TEXT = 64


def _order_part(kind: KeyKind, raw: str) -> tuple[bytes, bytes | None]:
    """The order part of one value, and its form (None: no form, not a parsed typed value).
    O(len(raw)); a short value's is remembered (``ORDER_PART_MEMO``)."""
    if len(raw) <= MEMO_TEXT:
        return _remembered_order_part(kind, raw)
    return _made_order_part(kind, raw)


def _made_order_part(kind: KeyKind, raw: str) -> tuple[bytes, bytes | None]:
    if kind is KeyKind.STRING:
        return bytes((STRING,)) + _esc(raw), None
    typed = _typed_body(kind, raw)
    if typed is None:
        return bytes((_RAW_TAG[kind],)) + _esc(raw), None
    body, canonical = typed
    return body, _form(raw, canonical)


_remembered_order_part = functools.lru_cache(maxsize=ORDER_PART_MEMO)(_made_order_part)


def order_part(kind: KeyKind, raw: str) -> tuple[bytes, bytes | None]:
    """One value's order part and its form (None: none): ``encode_values`` of a tuple is its
    values' order parts, then their forms. O(len(raw))."""
    return _order_part(kind, raw)


def encode_value(kind: KeyKind, raw: str) -> bytes:
    """One partition value of ``kind`` encoded on its own: its order part, then its form when it
    is a typed value (the one-value tuple; the ``k:<i>`` column of a partition row). Byte order
    is the typed order of the values, spellings after values. O(len(raw))."""
    part, form = _order_part(kind, raw)
    return part if form is None else part + form


def encode_values(kinds: Sequence[KeyKind], raws: Sequence[str]) -> bytes:
    """The encoding of a full value tuple (one value per kind): the order parts of the values,
    then the spelling suffix. O(total length)."""
    if len(kinds) != len(raws):
        raise ValueError(f"{len(raws)} values for {len(kinds)} partition keys")
    parts, forms = [], []
    for kind, raw in zip(kinds, raws, strict=True):
        part, form = _order_part(kind, raw)
        parts.append(part)
        if form is not None:
            forms.append(form)
    return b"".join(parts) + b"".join(forms)


def encode_prefix(kinds: Sequence[KeyKind], raws: Sequence[str]) -> bytes:
    """The order parts of the first ``len(raws)`` values: every key whose leading values equal
    ``raws`` as values (typed ones in any spelling) starts with it, and no other key does. For
    STRING keys and unparseable texts that is the exact text; a typed "007" covers "7" and "+7"
    too. O(total length)."""
    if len(raws) > len(kinds):
        raise ValueError(f"{len(raws)} values for {len(kinds)} partition keys")
    return b"".join(_order_part(k, r)[0] for k, r in zip(kinds, raws, strict=False))


def _decode_part(kind: KeyKind, data: bytes, pos: int) -> tuple[str, bool, int]:
    """The value whose order part is at ``pos`` (its canonical text when typed), whether it is
    a typed value (a form follows in the suffix), and the position after it. O(its length)."""
    if pos >= len(data):
        raise ValueError("encoded key ends before its last value")
    tag = data[pos]
    pos += 1
    if tag != _TYPED_TAG[kind] and (kind is KeyKind.STRING or tag != _RAW_TAG[kind]):
        raise ValueError(f"type code 0x{tag:02x} is not one of kind {kind.value}")
    if kind is KeyKind.STRING or tag == _RAW_TAG[kind]:
        text, pos = _unesc(data, pos)
        return text, False, pos
    fixed = _INT if kind is KeyKind.INTEGRAL else _DAY
    end = pos + fixed.size
    if end > len(data):
        raise ValueError("encoded key ends inside a fixed-width value")
    number = fixed.unpack(data[pos:end])[0]
    if kind is KeyKind.INTEGRAL:
        canonical = str(number - _INT_BIAS)
    else:
        day = number - _DAY_BIAS + _EPOCH
        if not 1 <= day <= _dt.date.max.toordinal():
            raise ValueError("day number out of the date range in encoded key")
        canonical = _dt.date.fromordinal(day).isoformat()
    return canonical, True, end


def _decode_form(canonical: str, data: bytes, pos: int) -> tuple[str, int]:
    """The spelling a form at ``pos`` gives a typed value, and the position after it."""
    marker = data[pos : pos + 1]
    if marker == bytes((_CANONICAL,)):
        return canonical, pos + 1
    if marker == bytes((_NON_CANONICAL,)):
        return _unesc(data, pos + 1)
    if not marker:
        raise ValueError("encoded key ends before its spelling suffix")
    raise ValueError("bad form marker in encoded key")


def decode_values(kinds: Sequence[KeyKind], data: bytes) -> list[str]:
    """The original strings of an ``encode_values`` result (exactly; no trailing bytes). O(n).

    The hot path of every filtered read (a residual is tested on decoded values), so it is
    written flat: one pass over the order parts, then one over the forms of typed values."""
    values: list[str] = []
    typed: list[int] = []
    pos = 0
    size = len(data)
    for index, kind in enumerate(kinds):
        if pos >= size:
            raise ValueError("encoded key ends before its last value")
        tag = data[pos]
        if tag == STRING and kind is _STRING_KIND:
            value, pos = _text_at(data, pos + 1)
        elif tag == INTEGRAL and kind is _INTEGRAL_KIND:
            if pos + 9 > size:
                raise ValueError("encoded key ends inside a fixed-width value")
            value = str(_INT.unpack_from(data, pos + 1)[0] - _INT_BIAS)
            pos += 9
            typed.append(index)
        elif tag == DATE and kind is _DATE_KIND:
            if pos + 5 > size:
                raise ValueError("encoded key ends inside a fixed-width value")
            value = _day_text(_DAY.unpack_from(data, pos + 1)[0])
            pos += 5
            typed.append(index)
        elif kind is not _STRING_KIND and tag == _RAW_TAG[kind]:
            value, pos = _text_at(data, pos + 1)
        else:
            raise ValueError(f"type code 0x{tag:02x} is not one of kind {kind.value}")
        values.append(value)
    for index in typed:
        if pos < size and data[pos] == _CANONICAL:
            pos += 1
        else:
            values[index], pos = _decode_form(values[index], data, pos)
    if pos != size:
        raise ValueError(f"{size - pos} trailing bytes after the encoded values")
    return values


_STRING_KIND, _INTEGRAL_KIND, _DATE_KIND = KeyKind.STRING, KeyKind.INTEGRAL, KeyKind.DATE


def _text_at(data: bytes, pos: int) -> tuple[str, int]:
    """``_unesc`` with a fast path for the usual text, which holds no 0x00 byte."""
    end = data.find(b"\x00", pos)
    if end >= 0 and data[end + 1 : end + 2] == b"\x00":
        return data[pos:end].decode("utf-8", "surrogatepass"), end + 2
    return _unesc(data, pos)


@functools.lru_cache(maxsize=65536)
def _day_text(number: int) -> str:
    """The ISO text of an encoded day number (cached: a table holds few distinct days)."""
    day = number - _DAY_BIAS + _EPOCH
    if not 1 <= day <= _dt.date.max.toordinal():
        raise ValueError("day number out of the date range in encoded key")
    return _dt.date.fromordinal(day).isoformat()


def split_order_parts(kinds: Sequence[KeyKind], data: bytes) -> tuple[list[bytes], bytes]:
    """The order part of each value of an encoded tuple, and its spelling suffix. O(n)."""
    parts = []
    pos = 0
    size = len(data)
    for kind in kinds:
        if pos >= size:
            raise ValueError("encoded key ends before its last value")
        tag = data[pos]
        if tag == INTEGRAL and kind is _INTEGRAL_KIND:
            end = pos + 9
        elif tag == DATE and kind is _DATE_KIND:
            end = pos + 5
        elif tag == STRING and kind is _STRING_KIND or (
            kind is not _STRING_KIND and tag == _RAW_TAG[kind]
        ):
            end = _text_end(data, pos + 1)
        else:
            raise ValueError(f"type code 0x{tag:02x} is not one of kind {kind.value}")
        if end > size:
            raise ValueError("encoded key ends inside a fixed-width value")
        parts.append(data[pos:end])
        pos = end
    return parts, data[pos:]


def _text_end(data: bytes, pos: int) -> int:
    """The position after the esc-encoded text at ``pos`` (after its terminator)."""
    while True:
        end = data.find(b"\x00", pos)
        if end < 0 or end + 1 >= len(data):
            raise ValueError("unterminated string in encoded key")
        follower = data[end + 1]
        if follower == 0:
            return end + 2
        if follower != 0xFF:
            raise ValueError("a 0x00 in an encoded string is neither escape nor terminator")
        pos = end + 2


def has_spelling(kinds: Sequence[KeyKind], data: bytes) -> bool:
    """Whether an encoded tuple holds a typed value in a non-canonical spelling ("007", "+7",
    "2024-1-5"): its spelling suffix is not all canonical markers. O(n)."""
    _parts, suffix = split_order_parts(kinds, data)
    return any(suffix)


def is_unparsed_part(part: bytes) -> bool:
    """Whether an order part holds a text that did not parse as its typed key's type (such as
    the default partition), which sorts after every parsed value of that key."""
    return part[:1] in (_UNPARSED_INTEGRAL, _UNPARSED_DATE)


_UNPARSED_INTEGRAL = bytes((INTEGRAL_RAW,))
_UNPARSED_DATE = bytes((DATE_RAW,))


def unparsed_span(kind: KeyKind) -> tuple[bytes, bytes] | None:
    """``[start, stop)`` of one order part holding every text that does not parse as ``kind``
    (None for STRING keys, where every text is a value). O(1)."""
    if kind is KeyKind.STRING:
        return None
    tag = _RAW_TAG[kind]
    return bytes((tag,)), bytes((tag + 1,))


def leading_order_part(kind: KeyKind, data: bytes) -> bytes:
    """The order part of the first value of an encoded tuple: every key whose first value
    equals it (any spelling) starts with these bytes. O(its length)."""
    _value, _typed, end = _decode_part(kind, data, 0)
    return data[:end]


def typed_span(kind: KeyKind) -> tuple[bytes, bytes]:
    """``[start, stop)`` of one order part (or ``encode_value``) holding every parseable value of
    ``kind`` and no unparseable one. O(1)."""
    tag = _TYPED_TAG[kind]
    return bytes((tag,)), bytes((tag + 1,))


def prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``; None when
    there is none (``prefix`` empty or all 0xFF). O(len(prefix))."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes((trimmed[-1] + 1,))


# --- value-space bounds (planner.bounds) as row keys --------------------------------------------


def encode_component(kind: KeyKind, component: Component) -> bytes:
    """The order part a bound component stands for: the encoding of a STRING value; for typed
    keys the tag and fixed part of a value (every spelling of it starts with them), the raw tag
    and text of an unparseable text, or the first raw byte for TYPED_END. O(len)."""
    if kind is KeyKind.STRING:
        if not isinstance(component, str):
            raise TypeError(f"a STRING key bound needs str, not {component!r}")
        return bytes((STRING,)) + _esc(component)
    if component is TYPED_END:
        return typed_span(kind)[1]
    if isinstance(component, str):
        return bytes((_RAW_TAG[kind],)) + _esc(component)
    if kind is KeyKind.INTEGRAL and isinstance(component, int) and not isinstance(component, bool):
        if not -_INT_BIAS <= component < _INT_BIAS:
            raise ValueError(f"{component} is outside the 64-bit range")
        return bytes((INTEGRAL,)) + _INT.pack(component + _INT_BIAS)
    if kind is KeyKind.DATE and isinstance(component, _dt.date):
        return bytes((DATE,)) + _DAY.pack(component.toordinal() - _EPOCH + _DAY_BIAS)
    raise TypeError(f"a {kind.value} key bound cannot hold {component!r}")


def encode_bound(kinds: Sequence[KeyKind], bound: Bound, *, upper: bool) -> bytes | None:
    """Where a bound lies among encoded value tuples (table-id prefix not included).

    The block's prefix p (the order parts of the bound's values: spelling suffixes come after
    all of them): a lower inclusive or upper exclusive bound is p, a lower exclusive or upper
    inclusive one is ``prefix_successor(p)``; a bound ending in TYPED_END is p either way (it is
    a position, not a block). None: no limit (upper inclusive bound of the empty tuple).
    O(total length)."""
    if len(bound.values) > len(kinds):
        raise ValueError(f"a bound of {len(bound.values)} values for {len(kinds)} keys")
    prefix = b"".join(encode_component(k, c) for k, c in zip(kinds, bound.values, strict=False))
    if bound.inclusive != upper or (bound.values and bound.values[-1] is TYPED_END):
        return prefix
    following = prefix_successor(prefix)
    if following is None and not upper:
        raise ValueError("a lower bound after every key")
    return following


def bound_range(
    kinds: Sequence[KeyKind], lower: Bound, upper: Bound, prefix: bytes = b""
) -> tuple[bytes, bytes | None]:
    """``[start, stop)`` row keys of a value-space scan under ``prefix`` (a table id, say);
    stop None: to the end of the store. O(total length)."""
    start = encode_bound(kinds, lower, upper=False)
    stop = encode_bound(kinds, upper, upper=True)
    assert start is not None
    if stop is None:
        return prefix + start, prefix_successor(prefix)
    return prefix + start, prefix + stop


def exact_key(kinds: Sequence[KeyKind], values: Sequence[Component]) -> bytes | None:
    """The one encoded tuple a full tuple of components can be (a get instead of a scan): when
    every component is a text (a STRING value, or a text that does not parse as its typed key),
    the key has no spelling suffix and is that tuple's only key. None otherwise: a typed value
    stands for all its spellings (scan its block, ``bound_range`` of the point), and a parseable
    text on a typed key is never stored as a raw text. O(length)."""
    texts = [v for v in values if isinstance(v, str)]
    if len(texts) != len(kinds) or len(values) != len(kinds):
        return None
    for kind, text in zip(kinds, texts, strict=True):
        if kind is not KeyKind.STRING and parse_typed(kind, text) is not None:
            return None
    return b"".join(encode_component(k, t) for k, t in zip(kinds, texts, strict=True))


def encode_id(n: int) -> bytes:
    """An unsigned 64-bit table id as 8 big-endian bytes (byte order == numeric order). O(1)."""
    if not 0 <= n < _ID_LIMIT:
        raise ValueError(f"table id {n} is outside 0 .. 2**64-1")
    return _INT.pack(n)
