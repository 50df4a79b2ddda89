"""``wire.stored_replies``: a reply framed around stored partition bytes reads back, with a
stock Thrift decoder, as the reply of the decoded partitions; a reply of stored structs is the
bytes encoding the objects gives; the announced sizes are exact."""

from __future__ import annotations

import pytest
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.catalog.objects.table_index import meta_column, table_meta_blobs
from metastore_server.thrift_api import ThriftHiveMetastore, hms
from metastore_server.wire.encoded import (
    EncodedNames,
    EncodedPartitions,
    EncodedStructs,
    string_field,
)
from metastore_server.wire.serde import stored_partition_bytes, to_bytes
from metastore_server.wire.stored_replies import (
    binary_reply,
    binary_reply_size,
    structs_reply,
    structs_reply_size,
)

SERVICE = ThriftHiveMetastore


def _partition(i: int) -> hms.Partition:
    return hms.Partition(
        values=[f"2024-01-{i % 28 + 1:02d}", str(i)],
        dbName="ignored",
        tableName="ignored",
        createTime=i,
        parameters={"n": "é" * (i % 3)},
    )


@pytest.mark.parametrize("count", [0, 1, 255, 256, 257, 600])
def test_a_stored_reply_reads_back_as_the_decoded_partitions(count: int) -> None:
    parts = EncodedPartitions(
        "db", "tåble", [stored_partition_bytes(_partition(i)) for i in range(count)]
    )
    data = b"".join(binary_reply(parts, "get_partitions", 41))
    assert binary_reply_size(parts, "get_partitions", 41) == len(data)
    protocol = TBinaryProtocol(TMemoryBuffer(data))
    assert protocol.read_message_begin() == ("get_partitions", TMessageType.REPLY, 41)
    result = SERVICE.get_partitions_result()
    result.read(protocol)
    protocol.read_message_end()
    assert result.success == parts.decode()
    assert [(p.dbName, p.tableName) for p in result.success] == [("db", "tåble")] * count


@pytest.mark.parametrize("count", [0, 1, 3, 5000])
def test_a_names_reply_is_the_encoded_list_of_strings(count: int) -> None:
    texts = [f"ds=2024-01-{i % 28 + 1:02d}/hr={i}/r=é%2F{'x' * (i % 5000)}" for i in range(count)]
    names = EncodedNames([text.encode("utf-8") for text in texts])
    data = b"".join(binary_reply(names, "get_partition_names", 7))
    assert binary_reply_size(names, "get_partition_names", 7) == len(data)
    expected = TMemoryBuffer()
    protocol = TBinaryProtocol(expected)
    protocol.write_message_begin("get_partition_names", TMessageType.REPLY, 7)
    SERVICE.get_partition_names_result(success=texts).write(protocol)
    protocol.write_message_end()
    assert data == expected.getvalue()
    assert names.decode() == texts


def _encoded_reply(method: str, result: object, seqid: int) -> bytes:
    """The reply thriftpy2 writes for ``result`` (the bytes of the decode-and-encode path)."""
    buffer = TMemoryBuffer()
    protocol = TBinaryProtocol(buffer)
    protocol.write_message_begin(method, TMessageType.REPLY, seqid)
    result.write(protocol)  # type: ignore[attr-defined]
    protocol.write_message_end()
    return buffer.getvalue()


@pytest.mark.parametrize("count", [0, 1, 256, 600])
@pytest.mark.parametrize("newer", [False, True])
def test_a_struct_reply_is_the_bytes_of_the_encoded_objects(count: int, newer: bool) -> None:
    """Table metas written as names + stored index column (+ the catalog for HMS 3+ clients)
    are byte for byte what encoding the objects gives, and the size announced is exact."""

    tables = [hms.Table(tableName=f"t{i}", tableType="MANAGED_TABLE" if i % 2 else None,
                        parameters={"comment": "ç" * (i % 3)} if i % 3 else {})
              for i in range(count)]  # fmt: skip
    blobs = table_meta_blobs("db", [t.tableName for t in tables], [meta_column(t) for t in tables])
    structs = EncodedStructs(hms.TableMeta, blobs, string_field(5, "hive"))
    data = b"".join(structs_reply(structs, "get_table_meta", 7, newer))
    assert structs_reply_size(structs, "get_table_meta", 7, newer) == len(data)
    metas = [
        hms.TableMeta(dbName="db", tableName=t.tableName, tableType=t.tableType or "",
                      comments=(t.parameters or {}).get("comment"),
                      catName="hive" if newer else None)
        for t in tables
    ]  # fmt: skip
    expected = SERVICE.get_table_meta_result(success=metas)
    assert data == _encoded_reply("get_table_meta", expected, 7)
    assert structs.decode(newer) == metas


def test_a_struct_reply_within_a_response_reads_back() -> None:
    events = [hms.NotificationEvent(eventId=i, eventTime=i, eventType="X", message="m" * i,
                                    catName="hive") for i in range(1, 300)]  # fmt: skip
    structs = EncodedStructs(hms.NotificationEvent, [to_bytes(e) for e in events],
                             within=(hms.NotificationEventResponse, 1))  # fmt: skip
    data = b"".join(structs_reply(structs, "get_next_notification", 3, True))
    assert structs_reply_size(structs, "get_next_notification", 3, True) == len(data)
    expected = SERVICE.get_next_notification_result(
        success=hms.NotificationEventResponse(events=events)
    )
    assert data == _encoded_reply("get_next_notification", expected, 3)
    assert structs.decode() == hms.NotificationEventResponse(events=events)
