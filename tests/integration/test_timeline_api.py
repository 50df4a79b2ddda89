"""Partition timelines exposed (docs/timelines.md): the ``get_partition_timelines``,
``cover_time_range`` and ``rebuild_partition_timelines`` extensions over real sockets, the
``MetastoreClient`` helpers, and ``metastore-server timeline show|cover|rebuild`` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date, datetime

import pytest
import structlog
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
)
from structlog.testing import capture_logs
from support.net import LOOPBACK, free_port

from metastore_server import audit
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.timelines.time_columns import time_columns
from metastore_server.cli.main import build_parser
from metastore_server.client import MetastoreClient
from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

DB = "tlapi"
KEYS = [("dt", "string"), ("region", "string")]
DAILY, HOURLY = UpdatePeriod.DAILY, UpdatePeriod.HOURLY
EAH = lens_class_name(EndsAndHolesTimeline)
RANGES = lens_class_name(RangesTimeline)

#: ``daily``: 2024-01-01 .. 2024-01-09 without 2024-01-05, and 2024-01-20 (two regions on 01-02).
DAYS = [f"2024-01-0{d}" for d in (1, 2, 3, 4, 6, 7, 8, 9)] + ["2024-01-20"]
#: ``hourly``: every hour of 2024-01-05, and 2024-01-10 00..05.
HOURS = [f"2024-01-05-{h:02d}" for h in range(24)] + [f"2024-01-10-{h:02d}" for h in range(6)]


def part(table: str, dt: str, period: str | None, region: str = "us") -> hms.Partition:
    partition = make_partition(DB, table, [dt, region])
    partition.parameters = {UPDATE_PERIOD_KEY: period} if period else {}
    return partition


@pytest.fixture(scope="module", autouse=True)
def tables(running: RunningServer) -> None:
    c = running.client()
    create_db(c, DB)
    opt_in = {TIME_PARTCOLS_KEY: "dt"}
    c.create_table(make_table(DB, "daily", keys=KEYS, parameters=opt_in))
    c.add_partitions(
        [part("daily", d, "DAILY") for d in DAYS] + [part("daily", DAYS[1], "DAILY", "eu")]
    )
    c.create_table(
        make_table(DB, "hourly", keys=KEYS, parameters={**opt_in, class_key(HOURLY, "dt"): RANGES})
    )
    c.add_partitions([part("hourly", h, "HOURLY") for h in HOURS])
    # One storage table with two update periods, and an untracked partition (no period).
    c.create_table(make_table(DB, "mixed", keys=KEYS, parameters=opt_in))
    c.add_partitions(
        [part("mixed", d, "DAILY") for d in ("2024-02-01", "2024-02-02")]
        + [part("mixed", f"2024-02-03-{h:02d}", "HOURLY") for h in (0, 1, 2, 5)]
        + [part("mixed", "2024-02-04", None)]
    )
    c.create_table(make_table(DB, "plain", keys=KEYS))
    c.add_partitions([part("plain", d, "DAILY") for d in DAYS[:3]])
    c.create_table(make_table(DB, "empty", keys=KEYS, parameters=opt_in))
    c.close()


@pytest.fixture()
def ms(running: RunningServer) -> Iterator[MetastoreClient]:
    with MetastoreClient(running.host, running.port) as client:
        yield client


def oracle(table: str, period: UpdatePeriod, names: list[str], kind=EndsAndHolesTimeline):
    """The timeline the partitions ``names`` make."""
    timeline = kind(table, period, "dt")
    timeline.add_all(TimePartition.parse(period, n) for n in names)
    return timeline


def request(tables: list[str], start: str, end: str, periods=None, column: str = "dt"):
    return hms.CoverTimeRangeRequest(
        dbName=DB, tables=tables, column=column, startTime=start, endTime=end,
        updatePeriods=periods,
    )  # fmt: skip


def parts_of(result) -> list[tuple[str, str, str, str, str]]:
    return [
        (p.storageTable, p.updatePeriod, p.partition, p.startTime, p.endTime) for p in result.parts
    ]


def uncovered_of(result) -> list[tuple[str, str]]:
    return [(u.startTime, u.endTime) for u in result.uncovered]


def days(table: str, names: list[str]) -> list[tuple[str, str, str, str, str]]:
    out = []
    for name in names:
        p = TimePartition.parse(DAILY, name)
        out.append((table, "DAILY", name, name, p.next().name))
    return out


def hours(table: str, names: list[str]) -> list[tuple[str, str, str, str, str]]:
    out = []
    for name in names:
        out.append((table, "HOURLY", name, name, TimePartition.parse(HOURLY, name).next().name))
    return out


# --------------------------------------------------------------------------- show


def test_show_one_timeline_exactly(client) -> None:
    result = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="daily")
    )
    assert result.timeColumns == ["dt"]
    (info,) = result.timelines
    assert (info.storageTable, info.updatePeriod, info.column, info.implementation) == (
        "daily",
        "DAILY",
        "dt",
        EAH,
    )
    assert (info.first, info.latest, info.count) == ("2024-01-01", "2024-01-20", 9)
    assert info.ranges == [
        "[2024-01-01, 2024-01-05)",
        "[2024-01-06, 2024-01-10)",
        "[2024-01-20, 2024-01-21)",
    ]
    expected = timeline_to_table_properties(oracle("daily", DAILY, DAYS))
    assert info.properties == expected
    # The Lens keys as stored in the table's parameters.
    stored = client.get_table(DB, "daily").parameters
    assert {k: v for k, v in stored.items() if k.startswith(PREFIX) and k != PRESENT_KEY} == (
        expected
    )
    assert expected[PREFIX + "DAILY.dt.holes0"] == ",".join(
        ["2024-01-05"] + [f"2024-01-{d}" for d in range(10, 20)]
    )


def test_show_ranges_implementation_and_several_periods(client) -> None:
    (info,) = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="hourly")
    ).timelines
    assert (info.implementation, info.count) == (RANGES, 30)
    assert (info.first, info.latest) == ("2024-01-05-00", "2024-01-10-05")
    assert info.ranges == ["[2024-01-05-00, 2024-01-06-00)", "[2024-01-10-00, 2024-01-10-06)"]
    assert info.properties == timeline_to_table_properties(
        oracle("hourly", HOURLY, HOURS, RangesTimeline)
    )

    def show(**kwargs: str | None) -> list[tuple[str, int, list[str]]]:
        result = client.get_partition_timelines(
            hms.GetPartitionTimelinesRequest(dbName=DB, tblName="mixed", **kwargs)
        )
        return [(i.updatePeriod, i.count, i.ranges) for i in result.timelines]

    hourly = ("HOURLY", 4, ["[2024-02-03-00, 2024-02-03-03)", "[2024-02-03-05, 2024-02-03-06)"])
    daily = ("DAILY", 2, ["[2024-02-01, 2024-02-03)"])
    assert show() == [hourly, daily]  # finest first; the partition without a period is not in
    assert show(updatePeriod="daily") == [daily]
    assert show(updatePeriod="HOURLY", column="DT") == [hourly]
    assert show(updatePeriod="MONTHLY") == []


def test_show_tables_without_timelines(client) -> None:
    plain = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="plain")
    )
    assert (plain.timelines, plain.timeColumns) == ([], [])
    empty = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="empty")
    )
    assert (empty.timelines, empty.timeColumns) == ([], ["dt"])


def test_show_errors(client) -> None:
    def show(table: str, **kwargs: str) -> object:
        return client.get_partition_timelines(
            hms.GetPartitionTimelinesRequest(dbName=DB, tblName=table, **kwargs)
        )

    with pytest.raises(hms.NoSuchObjectException, match=f"message='{DB}.nope table not found'"):
        show("nope")
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition_timelines(
            hms.GetPartitionTimelinesRequest(dbName="no_such_db", tblName="daily")
        )
    with pytest.raises(hms.MetaException, match="Invalid update period 'FORTNIGHTLY'"):
        show("daily", updatePeriod="FORTNIGHTLY")
    with pytest.raises(hms.MetaException, match="region is not a time partition column"):
        show("daily", column="region")
    # The connection is still usable.
    assert show("daily").timeColumns == ["dt"]


# --------------------------------------------------------------------------- cover


def test_cover_one_daily_table(client) -> None:
    result = client.cover_time_range(request(["daily"], "2024-01-01", "2024-01-11"))
    assert parts_of(result) == days("daily", DAYS[:8])
    assert uncovered_of(result) == [("2024-01-05", "2024-01-06"), ("2024-01-10", "2024-01-11")]
    assert result.complete is False
    assert 0 < result.lookups <= 20


def test_cover_daily_then_hourly_for_the_gaps(client) -> None:
    result = client.cover_time_range(request(["daily", "hourly"], "2024-01-01", "2024-01-11"))
    assert parts_of(result) == (
        days("daily", DAYS[:4]) + hours("hourly", HOURS[:24]) + days("daily", DAYS[4:8])
        + hours("hourly", HOURS[24:])
    )  # fmt: skip
    assert uncovered_of(result) == [("2024-01-10-06", "2024-01-11-00")]
    assert not result.complete
    # The table order does not matter when the periods differ; coarse days come first.
    swapped = client.cover_time_range(request(["hourly", "daily"], "2024-01-01", "2024-01-11"))
    assert (parts_of(swapped), uncovered_of(swapped)) == (parts_of(result), uncovered_of(result))


def test_cover_partial_days_and_complete(client) -> None:
    result = client.cover_time_range(
        request(["daily", "hourly"], "2024-01-04-20", "2024-01-06-00-00")
    )
    assert parts_of(result) == hours("hourly", HOURS[:24])
    assert uncovered_of(result) == [("2024-01-04-20", "2024-01-05-00")]
    done = client.cover_time_range(request(["daily", "hourly"], "2024-01-02", "2024-01-10-03"))
    assert done.complete is True and done.uncovered == []
    assert parts_of(done) == (
        days("daily", ["2024-01-02", "2024-01-03", "2024-01-04"]) + hours("hourly", HOURS[:24])
        + days("daily", DAYS[4:8]) + hours("hourly", HOURS[24:27])
    )  # fmt: skip
    empty = client.cover_time_range(request(["daily"], "2024-01-02", "2024-01-02"))
    assert (empty.parts, empty.uncovered, empty.complete) == ([], [], True)


def test_cover_restricted_periods(client) -> None:
    only_days = client.cover_time_range(
        request(["daily", "hourly"], "2024-01-01", "2024-01-11", ["DAILY"])
    )
    assert parts_of(only_days) == days("daily", DAYS[:8])
    assert uncovered_of(only_days) == [("2024-01-05", "2024-01-06"), ("2024-01-10", "2024-01-11")]
    only_hours = client.cover_time_range(
        request(["daily", "hourly"], "2024-01-01", "2024-01-11", ["hourly"])
    )
    assert parts_of(only_hours) == hours("hourly", HOURS)
    assert uncovered_of(only_hours) == [
        ("2024-01-01", "2024-01-05"),
        ("2024-01-06", "2024-01-10"),
        ("2024-01-10-06", "2024-01-11-00"),
    ]
    # A period no table has covers nothing.
    monthly = client.cover_time_range(request(["daily"], "2024-01-01", "2024-01-03", ["MONTHLY"]))
    assert (monthly.parts, uncovered_of(monthly)) == ([], [("2024-01-01", "2024-01-03")])


def test_cover_one_table_with_two_periods(client) -> None:
    result = client.cover_time_range(request(["mixed"], "2024-02-01", "2024-02-03-06"))
    assert parts_of(result) == days("mixed", ["2024-02-01", "2024-02-02"]) + hours(
        "mixed", ["2024-02-03-00", "2024-02-03-01", "2024-02-03-02", "2024-02-03-05"]
    )
    assert uncovered_of(result) == [("2024-02-03-03", "2024-02-03-05")]


def test_cover_errors(client) -> None:
    def cover(*args: object, **kwargs: object) -> object:
        return client.cover_time_range(request(*args, **kwargs))  # type: ignore[arg-type]

    with pytest.raises(hms.NoSuchObjectException, match=f"message='{DB}.nope table not found'"):
        cover(["daily", "nope"], "2024-01-01", "2024-01-02")
    with pytest.raises(hms.MetaException, match=f"{DB}.plain keeps no partition timelines"):
        cover(["daily", "plain"], "2024-01-01", "2024-01-02")
    with pytest.raises(hms.MetaException, match="region is not a time partition column"):
        cover(["daily"], "2024-01-01", "2024-01-02", column="region")
    for bad in ("2024-13-01", "2024-01-01T00", "yesterday", "2024-1-1", "2024-01-01-24", ""):
        with pytest.raises(hms.MetaException, match="Invalid start time .*yyyy-MM-dd"):
            cover(["daily"], bad, "2024-01-02")
    with pytest.raises(hms.MetaException, match="Invalid end time '2024-02-30'"):
        cover(["daily"], "2024-01-01", "2024-02-30")
    with pytest.raises(hms.MetaException, match="before the start"):
        cover(["daily"], "2024-01-02", "2024-01-01")
    with pytest.raises(hms.MetaException, match="Invalid update period 'NOPE'"):
        cover(["daily"], "2024-01-01", "2024-01-02", ["DAILY", "NOPE"])
    with pytest.raises(hms.MetaException, match="at least one update period"):
        cover(["daily"], "2024-01-01", "2024-01-02", [])
    with pytest.raises(hms.MetaException, match="at least one storage table"):
        cover([], "2024-01-01", "2024-01-02")
    # An opted-in table with no partition yet is a valid (empty) source.
    result = cover(["empty", "daily"], "2024-01-01", "2024-01-02")
    assert parts_of(result) == days("daily", ["2024-01-01"])


@pytest.fixture()
def fresh_audit_logger(monkeypatch) -> None:
    """A logger that follows the configuration of the moment (see test_audit.py)."""
    monkeypatch.setattr(audit, "_audit", structlog.get_logger("metastore.audit"))


def audit_line(logs: list[dict], method: str) -> dict:
    deadline = time.monotonic() + 5
    while True:
        lines = [e for e in logs if e.get("event") == "call" and e.get("method") == method]
        if lines or time.monotonic() > deadline:
            assert lines, f"no audit line for {method}"
            return lines[-1]
        time.sleep(0.01)


def test_cover_reads_no_partition_on_a_warm_cache(client, fresh_audit_logger) -> None:
    client.cover_time_range(request(["daily", "hourly"], "2024-01-01", "2024-01-11"))  # warm
    with capture_logs() as logs:
        result = client.cover_time_range(request(["daily", "hourly"], "2024-01-01", "2024-01-11"))
        line = audit_line(logs, "cover_time_range")
    assert line["outcome"] == "ok"
    assert (line["db"], line["tables"], line["rows_scanned"]) == (DB, "daily,hourly", 0)
    assert (line["lookups"], line["parts"], line["uncovered"]) == (
        result.lookups,
        len(result.parts),
        1,
    )
    with capture_logs() as logs:
        client.rebuild_partition_timelines(hms.RebuildTimelinesRequest(dbName=DB, tblName="daily"))
        line = audit_line(logs, "rebuild_partition_timelines")
    assert (line["table"], line["rows_scanned"], line["timelines"]) == ("daily", len(DAYS) + 1, 1)


# --------------------------------------------------------------------------- rebuild


def test_rebuild_repairs_stored_timelines(client, running) -> None:
    client.create_table(make_table(DB, "repaired", keys=KEYS, parameters={TIME_PARTCOLS_KEY: "dt"}))
    client.add_partitions([part("repaired", d, "DAILY") for d in DAYS])
    before = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="repaired")
    )
    # Another writer (a Lens server, say) stores wrong timelines in the table's parameters.
    other = Catalog(open_store(running.config.storage), Warehouse(running.warehouse))
    try:
        ref = other.tables.get(DB, "repaired")
        wrong = oracle("repaired", DAILY, ["2024-01-01"])
        assert other.timelines._persist(ref, time_columns(ref.table), {(DAILY, "dt"): wrong})
    finally:
        other.close()
    shown = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="repaired")
    )
    assert [(i.count, i.latest) for i in shown.timelines] == [(1, "2024-01-01")]

    rebuilt = client.rebuild_partition_timelines(
        hms.RebuildTimelinesRequest(dbName=DB, tblName="repaired")
    )
    assert rebuilt == before
    assert rebuilt.timelines[0].count == len(DAYS)
    after = client.get_partition_timelines(
        hms.GetPartitionTimelinesRequest(dbName=DB, tblName="repaired")
    )
    assert after == before
    stored = client.get_table(DB, "repaired").parameters
    assert stored[PRESENT_KEY] == "true"
    assert stored[PREFIX + "DAILY.dt.latest"] == "2024-01-20"


def test_rebuild_other_tables_and_errors(client) -> None:
    def rebuild(table: str, db: str = DB) -> object:
        return client.rebuild_partition_timelines(
            hms.RebuildTimelinesRequest(dbName=db, tblName=table)
        )

    plain = rebuild("plain")
    assert (plain.timelines, plain.timeColumns) == ([], [])
    assert PRESENT_KEY not in (client.get_table(DB, "plain").parameters or {})
    mixed = rebuild("MIXED")
    assert [(i.updatePeriod, i.count) for i in mixed.timelines] == [("HOURLY", 4), ("DAILY", 2)]
    with pytest.raises(hms.NoSuchObjectException, match=f"message='{DB}.nope table not found'"):
        rebuild("nope")
    with pytest.raises(hms.NoSuchObjectException):
        rebuild("daily", db="no_such_db")


# --------------------------------------------------------------------------- the client


def test_client_helpers(ms) -> None:
    shown = ms.partition_timelines(DB, "mixed", period="DAILY")
    assert [(i.updatePeriod, i.first, i.latest) for i in shown.timelines] == [
        ("DAILY", "2024-02-01", "2024-02-02")
    ]
    assert [i.updatePeriod for i in ms.partition_timelines(DB, "mixed", column="dt").timelines] == [
        "HOURLY",
        "DAILY",
    ]
    cover = ms.cover_time_range(DB, ["daily", "hourly"], "dt", "2024-01-01", "2024-01-11")
    assert uncovered_of(cover) == [("2024-01-10-06", "2024-01-11-00")]
    # Dates and datetimes (naive: UTC) are sent in the request's format.
    same = ms.cover_time_range(
        DB, ("daily", "hourly"), "dt", date(2024, 1, 1), datetime(2024, 1, 11)
    )
    assert parts_of(same) == parts_of(cover)
    days_only = ms.cover_time_range(
        DB, ["daily", "hourly"], "dt", "2024-01-01", "2024-01-11", periods=["DAILY"]
    )
    assert len(days_only.parts) == 8
    rebuilt = ms.rebuild_partition_timelines(DB, "daily")
    assert rebuilt == ms.partition_timelines(DB, "daily")
    with pytest.raises(hms.MetaException, match="keeps no partition timelines"):
        ms.cover_time_range(DB, ["plain"], "dt", "2024-01-01", "2024-01-02")
    with pytest.raises(hms.NoSuchObjectException):
        ms.partition_timelines(DB, "nope")
    with pytest.raises(TypeError):
        ms.cover_time_range(DB, "daily", "dt", "2024-01-01", "2024-01-02")
    with pytest.raises(TypeError):
        ms.cover_time_range(DB, ["daily"], "dt", "2024-01-01", "2024-01-02", periods="DAILY")
    # Still usable, and other calls pass through.
    assert ms.get_table(DB, "daily").tableName == "daily"


# --------------------------------------------------------------------------- the command


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "metastore_server", "timeline", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def uri_of(running: RunningServer) -> str:
    return f"thrift://{running.host}:{running.port}"


def test_command_show(running) -> None:
    uri = uri_of(running)
    done = run_cli("show", f"{DB}.daily", "--uri", uri)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        # 10 partitions (two on 2024-01-02) in 9 days
        f"{DB}.daily: 10 partition(s); time columns dt; 1 timeline(s)\n"
        "DAILY dt: partitions in 9 day(s), 2024-01-01 .. 2024-01-20, 3 range(s) "
        "(EndsAndHolesPartitionTimeline)\n"
        "  [2024-01-01, 2024-01-05)\n"
        "  [2024-01-06, 2024-01-10)\n"
        "  [2024-01-20, 2024-01-21)\n"
    )
    done = run_cli("show", f"{DB}.mixed", "--period", "HOURLY", "--column", "dt", "--uri", uri,
                   "--format", "json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert (payload["table"], payload["timeColumns"]) == (f"{DB}.mixed", ["dt"])
    assert payload["partitions"] == 7  # 2 DAILY, 4 HOURLY, 1 in no timeline
    (info,) = payload["timelines"]
    assert (info["updatePeriod"], info["count"], info["first"], info["latest"]) == (
        "HOURLY", 4, "2024-02-03-00", "2024-02-03-05"
    )  # fmt: skip
    assert info["ranges"] == ["[2024-02-03-00, 2024-02-03-03)", "[2024-02-03-05, 2024-02-03-06)"]
    assert info["properties"][class_key(HOURLY, "dt")] == EAH
    done = run_cli("show", f"{DB}.daily", "--properties", "--uri", uri)
    assert f"  {PREFIX}DAILY.dt.latest=2024-01-20\n" in done.stdout
    done = run_cli("show", f"{DB}.mixed", "--uri", uri)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{DB}.mixed: 7 partition(s); time columns dt; 2 timeline(s)\n")
    assert "\nHOURLY dt: partitions in 4 hour(s), 2024-02-03-00 .. 2024-02-03-05, " in done.stdout
    done = run_cli("show", f"{DB}.plain", "--uri", uri)
    assert done.returncode == 0
    assert "keeps no partition timelines" in done.stdout


def test_command_cover(running) -> None:
    uri = uri_of(running)
    tables = f"{DB}.daily,{DB}.hourly"
    done = run_cli("cover", tables, "--column", "dt", "--from", "2024-01-01", "--to",
                   "2024-01-11", "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split() for line in lines[:-1]] == [
        ["DAILY", "daily", "[2024-01-01,", "2024-01-05)", "4", "day(s)"],
        ["HOURLY", "hourly", "[2024-01-05-00,", "2024-01-06-00)", "24", "hour(s)"],
        ["DAILY", "daily", "[2024-01-06,", "2024-01-10)", "4", "day(s)"],
        ["HOURLY", "hourly", "[2024-01-10-00,", "2024-01-10-06)", "6", "hour(s)"],
        ["uncovered", "[2024-01-10-06,", "2024-01-11-00)"],
    ]
    assert lines[-1].startswith(
        "cover of [2024-01-01, 2024-01-11) on dt: incomplete: 1 uncovered range(s); "
        "8 day(s), 30 hour(s); "
    )
    done = run_cli("cover", tables, "--column", "dt", "--from", "2024-01-01", "--to",
                   "2024-01-11", "--periods", "DAILY", "--format", "json",
                   "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert [p["partition"] for p in payload["parts"]] == DAYS[:8]
    assert payload["parts"][0] == {
        "storageTable": "daily", "updatePeriod": "DAILY", "partition": "2024-01-01",
        "start": "2024-01-01", "end": "2024-01-02",
    }  # fmt: skip
    assert payload["uncovered"] == [
        {"start": "2024-01-05", "end": "2024-01-06"},
        {"start": "2024-01-10", "end": "2024-01-11"},
    ]
    assert payload["complete"] is False and payload["lookups"] > 0


def test_command_rebuild(running) -> None:
    done = run_cli("rebuild", f"{DB}.hourly", "--uri", uri_of(running), "--format", "json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    (info,) = payload["timelines"]
    assert (info["implementation"], info["count"], payload["partitions"]) == (RANGES, 30, 30)


def test_command_refusals_exit_1(running) -> None:
    uri = uri_of(running)
    for args, message in (
        (["show", f"{DB}.nope"], f"timeline show: {DB}.nope table not found"),
        (["show", f"{DB}.daily", "--period", "DAYLY"], "Invalid update period"),
        (["rebuild", f"{DB}.nope"], f"timeline rebuild: {DB}.nope table not found"),
        (
            ["cover", f"{DB}.daily,{DB}.plain", "--column", "dt", "--from", "2024-01-01",
             "--to", "2024-01-02"],
            "keeps no partition timelines",
        ),
        (
            ["cover", f"{DB}.daily", "--column", "dt", "--from", "2024-01-01", "--to", "soon"],
            "Invalid end time 'soon'",
        ),
        (
            ["cover", f"{DB}.daily", "--column", "dt", "--from", "2024-01-01", "--to",
             "2024-01-02", "--periods", "DAILY,NOPE"],
            "Invalid update period 'NOPE'",
        ),
    ):  # fmt: skip
        done = run_cli(*args, "--uri", uri)
        assert (done.returncode, done.stdout) == (1, ""), (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_command_bad_arguments_or_unreachable_exit_2(running) -> None:
    uri = uri_of(running)
    cover = ["--column", "dt", "--from", "2024-01-01", "--to", "2024-01-02"]
    for args in (
        ["show", "daily", "--uri", uri],  # not db.table
        ["show", f"{DB}.daily", "--format", "csv", "--uri", uri],
        ["frobnicate", f"{DB}.daily", "--uri", uri],
        ["cover", f"{DB}.daily,other.hourly", *cover, "--uri", uri],  # two databases
        ["cover", f"{DB}.daily,,{DB}.hourly", *cover, "--uri", uri],
        ["cover", f"{DB}.daily", "--from", "2024-01-01", "--to", "2024-01-02", "--uri", uri],
        ["cover", f"{DB}.daily", *cover, "--periods", "DAILY,", "--uri", uri],
        ["rebuild", f"{DB}.daily", "--uri", "http://127.0.0.1:9083"],
        ["show", f"{DB}.daily", "--uri", f"thrift://{LOOPBACK}:{free_port(LOOPBACK)}"],
    ):
        done = run_cli(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stdout == ""
        assert "Traceback" not in done.stderr


def test_command_defaults() -> None:
    args = build_parser().parse_args(["timeline", "show", f"{DB}.daily"])
    assert (args.uri, args.format, args.period, args.column) == (
        "thrift://127.0.0.1:9083", "text", None, None
    )  # fmt: skip
    args = build_parser().parse_args(
        ["timeline", "cover", "a.b,a.c", "--column", "dt", "--from", "2024", "--to", "2025"]
    )
    assert (args.tables, args.periods) == (["a.b", "a.c"], None)
