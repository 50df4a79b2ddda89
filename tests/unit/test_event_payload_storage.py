"""Event payloads as the notification log keeps them (``messages.stored_payload``): deflated
from 1 KiB when that saves a tenth, rendered to the very message of the payload as made;
small or incompressible payloads, and payloads stored before, are kept and read as they are."""

from __future__ import annotations

import random

from metastore_server.storage.deflating import DEFLATE_FROM_BYTES

from metastore_server.catalog.events import messages
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import stored_partition_bytes


def _table() -> hms.Table:
    keys = [hms.FieldSchema(name="ds", type="string")]
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="x", type="bigint")],
                               location="file:/w/t", parameters={})  # fmt: skip
    return hms.Table(dbName="db", tableName="t", partitionKeys=keys, sd=sd, tableType="MANAGED",
                     parameters={"a": "1"})  # fmt: skip


def _partition(value: str, extra: str = "") -> hms.Partition:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="x", type="bigint")],
                               location=f"file:/w/t/ds={value}", parameters={})  # fmt: skip
    return hms.Partition(values=[value], sd=sd, parameters={"k": "v", "extra": extra},
                         createTime=5)  # fmt: skip


def _round_trip(event: messages.Event) -> tuple[bytes, str]:
    assert event.payload is not None
    stored = messages.stored_payload(event.payload)
    rendered = messages.render(event.event_type, stored, 0)
    assert rendered == messages.render(event.event_type, event.payload, 0)
    return stored, rendered


def test_a_batch_of_added_partitions_is_kept_deflated() -> None:
    table = _table()
    stored_parts = [stored_partition_bytes(_partition(f"2024-01-{n:04d}")) for n in range(1000)]
    (event,) = messages.added_partitions(table, stored_parts)
    stored, rendered = _round_trip(event)
    assert stored[:1] == b"\xff" and len(stored) * 20 < len(event.payload or b"")
    assert len(rendered) > len(event.payload or b"")


def test_an_altered_partition_is_kept_deflated() -> None:
    table, before = _table(), _partition("2024-01-01", extra="x" * 600)
    after = _partition("2024-01-01", extra="x" * 600 + "y")
    stored, _ = _round_trip(messages.alter_partition(table, before, after, 1700000000))
    assert stored[:1] == b"\xff"


def test_small_and_incompressible_payloads_are_kept_as_they_are() -> None:
    small = messages.drop_partition(_table(), [_partition("1")], 7)
    assert len(small.payload or b"") < DEFLATE_FROM_BYTES
    assert _round_trip(small)[0] == small.payload
    noise = random.Random(5).randbytes(4 * DEFLATE_FROM_BYTES)
    assert messages.stored_payload(noise) == noise
