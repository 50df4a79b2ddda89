"""A partition's row in the store, from the table and the values (or name) a call gives: the
values checked against the table's keys, the row key, the partition's name, and the partition
decoded from its row. Every partition read and write goes through these.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.java_text import java_items
from metastore_server.catalog.objects.tables import TableRef
from metastore_server.storage import layout
from metastore_server.storage.codec import encode_values
from metastore_server.storage.port import MAX_ROW_KEY
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes


def checked_values(ref: TableRef, values: Sequence[str] | None) -> list[str]:
    """The values a call names a partition of ``ref`` by; MetaException (HMS's words) when
    there is not one per partition key."""
    values = list(values or [])
    if len(values) != len(ref.key_names):
        raise hms.MetaException(
            message=(
                "Invalid partition key & values; "
                f"keys [{java_items(ref.key_names)}], values [{java_items(values)}]"
            )
        )
    return values


def row_key(ref: TableRef, values: Sequence[str]) -> bytes:
    """The row key of the partition of ``ref`` with ``values``."""
    return layout.partition_key(ref.table_id, ref.kinds, values)


#: Room left in a row key for what other keys add to a partition's key or name (a statistics
#: row's table id, a grant's principal, privilege and grantor, a claim's suffix).
DERIVED_KEY_ROOM = 1024


def new_row_key(ref: TableRef, values: Sequence[str]) -> bytes:
    """The row key of a partition of ``ref`` with ``values`` that is to be written:
    MetaException when it, or the partition's name, would leave less than
    ``DERIVED_KEY_ROOM`` bytes below the longest row key (``MAX_ROW_KEY``; HBase refuses
    longer ones, and every store keeps the same rule), naming the value too long."""
    return new_row_key_named(ref, values)[0]


def new_row_key_named(ref: TableRef, values: Sequence[str]) -> tuple[bytes, str]:
    """``new_row_key`` and the partition's name (``partition_name``), made once for both."""
    key = row_key(ref, values)
    name = partition_name(ref, values)
    limit = MAX_ROW_KEY - DERIVED_KEY_ROOM
    longest = max(len(key), len(name) if name.isascii() else len(name.encode()))
    if longest <= limit:
        return key, name
    sizes = [
        len(encode_values([kind], [value])) for kind, value in zip(ref.kinds, values, strict=True)
    ]
    index = max(range(len(sizes)), key=sizes.__getitem__)
    raise hms.MetaException(
        message=(
            f"Partition value of key {ref.key_names[index]} is too long "
            f"({len(values[index])} characters): the partition's row key or name would be "
            f"{longest} bytes, over the limit of {limit} bytes"
        )
    )


def decoded(ref: TableRef, data: bytes) -> hms.Partition:
    """The partition a row's stored bytes hold, with its database and table names set."""
    partition = from_bytes(hms.Partition, data)
    partition.dbName, partition.tableName = ref.db, ref.name
    return partition


def partition_name(ref: TableRef, values: Sequence[str]) -> str:
    """The name ``k=v/...`` of the partition of ``ref`` with ``values``."""
    return names.make_partition_name(ref.key_names, values)


def values_from_name(ref: TableRef, name: str) -> list[str]:
    """Partition values of a name (keys in any order), in the table's key order.

    NoSuchObjectException naming the first key the name lacks, as HMS does.
    """
    spec = dict(names.parse_partition_name(name))
    values = []
    for key in ref.key_names:
        if key not in spec:
            raise hms.NoSuchObjectException(message=f"incomplete partition name - missing {key}")
        values.append(spec[key])
    return values
