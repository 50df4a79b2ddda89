"""Bytes kept deflated where that pays (pure logic, no I/O): intent records
(``storage.intent_rows``) and event payloads (``catalog.events.messages``) deflate a value from
``DEFLATE_FROM_BYTES`` when zlib's fastest level saves a tenth of it; reading one back is strict
(a stream cut short, running on or damaged is a ValueError)."""

from __future__ import annotations

import zlib

#: Values shorter than this are kept as they are.
DEFLATE_FROM_BYTES = 1024
_LEVEL = 1


def deflated(data: bytes) -> bytes | None:
    """``data`` deflated, or None when it is short or deflating saves less than a tenth."""
    if len(data) < DEFLATE_FROM_BYTES:
        return None
    packed = zlib.compress(data, _LEVEL)
    return packed if len(packed) * 10 <= len(data) * 9 else None


def inflated(data: bytes) -> bytes:
    """What :func:`deflated` gave ``data`` for; ValueError when it is not a whole stream."""
    inflater = zlib.decompressobj()
    try:
        whole = inflater.decompress(data)
    except zlib.error as error:
        raise ValueError(f"damaged deflated bytes: {error}") from None
    if not inflater.eof or inflater.unused_data:
        raise ValueError("the deflated bytes are cut short or run on")
    return whole
