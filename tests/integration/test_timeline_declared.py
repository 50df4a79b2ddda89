"""Timelines of tables that declare their time columns' update periods
(``metastore.timeline.periods``): partitions count without any partition parameter, as Spark
SQL adds them; a partition's own update period still wins; bad declarations are refused."""

from __future__ import annotations

import pytest
from metastore_server.timeline import UPDATE_PERIOD_KEY, UpdatePeriod

from metastore_server.catalog.timelines.time_columns import PERIODS_KEY, inferred_period
from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

DB = "tldecl"
KEYS = [("ds", "string"), ("region", "string")]


def timelines(client: object, table: str) -> dict[tuple[str, str], list[str]]:
    """{(period, column): ranges} of a table's timelines."""
    result = client.get_partition_timelines(  # type: ignore[attr-defined]
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName=table)
    )
    return {(t.updatePeriod, t.column): list(t.ranges) for t in result.timelines}


def add(client: object, table: str, *specs: tuple[str, str], period: str | None = None) -> None:
    parts = []
    for ds, region in specs:
        partition = make_partition(DB, table, [ds, region])
        partition.parameters = {UPDATE_PERIOD_KEY: period} if period else {}
        parts.append(partition)
    client.add_partitions(parts)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def client(running: RunningServer):  # noqa: ANN201 - thriftpy2 client
    connection = running.client()
    create_db(connection, DB)
    yield connection
    connection.close()


def test_a_declared_period_counts_partitions_without_parameters(client: object) -> None:
    declared = {PERIODS_KEY: "ds:DAILY"}
    client.create_table(make_table(DB, "daily", keys=KEYS, parameters=declared))
    add(client, "daily", ("2024-01-01", "us"), ("2024-01-02", "us"), ("2024-01-04", "eu"))
    add(client, "daily", ("latest", "us"))  # not a day: left out
    assert timelines(client, "daily") == {
        ("DAILY", "ds"): ["[2024-01-01, 2024-01-03)", "[2024-01-04, 2024-01-05)"]
    }
    # A partition's own update period wins over the declaration.
    add(client, "daily", ("2024-01-05-07", "us"), period="HOURLY")
    found = timelines(client, "daily")
    assert found[("HOURLY", "ds")] == ["[2024-01-05-07, 2024-01-05-08)"]
    client.drop_partition(DB, "daily", ["2024-01-04", "eu"], False)
    assert timelines(client, "daily")[("DAILY", "ds")] == ["[2024-01-01, 2024-01-03)"]


def test_auto_takes_the_finest_period_of_each_value(client: object) -> None:
    client.create_table(make_table(DB, "auto", keys=KEYS, parameters={PERIODS_KEY: "DS"}))
    add(client, "auto", ("2024-01-01", "us"), ("2024-02", "us"), ("2024-01-01-05", "us"))
    add(client, "auto", ("2024", "us"), ("someday", "us"))
    assert timelines(client, "auto") == {
        ("DAILY", "ds"): ["[2024-01-01, 2024-01-02)"],
        ("MONTHLY", "ds"): ["[2024-02, 2024-03)"],
        ("HOURLY", "ds"): ["[2024-01-01-05, 2024-01-01-06)"],
        ("YEARLY", "ds"): ["[2024, 2025)"],
    }
    assert inferred_period("2024-05") is UpdatePeriod.MONTHLY  # not QUARTERLY: the finest
    assert inferred_period("2024-W05") is UpdatePeriod.WEEKLY
    assert inferred_period("2024-05-06 07:00") is None


def test_declaring_later_builds_the_timelines_from_the_partitions_there(client: object) -> None:
    client.create_table(make_table(DB, "later", keys=KEYS))
    add(client, "later", ("2024-03-01", "us"), ("2024-03-02", "us"))
    assert timelines(client, "later") == {}
    table = client.get_table(DB, "later")
    table.parameters[PERIODS_KEY] = "ds:DAILY"
    client.alter_table(DB, "later", table)
    assert timelines(client, "later") == {("DAILY", "ds"): ["[2024-03-01, 2024-03-03)"]}
    table = client.get_table(DB, "later")
    table.parameters[PERIODS_KEY] = "ds:MONTHLY"  # a day is no month: nothing counts
    client.alter_table(DB, "later", table)
    assert all(ranges == [] for ranges in timelines(client, "later").values())
    table = client.get_table(DB, "later")
    del table.parameters[PERIODS_KEY]
    client.alter_table(DB, "later", table)
    assert timelines(client, "later") == {}
    assert not any(k.startswith("cube.") for k in client.get_table(DB, "later").parameters)


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ("ds:DAYLY", "'ds:DAYLY': 'DAYLY' is no update period (one of SECONDLY,"),
        ("day:DAILY", "day is not a partition key of bad (its keys: ds, region)"),
        (":DAILY", "':DAILY' names no column"),
    ],
)
def test_a_bad_declaration_is_refused_on_create_and_alter(
    client: object, declaration: str, message: str
) -> None:
    with pytest.raises(hms.InvalidObjectException) as refused:
        client.create_table(
            make_table(DB, "bad", keys=KEYS, parameters={PERIODS_KEY: declaration})
        )
    assert message in refused.value.message
    client.create_table(make_table(DB, "bad", keys=KEYS))
    try:
        table = client.get_table(DB, "bad")
        table.parameters[PERIODS_KEY] = declaration
        with pytest.raises(hms.InvalidOperationException) as refused_alter:
            client.alter_table(DB, "bad", table)
        assert message in refused_alter.value.message
    finally:
        client.drop_table(DB, "bad", True)
