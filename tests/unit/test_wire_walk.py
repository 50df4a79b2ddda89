"""The wire walker (metastore_server/wire/walk.py), compiled at install and plain Python:
it accepts every message thriftpy2 writes, fed in any chunking, and refuses at the right byte
every container thriftpy2's decoder would skip without reading."""

from __future__ import annotations

import random
import shutil
import struct
from types import ModuleType

import pytest
from support.plain_python import plain_python, variants
from support.thrift_bytes import (
    CALL,
    VALID_UNKNOWN_FIELDS,
    Splice,
    bomb_field,
    container_paths,
    message,
    struct_paths,
)
from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.thrift import TMessageType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.thrift_api import hms
from metastore_server.wire import walk as wire_walk

PLAIN = plain_python(wire_walk)
VARIANTS = variants(wire_walk, PLAIN)
ZERO_WIDTH = [0, 1, 5, 7, 9, 16, 17, 18, 19, 200, 255]


def _sample_partition(n: int) -> object:
    cols = [hms.FieldSchema(name=f"c{i}", type="string", comment="é") for i in range(3)]
    serde = hms.SerDeInfo(name="s", serializationLib="lib", parameters={"k": "v"})
    skewed = hms.SkewedInfo(skewedColNames=["c0"], skewedColValues=[["a"]],
                            skewedColValueLocationMaps={("a",): "loc"})  # fmt: skip
    sd = hms.StorageDescriptor(cols=cols, location=f"/w/{n}", inputFormat="i", outputFormat="o",
                               compressed=False, numBuckets=-1, serdeInfo=serde,
                               bucketCols=["c1"], sortCols=[hms.Order(col="c1", order=1)],
                               parameters={}, skewedInfo=skewed)  # fmt: skip
    return hms.Partition(values=["2024-01-01", str(n)], dbName="db", tableName="t",
                         createTime=1_700_000_000, lastAccessTime=0, sd=sd,
                         parameters={"a": "b"})  # fmt: skip


def _sample_calls() -> list[bytes]:
    svc = hms.ThriftHiveMetastore
    table = hms.Table(tableName="t", dbName="db", owner="me", createTime=1, lastAccessTime=0,
                      retention=0, sd=_sample_partition(0).sd,
                      partitionKeys=[hms.FieldSchema(name="ds", type="string")],
                      parameters={"x": "y"}, tableType="MANAGED_TABLE",
                      privileges=hms.PrincipalPrivilegeSet(userPrivileges={"u": [
                          hms.PrivilegeGrantInfo(privilege="ALL", createTime=1, grantor="g",
                                                 grantorType=1, grantOption=True)]}))  # fmt: skip
    calls = [
        ("add_partitions", svc.add_partitions_args(new_parts=[_sample_partition(i)
                                                              for i in range(5)])),
        ("create_table", svc.create_table_args(tbl=table)),
        ("get_all_databases", svc.get_all_databases_args()),
        ("get_partitions_by_filter", svc.get_partitions_by_filter_args(
            db_name="db", tbl_name="t", filter="ds > '1'", max_parts=-1)),
        ("create_database", svc.create_database_args(database=hms.Database(
            name="d", description="", parameters={"a": "b"}))),
    ]  # fmt: skip
    out = []
    for seqid, (name, args) in enumerate(calls):
        buffer = TMemoryBuffer()
        proto = TCyBinaryProtocolFactory().get_protocol(buffer)
        proto.write_message_begin(name, TMessageType.CALL, seqid)
        proto.write_struct(args)
        proto.write_message_end()
        proto.trans.flush()
        out.append(buffer.getvalue())
    return out


CALLS = _sample_calls()
STREAM = b"".join(CALLS)


def _feed_in_chunks(module: ModuleType, data: bytes, sizes: list[int]) -> tuple[object, int]:
    walker = module.WireWalker()
    taken = 0
    pos = 0
    for size in sizes:
        chunk = data[pos : pos + size]
        pos += size
        good = walker.feed(chunk)
        taken += good
        if good < len(chunk):
            break
    return walker, taken


@pytest.mark.parametrize("module", VARIANTS)
def test_every_call_thriftpy2_writes_is_accepted_in_any_chunking(module: ModuleType) -> None:
    rng = random.Random(5)
    for attempt in range(40):
        sizes = [1] * len(STREAM) if attempt == 0 else []
        while sum(sizes) < len(STREAM):
            sizes.append(rng.choice([1, 2, 3, 5, 9, 64, 700, 5000]))
        walker, taken = _feed_in_chunks(module, STREAM, sizes)
        assert walker.error is None
        assert taken == len(STREAM)
        assert walker.at_message_boundary()
        assert walker.method == "create_database" and walker.seqid == 4


@pytest.mark.parametrize("module", VARIANTS)
def test_a_message_cut_anywhere_waits_for_the_rest(module: ModuleType) -> None:
    data = CALLS[0]
    for cut in range(1, len(data), 7):
        walker = module.WireWalker()
        assert walker.feed(data[:cut]) == cut
        assert not walker.at_message_boundary()
        assert walker.feed(data[cut:]) == len(data) - cut
        assert walker.at_message_boundary()


