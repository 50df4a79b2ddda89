"""Replies whose partitions (or partition names, or other structs) are their stored bytes,
written to the wire as they are.

A reply of ``EncodedPartitions`` (the catalog's stored partition encodings of one table) is
framed here without decoding them (``docs/design.md``, "Partitions are stored as their Thrift
binary encoding and passed through to the wire"): Thrift readers take a struct's fields in any
order, so each partition is its database and table names written as fields, then its stored
bytes as they are. Decoding and encoding again would cost some 30 times more per partition.
The chunks go to the socket as they are made, so the client reads the first while the next is
made, and nothing is copied twice. Protocols other than binary get the decoded partitions.

A reply of ``EncodedNames`` (partition names as UTF-8) is the list header and the names each
after its length (``EncodedNames.body``, kept with a cached listing): no string is made or
encoded per name.

Answers of ``EncodedStructs`` (stored tables, table listings from the rows' index column,
notification events) go the same way: each struct's bytes as they are, with the catalog-name
field before its stop byte for the clients that read one (``server.generations``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

from thriftpy2.thrift import TMessageType

from metastore_server.wire.encoded import (
    EncodedNames,
    EncodedPartitions,
    EncodedStructs,
    string_field,
)

_STRING, _STRUCT, _LIST, _STOP = 11, 12, 15, 0
_VERSION_1 = 0x80010000
_REPLY = 2
_DB_NAME_FIELD, _TABLE_NAME_FIELD = 2, 3
#: Partitions written per chunk.
_CHUNK = 256
#: Bytes gathered before a write to the socket: a small reply goes out in one write (one
#: system call, one wake-up of the client), a big one in writes of about this size.
_WRITE_SIZE = 256 * 1024

Writer = Callable[[bytes], None]


def stored_answer(result: Any) -> bool:
    """Whether a call's result answers with stored bytes (partitions, their names or other
    structs)."""
    answer = getattr(result, "success", None)
    return isinstance(answer, EncodedPartitions | EncodedNames | EncodedStructs)


def _head(parts: EncodedPartitions | EncodedNames, method: str, seqid: int) -> bytes:
    """The message header and the list header of ``success`` (field 0)."""
    name = method.encode("utf-8")
    element = _STRING if isinstance(parts, EncodedNames) else _STRUCT
    return (
        struct.pack("!Ii", _VERSION_1 | _REPLY, len(name))
        + name
        + struct.pack("!i", seqid)
        + struct.pack("!bhbi", _LIST, 0, element, len(parts))
    )


def _names(parts: EncodedPartitions) -> bytes:
    return string_field(_DB_NAME_FIELD, parts.db) + string_field(_TABLE_NAME_FIELD, parts.table)


def binary_reply(
    parts: EncodedPartitions | EncodedNames, method: str, seqid: int
) -> Iterator[bytes]:
    """A whole binary-protocol reply whose ``success`` is ``parts``, in chunks."""
    yield _head(parts, method, seqid)
    if isinstance(parts, EncodedNames):
        yield from parts.body_chunks()
        yield bytes((_STOP,))
        return
    names = _names(parts)
    for chunk in parts.blob_chunks(_CHUNK):
        # names + blob for each: the names before the first, then between the others.
        yield names + names.join(chunk)
    yield bytes((_STOP,))


def binary_reply_size(parts: EncodedPartitions | EncodedNames, method: str, seqid: int) -> int:
    """The length of ``binary_reply`` in bytes, without building it (a frame header)."""
    if isinstance(parts, EncodedNames):
        return len(_head(parts, method, seqid)) + parts.body_size() + 1
    names = len(_names(parts))
    body = parts.blobs_size() + names * len(parts)
    return len(_head(parts, method, seqid)) + body + 1


def _structs_head(structs: EncodedStructs, method: str, seqid: int) -> bytes:
    """The message header, then the list header of ``success`` (or of the field of the
    struct ``success`` is, ``within``)."""
    name = method.encode("utf-8")
    head = struct.pack("!Ii", _VERSION_1 | _REPLY, len(name)) + name + struct.pack("!i", seqid)
    if structs.within is None:
        return head + struct.pack("!bhbi", _LIST, 0, _STRUCT, len(structs.blobs))
    field_id = structs.within[1]
    return head + struct.pack("!bhbhbi", _STRUCT, 0, _LIST, field_id, _STRUCT, len(structs.blobs))


def _structs_tail(structs: EncodedStructs) -> bytes:
    return bytes((_STOP,)) if structs.within is None else bytes((_STOP, _STOP))


def structs_reply(structs: EncodedStructs, method: str, seqid: int, newer: bool) -> Iterator[bytes]:
    """A whole binary-protocol reply whose ``success`` is ``structs``, in chunks; with
    ``newer`` (a client of HMS 3 or later) each struct carries the catalog-name field."""
    yield _structs_head(structs, method, seqid)
    blobs = structs.blobs
    catalog = structs.catalog if newer else b""
    for start in range(0, len(blobs), _CHUNK):
        chunk = blobs[start : start + _CHUNK]
        if catalog:
            yield b"".join([piece for blob in chunk for piece in (blob[:-1], catalog, blob[-1:])])
        else:
            yield b"".join(chunk)
    yield _structs_tail(structs)


def structs_reply_size(structs: EncodedStructs, method: str, seqid: int, newer: bool) -> int:
    """The length of ``structs_reply`` in bytes, without building it (a frame header)."""
    catalog = len(structs.catalog) if newer else 0
    body = sum(len(blob) for blob in structs.blobs) + catalog * len(structs.blobs)
    return len(_structs_head(structs, method, seqid)) + body + len(_structs_tail(structs))


def send_stored_partitions(
    oprot: Any,
    api: str,
    result: Any,
    seqid: int,
    binary: bool,
    frame_writer: Writer | None = None,
    socket_writer: Writer | None = None,
    newer: bool = True,
) -> None:
    """Answer ``result`` (whose ``success`` is ``EncodedPartitions``, ``EncodedNames`` or
    ``EncodedStructs``):
    its stored bytes as they are on the binary protocol, else decoded. ``newer``: the client
    reads the catalog names of HMS 3 and later (``EncodedStructs.catalog``).

    The chunks go to the socket as they are made (``frame_writer`` after the frame's size, or
    ``socket_writer`` on the buffered transport), not through the transport's buffer."""
    answer = result.success
    if isinstance(answer, EncodedStructs):
        size = structs_reply_size(answer, api, seqid, newer)
        chunks = structs_reply(answer, api, seqid, newer)
    else:
        size = binary_reply_size(answer, api, seqid)
        chunks = binary_reply(answer, api, seqid)
    if binary and frame_writer is not None and size < 2**31:
        _write_gathered(frame_writer, [struct.pack("!i", size)], chunks)
        return
    if binary and socket_writer is not None:
        oprot.trans.flush()  # whatever the transport holds goes first (nothing, usually)
        _write_gathered(socket_writer, [], chunks)
        return
    if binary:
        for chunk in chunks:
            oprot.trans.write(chunk)
        oprot.trans.flush()
        return
    result.success = answer.decode(newer) if isinstance(answer, EncodedStructs) else answer.decode()
    oprot.write_message_begin(api, TMessageType.REPLY, seqid)
    result.write(oprot)
    oprot.write_message_end()
    oprot.trans.flush()


def _write_gathered(write: Writer, pending: list[bytes], chunks: Iterator[bytes]) -> None:
    """Write ``pending`` then ``chunks``, joined into writes of about ``_WRITE_SIZE`` bytes
    (a chunk is never split)."""
    size = sum(len(piece) for piece in pending)
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= _WRITE_SIZE:
            write(b"".join(pending))
            pending.clear()
            size = 0
    if pending:
        write(b"".join(pending))
