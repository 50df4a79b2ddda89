"""Partition timelines kept by the server (docs/timelines.md), over real sockets.

Every step checks the table's timeline parameters as get_table returns them against an oracle
built from the partitions actually present (with the pure ``timeline`` package), and checks that
a fresh catalog on the same store (which loads the timelines from those parameters) agrees.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from pathlib import Path

import pytest
from metastore_server.storage.open import open_store
from metastore_server.timeline import (
    PREFIX,
    PRESENT_KEY,
    TIME_PARTCOLS_KEY,
    UPDATE_PERIOD_KEY,
    EndsAndHolesTimeline,
    RangesTimeline,
    TimePartition,
    UpdatePeriod,
    class_key,
    lens_class_name,
    timeline_to_table_properties,
    timeline_type,
)
from support import test_storage
from support.our_server import OurServer

from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.thrift_api import hms, make_client

from .conftest import RunningServer, _storage_url, create_db, make_partition, make_table

DB = "tlu"
KEYS = [("dt", "string"), ("region", "string")]
OPT_IN = {TIME_PARTCOLS_KEY: "dt"}
EAH = lens_class_name(EndsAndHolesTimeline)
RANGES = lens_class_name(RangesTimeline)
H = PREFIX + "HOURLY.dt."


def part(table: str, dt: str, region: str = "us", period: str | None = "HOURLY") -> hms.Partition:
    """A partition of ``DB.table``, tracked with ``period`` (None: no update period)."""
    partition = make_partition(DB, table, [dt, region])
    partition.parameters = {UPDATE_PERIOD_KEY: period} if period else {}
    return partition


def timeline_params(params: dict[str, str] | None) -> dict[str, str]:
    """The timeline parameters among a table's parameters."""
    return {k: v for k, v in (params or {}).items() if k.startswith(PREFIX)}


def oracle(client, table: str) -> dict[str, str]:
    """The timeline parameters the partitions present call for (classes as the table names
    them; timelines the table has keys of are kept, empty when no partition is theirs)."""
    stored = client.get_table(DB, table)
    params = stored.parameters or {}
    columns = {c.strip() for c in params.get(TIME_PARTCOLS_KEY, "").split(",") if c.strip()}
    keys = [fs.name for fs in stored.partitionKeys]
    found: dict[tuple[UpdatePeriod, str], list[TimePartition]] = defaultdict(list)
    for key in timeline_params(params):
        period, _, rest = key[len(PREFIX) :].partition(".")
        if period in UpdatePeriod.__members__:
            found[(UpdatePeriod[period], rest.partition(".")[0])]
    for partition in client.get_partitions(DB, table, -1):
        period = UpdatePeriod.__members__.get((partition.parameters or {}).get(UPDATE_PERIOD_KEY))
        for column, value in zip(keys, partition.values, strict=True):
            if period is None or column not in columns:
                continue
            try:
                found[(period, column)].append(TimePartition.parse(period, value))
            except ValueError:
                continue
    expected = {PRESENT_KEY: "true"}
    for (period, column), parts in found.items():
        timeline = timeline_type(params.get(class_key(period, column)))(table, period, column)
        timeline.add_all(parts)
        expected.update(timeline_to_table_properties(timeline))
    return expected


def fresh_view(running: RunningServer, table: str) -> dict[str, str]:
    """The timeline parameters of the timelines a fresh catalog on the same store loads."""
    catalog = Catalog(open_store(running.config.storage), Warehouse(running.warehouse))
    try:
        timelines = catalog.timelines.timelines(DB, table)
    finally:
        catalog.close()
    result = {PRESENT_KEY: "true"}
    for timeline in timelines.values():
        result.update(timeline_to_table_properties(timeline))
    return result


def check(client, running: RunningServer, table: str) -> dict[str, str]:
    """Assert that the stored timelines match the partitions and a fresh server agrees."""
    stored = timeline_params(client.get_table(DB, table).parameters)
    assert stored == oracle(client, table)
    assert fresh_view(running, table) == stored
    return stored


