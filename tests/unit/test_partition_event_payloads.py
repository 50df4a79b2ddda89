"""ALTER_PARTITION and DROP_PARTITION events are stored as a payload and rendered when read: the
rendered message is byte for byte the one built in the call before (HMS's
JSONAlterPartitionMessage and JSONDropPartitionMessage)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from metastore_server.catalog.events import messages
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import to_bytes
from metastore_server.wire.thrift_json import to_json


def _eager(table: hms.Table, before: hms.Partition, after: hms.Partition, now: int,
           truncate: bool) -> str:  # fmt: skip
    """The message as it was built in the call (the reference)."""
    fields: dict[str, Any] = messages.table_fields(table)
    return messages.body(
        now, cat=messages.catalog_of(table), **fields, isTruncateOp=messages.flag(truncate),
        timestamp=now, writeId=after.writeId if after.writeId is not None else -1,
        keyValues=messages.key_values(table, before.values or []),
        partitionObjBeforeJson=to_json(messages._partition_of(table, before)),
        partitionObjAfterJson=to_json(messages._partition_of(table, after)),
    )  # fmt: skip


def _table(cat: str | None) -> hms.Table:
    keys = [hms.FieldSchema(name="ds", type="string"), hms.FieldSchema(name="hr", type="int")]
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="x", type="bigint", comment="é")],
                               location="file:/w/t", parameters={})  # fmt: skip
    return hms.Table(dbName="db", tableName="t", partitionKeys=keys, sd=sd, tableType="MANAGED",
                     parameters={"a": "1", "ü": "\u2603"}, catName=cat)  # fmt: skip


def _partition(values: list[str] | None, named: bool, **extra: Any) -> hms.Partition:
    sd = hms.StorageDescriptor(cols=[], location="file:/w/t/p", parameters={})
    names = {"dbName": "db", "tableName": "t"} if named else {}
    return hms.Partition(values=values, sd=sd, parameters={"k": "v"}, **names, **extra)


@pytest.mark.parametrize("truncate", [False, True])
@pytest.mark.parametrize("cat", [None, "spark"])
@pytest.mark.parametrize("write_id", [None, 7])
@pytest.mark.parametrize("named", [False, True])
def test_rendered_alter_partition_is_the_eager_message(
    truncate: bool, cat: str | None, write_id: int | None, named: bool
) -> None:
    table = _table(cat)
    before = _partition(["2024-01-01", "3"], named, createTime=5)
    after = _partition(["2024-01-01", "3"], named, createTime=5, writeId=write_id,
                       lastAccessTime=0)  # fmt: skip
    event = messages.alter_partition(table, before, after, 1700000000, truncate=truncate)
    assert event.message == "" and event.payload is not None
    assert (event.event_type, event.db, event.table, event.cat) == (
        messages.ALTER_PARTITION, "db", "t", cat or messages.DEFAULT_CATALOG)
    expected = _eager(table, before, after, 1700000000, truncate)
    assert messages.render(event.event_type, event.payload, 1) == expected
    shared = messages.alter_partition(table, before, after, 1700000000, truncate=truncate,
                                      table_data=to_bytes(table))  # fmt: skip
    assert shared.payload == event.payload


def test_fields_left_out_and_skewed_locations_render_alike() -> None:
    """A table without the IDL's defaults (``temporary``, ``ownerType``, ``writeId``: None)
    and a partition whose skewed locations are keyed by lists (decoded by the slow protocol)."""
    table = _table(None)
    table.temporary = table.ownerType = table.writeId = None
    skewed = hms.SkewedInfo(skewedColNames=["x"], skewedColValues=[["1"]],
                            skewedColValueLocationMaps={("1",): "file:/w/t/p/x=1"})  # fmt: skip
    before = _partition(["a", "1"], False)
    after = _partition(["a", "1"], False)
    after.sd.skewedInfo = skewed
    event = messages.alter_partition(table, before, after, 9)
    assert event.payload is not None
    assert messages.render(event.event_type, event.payload, 0) == _eager(
        table, before, after, 9, False)


def test_a_rename_renders_the_values_before_and_after() -> None:
    table = _table(None)
    before, after = _partition(["a", "1"], False), _partition(["b", "2"], False)
    event = messages.alter_partition(table, before, after, 42)
    assert event.payload is not None
    assert messages.render(event.event_type, event.payload, 0) == _eager(
        table, before, after, 42, False)


# -- DROP_PARTITION ---------------------------------------------------------------------------


def _eager_drop(table: hms.Table, partitions: list[hms.Partition], now: int) -> str:
    """The message as it was built in the call (the reference)."""
    return messages.body(
        now, cat=messages.catalog_of(table), **messages.table_fields(table), timestamp=now,
        partitions=[messages.key_values(table, p.values or []) for p in partitions],
    )  # fmt: skip


VALUES = [
    ["2024-01-01", "3"],
    ["", "0"],  # an empty value
    ["a/b=c%d,\u00e9\u2603\U0001f600", "\x00\n"],  # every kind of character
    ["only-one"],  # fewer values than keys: as many pairs as values
    [],
]


@pytest.mark.parametrize("cat", [None, "spark"])
@pytest.mark.parametrize("values", VALUES)
def test_rendered_drop_partition_is_the_eager_message(cat: str | None, values: list[str]) -> None:
    table = _table(cat)
    partition = hms.Partition(values=values, parameters={"k": "v"})
    event = messages.drop_partition(table, [partition], 1700000000)
    assert event.message == "" and event.payload is not None
    assert (event.event_type, event.db, event.table, event.cat) == (
        messages.DROP_PARTITION, "db", "t", cat or messages.DEFAULT_CATALOG)
    rendered = messages.render(event.event_type, event.payload, 1)
    assert rendered == _eager_drop(table, [partition], 1700000000)
    shared = messages.drop_partition(table, [partition], 1700000000, table_data=to_bytes(table))
    assert shared.payload == event.payload


def test_several_partitions_and_a_table_without_defaults() -> None:
    """A table whose IDL defaults were left out (None) renders as it was; several partitions
    keep their order; the payload is far smaller than the message."""
    table = _table(None)
    table.temporary = table.ownerType = table.writeId = None
    partitions = [hms.Partition(values=v) for v in (["1", "2"], ["3", "4"], ["5"])]
    event = messages.drop_partition(table, partitions, 9)
    assert event.payload is not None
    rendered = messages.render(event.event_type, event.payload, 0)
    assert rendered == _eager_drop(table, partitions, 9)
    assert json.loads(rendered)["partitions"] == [{"ds": "1", "hr": "2"}, {"ds": "3", "hr": "4"},
                                                  {"ds": "5"}]  # fmt: skip
    assert len(event.payload) < len(rendered)
