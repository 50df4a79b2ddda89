"""Partitions answered as the Thrift bytes they are stored as (see ``docs/design.md``, "Partitions
are stored as their Thrift binary encoding and passed through to the wire").

A partition row holds the partition's Thrift binary encoding without its database and table
names (a table rename then rewrites one row, not every partition). The catalog answers a listing
as those bytes with the two names (``EncodedPartitions``); the server frames them into a reply
as they are (``metastore_server.wire.stored_replies``), and decodes them only for protocols
other than binary.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from thriftpy2.thrift import TPayload

from metastore_server.storage.row_scan import length_prefixed
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes


@dataclass(frozen=True)
class EncodedPartitions:
    """Stored partition encodings of one table, in answer order, with the names they lack."""

    db: str
    table: str
    blobs: Sequence[bytes]

    #: Whether the answer may be written more than once (see ``EncodedNames.replayable``).
    replayable = True

    def __len__(self) -> int:
        return len(self.blobs)

    def blobs_size(self) -> int:
        """The bytes of the stored encodings together."""
        return sum(len(blob) for blob in self.blobs)

    def blob_chunks(self, size: int) -> Iterator[Sequence[bytes]]:
        """The stored encodings in answer order, ``size`` at a time."""
        blobs = self.blobs
        for start in range(0, len(blobs), size):
            yield blobs[start : start + size]

    def decode(self) -> list[hms.Partition]:
        """The partitions as objects (for protocols other than binary, and for callers)."""
        partitions = []
        for blob in self.blobs:
            partition = from_bytes(hms.Partition, blob)
            partition.dbName, partition.tableName = self.db, self.table
            partitions.append(partition)
        return partitions


@dataclass(frozen=True)
class EncodedNames:
    """Partition names as UTF-8 bytes, in answer order, answered without making a string of
    each: the server writes ``body()`` after a list header as it is."""

    names: Sequence[bytes]
    #: Where the body is kept once made (a cached listing's, shared by the calls it answers).
    memo: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.names)

    #: Whether the answer may be written more than once (one merged from runs on disk,
    #: ``catalog.reads.spilled_names``, may not).
    replayable = True

    def body(self) -> bytes:
        """The names as the body of a Thrift binary list of strings (each after its length)."""
        made = self.memo.get("body")
        if made is None:
            made = self.memo["body"] = length_prefixed(list(self.names))
        return made

    def body_size(self) -> int:
        """The length of the body in bytes."""
        return len(self.body())

    def body_chunks(self) -> Iterator[bytes]:
        """The body in blocks, as it goes to the wire."""
        yield self.body()

    def decode(self) -> list[str]:
        """The names as strings (for protocols other than binary, and for callers)."""
        return [name.decode("utf-8") for name in self.names]


_STRING = 11


def string_field(field_id: int, text: str) -> bytes:
    """A Thrift binary string field: its header, then ``text`` in UTF-8."""
    data = text.encode("utf-8")
    return struct.pack("!bhi", _STRING, field_id, len(data)) + data


@dataclass(frozen=True)
class EncodedStructs:
    """Structs of one type answered as their Thrift binary encodings (each whole: its fields,
    then its stop byte), written to the wire as they are (``server.stored_replies``): stored
    tables, table listings built from the rows' index column, notification events.

    ``catalog``: an encoded catalog-name field that clients of HMS 3 and later read (HMS 4
    fills it; 2.3.10 leaves it unset: ``server.generations``), written just before each
    struct's stop byte for them only; empty: none. ``within``: the answer is a struct of
    this type holding the list as its field of this id (``NotificationEventResponse``'s
    ``events``); None: the answer is the list itself."""

    struct: type[TPayload]
    blobs: Sequence[bytes]
    catalog: bytes = b""
    within: tuple[type[TPayload], int] | None = None

    def __len__(self) -> int:
        return len(self.blobs)

    def decode(self, newer: bool = True) -> Any:
        """The answer as objects (for protocols other than binary, and for callers)."""
        catalog = self.catalog if newer else b""
        items = [from_bytes(self.struct, blob[:-1] + catalog + blob[-1:]) for blob in self.blobs]
        if self.within is None:
            return items
        container, field_id = self.within
        made: Callable[..., Any] = container  # a struct's constructor takes its fields
        return made(**{container.thrift_spec[field_id][1]: items})