@pytest.mark.parametrize("module", VARIANTS)
@pytest.mark.parametrize("element_type", ZERO_WIDTH)
def test_a_list_of_a_type_taking_no_bytes_is_refused_at_its_header(
    module: ModuleType, element_type: int
) -> None:
    good = CALLS[2]  # get_all_databases: header, then the stop byte of its arguments
    bomb = good[:-1] + bomb_field(element_type) + b"\x00"
    walker = module.WireWalker()
    # Everything up to the field's header is accepted: the calls before it are answered.
    assert walker.feed(STREAM + bomb) == len(STREAM) + len(good) - 1
    assert "unknown element type" in walker.error
    assert walker.method == "get_all_databases" and walker.seqid == 2
    assert walker.feed(b"\x00") == 0  # nothing more is accepted


@pytest.mark.parametrize("module", VARIANTS)
def test_bombs_in_every_struct_and_container_of_a_call_are_refused(module: ModuleType) -> None:
    args = hms.ThriftHiveMetastore.add_partitions_args(new_parts=[_sample_partition(1)])
    positions = 0
    for path in struct_paths(args):
        for element_type in (0, 1, 16):
            data = message("add_partitions", args, Splice(path, tail=bomb_field(element_type)))
            walker = module.WireWalker()
            assert walker.feed(data) < len(data), path
            assert "unknown element type" in walker.error
            positions += 1
    for path, _kind in container_paths(args):
        for header in (struct.pack("!bi", 1, 2**31 - 1), struct.pack("!bbi", 1, 0, 2**31 - 1),
                       struct.pack("!bi", 11, -1)):  # fmt: skip
            data = message("add_partitions", args, Splice(path, header=header))
            walker = module.WireWalker()
            assert walker.feed(data) < len(data), path
            positions += 1
    assert positions > 60  # every struct and container of a partition was tried


@pytest.mark.parametrize("module", VARIANTS)
def test_maps_are_refused_only_when_neither_side_takes_bytes(module: ModuleType) -> None:
    head = CALLS[2][:-1]
    for key, value, refused in ((1, 1, True), (1, 11, True), (11, 0, True), (11, 11, False)):
        data = head + struct.pack("!bhbbi", 13, 99, key, value, 1) + b""
        if not refused:
            data += struct.pack("!i", 1) + b"k" + struct.pack("!i", 1) + b"v"
        data += b"\x00"
        walker = module.WireWalker()
        accepted = walker.feed(data)
        assert (accepted < len(data)) == refused, (key, value)


@pytest.mark.parametrize("module", VARIANTS)
def test_valid_unknown_fields_are_accepted(module: ModuleType) -> None:
    args = hms.ThriftHiveMetastore.add_partitions_args(new_parts=[_sample_partition(1)])
    extra = VALID_UNKNOWN_FIELDS
    for path in struct_paths(args):
        data = message("add_partitions", args, Splice(path, tail=extra))
        walker = module.WireWalker()
        assert walker.feed(data) == len(data), path
        assert walker.at_message_boundary()


@pytest.mark.parametrize("module", VARIANTS)
def test_nesting_is_limited(module: ModuleType) -> None:
    head = CALLS[2][:-1]
    for depth, refused in ((63, False), (64, True), (10_000, True)):  # as thriftpy2
        data = head + struct.pack("!bh", 12, 99) * depth + b"\x00" * (depth + 1)
        walker = module.WireWalker()
        assert (walker.feed(data) < len(data)) == refused, depth
    nested_lists = head + struct.pack("!bhbi", 15, 99, 15, 1) + struct.pack("!bi", 15, 1) * 100
    walker = module.WireWalker()
    assert walker.feed(nested_lists) < len(nested_lists)
    assert "nesting deeper than 64" in walker.error


@pytest.mark.parametrize("module", VARIANTS)
def test_negative_sizes_and_bad_headers_are_refused(module: ModuleType) -> None:
    head = CALLS[2][:-1]
    cases = {
        "string": head + struct.pack("!bhi", 11, 99, -1),
        "list": head + struct.pack("!bhbi", 15, 99, 11, -5),
        "map": head + struct.pack("!bhbbi", 13, 99, 11, 11, -5),
        "field type": head + struct.pack("!bh", 0x42, 1),
        "version": struct.pack("!I", 0x80020001) + CALLS[2][4:],
        "name": struct.pack("!Ii", CALL, 2**31 - 1),
        "negative name": struct.pack("!Ii", CALL, -3),
    }
    for case, data in cases.items():
        walker = module.WireWalker()
        assert walker.feed(data) < len(data), case
        assert walker.error, case


@pytest.mark.parametrize("module", VARIANTS)
def test_the_old_unversioned_header_is_followed(module: ModuleType) -> None:
    name = b"get_all_databases"
    data = struct.pack("!i", len(name)) + name + bytes([TMessageType.CALL]) + struct.pack("!i", 3)
    walker = module.WireWalker()
    assert walker.feed(data + b"\x00") == len(data) + 1
    assert walker.at_message_boundary() and walker.seqid == 3


