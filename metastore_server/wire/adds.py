"""``add_partitions`` and ``add_partitions_req`` (declared ``decode="wire_partitions"``) read
with their partitions left as the bytes they came in (``wire.partitions``): on the binary
protocol, buffered transport, once the transport's walker has followed the whole message and
found only valid text. The add stores those bytes with the fields it sets changed, instead of
decoding each partition and encoding it again. A request that does not fit is read the usual way.

:func:`decode_call` is the one way a call's arguments are read (the processor's), whichever
way its declaration says."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from metastore_server.thrift_api import hms
from metastore_server.wire.layouts import read_arguments
from metastore_server.wire.partitions import NotFast, read_partitions
from metastore_server.wire.serde import from_bytes
from metastore_server.wire.walk import struct_fields

_LIST = 15
_STRUCT = 12

#: Charges the decoding of a request against its connection's decode limit.
Charge = Callable[[int], None]


class Walked(Protocol):
    """A connection whose walker has followed the message being read (``LimitedSocket``)."""

    def take_walked(self, transport: Any) -> bytes | None:
        """The walked message's bytes, taken off the connection (None: not walked whole)."""
        ...

    def give_back(self, data: bytes) -> None:
        """Put bytes back at the front of what the connection reads next."""
        ...


def decode_call(
    decode: str, api: str, args: Any, iprot: Any, walked: Walked | None, charge: Charge
) -> None:
    """Read the arguments of ``api`` into ``args`` as its declaration's ``decode`` says: its
    partitions as wire bytes (where ``walked`` offers the message whole and it fits), in
    whichever HMS generation's layout it came, or the usual way."""
    if decode == "wire_partitions" and walked is not None:
        if _read_wire_add(api, args, walked, iprot.trans, charge):
            return
    if decode == "either_layout":
        read_arguments(api, args, iprot)
    else:
        args.read(iprot)


def _read_wire_add(api: str, args: Any, walked: Walked, transport: Any, charge: Charge) -> bool:
    """Read the arguments of an add with wire partitions; False, with nothing read, when the
    message is not one to read so (within the decode meter: DecodeLimitExceeded as for any
    decode)."""
    data = walked.take_walked(transport)
    if data is None:
        return False
    try:
        fields, end = struct_fields(data, 0)
        if api == "add_partitions":
            _add_partitions(args, data, fields, charge)
        else:
            _add_partitions_req(args, data, fields, charge)
    except (NotFast, ValueError, IndexError, UnicodeDecodeError):
        walked.give_back(data)
        return False
    walked.give_back(data[end:])  # what follows the message (a client that did not wait)
    return True


def _add_partitions(
    args: Any, data: bytes, fields: list[tuple[int, int, int, int]], charge: Charge
) -> None:
    found = [(at, end) for fid, ftype, at, end in fields if fid == 1 and ftype == _LIST]
    if len(fields) != 1 or not found:
        raise NotFast("not the one list of partitions")
    args.new_parts, _ = read_partitions(data, found[0][0], charge)


def _add_partitions_req(
    args: Any, data: bytes, fields: list[tuple[int, int, int, int]], charge: Charge
) -> None:
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
