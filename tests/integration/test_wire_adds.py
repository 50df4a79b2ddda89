"""``add_partitions`` and ``add_partitions_req`` store each partition's bytes as they came
(``wire.partitions``): the rows, answers, events and errors are those of the
add of the decoded partitions, compared here on two stores driven by the same clock, on many
shapes of partition; and over sockets the binary protocol takes that path while the compact
protocol decodes."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from metastore_server.storage import layout
from metastore_server.storage.open import open_store

from metastore_server.api.handler import MetastoreHandler
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.partitions.adding import Adding
from metastore_server.thrift_api import hms
from metastore_server.wire.partitions import WirePartition, read_partitions
from metastore_server.wire.serde import from_bytes, to_bytes
from metastore_server.wire.walk import struct_fields

from .conftest import RunningServer, column, make_partition, make_table

DB = "wiredb"
NOW = 1_700_000_000


def _handler(path: Path, warehouse: Path, data: bool) -> MetastoreHandler:
    catalog = Catalog(
        open_store(f"sqlite:///{path}"), Warehouse(warehouse), data=DataOperations(enabled=data)
    )
    catalog.ctx.now = lambda: NOW
    handler = MetastoreHandler(catalog)
    handler.create_database(hms.Database(name=DB, parameters={}))
    table = make_table(DB, "t", keys=[("ds", "string"), ("hr", "int")])
    handler.create_table(table)
    return handler


class Pair:
    """Two servers' handlers on stores of their own, one warehouse, one clock: ``slow`` is
    sent decoded partitions, ``fast`` wire partitions."""

    def __init__(self, tmp: Path, data: bool) -> None:
        self.warehouse = tmp / "wh"
        self.slow = _handler(tmp / "a.db", self.warehouse, data)
        self.fast = _handler(tmp / "b.db", self.warehouse, data)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.slow, self.fast))

    def outcomes(
        self, slow_call: Callable[[], Any], fast_call: Callable[[], Any]
    ) -> tuple[Any, Any]:
        """The outcomes of ``slow_call`` then ``fast_call``, the second finding the warehouse as
        the first did (what the first made there is removed in between)."""
        before = _tree(self.warehouse)
        first = _outcome(slow_call)
        _undo_new_paths(self.warehouse, before)
        return first, _outcome(fast_call)


@pytest.fixture(params=["data-off", "data-on"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Pair:
    return Pair(tmp_path, request.param == "data-on")


def _wire(parts: list[Any], extra: Callable[[bytes], bytes] | None = None) -> list[WirePartition]:
    """The partitions as the server reads them from an add_partitions message."""
    data = to_bytes(hms.ThriftHiveMetastore.add_partitions_args(new_parts=parts))
    if extra is not None:
        data = extra(data)
    fields, _ = struct_fields(data, 0)
    return read_partitions(data, fields[0][2])[0]


def _rows(handler: Any) -> list[tuple[bytes, dict[bytes, bytes]]]:
    return list(handler.catalog.ctx.store.scan(layout.PARTITIONS))


def _spellings(handler: Any) -> list[bytes | None]:
    """Each table's mark of partitions holding non-canonical typed spellings."""
    return [row.get(layout.SPELLINGS) for _, row in handler.catalog.ctx.store.scan(layout.TABLES)]


def _events(handler: Any) -> list[Any]:
    return handler.get_next_notification(hms.NotificationEventRequest(lastEvent=0)).decode().events


def _same_rows(slow: Any, fast: Any, byte_equal: bool = True) -> None:
    slow_rows, fast_rows = _rows(slow), _rows(fast)
    assert [k for k, _ in slow_rows] == [k for k, _ in fast_rows]
    assert slow_rows, "nothing was added"
    for (_, a), (_, b) in zip(slow_rows, fast_rows, strict=True):
        assert {c: v for c, v in a.items() if c != layout.OBJECT} == {
            c: v for c, v in b.items() if c != layout.OBJECT
        }
        pa, pb = (
            from_bytes(hms.Partition, a[layout.OBJECT]),
            from_bytes(hms.Partition, b[layout.OBJECT]),
        )
        for name in pa.__dict__:  # field by field, then whole
            assert getattr(pa, name) == getattr(pb, name), name
        assert pa == pb
        if byte_equal:
            assert a[layout.OBJECT] == b[layout.OBJECT]
    assert _events(slow) == _events(fast)
    assert _spellings(slow) == _spellings(fast)


