"""DROP_PARTITION events are stored as a payload and rendered when read: the rendered message
is byte for byte the one built in the call before (HMS's JSONDropPartitionMessage)."""

from __future__ import annotations

import json

import pytest

from metastore_server.catalog.events import messages
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import to_bytes


def _eager(table: hms.Table, partitions: list[hms.Partition], now: int) -> str:
    """The message as it was built in the call (the reference)."""
    return messages.body(
        now, cat=messages.catalog_of(table), **messages.table_fields(table), timestamp=now,
        partitions=[messages.key_values(table, p.values or []) for p in partitions],
    )  # fmt: skip


def _table(cat: str | None) -> hms.Table:
    keys = [hms.FieldSchema(name="ds", type="string"), hms.FieldSchema(name="hr", type="int")]
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="x", type="bigint", comment="é")],
                               location="file:/w/t", parameters={})  # fmt: skip
    return hms.Table(dbName="db", tableName="t", partitionKeys=keys, sd=sd, tableType="MANAGED",
                     parameters={"a": "1", "ü": "\u2603"}, catName=cat)  # fmt: skip


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
    assert rendered == _eager(table, [partition], 1700000000)
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
    assert rendered == _eager(table, partitions, 9)
    assert json.loads(rendered)["partitions"] == [{"ds": "1", "hr": "2"}, {"ds": "3", "hr": "4"},
                                                  {"ds": "5"}]  # fmt: skip
    assert len(event.payload) < len(rendered)
