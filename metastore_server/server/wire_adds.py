"""``add_partitions`` and ``add_partitions_req`` read with their partitions left as the bytes
they came in (``catalog.basics.wire_partitions``): on the binary protocol, buffered transport,
once the transport's walker has followed the whole message and found only valid text. The add
stores those bytes with the fields it sets changed, instead of decoding each partition and
encoding it again. A request that does not fit is read the usual way."""

from __future__ import annotations

from typing import Any, cast

from metastore_server.catalog.basics.serde import from_bytes
from metastore_server.catalog.basics.wire_partitions import NotFast, read_partitions
from metastore_server.server.transport_limits import LimitedSocket, charge
from metastore_server.storage.row_scan import struct_fields
from metastore_server.thrift_api import hms

#: The calls read this way.
WIRE_ADDS = frozenset({"add_partitions", "add_partitions_req"})
_LIST = 15
_STRUCT = 12


def read_wire_add(api: str, args: Any, reader: LimitedSocket, transport: Any) -> bool:
    """Read the arguments of ``api`` (in :data:`WIRE_ADDS`) into ``args`` with wire
    partitions; False, with nothing read, when the message is not one to read so. Called
    within the reader's decode meter (DecodeLimitExceeded as for any decode)."""
    data = reader.take_walked(transport)
    if data is None:
        return False
    try:
        fields, end = struct_fields(data, 0)
        if api == "add_partitions":
            _add_partitions(args, data, fields)
        else:
            _add_partitions_req(args, data, fields)
    except (NotFast, ValueError, IndexError, UnicodeDecodeError):
        reader.give_back(data)
        return False
    reader.give_back(data[end:])  # what follows the message (a client that did not wait)
    return True


def _add_partitions(args: Any, data: bytes, fields: list[tuple[int, int, int, int]]) -> None:
    found = [(at, end) for fid, ftype, at, end in fields if fid == 1 and ftype == _LIST]
    if len(fields) != 1 or not found:
        raise NotFast("not the one list of partitions")
    args.new_parts, _ = read_partitions(data, found[0][0], charge)


def _add_partitions_req(args: Any, data: bytes, fields: list[tuple[int, int, int, int]]) -> None:
    if len(fields) != 1 or fields[0][:2] != (1, _STRUCT):
        raise NotFast("not the one request")
    inner, _ = struct_fields(data, fields[0][2])
    parts = [(at, end) for fid, ftype, at, end in inner if fid == 3 and ftype == _LIST]
    if len(parts) != 1:
        raise NotFast("not one list of partitions")
    at, end = parts[0]
    rest = b"".join(data[a - 3 : e] for fid, _, a, e in inner if fid != 3)
    request = from_bytes(hms.AddPartitionsRequest, rest + b"\x00")
    wire_parts, _ = read_partitions(data, at, charge)
    # Partitions as they came (attributes named as hms.Partition's) until the add decodes
    # them (catalog.partitions.wire_adding).
    request.parts = cast(list[hms.Partition], wire_parts)
    args.request = request