def create(client, table: str, **params: str) -> None:
    client.create_table(make_table(DB, table, keys=KEYS, parameters={**OPT_IN, **params}))


@pytest.fixture(scope="module", autouse=True)
def database(running: RunningServer) -> None:
    connection = running.client()
    create_db(connection, DB)
    connection.close()


def test_every_add_and_drop_api_keeps_the_lens_keys(client, running, tmp_path) -> None:
    create(client, "facts")
    client.add_partition(part("facts", "2024-01-01-00"))
    stored = check(client, running, "facts")
    assert stored == {
        H + "storage.class": EAH,
        H + "first": "2024-01-01-00",
        H + "latest": "2024-01-01-00",
        H + "holes.size": "0",
        PRESENT_KEY: "true",
    }

    assert (
        client.add_partitions(
            [part("facts", "2024-01-01-01"), part("facts", "2024-01-01-05", "eu")]
        )
        == 2
    )
    stored = check(client, running, "facts")
    assert stored[H + "latest"] == "2024-01-01-05"
    assert stored[H + "holes.size"] == "1"
    assert stored[H + "holes0"] == "2024-01-01-02,2024-01-01-03,2024-01-01-04"

    request = hms.AddPartitionsRequest(
        dbName=DB,
        tblName="facts",
        parts=[part("facts", "2024-01-01-03"), part("facts", "2024-01-01-03", "eu")],
        ifNotExists=False,
        needResult=True,
    )
    client.add_partitions_req(request)
    assert check(client, running, "facts")[H + "holes0"] == "2024-01-01-02,2024-01-01-04"

    # One of two partitions of 03 goes: 03 stays in the timeline.
    client.drop_partition(DB, "facts", ["2024-01-01-03", "eu"], False)
    assert check(client, running, "facts")[H + "holes0"] == "2024-01-01-02,2024-01-01-04"
    # (with its directory: a rename below moves a partition's directory there)
    client.drop_partition_by_name(DB, "facts", "dt=2024-01-01-03/region=us", True)
    assert (
        check(client, running, "facts")[H + "holes0"] == "2024-01-01-02,2024-01-01-03,2024-01-01-04"
    )

    drop = hms.DropPartitionsRequest(
        dbName=DB,
        tblName="facts",
        parts=hms.RequestPartsSpec(names=["dt=2024-01-01-05/region=eu"]),
        deleteData=False,
        ifExists=True,
        needResult=True,
    )
    client.drop_partitions_req(drop)
    stored = check(client, running, "facts")
    assert (stored[H + "latest"], stored[H + "holes.size"]) == ("2024-01-01-01", "0")
    assert H + "holes0" not in stored  # the stale chunk is gone

    renamed = part("facts", "2024-01-01-03")
    client.rename_partition(DB, "facts", ["2024-01-01-01", "us"], renamed)
    stored = check(client, running, "facts")
    assert (stored[H + "first"], stored[H + "latest"]) == ("2024-01-01-00", "2024-01-01-03")
    assert stored[H + "holes0"] == "2024-01-01-01,2024-01-01-02"

    # Untracked partitions: no update period, or a value that is no HOURLY name ("latest").
    client.add_partition(part("facts", "2024-01-01-09", period=None))
    client.add_partition(part("facts", "latest"))
    assert check(client, running, "facts") == stored

    # Another period gets its own timeline.
    client.add_partition(part("facts", "2024-01-02", period="DAILY"))
    stored = check(client, running, "facts")
    assert stored[PREFIX + "DAILY.dt.first"] == "2024-01-02"

    # An alter that changes a partition's update period moves it between timelines.
    moved = client.get_partition(DB, "facts", ["2024-01-01-09", "us"])
    moved.parameters[UPDATE_PERIOD_KEY] = "HOURLY"
    client.alter_partition(DB, "facts", moved)
    assert check(client, running, "facts")[H + "latest"] == "2024-01-01-09"
    moved.parameters[UPDATE_PERIOD_KEY] = "DAILY"  # 2024-01-01-09 is no DAILY name: untracked
    client.alter_partition(DB, "facts", moved)
    assert check(client, running, "facts")[H + "latest"] == "2024-01-01-03"

    # A restarted server on the same store goes on from the stored timelines.
    restarted = RunningServer(tmp_path, storage=running.config.storage)
    try:
        other = restarted.client()
        other.add_partition(part("facts", "2024-01-01-06"))
        other.drop_partition(DB, "facts", ["2024-01-01-00", "us"], False)
        stored = check(other, restarted, "facts")
        assert (stored[H + "first"], stored[H + "latest"]) == ("2024-01-01-03", "2024-01-01-06")
        other.close()
    finally:
        restarted.stop()
    # ... and this server sees the change (its memory is behind the stamp: it reloads).
    client.add_partition(part("facts", "2024-01-01-07"))
    stored = check(client, running, "facts")
    assert (stored[H + "first"], stored[H + "latest"]) == ("2024-01-01-03", "2024-01-01-07")
    assert stored[H + "holes0"] == "2024-01-01-04,2024-01-01-05"


