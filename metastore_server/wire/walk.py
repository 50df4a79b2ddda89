"""Follow the structure of Thrift binary-protocol messages as their bytes arrive.

thriftpy2's Cython decoder skips what it does not know (unknown fields, mismatched types) by the
counts it reads, and a container of a type that takes no bytes (STOP, VOID or an unknown type id)
costs one loop turn per declared element without reading anything: a 38-byte message declaring
2^31 such elements holds the process for seconds, and nested ones for hours. The walker reads
the same bytes first, as the socket hands them over, and accepts only what the decoder can read
in time proportional to its length:

- every type byte (field, list/set element, map key and value) is one of the eleven types the
  binary protocol writes; a container declaring a type that takes no bytes is refused;
- sizes and string lengths are not negative;
- structs and containers nest at most ``max_depth`` deep (thriftpy2 allows 64);
- a message header is version 1 (or the old unversioned form) with a name of at most
  ``MAX_NAME`` bytes.

It never builds objects: each value costs a few machine operations when this module is compiled
(Cython, at install) and about a third of thriftpy2's decode time when it runs as plain Python.

``struct_fields`` walks a whole struct already in memory instead: where each field's value lies
(an add stores each partition's bytes as they came, a kept reply is keyed by its argument bytes).
"""

from __future__ import annotations

from array import array

__all__ = ["MAX_DEPTH", "MAX_NAME", "WireWalker", "compiled", "struct_fields", "value_end"]

#: Deepest nesting of structs and containers accepted (thriftpy2's decoder stops at 64).
MAX_DEPTH = 64
#: Longest method name accepted in a message header (bytes).
MAX_NAME = 65536

# Frames on the walker's stack.
_MESSAGE = 0  # between messages: a message header comes next
_STRUCT = 1  # inside a struct: a field header (or its stop byte) comes next
_LIST = 2  # inside a list or set: ``count`` elements of ``types`` remain
_MAP = 3  # inside a map: ``count`` keys and values remain; key type << 8 | value type

_STOP = 0
_STRING = 11
_STRUCT_TYPE = 12
_MAP_TYPE = 13
_SET_TYPE = 14
_LIST_TYPE = 15

#: Bytes taken by a value of each fixed-width type (bool, byte, double, i16, i32, i64); 0 else.
_WIDTH = bytes(
    1 if t in (2, 3) else 8 if t in (4, 10) else 2 if t == 6 else 4 if t == 8 else 0
    for t in range(256)
)
#: 1 for the type ids the binary protocol writes for a value, 0 for any other byte.
_VALUE_TYPE = bytes(1 if t in (2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15) else 0 for t in range(256))

_VERSION_MASK = -65536  # 0xffff0000 as a signed 32-bit value
_VERSION_1 = -2147418112  # 0x80010000 as a signed 32-bit value


def compiled() -> bool:
    """Whether this module runs compiled (Cython) rather than as plain Python."""
    return not __file__.endswith(".py")


def _utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (as thriftpy2 decodes a string: strictly)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _i32(buf: bytes, p: int) -> int:
    """The big-endian signed 32-bit integer at ``buf[p:p+4]``."""
    value = (buf[p] << 24) | (buf[p + 1] << 16) | (buf[p + 2] << 8) | buf[p + 3]
    return value - 4294967296 if value >= 2147483648 else value


