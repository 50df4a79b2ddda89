"""Partitions answered as the Thrift bytes they are stored as (DESIGN.md decision 4).

A partition row holds the partition's Thrift binary encoding without its database and table
names (a table rename then rewrites one row, not every partition). Thrift readers take a struct's
fields in any order, so the answer is those two names written as fields, then the stored bytes
as they are. Decoding and encoding again would cost some 30 times more per partition.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from metastore_server.catalog.basics.serde import from_bytes
from metastore_server.thrift_api import hms

_STRING, _STRUCT, _LIST, _STOP = 11, 12, 15, 0
_VERSION_1 = 0x80010000
_REPLY = 2
_DB_NAME_FIELD, _TABLE_NAME_FIELD = 2, 3
_CHUNK = 256


def _string_field(field_id: int, text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("!bhi", _STRING, field_id, len(data)) + data


@dataclass(frozen=True)
class EncodedPartitions:
    """Stored partition encodings of one table, in answer order."""

    db: str
    table: str
    blobs: Sequence[bytes]

    def __len__(self) -> int:
        return len(self.blobs)

    def decode(self) -> list[hms.Partition]:
        """The partitions as objects (for protocols other than binary, and for callers)."""
        partitions = []
        for blob in self.blobs:
            partition = from_bytes(hms.Partition, blob)
            partition.dbName, partition.tableName = self.db, self.table
            partitions.append(partition)
        return partitions

    def _head(self, method: str, seqid: int) -> bytes:
        name = method.encode("utf-8")
        return (
            struct.pack("!Ii", _VERSION_1 | _REPLY, len(name))
            + name
            + struct.pack("!i", seqid)
            + struct.pack("!bhbi", _LIST, 0, _STRUCT, len(self.blobs))
        )

    def _names(self) -> bytes:
        return _string_field(_DB_NAME_FIELD, self.db) + _string_field(
            _TABLE_NAME_FIELD, self.table
        )

    def binary_reply(self, method: str, seqid: int) -> Iterator[bytes]:
        """A whole binary-protocol reply whose ``success`` is this list, in chunks."""
        yield self._head(method, seqid)
        names = self._names()
        for start in range(0, len(self.blobs), _CHUNK):
            # names + blob for each: the names before the first, then between the others.
            yield names + names.join(self.blobs[start : start + _CHUNK])
        yield bytes((_STOP,))

    def binary_reply_size(self, method: str, seqid: int) -> int:
        """The length of ``binary_reply`` in bytes, without building it (a frame header)."""
        names = len(self._names())
        body = sum(len(blob) for blob in self.blobs) + names * len(self.blobs)
        return len(self._head(method, seqid)) + body + 1