def _part(values: list[str], **fields: Any) -> Any:
    part = make_partition(DB, "t", values)
    for name, value in fields.items():
        target = part.sd if hasattr(part.sd, name) and not hasattr(part, name) else part
        setattr(target, name, value)
    return part


SHAPES: dict[str, Callable[[str], list[Any]]] = {
    "default location": lambda root: [_part(["2024-01-01", "1"]), _part(["2024-01-01", "2"])],
    "own location": lambda root: [_part(["2024-01-02", "3"], location=f"file:{root}/elsewhere/p3")],
    "empty location": lambda root: [_part(["2024-01-02", "4"], location="")],
    "parameters and times": lambda root: [
        _part(
            ["2024-01-03", "5"],
            parameters={"a": "b", "transient_lastDdlTime": "7"},
            createTime=123,
            lastAccessTime=456,
        )
    ],
    "storage descriptor as it came": lambda root: [
        _part(
            ["2024-01-02", "12"],
            location=f"file:{root}/as/sent",
            skewedInfo=hms.SkewedInfo(
                skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}
            ),
            storedAsSubDirectories=False,
        )
    ],
    "no parameters": lambda root: [_part(["2024-01-03", "6"], parameters=None)],
    "skewed": lambda root: [
        _part(
            ["2024-01-04", "7"],
            skewedInfo=hms.SkewedInfo(
                skewedColNames=["v"],
                skewedColValues=[["1"]],
                skewedColValueLocationMaps={("1",): "file:/skew/1"},
            ),
            storedAsSubDirectories=True,
        )
    ],
    "non-ascii": lambda root: [
        _part(
            ["día-ünï-中文", "8"], parameters={"clé": "valeur ✓"}, location=f"file:{root}/données/ø"
        )
    ],
    "no names, stats, privileges": lambda root: [
        hms.Partition(
            values=["2024-01-05", "9"],
            sd=make_partition(DB, "t", []).sd,
            parameters={"numFiles": "3", "totalSize": "10"},
            writeId=5,
            privileges=hms.PrincipalPrivilegeSet(userPrivileges={}),
        )
    ],
    "typed value spelling": lambda root: [_part(["2024-01-06", "010"])],
    "other columns": lambda root: [
        _part(["2024-01-07", "11"], cols=[column("x"), column("y", "int")])
    ],
}


def _tree(root: Path) -> set[Path]:
    return set(root.rglob("*")) if root.exists() else set()


def _undo_new_paths(root: Path, before: set[Path]) -> None:
    """Remove what appeared under ``root`` since ``before`` (the second add then finds the
    file system as the first did)."""
    for path in sorted(_tree(root) - before, reverse=True):
        path.unlink() if path.is_file() else path.rmdir()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_rows_answers_and_events_are_the_decoded_adds(
    pair: Pair, shape: str, tmp_path: Path
) -> None:
    slow, fast = pair
    parts = SHAPES[shape](str(tmp_path / "wh"))
    if shape == "default location":  # a directory already there, holding a file: counted
        there = tmp_path / "wh" / f"{DB}.db" / "t" / "ds=2024-01-01" / "hr=2"
        there.mkdir(parents=True)
        (there / "f").write_bytes(b"12345")
    before = _tree(tmp_path / "wh")
    request = hms.AddPartitionsRequest(dbName=DB, tblName="t", parts=parts, ifNotExists=False)
    answer = slow.add_partitions_req(request)
    _undo_new_paths(tmp_path / "wh", before)
    request.parts = _wire(parts)
    assert fast.add_partitions_req(request) == answer
    assert answer.partitions and len(answer.partitions) == len(parts)
    _same_rows(slow, fast, byte_equal=shape != "skewed")  # (a dict of tuples may reorder)