class WireWalker:
    """Follows one connection's stream of binary-protocol messages, chunk by chunk.

    :meth:`feed` takes the bytes in arrival order and says how many of them are well formed;
    after the first malformed byte :attr:`error` says what is wrong and nothing more is
    accepted. :attr:`method` and :attr:`seqid` are those of the last message header read.
    :attr:`messages` counts the messages walked whole; :attr:`list_keys_last` is the number
    (0-based) of the last message holding a non-empty map keyed by lists or sets (-1: none),
    which thriftpy2's Cython decoder cannot build (Python lists are no dict keys);
    :attr:`text_suspect_last` the number of the last message holding a string (or binary)
    value that is not plain ASCII and not valid UTF-8, or that is not plain ASCII and arrived
    in pieces (-1: none), so that a message after it holds only valid UTF-8 text."""

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self.error: str | None = None
        self.method: str | None = None
        self.seqid: int | None = None
        self.messages = 0
        self.list_keys_last = -1
        self.text_suspect_last = -1
        self._carry = b""  # the start of an item whose header is not complete yet
        self._skip = 0  # bytes of a value still to pass over
        self._skip_text = False  # whether those are the rest of a string's bytes
        # The stack of open frames, ``_depth`` deep (frame 0 is the stream between messages).
        self._depth = 0
        self._kinds = array("q", bytes(8 * (max_depth + 2)))
        self._counts = array("q", bytes(8 * (max_depth + 2)))
        self._types = array("q", bytes(8 * (max_depth + 2)))

    def value_left(self) -> int:
        """Bytes still to come of a value whose header has been read (a string's declared
        length, say): a message is at least that much longer."""
        return self._skip

    def at_message_boundary(self) -> bool:
        """Whether the bytes fed so far end exactly after a whole message."""
        return self._depth == 0 and not self._carry and not self._skip

    def feed(self, data: bytes) -> int:
        """Follow ``data``; the number of its leading bytes that are well formed so far (all of
        them unless a malformed item starts in it: :attr:`error` then says why)."""
        if self.error is not None:
            return 0
        size = len(data)
        if self._skip:
            if self._skip_text and not data[: self._skip].isascii():
                self.text_suspect_last = self.messages
            if self._skip >= size:
                self._skip -= size
                return size
            buf = data
            base = 0
            p = self._skip
            self._skip = 0
        else:
            buf = self._carry + data if self._carry else data
            base = len(self._carry)
            p = 0
        self._carry = b""
        end = len(buf)
        kinds = self._kinds
        counts = self._counts
        types = self._types
        width = _WIDTH
        valid = _VALUE_TYPE
        max_depth = self.max_depth
        depth = self._depth
        e = k = v = n = 0
        while p < end:
            kind = kinds[depth]
            if kind == _STRUCT:
                t = buf[p]
                if t == _STOP:
                    p += 1
                    depth -= 1
                    if depth == 0:
                        self.messages += 1
                    continue
                if not valid[t]:
                    return self._fail(p, base, f"a field of unknown type {t}")
                q = p + 3
            elif kind == _LIST:
                if counts[depth] == 0:
                    depth -= 1
                    continue
                t = types[depth]
                q = p
            elif kind == _MAP:
                if counts[depth] == 0:
                    depth -= 1
                    continue
                t = types[depth] >> 8 if counts[depth] % 2 == 0 else types[depth] & 255
                q = p
            else:
                q = self._message_header(buf, p, end)
                if q < 0:
                    if q == -1:
                        return self._wait(buf, p, depth, size)
                    return self._fail(p, base, self.error or "a malformed message header")
                p = q
                depth = 1
                kinds[1] = _STRUCT
                continue
            # ``q``: where the value of type ``t`` begins; its header must be there whole.
            w = width[t]
            if w:
                after = q + w
            elif t == _STRING:
                if q + 4 > end:
                    return self._wait(buf, p, depth, size)
                length = _i32(buf, q)
                if length < 0:
                    return self._fail(p, base, f"a negative string length {length}")
                after = q + 4 + length
                if not buf[q + 4 : after].isascii() and (
                    after > end or not _utf8(buf[q + 4 : after])
                ):
                    self.text_suspect_last = self.messages
            elif t == _STRUCT_TYPE:
                if q > end:
                    return self._wait(buf, p, depth, size)
                if depth >= max_depth:
                    return self._fail(p, base, f"nesting deeper than {max_depth}")
                after = q
            elif t in (_LIST_TYPE, _SET_TYPE):
                if q + 5 > end:
                    return self._wait(buf, p, depth, size)
                e = buf[q]
                n = _i32(buf, q + 1)
                if not valid[e]:
                    return self._fail(p, base, f"a list or set of unknown element type {e}")
                if n < 0:
                    return self._fail(p, base, f"a negative list or set size {n}")
                if depth >= max_depth:
                    return self._fail(p, base, f"nesting deeper than {max_depth}")
                after = q + 5
            elif t == _MAP_TYPE:
                if q + 6 > end:
                    return self._wait(buf, p, depth, size)
                k = buf[q]
                v = buf[q + 1]
                n = _i32(buf, q + 2)
                if not valid[k] or not valid[v]:
                    return self._fail(p, base, f"a map of unknown key or value type {k}, {v}")
                if n < 0:
                    return self._fail(p, base, f"a negative map size {n}")
                if depth >= max_depth:
                    return self._fail(p, base, f"nesting deeper than {max_depth}")
                after = q + 6
            else:  # only reachable for a list, set or map whose types were refused above
                return self._fail(p, base, f"a value of unknown type {t}")
            if after > end and (w or t == _STRING):
                if kind == _STRUCT and q > end:  # the field header itself is cut
                    return self._wait(buf, p, depth, size)
                self._skip = after - end
                self._skip_text = t == _STRING
            elif after > end:
                return self._wait(buf, p, depth, size)
            # The item is accepted: count it in its container, then open what it opens.
            if kind != _STRUCT:
                counts[depth] -= 1
            if t == _STRUCT_TYPE:
                depth += 1
                kinds[depth] = _STRUCT
            elif t in (_LIST_TYPE, _SET_TYPE):
                if n:
                    depth += 1
                    kinds[depth] = _LIST
                    counts[depth] = n
                    types[depth] = e
            elif t == _MAP_TYPE and n:
                if k in (_LIST_TYPE, _SET_TYPE):
                    self.list_keys_last = self.messages
                depth += 1
                kinds[depth] = _MAP
                counts[depth] = 2 * n
                types[depth] = k << 8 | v
            p = after
        self._depth = depth
        return size

    def _message_header(self, buf: bytes, p: int, end: int) -> int:
        """Where the message header at ``p`` ends; -1 when it is not all there, -2 when bad."""
        self.method = self.seqid = None
        if p + 4 > end:
            return -1
        first = _i32(buf, p)
        if first < 0:
            if first & _VERSION_MASK != _VERSION_1:
                self.error = f"a message header of unknown version {first & _VERSION_MASK:#x}"
                return -2
            if p + 8 > end:
                return -1
            length = _i32(buf, p + 4)
            start = p + 8
            tail = 4
        else:
            length = first
            start = p + 4
            tail = 5  # the message type byte, then the sequence id
        if length < 0 or length > MAX_NAME:
            self.error = f"a method name of {length} bytes"
            return -2
        after = start + length + tail
        if after > end:
            return -1
        self.method = buf[start : start + length].decode("utf-8", "replace")
        self.seqid = _i32(buf, after - 4)
        return after

    def _wait(self, buf: bytes, p: int, depth: int, size: int) -> int:
        """Keep the incomplete item at ``p`` for the next chunk; all ``size`` bytes are fine."""
        self._carry = buf[p:]
        self._depth = depth
        return size

    def _fail(self, p: int, base: int, error: str) -> int:
        self.error = error
        self._carry = b""
        return max(0, p - base)


