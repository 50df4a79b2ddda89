"""Order-preserving, self-delimiting encoding of partition values (the tuple-layer idea).

A partition row key is a table id (``encode_id``) followed by the encoded values of the
partition keys, in key order. Each value is encoded for its key's kind (``planner.types``) so
that, for one list of kinds, comparing two encoded keys as unsigned bytes gives the same answer
as comparing the value tuples component by component, and a decoder finds where each value
ends without a length field. The encoding is prefix-free: an encoded tuple starts with
``encode_prefix(kinds, vs)`` exactly when its leading values are ``vs``, so
``[p, prefix_successor(p))`` is exactly the range of those keys. Decoding gives back the exact
original strings.

Type codes (the first byte of every encoded value; all are below 0xFF)::

    code  kind      value                      body
    0x02  STRING    any string                 esc(utf8)
    0x10  INTEGRAL  a 64-bit integer           8 bytes big-endian, sign bit flipped; form
    0x11  INTEGRAL  text that is no integer    esc(raw)
    0x20  DATE      a yyyy-MM-dd date          4 bytes big-endian day number, sign bit flipped; form
    0x21  DATE      text that is no date       esc(raw)

    esc(s)  = UTF-8 of s with every 0x00 written 0x00 0xFF, then the terminator 0x00 0x00
    form    = 0x00 when the text is the canonical spelling ("7", "2024-01-05"),
              0x01 + esc(raw) otherwise ("007", "+7", " 7", "2024-1-5")

Ordering argument, one piece per row of the table:

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
  component never starts inside this one.
* Form: two spellings of one number share the fixed-width part; the canonical one (marker
  0x00) sorts before every other (0x01), and the others among themselves by their raw text
  (esc, above). So "7" < " 7" < "+7" < "007" < "8", and distinct spellings stay distinct.
* Raw tags: 0x11 > 0x10 and 0x21 > 0x20, so text that does not parse as its key's type
  (``__HIVE_DEFAULT_PARTITION__``, "abc", 2**70) sorts after every typed value, in one place,
  ordered by its text. A typed range scan therefore never meets it (HMS direct-SQL semantics).
* Tuples: two encoded values of one kind are equal bytes iff the strings are equal, and when
  they differ neither is a prefix of the other, so the first differing byte lies inside both.
  So the first differing component decides the order of the whole key, whatever follows it.

The planner's value-space bounds (``planner.bounds``) map onto this order one to one:
``encode_bound`` / ``bound_range`` turn a bound into the row key where a scan starts or stops.
"""

from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Sequence

from planner.bounds import TYPED_END, Bound, Canonical, Component
from planner.types import KeyKind, parse_date, parse_integral, parse_typed

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


def encode_value(kind: KeyKind, raw: str) -> bytes:
    """The order-preserving encoding of one partition value of ``kind``. O(len(raw))."""
    if kind is KeyKind.STRING:
        return bytes((STRING,)) + _esc(raw)
    typed = _typed_body(kind, raw)
    if typed is None:
        return bytes((_RAW_TAG[kind],)) + _esc(raw)
    body, canonical = typed
    return body + _form(raw, canonical)


def encode_values(kinds: Sequence[KeyKind], raws: Sequence[str]) -> bytes:
    """The concatenated encodings of a full value tuple (one value per kind). O(total length)."""
    if len(kinds) != len(raws):
        raise ValueError(f"{len(raws)} values for {len(kinds)} partition keys")
    return b"".join(encode_value(kind, raw) for kind, raw in zip(kinds, raws, strict=True))


def encode_prefix(kinds: Sequence[KeyKind], raws: Sequence[str]) -> bytes:
    """The encoding of the first ``len(raws)`` values: every key with those leading values
    starts with it. O(total length)."""
    if len(raws) > len(kinds):
        raise ValueError(f"{len(raws)} values for {len(kinds)} partition keys")
    return encode_values(kinds[: len(raws)], raws)