@pytest.fixture()
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many wire partitions were decoded (the usual add of them), as they are."""
    count = [0]
    original = WirePartition.decode

    def counted(self: WirePartition) -> Any:
        count[0] += 1
        return original(self)

    monkeypatch.setattr(WirePartition, "decode", counted)
    return count


def test_a_spelled_typed_value_marks_the_table(pair: Pair) -> None:
    slow, fast = pair
    fast.add_partitions(_wire([_part(["2024-03-01", "4"])]))
    assert _spellings(fast) == [None]
    fast.add_partitions(_wire([_part(["2024-03-01", "5"]), _part(["2024-03-01", "+6"])]))
    assert _spellings(fast) == [b"1"]
    found = fast.get_partitions_by_filter(DB, "t", "hr = 6", -1).decode()
    assert [p.values for p in found] == [["2024-03-01", "+6"]]


def test_plain_adds_are_not_decoded(pair: Pair, decodes: list[int]) -> None:
    slow, fast = pair
    parts = [_part(["2024-02-01", str(h)]) for h in range(5)]
    first, second = pair.outcomes(
        lambda: slow.add_partitions(parts), lambda: fast.add_partitions(_wire(parts))
    )
    assert first == second == ("ok", None, 5)
    assert decodes[0] == 0
    _same_rows(slow, fast)


def _field(fid: int, text: str) -> bytes:
    data = text.encode()
    return struct.pack("!bhi", 11, fid, len(data)) + data


def _before_sd_end(data: bytes, extra: bytes) -> bytes:
    """``data`` (an add_partitions message of one partition) with ``extra`` fields at the end
    of the partition's storage descriptor and of the partition."""
    fields, _ = struct_fields(data, 0)
    ((_, _, list_at, _),) = fields
    part_at = list_at + 5
    part_fields, part_end = struct_fields(data, part_at)
    sd_end = next(end for fid, _, _, end in part_fields if fid == 6)
    return (
        data[: sd_end - 1] + extra + data[sd_end - 1 : part_end - 1] + extra + data[part_end - 1 :]
    )


def test_unknown_and_mistyped_fields_are_left_out_as_a_decoder_does(
    pair: Pair, decodes: list[int]
) -> None:
    slow, fast = pair
    parts = [_part(["2024-03-01", "1"], createTime=77)]
    # An unknown field (id 99), a known id of the wrong type (createTime as a string) and a
    # field sent twice (the last counts).
    extra = _field(99, "x") + _field(4, "not a number") + struct.pack("!bhi", 8, 5, 9)
    wire = _wire(parts, lambda data: _before_sd_end(data, extra))
    assert wire[0].createTime == 77 and wire[0].lastAccessTime == 9
    parts = [from_bytes(hms.Partition, w.buf[w.start : w.end]) for w in wire]  # as decoded
    assert parts[0].sd.outputFormat == "not a number" and parts[0].lastAccessTime == 9
    first, second = pair.outcomes(
        lambda: slow.add_partitions(parts), lambda: fast.add_partitions(wire)
    )
    assert first == second == ("ok", None, 1)
    assert decodes[0] == 0
    # Left out at both levels, the rest in id order: the very bytes of the decoded add.
    _same_rows(slow, fast)


def _outcome(call: Callable[[], Any]) -> tuple[str, str | None, Any]:
    try:
        return "ok", None, call()
    except Exception as exc:  # noqa: BLE001 - compared between the two paths
        return type(exc).__name__, getattr(exc, "message", str(exc)), None


ERRORS: dict[str, Callable[[], list[Any]]] = {
    "duplicates": lambda: [_part(["2024-04-01", "1"]), _part(["2024-04-01", "1"])],
    "too few values": lambda: [_part(["2024-04-01", "2"]), _part(["2024-04-01"])],
    "another table": lambda: [
        _part(["2024-04-01", "3"]),
        hms.Partition(
            values=["2024-04-01", "4"],
            dbName=DB,
            tableName="other",
            sd=make_partition(DB, "t", []).sd,
        ),
    ],
    "existing": lambda: [_part(["2024-04-02", "5"]), _part(["2024-01-09", "9"])],
    "a value that does not fit": lambda: [_part(["2024-04-03", "x"])],
    "no storage descriptor": lambda: [
        hms.Partition(values=["2024-04-04", "6"], dbName=DB, tableName="t")
    ],
}


@pytest.mark.parametrize("if_not_exists", [False, True])
@pytest.mark.parametrize("need_result", [None, False])
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_and_odd_requests_are_answered_as_the_decoded_adds(
    pair: Pair, case: str, if_not_exists: bool, need_result: bool | None
) -> None:
    slow, fast = pair
    first, second = pair.outcomes(
        lambda: slow.add_partitions([_part(["2024-01-09", "9"])]),
        lambda: fast.add_partitions(_wire([_part(["2024-01-09", "9"])])),
    )
    assert first == second
    parts = ERRORS[case]()
    request = hms.AddPartitionsRequest(
        dbName=DB, tblName="t", parts=parts, ifNotExists=if_not_exists, needResult=need_result
    )
    wire = hms.AddPartitionsRequest(
        dbName=DB,
        tblName="t",
        parts=_wire(parts),
        ifNotExists=if_not_exists,
        needResult=need_result,
    )
    first, second = pair.outcomes(
        lambda: slow.add_partitions_req(request), lambda: fast.add_partitions_req(wire)
    )
    assert first == second
    first, second = pair.outcomes(
        lambda: slow.add_partitions(parts), lambda: fast.add_partitions(_wire(parts))
    )
    assert first == second
    _same_rows(slow, fast)


