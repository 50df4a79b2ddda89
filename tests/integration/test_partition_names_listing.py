"""Partition names answered as stored bytes (``get_partition_names(_ps)``) and partitions read
by their names' row keys (``get_partitions_by_names``): the same answers as the partitions
themselves give, with escaped characters, the default partition name, typed keys in
non-canonical spellings, duplicates, missing and incomplete names, on every transport, before
and after the table's names are kept in the listing cache and after it changes."""

from __future__ import annotations

import pytest

from metastore_server.catalog.basics.names import make_partition_name
from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "namesdb"
KEYS = ["ds", "hr", "region"]
VALUES = [
    ["2024-01-01", "7", "eu"],
    ["2024-01-01", "007", "eu"],  # the int 7 in another spelling: a partition of its own
    ["2024-01-01", "10", "eu"],
    ["2024-01-01", "-3", "a/b"],
    ["2024-01-02", "7", "x=y%z"],
    ["2024-01-02", "7", "é ü"],
    ["2024-01-02", "8", "__HIVE_DEFAULT_PARTITION__"],
    ["2024-01-03", "0", "#:?"],
    ["a-b", "1", "eu"],
    ["a", "1", "eu"],
]


def _names(values: list[list[str]]) -> list[str]:
    return [make_partition_name(KEYS, v) for v in values]


def _table(client: object, name: str, values: list[list[str]]) -> None:
    keys = [("ds", "string"), ("hr", "int"), ("region", "string")]
    client.create_table(make_table(DB, name, keys=keys))  # type: ignore[attr-defined]
    client.add_partitions([make_partition(DB, name, v) for v in values])  # type: ignore[attr-defined]


@pytest.fixture(scope="module", autouse=True)
def tables(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    _table(connection, "events", VALUES)
    connection.close()


def _expected_names(client: object, table: str) -> list[str]:
    """The names of the table's partitions as get_partitions gives them, sorted (UTF-8 byte
    order is code point order)."""
    parts = client.get_partitions(DB, table, -1)  # type: ignore[attr-defined]
    return sorted(make_partition_name(KEYS, p.values) for p in parts)


def test_names_are_the_partitions_names_sorted_and_stay_so_when_kept(client) -> None:
    expected = _expected_names(client, "events")
    assert sorted(_names(VALUES)) == expected
    first = client.get_partition_names(DB, "events", -1)
    again = client.get_partition_names(DB, "events", -1)  # from the listing cache now
    assert first == again == expected
    assert "ds=2024-01-01/hr=-3/region=a%2Fb" in first
    assert "ds=2024-01-01/hr=007/region=eu" in first
    assert "ds=2024-01-02/hr=8/region=__HIVE_DEFAULT_PARTITION__" in first
    for limit in (0, 1, 4, len(expected), len(expected) + 5):
        assert client.get_partition_names(DB, "events", limit) == expected[:limit]


def test_names_follow_a_change_of_the_table(client) -> None:
    _table(client, "changing", VALUES[:3])
    assert client.get_partition_names(DB, "changing", -1) == sorted(_names(VALUES[:3]))
    assert client.get_partition_names(DB, "changing", -1) == sorted(_names(VALUES[:3]))
    client.add_partitions([make_partition(DB, "changing", VALUES[5])])
    assert client.get_partition_names(DB, "changing", -1) == sorted(
        _names(VALUES[:3] + [VALUES[5]])
    )
    client.drop_partition(DB, "changing", VALUES[0], False)
    assert client.get_partition_names(DB, "changing", -1) == sorted(
        _names([VALUES[1], VALUES[2], VALUES[5]])
    )
    client.drop_table(DB, "changing", True)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition_names(DB, "changing", -1)


def test_names_of_a_partial_spec(client) -> None:
    expected = _expected_names(client, "events")
    day = [name for name in expected if name.startswith("ds=2024-01-01/")]
    assert client.get_partition_names_ps(DB, "events", ["2024-01-01"], -1) == day
    assert client.get_partition_names_ps(DB, "events", ["2024-01-01"], 2) == day[:2]
    assert client.get_partition_names_ps(DB, "events", ["2024-01-01", "007"], -1) == [
        "ds=2024-01-01/hr=007/region=eu"
    ]
    assert client.get_partition_names_ps(DB, "events", ["", "", "eu"], -1) == [
        name for name in expected if name.endswith("/region=eu")
    ]
    assert client.get_partition_names_ps(DB, "events", ["2030-01-01"], -1) == []
    with pytest.raises(hms.MetaException, match="Invalid partition key & values"):
        client.get_partition_names_ps(DB, "events", [], -1)


@pytest.mark.parametrize("transport", ["framed", "compact"])
def test_names_on_other_transports_and_protocols(start_server, transport: str) -> None:
    framed = transport == "framed"
    settings = {"transport": "framed"} if framed else {"protocol": "compact"}
    server = start_server(**settings)
    connection = server.client(framed=framed, compact=not framed)
    try:
        create_db(connection, DB)
        _table(connection, "events", VALUES)
        expected = sorted(_names(VALUES))
        for _ in range(2):  # read from the store, then from the listing cache
            assert connection.get_partition_names(DB, "events", -1) == expected
        assert connection.get_partition_names_ps(DB, "events", ["a"], -1) == ["ds=a/hr=1/region=eu"]
    finally:
        connection.close()


def test_by_names_spellings_escapes_duplicates_and_missing_names(client) -> None:
    asked = [
        "ds=2024-01-01/hr=007/region=eu",
        "ds=2024-01-01/hr=7/region=eu",
        "ds=2024-01-01/hr=7/region=eu",  # twice: answered once
        "region=a%2Fb/hr=-3/ds=2024-01-01",  # keys in another order
        "ds=2024-01-02/hr=7/region=x%3Dy%25z",
        "ds=2024-01-02/hr=8/region=__HIVE_DEFAULT_PARTITION__",
        "ds=2024-01-02/hr=07/region=é ü",  # no partition has this spelling
        "ds=2024-01-09/hr=1/region=eu",  # missing
        "ds=2024-01-01/hr=7",  # incomplete
        "DS=a/HR=1/REGION=eu",  # the keys are lower case
        "",
        "garbage",
    ]
    parts = client.get_partitions_by_names(DB, "events", asked)
    found = [make_partition_name(KEYS, p.values) for p in parts]
    assert found == sorted(
        [
            "ds=2024-01-01/hr=007/region=eu",
            "ds=2024-01-01/hr=7/region=eu",
            "ds=2024-01-01/hr=-3/region=a%2Fb",
            "ds=2024-01-02/hr=7/region=x%3Dy%25z",
            "ds=2024-01-02/hr=8/region=__HIVE_DEFAULT_PARTITION__",
        ]
    )
    assert [p.values for p in parts if p.values[2] == "a/b"] == [["2024-01-01", "-3", "a/b"]]
    assert all((p.dbName, p.tableName) == (DB, "events") for p in parts)
    singly = [client.get_partition_by_name(DB, "events", name) for name in found]
    assert parts == singly
    assert client.get_partitions_by_names(DB, "events", []) == []


def test_by_names_of_every_name_is_every_partition(client) -> None:
    names = client.get_partition_names(DB, "events", -1)
    by_names = client.get_partitions_by_names(DB, "events", list(reversed(names)))
    assert by_names == client.get_partitions(DB, "events", -1)
    assert [make_partition_name(KEYS, p.values) for p in by_names] == names