def _decode_one(kind: KeyKind, data: bytes, pos: int) -> tuple[str, int]:
    """The value encoded at ``pos`` and the position after it. O(its length)."""
    if pos >= len(data):
        raise ValueError("encoded key ends before its last value")
    tag = data[pos]
    pos += 1
    if kind is not KeyKind.STRING and tag == _RAW_TAG[kind]:
        return _unesc(data, pos)
    if tag != _TYPED_TAG[kind]:
        raise ValueError(f"type code 0x{tag:02x} is not one of kind {kind.value}")
    if kind is KeyKind.STRING:
        return _unesc(data, pos)
    fixed = _INT if kind is KeyKind.INTEGRAL else _DAY
    end = pos + fixed.size
    if end > len(data):
        raise ValueError("encoded key ends inside a fixed-width value")
    number = fixed.unpack(data[pos:end])[0]
    if kind is KeyKind.INTEGRAL:
        canonical = str(number - _INT_BIAS)
    else:
        canonical = _dt.date.fromordinal(number - _DAY_BIAS + _EPOCH).isoformat()
    marker = data[end : end + 1]
    if marker == bytes((_CANONICAL,)):
        return canonical, end + 1
    if marker == bytes((_NON_CANONICAL,)):
        return _unesc(data, end + 1)
    raise ValueError("bad form marker in encoded key")


def decode_values(kinds: Sequence[KeyKind], data: bytes) -> list[str]:
    """The original strings of an ``encode_values`` result (exactly; no trailing bytes). O(n)."""
    values = []
    pos = 0
    for kind in kinds:
        value, pos = _decode_one(kind, data, pos)
        values.append(value)
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} trailing bytes after the encoded values")
    return values


def typed_prefix(kind: KeyKind, raw: str) -> bytes | None:
    """The bytes every spelling of the value ``raw`` denotes starts with, or None when ``raw``
    does not parse. For INTEGRAL and DATE, "7", "007" and "+7" share one prefix, so
    ``[p, prefix_successor(p))`` is the typed-equality range; for STRING it is the full
    encoding. O(len(raw))."""
    if kind is KeyKind.STRING:
        return encode_value(kind, raw)
    typed = _typed_body(kind, raw)
    return None if typed is None else typed[0]


def typed_span(kind: KeyKind) -> tuple[bytes, bytes]:
    """``[start, stop)`` of one component holding every parseable value of ``kind`` and no
    unparseable one. O(1)."""
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
    """The bytes a bound component stands for: the full encoding of a STRING value; for typed
    keys the tag and fixed part of a value (no form marker, so every spelling starts with it),
    the full encoding of its canonical spelling (``Canonical``), the raw tag and text of an
    unparseable text, or the first raw byte for TYPED_END. O(len)."""
    if kind is KeyKind.STRING:
        if not isinstance(component, str):
            raise TypeError(f"a STRING key bound needs str, not {component!r}")
        return encode_value(kind, component)
    if component is TYPED_END:
        return typed_span(kind)[1]
    if isinstance(component, Canonical):
        return encode_component(kind, component.value) + bytes((_CANONICAL,))
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

    The block's prefix p: a lower inclusive or upper exclusive bound is p, a lower exclusive or
    upper inclusive one is ``prefix_successor(p)``; a bound ending in TYPED_END is p either way
    (it is a position, not a block). None: no limit (upper inclusive bound of the empty tuple).
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
    """The one encoded tuple a full tuple of texts can be (a get instead of a scan), or None when
    it stands for several spellings (typed values) or for no stored key at all. O(length)."""
    if len(values) != len(kinds) or not all(isinstance(v, str | Canonical) for v in values):
        return None
    if any(isinstance(v, str) and k is not KeyKind.STRING and parse_typed(k, v) is not None
           for k, v in zip(kinds, values, strict=True)):  # fmt: skip
        return None  # a parseable text is never stored with the raw tag
    return b"".join(encode_component(k, c) for k, c in zip(kinds, values, strict=True))


def encode_id(n: int) -> bytes:
    """An unsigned 64-bit table id as 8 big-endian bytes (byte order == numeric order). O(1)."""
    if not 0 <= n < _ID_LIMIT:
        raise ValueError(f"table id {n} is outside 0 .. 2**64-1")
    return _INT.pack(n)


def decode_id(data: bytes) -> int:
    """The table id in the first 8 bytes of ``data``. O(1)."""
    if len(data) < _INT.size:
        raise ValueError("a table id needs 8 bytes")
    return _INT.unpack_from(data)[0]
