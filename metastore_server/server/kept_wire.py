"""Replies of small read calls kept as the bytes that were sent, while the store is unchanged.

Engines ask the same small questions again and again: ``get_database`` and ``get_table`` of
the same names, the names listings, the newest event id. On the embedded store an answer
depends only on the call's arguments, the store (its change token: any commit, by any
process, changes it) and what the connection's client reads (its HMS generation). So the
reply of such a call is kept with the token read before the call ran, under its arguments as
they came on the wire, and a later call with the same argument bytes under the same token and
generation is answered with those bytes: its arguments are not decoded, no handler runs, no
reply is encoded; only the message header (the call's sequence id) is made anew.

Only where that holds: the binary protocol on the buffered transport (the arguments walked
whole, every string valid text), no authorization (every caller may make these calls and
gets the same answer), a store with a change token (never on HBase), a reply that was an
answer (no error) and small enough (``LARGEST``). Memory is bounded (least recently used go
first). The audit line of a kept reply has ``reply_cache=hit`` and the target and row count
of the call that made it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thriftpy2.thrift import TMessageType

from metastore_server.api.areas import named
from metastore_server.catalog.basics.bounded_cache import BoundedCache
from metastore_server.server.transport_limits import LimitedSocket
from metastore_server.wire.walk import struct_fields

#: The calls whose answers are kept (declared ``kept="listing"``): names listings and small
#: struct listings (``api/listing_replies.py``); their replies are kept as sent too.
KEPT_CALLS = named(lambda declared: declared.kept == "listing")
#: The calls whose replies are kept as sent (declared ``kept``): the names listings and single
#: objects by name.
WIRE_KEPT_CALLS = named(lambda declared: declared.kept != "")

#: Bytes of kept replies (about) before the least recently used go.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
#: A reply larger than this is not kept.
LARGEST = 4 * 1024 * 1024
#: Bytes an entry costs besides its reply and arguments.
_OVERHEAD = 200

_VERSION_1 = -2147418112  # 0x80010000 as a signed 32-bit value


@dataclass(slots=True)
class KeptReply:
    """A reply kept: the bytes after its message header and what its audit line says."""

    token: int
    body: bytes
    newer: bool  # the client's generation after the call (it may have shown it)
    db: str | None
    table: str | None
    rows: int | None


@dataclass(slots=True)
class ToKeep:
    """A call that missed: its key and the token read before it ran."""

    key: tuple[str, bytes, bool]
    token: int


def reply_header(api: str, seqid: int) -> bytes:
    """The binary protocol's (strict) REPLY message header of ``api``."""
    name = api.encode("utf-8")
    return (
        struct.pack("!ii", _VERSION_1 | TMessageType.REPLY, len(name))
        + name
        + struct.pack("!i", seqid)
    )


class WireReplies:
    """Kept replies by (method, argument bytes, generation); thread-safe, LRU, bounded."""

    def __init__(self, token: Callable[[], int | None], max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._token = token
        self._kept: BoundedCache[KeptReply] = BoundedCache(max_bytes)

    @property
    def held(self) -> int:
        """Bytes of the replies kept (about)."""
        return self._kept.held

    def look_up(
        self, api: str, reader: LimitedSocket, transport: Any, newer: bool
    ) -> tuple[KeptReply | None, ToKeep | None]:
        """For a call of ``api`` whose message header has been read: the kept reply (its
        arguments then taken off the connection), or what to keep its reply under once
        answered (its arguments left to be read; None when it cannot be kept)."""
        token = self._token()
        if token is None:
            return None, None
        reader.read_ahead()
        data = reader.take_walked(transport)
        if data is None:
            return None, None
        try:
            _fields, end = struct_fields(data, 0)
        except ValueError:
            reader.give_back(data)
            return None, None
        key = (api, data[:end], newer)
        kept = self._kept.get(key)
        if kept is not None and kept.token == token:
            reader.give_back(data[end:])  # what follows the message (a client that did not wait)
            return kept, None
        reader.give_back(data)
        return None, ToKeep(key, token)

    def keep(
        self,
        to_keep: ToKeep,
        message: bytes,
        *,
        newer: bool,
        db: str | None,
        table: str | None,
        rows: int | None,
    ) -> None:
        """Keep ``message`` (the whole reply as sent) for later calls like this one."""
        api = to_keep.key[0]
        header = len(api.encode("utf-8")) + 12
        if len(message) - header > LARGEST:
            return
        reply = KeptReply(to_keep.token, message[header:], newer, db, table, rows)
        size = _OVERHEAD + len(reply.body) + len(to_keep.key[1])
        self._kept.put(to_keep.key, reply, size)