def test_alter_table_with_stale_keys_does_not_regress(client, running) -> None:
    create(client, "stale")
    client.add_partition(part("stale", "2024-01-01-00"))
    old = client.get_table(DB, "stale")
    client.add_partitions([part("stale", "2024-01-01-01"), part("stale", "2024-01-01-04")])
    old.parameters["comment"] = "kept"
    client.alter_table(DB, "stale", old)
    stored = client.get_table(DB, "stale").parameters
    assert stored["comment"] == "kept"
    assert stored[H + "latest"] == "2024-01-01-04"
    check(client, running, "stale")


def test_presence_flag_false_forces_a_rebuild(client, running) -> None:
    # Stored timelines the server trusts (flag "TRUE"), though no partition is theirs.
    create(
        client,
        "forced",
        **{
            PRESENT_KEY: "TRUE",
            H + "storage.class": EAH,
            H + "first": "2024-01-01-00",
            H + "latest": "2024-01-01-00",
            H + "holes.size": "0",
        },
    )
    client.add_partition(part("forced", "2024-01-01-02"))
    stored = timeline_params(client.get_table(DB, "forced").parameters)
    assert (stored[H + "first"], stored[H + "holes0"]) == ("2024-01-01-00", "2024-01-01-01")
    table = client.get_table(DB, "forced")
    table.parameters[PRESENT_KEY] = "false"
    client.alter_table(DB, "forced", table)
    stored = check(client, running, "forced")
    assert (stored[H + "first"], stored[H + "latest"]) == ("2024-01-01-02", "2024-01-01-02")
    assert stored[PRESENT_KEY] == "true"


def test_class_change_migrates_the_timeline(client, running) -> None:
    create(client, "migrated")
    client.add_partitions([part("migrated", f"2024-01-01-0{h}") for h in (0, 1, 3)])
    table = client.get_table(DB, "migrated")
    table.parameters[H + "storage.class"] = RANGES
    client.alter_table(DB, "migrated", table)
    stored = check(client, running, "migrated")
    assert stored == {
        H + "storage.class": RANGES,
        H + "ranges.size": "1",
        H + "ranges0": "[2024-01-01-00, 2024-01-01-02),[2024-01-01-03, 2024-01-01-04)",
        PRESENT_KEY: "true",
    }
    client.add_partition(part("migrated", "2024-01-01-02"))
    assert check(client, running, "migrated")[H + "ranges0"] == "[2024-01-01-00, 2024-01-01-04)"