# --------------------------------------------------------------------------- whole structs


def _s32(buf: bytes, p: int) -> int:
    value = (buf[p] << 24) | (buf[p + 1] << 16) | (buf[p + 2] << 8) | buf[p + 3]
    return value - 4294967296 if value >= 2147483648 else value


def value_end(buf: bytes, p: int, t: int, depth: int) -> int:
    """Where the Thrift binary value of type ``t`` at ``p`` ends; -1 when it is malformed,
    nested over 64 deep, or runs past the end of ``buf``."""
    size = len(buf)
    w = _WIDTH[t]
    if w:
        p += w
    elif t == _STRING:
        if p + 4 > size:
            return -1
        n = _s32(buf, p)
        if n < 0:
            return -1
        p += 4 + n
    elif depth > 64:
        return -1
    elif t == _STRUCT_TYPE:
        while True:
            if p >= size:
                return -1
            ft = buf[p]
            if ft == 0:
                return p + 1
            p = value_end(buf, p + 3, ft, depth + 1)
            if p < 0:
                return -1
    elif t in (_LIST_TYPE, _SET_TYPE):
        if p + 5 > size:
            return -1
        e = buf[p]
        n = _s32(buf, p + 1)
        if n < 0:
            return -1
        p += 5
        w = _WIDTH[e]
        if w:
            p += n * w
        elif e != _STRING and e < _STRUCT_TYPE:
            return -1
        else:
            for _ in range(n):
                p = value_end(buf, p, e, depth + 1)
                if p < 0:
                    return -1
    elif t == _MAP_TYPE:
        if p + 6 > size:
            return -1
        k = buf[p]
        v = buf[p + 1]
        n = _s32(buf, p + 2)
        if n < 0:
            return -1
        p += 6
        for _ in range(n):
            p = value_end(buf, p, k, depth + 1)
            if p < 0:
                return -1
            p = value_end(buf, p, v, depth + 1)
            if p < 0:
                return -1
    else:
        return -1
    return p if p <= size else -1


def struct_fields(buf: bytes, p: int) -> tuple[list[tuple[int, int, int, int]], int]:
    """The fields of the Thrift binary struct whose first field header is at ``p``: (field
    id, wire type, start of the value, end of the value) each, in the order they lie, and
    where the struct ends (after its stop byte). ValueError when it is malformed or cut."""
    fields: list[tuple[int, int, int, int]] = []
    size = len(buf)
    while p < size:
        t = buf[p]
        if t == 0:
            return fields, p + 1
        if p + 3 > size:
            break
        fid = (buf[p + 1] << 8) | buf[p + 2]
        if fid >= 32768:
            fid -= 65536
        end = value_end(buf, p + 3, t, 0)
        if end < 0:
            break
        fields.append((fid, t, p + 3, end))
        p = end
    raise ValueError("a malformed or cut Thrift struct")
