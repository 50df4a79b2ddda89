"""``server.stored_replies``: a reply framed around stored partition bytes reads back, with a
stock Thrift decoder, as the reply of the decoded partitions; its announced size is exact."""

from __future__ import annotations

import pytest
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.catalog.basics.encoded import EncodedNames, EncodedPartitions
from metastore_server.catalog.basics.serde import stored_partition_bytes
from metastore_server.server.stored_replies import binary_reply, binary_reply_size
from metastore_server.thrift_api import ThriftHiveMetastore, hms

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