def test_opting_in_and_out_and_tables_that_do_not_opt_in(client, running) -> None:
    client.create_table(make_table(DB, "plain", keys=KEYS))
    client.add_partitions([part("plain", "2024-01-01-00"), part("plain", "2024-01-01-02")])
    client.drop_partition(DB, "plain", ["2024-01-01-02", "us"], False)
    client.rename_partition(DB, "plain", ["2024-01-01-00", "us"], part("plain", "2024-01-01-01"))
    assert timeline_params(client.get_table(DB, "plain").parameters) == {}

    table = client.get_table(DB, "plain")
    table.parameters.update(OPT_IN)
    client.alter_table(DB, "plain", table)
    stored = check(client, running, "plain")
    assert (stored[H + "first"], stored[H + "latest"]) == ("2024-01-01-01", "2024-01-01-01")

    table = client.get_table(DB, "plain")
    del table.parameters[TIME_PARTCOLS_KEY]
    client.alter_table(DB, "plain", table)
    client.add_partition(part("plain", "2024-01-01-05"))
    assert timeline_params(client.get_table(DB, "plain").parameters) == {}


def test_renaming_the_table_keeps_its_timelines(client, running) -> None:
    create(client, "before")
    client.add_partitions([part("before", "2024-01-01-00"), part("before", "2024-01-01-02")])
    kept = check(client, running, "before")
    table = client.get_table(DB, "before")
    table.tableName = "after"
    client.alter_table(DB, "before", table)
    assert check(client, running, "after") == kept
    client.add_partition(part("after", "2024-01-01-01"))
    assert check(client, running, "after")[H + "holes.size"] == "0"


def test_two_processes_on_one_store_agree(tmp_path: Path, monkeypatch) -> None:
    """Two server processes on one store (the SQLite file, or the HBase double both reach over
    the network) add and drop partitions of one table, alternately and then at once."""
    url = test_storage.own(_storage_url(tmp_path))  # on HBase: emptied when both are done
    # Both processes use ``url``; neither starts an HBase double of its own.
    monkeypatch.setenv("METASTORE_TEST_STORAGE", "embedded")
    first, second = OurServer(tmp_path / "a"), OurServer(tmp_path / "b")
    first.storage = second.storage = url
    with first as a, second as b:
        one, two = make_client(a.host, a.port), make_client(b.host, b.port)
        create_db(one, DB)
        create(one, "shared")
        for hour in range(10):
            (one if hour % 2 == 0 else two).add_partition(part("shared", f"2024-01-01-{hour:02d}"))
        two.drop_partition(DB, "shared", ["2024-01-01-04", "us"], False)
        one.drop_partition(DB, "shared", ["2024-01-01-09", "us"], False)
        two.add_partition(part("shared", "2024-01-01-04", "eu"))

        failures: list[BaseException] = []

        def change_many(port: int, parity: int) -> None:
            """Add hours of one parity over two days, dropping every fifth right away."""
            connection = make_client("127.0.0.1", port)
            try:
                for step, hour in enumerate(range(parity, 48, 2)):
                    dt = f"2024-01-{2 + hour // 24:02d}-{hour % 24:02d}"
                    connection.add_partition(part("shared", dt))
                    if step % 5 == 4:
                        connection.drop_partition(DB, "shared", [dt, "us"], False)
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                failures.append(exc)
            finally:
                connection.close()

        workers = [
            threading.Thread(target=change_many, args=(a.port, 0)),
            threading.Thread(target=change_many, args=(b.port, 1)),
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert failures == []

        expected = oracle(one, "shared")
        assert timeline_params(one.get_table(DB, "shared").parameters) == expected
        assert timeline_params(two.get_table(DB, "shared").parameters) == expected
        assert expected[PREFIX + "HOURLY.dt.latest"] == "2024-01-03-23"
        # Each process's memory is in step too: one more change through each.
        one.add_partition(part("shared", "2024-01-04-00"))
        two.drop_partition(DB, "shared", ["2024-01-01-00", "us"], False)
        expected = oracle(two, "shared")
        assert timeline_params(one.get_table(DB, "shared").parameters) == expected
        assert expected[PREFIX + "HOURLY.dt.first"] == "2024-01-01-01"
        one.close()
        two.close()
