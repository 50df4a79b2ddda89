"""Partitions answered as the Thrift bytes they are stored as (see ``docs/design.md``, "Partitions
are stored as their Thrift binary encoding and passed through to the wire").

A partition row holds the partition's Thrift binary encoding without its database and table
names (a table rename then rewrites one row, not every partition). The catalog answers a listing
as those bytes with the two names (``EncodedPartitions``); the server frames them into a reply
as they are (``metastore_server.server.stored_replies``), and decodes them only for protocols
other than binary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from metastore_server.catalog.basics.serde import from_bytes
from metastore_server.thrift_api import hms
from storage.row_scan import length_prefixed


@dataclass(frozen=True)
class EncodedPartitions:
    """Stored partition encodings of one table, in answer order, with the names they lack."""

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


@dataclass(frozen=True)
class EncodedNames:
    """Partition names as UTF-8 bytes, in answer order, answered without making a string of
    each: the server writes ``body()`` after a list header as it is."""

    names: Sequence[bytes]
    #: Where the body is kept once made (a cached listing's, shared by the calls it answers).
    memo: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.names)

    def body(self) -> bytes:
        """The names as the body of a Thrift binary list of strings (each after its length)."""
        made = self.memo.get("body")
        if made is None:
            made = self.memo["body"] = length_prefixed(list(self.names))
        return made

    def decode(self) -> list[str]:
        """The names as strings (for protocols other than binary, and for callers)."""
        return [name.decode("utf-8") for name in self.names]