@pytest.mark.parametrize("if_not_exists", [False, True])
def test_a_partition_added_after_the_look_up_is_found_when_the_add_is_tried_again(
    pair: Pair, monkeypatch: pytest.MonkeyPatch, if_not_exists: bool
) -> None:
    slow, fast = pair
    parts = [_part(["2024-06-01", str(h)]) for h in range(4)]
    looked: list[set[bytes]] = []
    original = Adding._present

    def racing(self: Adding, keys: list[bytes]) -> set[bytes]:
        found = original(self, keys)
        looked.append(found)
        if len(looked) == 1:  # another adder's partition lands after this look-up
            fast.add_partitions([_part(["2024-06-01", "2"])])
        return found

    request = hms.AddPartitionsRequest(
        dbName=DB, tblName="t", parts=parts, ifNotExists=if_not_exists, needResult=True
    )
    wire = hms.AddPartitionsRequest(
        dbName=DB, tblName="t", parts=_wire(parts), ifNotExists=if_not_exists, needResult=True
    )

    def slow_calls() -> Any:
        slow.add_partitions([_part(["2024-06-01", "2"])])
        return slow.add_partitions_req(request)

    monkeypatch.setattr(Adding, "_present", racing)
    expected, got = pair.outcomes(slow_calls, lambda: fast.add_partitions_req(wire))
    assert got == expected
    assert looked[0] == set() and len(looked[1]) == 1  # written, refused, looked up again
    _same_rows(slow, fast)


def test_a_missing_table_is_refused_as_the_decoded_add(pair: Pair) -> None:
    slow, fast = pair
    parts = [
        hms.Partition(
            values=["a", "1"], dbName=DB, tableName="nope", sd=make_partition(DB, "t", []).sd
        )
    ]
    request = hms.AddPartitionsRequest(dbName=DB, tblName="nope", parts=parts, ifNotExists=False)
    expected = _outcome(lambda: slow.add_partitions_req(request))
    assert expected[0] == "InvalidObjectException"
    request.parts = _wire(parts)
    assert _outcome(lambda: fast.add_partitions_req(request)) == expected


@pytest.mark.parametrize("protocol", ["binary", "compact"])
def test_over_sockets_binary_adds_take_the_wire_path_and_compact_ones_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    taken: list[int] = []
    original = Adding._add_wire

    def spied(self: Adding, *args: Any) -> Any:
        added = original(self, *args)
        taken.append(len(added) if added is not None else -1)
        return added

    monkeypatch.setattr(Adding, "_add_wire", spied)
    server = RunningServer(tmp_path, protocol=protocol)
    try:
        client = server.client(compact=protocol == "compact")
        client.create_database(hms.Database(name=DB, parameters={}))
        client.create_table(make_table(DB, "t", keys=[("ds", "string"), ("hr", "int")]))
        parts = [_part(["2024-05-01", str(h)], parameters={"k": "é"}) for h in range(30)]
        assert client.add_partitions(parts[:10]) == 10
        request = hms.AddPartitionsRequest(
            dbName=DB, tblName="t", parts=parts[5:], ifNotExists=True, needResult=True
        )
        answer = client.add_partitions_req(request)
        got = client.get_partitions(DB, "t", -1)
        client.close()
    finally:
        server.stop()
    assert taken == ([10, 20] if protocol == "binary" else [])
    assert [p.values for p in answer.partitions] == [p.values for p in parts[10:]]
    got.sort(key=lambda p: int(p.values[1]))
    assert [p.values for p in got] == [p.values for p in parts]
    for sent, stored in zip(parts, got, strict=True):
        assert stored.parameters["k"] == "é" and "transient_lastDdlTime" in stored.parameters
        assert stored.sd.location.endswith(f"/t/ds=2024-05-01/hr={sent.values[1]}")
        assert stored.sd.cols == sent.sd.cols and stored.sd.skewedInfo is not None
    for answered, stored in zip(answer.partitions, got[10:], strict=True):
        # Answered as HMS does: the storage fields as sent (no defaults filled in).
        assert answered.sd.skewedInfo is None and answered.sd.storedAsSubDirectories is None
        answered.sd.skewedInfo, answered.sd.storedAsSubDirectories = stored.sd.skewedInfo, False
        assert answered == stored
