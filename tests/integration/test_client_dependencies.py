"""Dependent tables through ``MetastoreClient`` (``resolve_dependencies``, ``dependents``,
``create_dependent_table``, ``repoint_dependency``) and the ``metastore-server dependency``
command, over real sockets. Semantics: the docstring of
``metastore_server.catalog.dependencies.model``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from support.net import LOOPBACK, free_port
from thriftpy2.thrift import TException

from metastore_server.catalog.dependencies.model import (
    BASE_KEY,
    COMPLETENESS_COLUMNS_KEY,
    COMPLETENESS_PERIOD_KEY,
    DEPENDS_ON_KEY,
)
from metastore_server.cli.main import build_parser
from metastore_server.client import MetastoreClient
from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

DB = "depcli"
BASE_KEYS = [("ds", "string"), ("hr", "string")]
COLUMNS = [("key", "string"), ("value", "string")]
DAY1, DAY2, DAY3 = "2024-01-01", "2024-01-02", "2024-01-03"
#: The base ``t``: every hour of DAY1, hours 00..05 of DAY2.
HOURS = [(DAY1, f"{h:02d}") for h in range(24)] + [(DAY2, f"{h:02d}") for h in range(6)]


@pytest.fixture(scope="module", autouse=True)
def tables(running: RunningServer) -> None:
    """Bases ``t (ds, hr)`` and ``t2 (ds, hr, min)``, a plain table, and ``tdep`` on ``t``
    (one key, HOURLY completeness on ds, hr) with partitions DAY1 and DAY2."""
    connection = running.client()
    create_db(connection, DB)
    connection.create_table(make_table(DB, "t", keys=BASE_KEYS, columns=COLUMNS))
    connection.add_partitions([make_partition(DB, "t", list(values)) for values in HOURS])
    connection.create_table(
        make_table(DB, "t2", keys=[*BASE_KEYS, ("min", "string")], columns=COLUMNS)
    )
    t2_parts = [(DAY1, "00", "00"), (DAY1, "00", "30"), (DAY3, "01", "00"), (DAY3, "02", "15")]
    connection.add_partitions([make_partition(DB, "t2", list(values)) for values in t2_parts])
    connection.create_table(make_table(DB, "plain", keys=BASE_KEYS, columns=COLUMNS))
    connection.close()
    with MetastoreClient(running.host, running.port) as ms:
        ms.create_dependent_table(
            DB, "tdep", DB, "t", key_count=1, completeness_period="HOURLY",
            completeness_columns=["ds", "hr"],
        )  # fmt: skip
        for day in (DAY1, DAY2):
            ms.add_partition(make_partition(DB, "tdep", [day]))


@pytest.fixture()
def ms(running: RunningServer) -> Iterator[MetastoreClient]:
    with MetastoreClient(running.host, running.port) as client:
        yield client


def hours_of(day: str, hours: range) -> list[str]:
    return [f"ds={day}/hr={h:02d}" for h in hours]


# --------------------------------------------------------------------------- the client


def test_create_dependent_table(ms) -> None:
    created = ms.get_table(DB, "tdep")
    assert [(k.name, k.type) for k in created.partitionKeys] == [("ds", "string")]
    assert [(c.name, c.type) for c in created.sd.cols] == COLUMNS
    assert created.tableType == "EXTERNAL_TABLE"
    assert created.parameters[BASE_KEY] == f"{DB}.t"
    assert created.parameters[COMPLETENESS_PERIOD_KEY].upper() == "HOURLY"
    assert created.parameters[COMPLETENESS_COLUMNS_KEY] == "ds,hr"
    # The partitions added with plain add_partition record their dependency.
    added = ms.get_partition(DB, "tdep", [DAY1])
    assert added.parameters[DEPENDS_ON_KEY] == f"{DB}.t@ds={DAY1}"

    # Two keys, managed, policies: the returned table is the stored one.
    two = ms.create_dependent_table(
        DB, "tdep2", DB, "t", key_count=2, on_base_drop="allow",
        on_base_schema_change="propagate", external=False, owner="someone",
    )  # fmt: skip
    assert [k.name for k in two.partitionKeys] == ["ds", "hr"]
    assert two.tableType == "MANAGED_TABLE"
    stored = ms.get_table(DB, "tdep2")
    assert (stored.owner, stored.tableType) == ("someone", "MANAGED_TABLE")
    assert [k.name for k in stored.partitionKeys] == ["ds", "hr"]
    info = ms.resolve_dependencies(DB, "tdep2").table
    assert (info.base, info.onBaseDrop, info.onBaseSchemaChange) == (
        f"{DB}.t", "allow", "propagate"
    )  # fmt: skip
    assert info.completenessPeriod is None
    assert ms.resolve_dependencies(DB, "tdep2").partitions == []


def test_create_refusals(ms) -> None:
    with pytest.raises(hms.InvalidObjectException) as missing:
        ms.create_dependent_table(DB, "d_nobase", DB, "nope")
    assert missing.value.message.endswith(f"base table {DB}.nope does not exist")
    for count in (0, 3):
        with pytest.raises(hms.InvalidObjectException) as keys:
            ms.create_dependent_table(DB, f"d_keys{count}", DB, "t", key_count=count)
        assert f"keyCount {count} is not in 1..2" in keys.value.message
    with pytest.raises(hms.AlreadyExistsException):
        ms.create_dependent_table(DB, "tdep", DB, "t")
    with pytest.raises(TypeError):
        ms.create_dependent_table(
            DB, "d_str", DB, "t", completeness_period="HOURLY", completeness_columns="ds,hr"
        )
    tables = ms.get_all_tables(DB)
    assert not [name for name in tables if name.startswith("d_")]


def test_resolve_dependencies(ms) -> None:
    result = ms.resolve_dependencies(DB, "tdep")
    info = result.table
    assert (info.dbName, info.tblName, info.base) == (DB, "tdep", f"{DB}.t")
    assert info.bases == [f"{DB}.t"]
    assert (info.onBaseDrop, info.onBaseSchemaChange) == ("refuse", "refuse")
    assert (info.completenessPeriod, info.completenessColumns) == ("HOURLY", ["ds", "hr"])
    day1, day2 = result.partitions
    assert (day1.partName, day1.dependsOn) == (f"ds={DAY1}", f"{DB}.t@ds={DAY1}")
    assert (day1.baseDbName, day1.baseTblName, day1.baseSpec) == (DB, "t", f"ds={DAY1}")
    assert day1.baseExists and not day1.markedIncomplete
    assert day1.basePartNames == hours_of(DAY1, range(24))
    assert day1.basePartCount == 24
    done = day1.completeness
    assert (done.period, done.window, done.expected, done.missing, done.complete) == (
        "HOURLY", DAY1, 24, [], True
    )  # fmt: skip
    assert (done.startTime, done.endTime) == (f"{DAY1}-00", f"{DAY2}-00")

    assert day2.partName == f"ds={DAY2}"
    assert day2.basePartNames == hours_of(DAY2, range(6))
    assert day2.basePartCount == 6
    done = day2.completeness
    assert (done.expected, done.complete) == (24, False)
    assert done.missing == [f"{DAY2}-{h:02d}" for h in range(6, 24)]

    # One partition, cut names (the count is all of them).
    (one,) = ms.resolve_dependencies(DB, "tdep", f"ds={DAY1}", max_parts=5).partitions
    assert one.basePartNames == hours_of(DAY1, range(5))
    assert one.basePartCount == 24


def test_resolution_is_dynamic(ms) -> None:
    ms.create_dependent_table(DB, "tdyn", DB, "t", on_base_drop="allow")
    ms.add_partition(make_partition(DB, "tdyn", [DAY3]))
    (empty,) = ms.resolve_dependencies(DB, "tdyn").partitions
    assert (empty.baseExists, empty.basePartNames, empty.basePartCount) == (True, [], 0)
    assert empty.completeness is None  # no completeness rule
    ms.add_partition(make_partition(DB, "t", [DAY3, "07"]))
    (one,) = ms.resolve_dependencies(DB, "tdyn").partitions
    assert (one.basePartNames, one.basePartCount) == ([f"ds={DAY3}/hr=07"], 1)
    assert ms.drop_partition(DB, "t", [DAY3, "07"], False)  # the policy allows it
    (gone,) = ms.resolve_dependencies(DB, "tdyn").partitions
    assert (gone.basePartCount, gone.markedIncomplete) == (0, False)


def test_resolve_errors(ms) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        ms.resolve_dependencies(DB, "nope")
    with pytest.raises(hms.MetaException):
        ms.resolve_dependencies(DB, "plain")
    with pytest.raises(hms.NoSuchObjectException):
        ms.resolve_dependencies(DB, "tdep", "ds=1999-01-01")


def test_dependents(ms) -> None:
    result = ms.dependents(DB, "t", f"ds={DAY1}/hr=03")
    assert f"{DB}.tdep" in result.tables
    assert [(p.dbName, p.tblName, p.partName, p.dependsOn, p.markedIncomplete)
            for p in result.partitions] == [
        (DB, "tdep", f"ds={DAY1}", f"{DB}.t@ds={DAY1}", False)
    ]  # fmt: skip
    # Without a partition: every dependent partition of the base.
    every = ms.dependents(DB, "t")
    assert f"{DB}.tdep" in every.tables
    assert every.tables == sorted(every.tables)
    assert [(p.tblName, p.partName) for p in every.partitions if p.tblName == "tdep"] == [
        ("tdep", f"ds={DAY1}"),
        ("tdep", f"ds={DAY2}"),
    ]
    none = ms.dependents(DB, "plain")
    assert (none.tables, none.partitions) == ([], [])
    with pytest.raises(hms.NoSuchObjectException):
        ms.dependents(DB, "t", f"ds={DAY3}/hr=00")
    with pytest.raises(hms.NoSuchObjectException):
        ms.dependents(DB, "nope")


def test_repoint_dependency(ms) -> None:
    ms.create_dependent_table(DB, "tmove", DB, "t")
    ms.add_partition(make_partition(DB, "tmove", [DAY1]))
    moved = ms.repoint_dependency(DB, "tmove", DB, "t2")
    assert moved.table.base == f"{DB}.t2"
    assert moved.table.bases == [f"{DB}.t", f"{DB}.t2"]
    # The existing partition still depends on t; a new one depends on t2.
    (old,) = moved.partitions
    assert (old.dependsOn, old.basePartCount) == (f"{DB}.t@ds={DAY1}", 24)
    ms.add_partition(make_partition(DB, "tmove", [DAY3]))
    (new,) = ms.resolve_dependencies(DB, "tmove", f"ds={DAY3}").partitions
    assert new.dependsOn == f"{DB}.t2@ds={DAY3}"
    assert new.basePartNames == [f"ds={DAY3}/hr=01/min=00", f"ds={DAY3}/hr=02/min=15"]
    on_t2 = ms.dependents(DB, "t2")
    assert f"{DB}.tmove" in on_t2.tables
    assert [p.partName for p in on_t2.partitions if p.tblName == "tmove"] == [f"ds={DAY3}"]

    # One partition: the same spec of the new base.
    again = ms.repoint_dependency(DB, "tmove", DB, "t2", partition=f"ds={DAY1}")
    assert [(p.partName, p.dependsOn, p.basePartCount) for p in again.partitions] == [
        (f"ds={DAY1}", f"{DB}.t2@ds={DAY1}", 2),
    ]
    assert [p.dependsOn for p in ms.resolve_dependencies(DB, "tmove").partitions] == [
        f"{DB}.t2@ds={DAY1}",
        f"{DB}.t2@ds={DAY3}",
    ]
    assert ms.get_partition(DB, "tmove", [DAY1]).parameters[DEPENDS_ON_KEY] == (
        f"{DB}.t2@ds={DAY1}"
    )
    on_t = [p.tblName for p in ms.dependents(DB, "t", f"ds={DAY1}/hr=00").partitions]
    assert "tdep" in on_t and "tmove" not in on_t

    with pytest.raises(hms.InvalidOperationException, match=f"base table {DB}.nope does not"):
        ms.repoint_dependency(DB, "tmove", DB, "nope")
    assert ms.resolve_dependencies(DB, "tmove").table.base == f"{DB}.t2"


# --------------------------------------------------------------------------- the command


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "metastore_server", "dependency", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def uri_of(running: RunningServer) -> str:
    return f"thrift://{running.host}:{running.port}"


def test_command_describe(running) -> None:
    uri = uri_of(running)
    done = run_cli("describe", f"{DB}.tdep", "--uri", uri)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:6] == [
        f"{DB}.tdep: dependent table, base {DB}.t",
        f"  bases: {DB}.t",
        "  on base drop: refuse",
        "  on base schema change: refuse",
        "  completeness: HOURLY on ds, hr",
        "2 dependent partition(s)",
    ]
    assert lines[6:12] == [
        f"ds={DAY1}",
        f"  depends on: {DB}.t@ds={DAY1}",
        "  marked incomplete: no",
        f"  completeness: {DAY1} [{DAY1}-00, {DAY2}-00): complete, 24 HOURLY unit(s)",
        f"  base partitions of {DB}.t (24):",
        f"    ds={DAY1}/hr=00",
    ]
    for name in hours_of(DAY1, range(24)) + hours_of(DAY2, range(6)):
        assert f"    {name}\n" in done.stdout
    assert "more" not in done.stdout
    assert (
        f"  completeness: {DAY2} [{DAY2}-00, {DAY3}-00): incomplete, 18 of 24 HOURLY unit(s) "
        "missing\n"
        f"  missing:\n    {DAY2}-06\n" in done.stdout
    )

    done = run_cli("describe", f"{DB}.tdep", "--partition", f"ds={DAY1}", "--limit", "3",
                   "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(
        f"  base partitions of {DB}.t (24):\n"
        f"    ds={DAY1}/hr=00\n    ds={DAY1}/hr=01\n    ds={DAY1}/hr=02\n"
        "    ... and 21 more\n"
    )
    assert f"ds={DAY2}" not in done.stdout
    assert "1 dependent partition(s)\n" in done.stdout
    done = run_cli("describe", f"{DB}.tdep", "--partition", f"ds={DAY2}", "--limit", "2",
                   "--uri", uri)  # fmt: skip
    assert f"  missing:\n    {DAY2}-06\n    {DAY2}-07\n    ... and 16 more\n" in done.stdout
    assert "    ... and 4 more\n" in done.stdout


def test_command_describe_json(running) -> None:
    done = run_cli("describe", f"{DB}.tdep", "--format", "json", "--uri", uri_of(running))
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["table"] == {
        "dbName": DB, "tblName": "tdep", "base": f"{DB}.t", "bases": [f"{DB}.t"],
        "onBaseDrop": "refuse", "onBaseSchemaChange": "refuse", "completenessPeriod": "HOURLY",
        "completenessColumns": ["ds", "hr"],
    }  # fmt: skip
    day1, day2 = payload["partitions"]
    assert day1["basePartNames"] == hours_of(DAY1, range(24))
    assert (day1["basePartCount"], day1["completeness"]["complete"]) == (24, True)
    assert day2["completeness"] == {
        "period": "HOURLY", "window": DAY2, "startTime": f"{DAY2}-00",
        "endTime": f"{DAY3}-00", "expected": 24,
        "missing": [f"{DAY2}-{h:02d}" for h in range(6, 24)], "complete": False,
    }  # fmt: skip
    assert (day2["baseExists"], day2["markedIncomplete"], day2["baseSpec"]) == (
        True, False, f"ds={DAY2}"
    )  # fmt: skip


def test_command_dependents(running) -> None:
    uri = uri_of(running)
    done = run_cli("dependents", f"{DB}.t", "--partition", f"ds={DAY2}/hr=03", "--uri", uri)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"dependent tables of {DB}.t: ")
    assert f"{DB}.tdep" in lines[0]
    assert lines[1:] == [
        f"1 dependent partition(s) on ds={DAY2}/hr=03",
        f"  {DB}.tdep  ds={DAY2}  <- {DB}.t@ds={DAY2}",
    ]
    done = run_cli("dependents", f"{DB}.t", "--format", "json", "--uri", uri)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert f"{DB}.tdep" in payload["tables"]
    assert {
        "dbName": DB, "tblName": "tdep", "partName": f"ds={DAY2}",
        "dependsOn": f"{DB}.t@ds={DAY2}", "markedIncomplete": False,
    } in payload["partitions"]  # fmt: skip
    done = run_cli("dependents", f"{DB}.plain", "--uri", uri)
    assert (done.returncode, done.stdout) == (0, f"{DB}.plain has no dependent tables\n")


def test_command_create_and_repoint(running, ms) -> None:
    uri = uri_of(running)
    done = run_cli("create", f"{DB}.tcli", "--base", f"{DB}.t", "--keys", "2", "--on-base-drop",
                   "mark_incomplete", "--completeness", "HOURLY:ds,hr", "--managed",
                   "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"created {DB}.tcli (MANAGED_TABLE) partitioned by ds string, hr string; base {DB}.t\n"
    )
    info = ms.resolve_dependencies(DB, "tcli").table
    assert (info.onBaseDrop, info.completenessPeriod, info.completenessColumns) == (
        "mark_incomplete", "HOURLY", ["ds", "hr"]
    )  # fmt: skip

    done = run_cli("create", f"{DB}.tcli_json", "--base", f"{DB}.t", "--format", "json",
                   "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert (payload["table"], payload["tableType"], payload["base"]) == (
        f"{DB}.tcli_json", "EXTERNAL_TABLE", f"{DB}.t"
    )  # fmt: skip
    assert payload["keys"] == [{"name": "ds", "type": "string"}]

    ms.add_partition(make_partition(DB, "tcli_json", [DAY1]))
    done = run_cli("repoint", f"{DB}.tcli_json", "--base", f"{DB}.t2", "--uri", uri)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"re-pointed {DB}.tcli_json to {DB}.t2\n{DB}.tcli_json: dependent table, base {DB}.t2\n"
    )
    (kept,) = ms.resolve_dependencies(DB, "tcli_json").partitions
    assert kept.dependsOn == f"{DB}.t@ds={DAY1}"
    done = run_cli("repoint", f"{DB}.tcli_json", "--base", f"{DB}.t2", "--partition",
                   f"ds={DAY1}", "--format", "json", "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (part,) = json.loads(done.stdout)["partitions"]
    assert (part["dependsOn"], part["basePartCount"]) == (f"{DB}.t2@ds={DAY1}", 2)
    assert part["basePartNames"] == [f"ds={DAY1}/hr=00/min=00", f"ds={DAY1}/hr=00/min=30"]
    done = run_cli("repoint", f"{DB}.tcli_json", "--base", f"{DB}.t2", "--partition",
                   f"ds={DAY1}", "--limit", "1", "--uri", uri)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(
        f"  base partitions of {DB}.t2 (2):\n    ds={DAY1}/hr=00/min=00\n    ... and 1 more\n"
    )


def test_command_repoint_prints_a_summary(running, ms) -> None:
    uri = uri_of(running)
    ms.create_dependent_table(DB, "tsum", DB, "t2")
    days = [f"2024-01-0{d}" for d in range(1, 8)]
    for day in days:
        ms.add_partition(make_partition(DB, "tsum", [day]))
    one = ["repoint", f"{DB}.tsum", "--base", f"{DB}.t", "--partition", f"ds={DAY1}"]
    done = run_cli(*one, "--uri", uri)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"re-pointed {DB}.tsum ds={DAY1} to {DB}.t\n")
    assert done.stdout.endswith(
        f"1 dependent partition(s) on 24 base partition(s)\nds={DAY1}\n"
        f"  depends on: {DB}.t@ds={DAY1}\n  marked incomplete: no\n"
        f"  base partitions of {DB}.t (24):\n"
        f"    ds={DAY1}/hr=00\n    ds={DAY1}/hr=01\n    ds={DAY1}/hr=02\n    ... and 21 more\n"
        f"(a summary: --all lists every one, as `dependency describe {DB}.tsum "
        f"--partition ds={DAY1}` does)\n"
    )
    done = run_cli(*one, "--all", "--uri", uri)
    assert done.returncode == 0, done.stderr
    for name in hours_of(DAY1, range(24)):
        assert f"    {name}\n" in done.stdout
    assert "more" not in done.stdout and "summary" not in done.stdout
    # The whole table: its first dependent partitions, and how many are left out.
    done = run_cli("repoint", f"{DB}.tsum", "--base", f"{DB}.t", "--uri", uri)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "7 dependent partition(s) on 26 base partition(s)" in lines  # 24 of t, 2 of t2
    assert [line for line in lines if line.startswith("ds=")] == [f"ds={d}" for d in days[:5]]
    assert lines[-2:] == [
        "... and 2 more dependent partition(s)",
        f"(a summary: --all lists every one, as `dependency describe {DB}.tsum` does)",
    ]
    assert "    ... and 21 more" in lines
    done = run_cli("repoint", f"{DB}.tsum", "--base", f"{DB}.t", "--all", "--limit", "1",
                   "--uri", uri)  # fmt: skip
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_command_refusals_exit_1(running, ms) -> None:
    uri = uri_of(running)
    for args, create in (
        (["--keys", "3"], ("d_cli3", "t", 3)),
        (["--keys", "0"], ("d_cli0", "t", 0)),
        ([], ("d_clinobase", "nope", 1)),
        ([], ("tdep", "t", 1)),  # exists
    ):
        name, base, keys = create
        with pytest.raises(TException) as caught:  # the client's refusal ...
            ms.create_dependent_table(DB, name, DB, base, key_count=keys)
        done = run_cli("create", f"{DB}.{name}", "--base", f"{DB}.{base}", *args, "--uri", uri)
        assert (done.returncode, done.stdout) == (1, ""), (args, done.stderr)
        # ... is the command's, on one line.
        assert done.stderr == f"dependency create: {caught.value.message}\n"
    done = run_cli("create", f"{DB}.d_clinobase", "--base", f"{DB}.nope", "--uri", uri)
    assert f"{DB}.nope" in done.stderr
    for args in (
        ["describe", f"{DB}.nope"],
        ["describe", f"{DB}.plain"],
        ["dependents", f"{DB}.nope"],
        ["repoint", f"{DB}.tdep", "--base", f"{DB}.nope"],
    ):
        done = run_cli(*args, "--uri", uri)
        assert (done.returncode, done.stdout) == (1, ""), (args, done.stderr)
        assert done.stderr.startswith(f"dependency {args[0]}: "), done.stderr
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert ms.resolve_dependencies(DB, "tdep").table.base == f"{DB}.t"


def test_command_bad_arguments_or_unreachable_exit_2(running) -> None:
    uri = uri_of(running)
    for args in (
        ["describe", "tdep", "--uri", uri],  # not db.table
        ["describe", f"{DB}.tdep", "--limit", "0", "--uri", uri],
        ["describe", f"{DB}.tdep", "--format", "csv", "--uri", uri],
        ["create", f"{DB}.x", "--uri", uri],  # no --base
        ["create", f"{DB}.x", "--base", "t", "--uri", uri],
        ["create", f"{DB}.x", "--base", f"{DB}.t", "--completeness", "HOURLY", "--uri", uri],
        ["create", f"{DB}.x", "--base", f"{DB}.t", "--completeness", "HOURLY:ds,", "--uri", uri],
        ["repoint", f"{DB}.tdep", "--uri", uri],
        ["dependents", f"{DB}.t", "--uri", "http://127.0.0.1:9083"],
        ["describe", f"{DB}.tdep", "--uri", f"thrift://{LOOPBACK}:{free_port(LOOPBACK)}"],
    ):
        done = run_cli(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stdout == ""
        assert "Traceback" not in done.stderr
    with MetastoreClient(running.host, running.port) as ms:
        assert "x" not in ms.get_all_tables(DB)


def test_command_defaults() -> None:
    args = build_parser().parse_args(["dependency", "describe", f"{DB}.tdep"])
    assert (args.uri, args.format, args.partition, args.limit) == (
        "thrift://127.0.0.1:9083", "text", None, None
    )  # fmt: skip
    args = build_parser().parse_args(
        ["dependency", "create", "a.b", "--base", "a.c", "--completeness", "daily: dt"]
    )
    assert (args.keys, args.managed, args.completeness) == (1, False, ("daily", ["dt"]))
    assert (args.on_base_drop, args.on_schema_change, args.location) == (None, None, None)