def test_the_installed_walker_is_compiled_where_a_compiler_is_at_hand() -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the walker runs as plain Python")
    assert wire_walk.compiled(), "reinstall (make install) to compile wire/walk.py"
    assert not PLAIN.compiled()


def _random_sizes(rng: random.Random, total: int) -> list[int]:
    sizes: list[int] = []
    while sum(sizes) < total:
        sizes.append(rng.choice([1, 2, 3, 5, 9, 64, 700, 5000]))
    return sizes


@pytest.mark.parametrize("module", VARIANTS)
def test_messages_and_list_keyed_maps_are_counted_in_any_chunking(module: ModuleType) -> None:
    """The sample add_partitions (message 0) and create_table (message 1) hold a skewed map
    keyed by lists; the other three calls hold none."""
    rng = random.Random(11)
    for attempt in range(30):
        sizes = [1] * len(STREAM) if attempt == 0 else _random_sizes(rng, len(STREAM))
        walker, _ = _feed_in_chunks(module, STREAM, sizes)
        assert walker.messages == len(CALLS)
        assert walker.list_keys_last == 1
        plain, _ = _feed_in_chunks(module, b"".join(CALLS[2:]), sizes)
        assert plain.messages == 3 and plain.list_keys_last == -1


def _get_database(name: bytes | str, seqid: int) -> bytes:
    raw = name if isinstance(name, bytes) else name.encode()
    return message("get_database", hms.ThriftHiveMetastore.get_database_args(name=raw),
                   seqid=seqid)  # fmt: skip


@pytest.mark.parametrize("module", VARIANTS)
def test_strings_that_are_not_utf8_mark_their_message_in_any_chunking(
    module: ModuleType,
) -> None:
    ascii_calls = b"".join(_get_database(f"db{i}", i) for i in range(3))
    bad = _get_database(b"caf\xe9", 3)  # Latin-1
    rng = random.Random(3)
    for attempt in range(30):
        sizes = [1] * 200 if attempt == 0 else _random_sizes(rng, 200)
        walker, _ = _feed_in_chunks(module, ascii_calls, sizes + [10**6])
        assert walker.messages == 3 and walker.text_suspect_last == -1
        walker, _ = _feed_in_chunks(module, ascii_calls + bad + ascii_calls, sizes + [10**6])
        assert walker.messages == 7 and walker.text_suspect_last == 3
    # Valid UTF-8 that is not ASCII passes when it arrives whole (in pieces it is not judged).
    walker = module.WireWalker()
    walker.feed(_get_database("café ☕", 0))
    assert walker.messages == 1 and walker.text_suspect_last == -1


@pytest.mark.parametrize("module", VARIANTS)
def test_value_left_is_what_a_cut_string_still_declares(module: ModuleType) -> None:
    data = _get_database("x" * 1000, 0)
    walker = module.WireWalker()
    walker.feed(data[:100])
    assert walker.value_left() == len(data) - 1 - 100  # all but its stop byte and the 100
    walker.feed(data[100:])
    assert walker.value_left() == 0 and walker.messages == 1


@pytest.mark.parametrize("scan", VARIANTS, ids=lambda m: m.__name__)
def test_struct_fields_finds_each_field_of_a_thrift_struct_and_refuses_a_cut_one(
    scan: ModuleType,
) -> None:
    from metastore_server.thrift_api import hms
    from metastore_server.wire.serde import to_bytes

    part = hms.Partition(
        values=["a", "é"],
        createTime=5,
        sd=hms.StorageDescriptor(cols=[hms.FieldSchema("x", "int")], location="l"),
        parameters={"k": "v"},
    )
    data = to_bytes(part)
    fields, end = scan.struct_fields(data, 0)
    assert end == len(data)
    assert [(fid, ftype) for fid, ftype, _, _ in fields] == [
        (1, 15), (4, 8), (6, 12), (7, 13), (10, 10)
    ]  # fmt: skip
    _, _, at, stop = fields[1]
    assert int.from_bytes(data[at:stop], "big") == 5
    _, _, at, stop = fields[2]
    sd_fields, sd_end = scan.struct_fields(data, at)
    assert [(fid, ftype) for fid, ftype, _, _ in sd_fields] == [(1, 15), (2, 11)]
    assert sd_end == stop and data[sd_fields[1][2] + 4 : sd_fields[1][3]] == b"l"
    for cut in (len(data) - 1, len(data) // 2, 3):
        with pytest.raises(ValueError):
            scan.struct_fields(data[:cut], 0)
    with pytest.raises(ValueError):  # a list of 2^31 - 1 elements of no type: refused
        scan.struct_fields(b"\x0f\x00\x01\x00\x7f\xff\xff\xff\x00", 0)
    with pytest.raises(ValueError):  # a negative string length
        scan.struct_fields(b"\x0b\x00\x02\xff\xff\xff\xff\x00", 0)
