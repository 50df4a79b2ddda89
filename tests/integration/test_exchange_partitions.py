"""exchange_partition(s): partitions move between tables of one shape, metadata and data
together, all or nothing."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import make_partition, make_table

_names = itertools.count()
KEYS = [("ds", "string"), ("hr", "int")]


@pytest.fixture()
def db(client, tmp_path: Path) -> str:
    name = f"ex{next(_names)}"
    client.create_database(hms.Database(name=name, description="", parameters={},
                                        locationUri=f"file:{tmp_path / name}"))  # fmt: skip
    return name


def _tables(client, db: str) -> tuple[Path, Path]:
    client.create_table(make_table(db, "src", keys=KEYS))
    client.create_table(make_table(db, "dst", keys=KEYS))
    for ds, hr in (("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1")):
        client.add_partition(make_partition(db, "src", [ds, hr]))
        part = Path(client.get_partition(db, "src", [ds, hr]).sd.location.removeprefix("file:"))
        (part / "part-0.parquet").write_bytes(b"PAR1" + ds.encode() + hr.encode())
    return (Path(client.get_table(db, t).sd.location.removeprefix("file:"))
            for t in ("src", "dst"))  # fmt: skip


def test_partitions_and_their_data_move(client, db: str) -> None:
    src, dst = _tables(client, db)
    before = client.get_current_notificationEventId().eventId
    moved = client.exchange_partitions({"ds": "2024-01-01"}, db, "src", db, "dst")
    assert sorted(p.values for p in moved) == [["2024-01-01", "1"], ["2024-01-01", "2"]]
    assert all(p.tableName == "dst" for p in moved)
    assert client.get_partition_names(db, "src", -1) == ["ds=2024-01-02/hr=1"]
    assert sorted(client.get_partition_names(db, "dst", -1)) == [
        "ds=2024-01-01/hr=1", "ds=2024-01-01/hr=2"]  # fmt: skip
    part = client.get_partition(db, "dst", ["2024-01-01", "2"])
    assert part.sd.location == f"file:{dst}/ds=2024-01-01/hr=2"
    assert (dst / "ds=2024-01-01" / "hr=2" / "part-0.parquet").read_bytes() == b"PAR12024-01-012"
    assert not (src / "ds=2024-01-01").exists()
    assert (src / "ds=2024-01-02" / "hr=1" / "part-0.parquet").exists()
    events = client.get_next_notification(hms.NotificationEventRequest(lastEvent=before)).events
    assert [(e.eventType, e.tableName) for e in events] == [
        ("ADD_PARTITION", "dst"), ("DROP_PARTITION", "src"), ("DROP_PARTITION", "src")]  # fmt: skip
    assert len(json.loads(events[0].message)["partitions"]) == 2

    one = client.exchange_partition({"ds": "2024-01-02", "hr": "1"}, db, "src", db, "dst")
    assert one.values == ["2024-01-02", "1"]
    assert client.get_partition_names(db, "src", -1) == []
    assert (dst / "ds=2024-01-02" / "hr=1" / "part-0.parquet").exists()


def test_refusals_change_nothing(client, db: str, tmp_path: Path) -> None:
    src, dst = _tables(client, db)
    client.create_table(make_table(db, "other", keys=KEYS, columns=[("w", "string")]))

    def refused(spec, source="src", dest="dst", match: str = "") -> None:
        with pytest.raises(hms.MetaException, match=match):
            client.exchange_partitions(spec, db, source, db, dest)

    refused({"ds": "2024-01-01"}, dest="nope", match=f"The destination table {db}.nope not found")
    refused({"ds": "2024-01-01"}, source="nope", match=f"The source table {db}.nope not found")
    refused({"ds": "2030-01-01"}, match="No partition is found with the values "
            r"\{ds=2030-01-01\} for the table src")  # fmt: skip
    refused({"ds": "2024-01-01"}, dest="other", match="The tables have different schemas")
    refused({"hr": "1"}, match="must give values for leading partition keys")
    refused({}, match="must give values for leading partition keys")
    refused({"ds": "2024-01-01"}, dest="src", match="the same")
    client.add_partition(make_partition(db, "dst", ["2024-01-01", "2"]))
    refused({"ds": "2024-01-01"}, match="The partition ds=2024-01-01/hr=2 already exists in "
            "the table dst")  # fmt: skip
    assert len(client.get_partition_names(db, "src", -1)) == 3
    assert (src / "ds=2024-01-01" / "hr=1" / "part-0.parquet").exists()


def test_a_taken_destination_directory_refuses_the_move(client, db: str) -> None:
    src, dst = _tables(client, db)
    (dst / "ds=2024-01-02").mkdir(parents=True)
    with pytest.raises(hms.MetaException, match="already exists"):
        client.exchange_partitions({"ds": "2024-01-02"}, db, "src", db, "dst")
    assert client.get_partition_names(db, "dst", -1) == []
    assert (src / "ds=2024-01-02" / "hr=1" / "part-0.parquet").exists()


def test_a_table_without_a_location_is_refused(client, db: str) -> None:
    """A partitioned view has no location: nothing can be moved to or from it."""
    _tables(client, db)
    view = make_table(db, "v", keys=KEYS, tableType="VIRTUAL_VIEW",
                      viewOriginalText="select 1", viewExpandedText="select 1")  # fmt: skip
    client.create_table(view)
    assert not client.get_table(db, "v").sd.location
    with pytest.raises(hms.MetaException, match="has no location"):
        client.exchange_partitions({"ds": "2024-01-01"}, db, "src", db, "v")
    assert len(client.get_partition_names(db, "src", -1)) == 3
