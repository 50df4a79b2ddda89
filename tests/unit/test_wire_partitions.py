"""Partitions of an add read from their wire bytes (wire/partitions.py), as
compiled at install and as plain Python: what is read, and the stored bytes spliced from them,
are what a decoder reads and an encoder writes."""

from __future__ import annotations

from types import ModuleType

import pytest
from support.plain_python import plain_python, variants

from metastore_server.thrift_api import hms
from metastore_server.wire import partitions as wire_partitions
from metastore_server.wire.serde import from_bytes, to_bytes
from metastore_server.wire.walk import struct_fields

VARIANTS = variants(wire_partitions, plain_python(wire_partitions))


def _parts() -> list[hms.Partition]:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema("x", "int")], location="file:/a/é")
    return [
        hms.Partition(values=["1", "ü"], dbName="d", tableName="t", createTime=3, sd=sd,
                      parameters={"k": "v"}),
        hms.Partition(values=["2", "b"], catName="hive", sd=hms.StorageDescriptor(
            skewedInfo=hms.SkewedInfo([], [], {}), storedAsSubDirectories=True)),
        hms.Partition(values=["3", "c"]),
    ]  # fmt: skip


@pytest.mark.parametrize("module", VARIANTS)
def test_read_fields_are_the_decoded_ones(module: ModuleType) -> None:
    parts = _parts()
    data = to_bytes(hms.ThriftHiveMetastore.add_partitions_args(new_parts=parts))
    read, end = module.read_partitions(data, 3)
    assert end == len(data) - 1  # the arguments' stop byte follows
    for wire, part in zip(read, parts, strict=True):
        assert wire.decode() == part
        assert (wire.values, wire.dbName, wire.tableName, wire.catName) == (
            part.values, part.dbName, part.tableName, part.catName)  # fmt: skip
        assert (wire.createTime, wire.parameters) == (part.createTime, part.parameters)
        assert (wire.sd is None) == (part.sd is None)
        if part.sd is not None:
            assert wire.sd.location == part.sd.location


@pytest.mark.parametrize("module", VARIANTS)
@pytest.mark.parametrize("defaults", [True, False])
@pytest.mark.parametrize("location", [None, "file:/new/ø"])
def test_stored_bytes_are_the_encoding_of_the_partition_as_set(
    module: ModuleType, defaults: bool, location: str | None
) -> None:
    parts = _parts()[:2]
    data = to_bytes(hms.ThriftHiveMetastore.add_partitions_args(new_parts=parts))
    read, _ = module.read_partitions(data, 3)
    for wire, part in zip(read, parts, strict=True):
        spliced = module.stored_bytes(wire, ["9", "z"], 7, 0, {"p": "q"}, location, defaults)
        expected = from_bytes(hms.Partition, to_bytes(part))
        expected.dbName = expected.tableName = expected.catName = None
        expected.values, expected.createTime, expected.lastAccessTime = ["9", "z"], 7, 0
        expected.parameters = {"p": "q"}
        if location is not None:
            expected.sd.location = location
        if defaults:
            if expected.sd.skewedInfo is None:
                expected.sd.skewedInfo = hms.SkewedInfo([], [], {})
            if expected.sd.storedAsSubDirectories is None:
                expected.sd.storedAsSubDirectories = False
        assert spliced == to_bytes(expected)  # byte for byte: fields in id order


@pytest.mark.parametrize("module", VARIANTS)
def test_a_list_of_other_things_is_not_read(module: ModuleType) -> None:
    data = to_bytes(hms.ThriftHiveMetastore.get_partitions_by_names_args(names=["a"]))
    ((_, _, names_at, _),) = struct_fields(data, 0)[0]
    with pytest.raises(module.NotFast):
        module.read_partitions(data, names_at)
