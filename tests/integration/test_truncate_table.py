"""``truncate_table`` and ``truncate_table_req`` (HMS 4): a managed table's data (or its
named partitions') goes, the table and its partitions stay with empty basic statistics; an
external table is refused; ``--data-operations off`` deletes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "trunc"


def _fill(directory: Path, name: str = "part-0.parquet") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / name
    data.write_bytes(b"PAR1" * 10)
    return data


def _path(location: str) -> Path:
    return Path(location.removeprefix("file:"))


def test_doris_truncates_a_managed_table(start_server) -> None:
    """What Doris does: a managed table, data files under its location, ``truncate_table``
    with no partitions: the files are gone, the table and its directory stay."""
    client = start_server().client()
    create_db(client, DB)
    client.create_table(make_table(DB, "orders"))
    directory = _path(client.get_table(DB, "orders").sd.location)
    files = [_fill(directory, f"part-{i}.parquet") for i in range(3)]
    client.truncate_table(DB, "orders", None)
    assert not any(f.exists() for f in files)
    assert directory.is_dir()
    table = client.get_table(DB, "orders")
    assert table.parameters["numFiles"] == "0" and table.parameters["totalSize"] == "0"
    assert table.parameters["numRows"] == "0"
    assert json.loads(table.parameters["COLUMN_STATS_ACCURATE"]) == {"BASIC_STATS": "true"}


def test_named_partitions_only_lose_their_data(start_server) -> None:
    client = start_server().client()
    create_db(client, DB)
    client.create_table(make_table(DB, "p", keys=[("ds", "string")]))
    for day in ("1", "2"):
        client.add_partition(make_partition(DB, "p", [day]))
    first = _path(client.get_partition(DB, "p", ["1"]).sd.location)
    second = _path(client.get_partition(DB, "p", ["2"]).sd.location)
    gone, kept = _fill(first), _fill(second)
    answer = client.truncate_table_req(
        hms.TruncateTableRequest(dbName=DB, tableName="p", partNames=["ds=1"])
    )
    assert answer == hms.TruncateTableResponse()
    assert not gone.exists() and first.is_dir() and kept.exists()
    assert client.get_partition(DB, "p", ["1"]).parameters["numFiles"] == "0"
    assert client.get_partition_names(DB, "p", -1) == ["ds=1", "ds=2"]
    client.truncate_table(DB, "p", [])  # all partitions
    assert not kept.exists()
    with pytest.raises(hms.MetaException):
        client.truncate_table(DB, "p", ["ds=9"])


def test_refusals(start_server, tmp_path: Path) -> None:
    client = start_server().client()
    create_db(client, DB)
    with pytest.raises(hms.MetaException, match="table not found"):
        client.truncate_table(DB, "missing", None)
    outside = tmp_path / "ext"
    data = _fill(outside)
    table = make_table(DB, "ext", tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})
    table.sd.location = f"file:{outside}"
    client.create_table(table)
    with pytest.raises(hms.MetaException, match="Cannot truncate non-managed table ext"):
        client.truncate_table(DB, "ext", None)
    assert data.exists()


def test_data_operations_off_keeps_the_files(start_server) -> None:
    client = start_server(data_operations="off").client()
    create_db(client, DB)
    client.create_table(make_table(DB, "t"))
    location = client.get_table(DB, "t").sd.location
    data = _fill(_path(location))
    client.truncate_table(DB, "t", None)
    assert data.exists()
    assert client.get_table(DB, "t").parameters["numFiles"] == "0"
