"""get_partition_values through ``MetastoreClient`` and the ``metastore-server values`` command,
against a running server with real partitions. Expected rows follow the semantics in the
docstring of ``metastore_server.api.values``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from support.net import LOOPBACK, free_port

from metastore_server.cli.main import build_parser
from metastore_server.client import MetastoreClient
from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "values_db"
DEF = "__HIVE_DEFAULT_PARTITION__"
D1, D2, D3, D4 = (f"2024-01-0{d}" for d in range(1, 5))
#: (ds string, hr int), added in this (deliberately unsorted) order.
PARTITIONS = [
    (D1, "9"),
    (D1, "10"),
    (D1, "2"),
    (D1, DEF),
    (D2, "1"),
    (D2, "10"),
    (D3, DEF),
    (D3, "5"),
    (D4, DEF),
]


@pytest.fixture(scope="module", autouse=True)
def tables(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    keys = [("ds", "string"), ("hr", "int")]
    connection.create_table(make_table(DB, "events", keys=keys))
    connection.add_partitions([make_partition(DB, "events", list(p)) for p in PARTITIONS])
    # Two spellings of one number: hr=7 and hr=07 are different partitions.
    connection.create_table(make_table(DB, "spelled", keys=keys))
    spelled = [("a", "07"), ("b", "7"), ("a", "8"), ("a", "7")]
    connection.add_partitions([make_partition(DB, "spelled", list(p)) for p in spelled])
    connection.create_table(make_table(DB, "empty", keys=keys))
    connection.close()


@pytest.fixture()
def ms(running) -> Iterator[MetastoreClient]:
    with MetastoreClient(running.host, running.port) as client:
        yield client


def values(ms: MetastoreClient, keys: list[str], **kwargs: object) -> list[list[str]]:
    return ms.list_partition_values(DB, "events", keys, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the client


def test_all_keys_in_typed_order_default_partition_last(ms) -> None:
    assert values(ms, ["ds", "hr"]) == [
        [D1, "2"],
        [D1, "9"],
        [D1, "10"],
        [D1, DEF],
        [D2, "1"],
        [D2, "10"],
        [D3, "5"],
        [D3, DEF],
        [D4, DEF],
    ]


def test_descending_reverses_all_but_default_last(ms) -> None:
    assert values(ms, ["ds", "hr"], ascending=False) == [
        [D4, DEF],
        [D3, "5"],
        [D3, DEF],
        [D2, "10"],
        [D2, "1"],
        [D1, "10"],
        [D1, "9"],
        [D1, "2"],
        [D1, DEF],
    ]


def test_one_key_distinct_and_all(ms) -> None:
    assert values(ms, ["hr"]) == [["1"], ["2"], ["5"], ["9"], ["10"], [DEF]]
    assert values(ms, ["hr"], ascending=False) == [["10"], ["9"], ["5"], ["2"], ["1"], [DEF]]
    assert values(ms, ["hr"], distinct=False) == [
        ["1"], ["2"], ["5"], ["9"], ["10"], ["10"], [DEF], [DEF], [DEF]
    ]  # fmt: skip
    assert values(ms, ["ds"]) == [[D1], [D2], [D3], [D4]]


def test_max_parts_counts_rows_after_distinct(ms) -> None:
    assert values(ms, ["hr"], max_parts=3) == [["1"], ["2"], ["5"]]
    assert values(ms, ["hr"], ascending=False, max_parts=2) == [["10"], ["9"]]
    assert values(ms, ["hr"], distinct=False, ascending=False, max_parts=2) == [["10"], ["10"]]
    everything = values(ms, ["hr"])
    assert values(ms, ["hr"], max_parts=0) == everything  # 0 or negative: all (HMS's rule)
    assert values(ms, ["hr"], max_parts=-5) == everything
    assert values(ms, ["hr"], max_parts=100) == everything


def test_filter_selects_partitions_typed(ms) -> None:
    # Integer comparison (a string one would keep "9" and drop "10"); the default partition
    # never matches a typed comparison.
    assert values(ms, ["ds", "hr"], filter="hr >= 5") == [
        [D1, "9"],
        [D1, "10"],
        [D2, "10"],
        [D3, "5"],
    ]
    assert values(ms, ["hr"], filter=f'ds >= "{D2}"') == [["1"], ["5"], ["10"], [DEF]]
    assert values(ms, ["hr"], filter='ds = "2099-01-01"') == []


def test_order_by_another_key_then_the_other_keys(ms) -> None:
    assert values(ms, ["ds", "hr"], order=["hr"]) == [
        [D2, "1"],
        [D1, "2"],
        [D3, "5"],
        [D1, "9"],
        [D1, "10"],
        [D2, "10"],
        [D1, DEF],
        [D3, DEF],
        [D4, DEF],
    ]
    assert values(ms, ["ds", "hr"], order=["hr"], ascending=False) == [
        [D2, "10"],
        [D1, "10"],
        [D1, "9"],
        [D3, "5"],
        [D1, "2"],
        [D2, "1"],
        [D4, DEF],
        [D3, DEF],
        [D1, DEF],
    ]
    # Distinct keeps a row where it first occurs in that order.
    assert values(ms, ["ds"], order=["hr"]) == [[D2], [D1], [D3], [D4]]
    assert values(ms, ["ds"], order=["hr"], ascending=False) == [[D2], [D1], [D3], [D4]]
    assert values(ms, ["hr"], order=["ds"], ascending=False, max_parts=4) == [
        [DEF], ["5"], ["10"], ["1"]
    ]  # fmt: skip


def test_key_names_case_insensitive_and_repeatable(ms) -> None:
    assert values(ms, ["HR", "Ds"], filter="hr >= 5") == [
        ["5", D3],
        ["9", D1],
        ["10", D1],
        ["10", D2],
    ]
    assert values(ms, ["hr", "hr"], max_parts=2) == [["1", "1"], ["2", "2"]]


def test_spellings_of_one_number_canonical_first(ms) -> None:
    rows = ms.list_partition_values(DB, "spelled", ["hr", "ds"], distinct=False)
    assert rows == [["7", "a"], ["07", "a"], ["7", "b"], ["8", "a"]]
    assert ms.list_partition_values(DB, "spelled", ["hr"]) == [["7"], ["07"], ["8"]]


def test_latest_and_earliest(ms) -> None:
    assert ms.latest_partition_value(DB, "events", "hr") == "10"
    assert ms.earliest_partition_value(DB, "events", "hr") == "1"
    assert ms.latest_partition_value(DB, "events", "ds") == D4
    assert ms.earliest_partition_value(DB, "events", "ds") == D1
    # The default partition is last in both directions ...
    assert ms.latest_partition_value(DB, "events", "hr", f'ds = "{D3}"') == "5"
    assert ms.earliest_partition_value(DB, "events", "hr", f'ds = "{D3}"') == "5"
    # ... but is a value when it is all there is.
    assert ms.latest_partition_value(DB, "events", "hr", f'ds = "{D4}"') == DEF
    assert ms.latest_partition_value(DB, "events", "hr", 'ds = "2099-01-01"') is None
    assert ms.earliest_partition_value(DB, "empty", "ds") is None


def test_refusals_propagate_unchanged(ms) -> None:
    with pytest.raises(hms.MetaException, match="nokey"):
        values(ms, ["nokey"])
    with pytest.raises(hms.MetaException, match="nokey"):
        values(ms, ["ds"], order=["nokey"])
    with pytest.raises(hms.MetaException):
        values(ms, [])
    with pytest.raises(hms.MetaException, match="Error parsing partition filter"):
        values(ms, ["ds"], filter="ds = ")
    with pytest.raises(hms.NoSuchObjectException):
        ms.list_partition_values(DB, "nope", ["ds"])
    with pytest.raises(hms.NoSuchObjectException):
        ms.latest_partition_value("no_such_db", "events", "ds")
    # The connection is still usable after a refusal.
    assert ms.latest_partition_value(DB, "events", "hr") == "10"


def test_other_calls_fall_through_and_close(running) -> None:
    client = MetastoreClient.from_uri(f"thrift://{running.host}:{running.port}")
    with client as ms:
        assert ms.get_table(DB, "events").tableName == "events"
        assert DB in ms.get_all_databases()
        with pytest.raises(AttributeError):
            ms.no_such_call  # noqa: B018
    with pytest.raises(Exception):  # noqa: B017 - closed: any transport error
        client.get_all_databases()
    with pytest.raises(ValueError):
        MetastoreClient.from_uri("http://127.0.0.1:9083")
    with MetastoreClient(running.host, running.port) as ms, pytest.raises(TypeError):
        values(ms, "ds")  # type: ignore[arg-type]


def test_request_fields() -> None:
    request = MetastoreClient.values_request(
        DB, "events", ["hr"], 'ds = "x"', ["ds"], False, 7, False
    )
    assert [f.name for f in request.partitionKeys] == ["hr"]
    assert [f.name for f in request.partitionOrder] == ["ds"]
    assert (request.filter, request.ascending, request.maxParts, request.applyDistinct) == (
        'ds = "x"',
        False,
        7,
        False,
    )
    assert MetastoreClient.values_request(DB, "events", ["hr"]).partitionOrder is None


# --------------------------------------------------------------------------- the command


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "metastore_server", "values", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def uri_of(running) -> str:
    return f"thrift://{running.host}:{running.port}"


def test_command_prints_tab_separated_rows(running) -> None:
    done = run_cli(
        f"{DB}.events", "--keys", "ds,hr", "--filter", "hr >= 5", "--uri", uri_of(running)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{D1}\t9\n{D1}\t10\n{D2}\t10\n{D3}\t5\n"


def test_command_options(running) -> None:
    uri = uri_of(running)
    done = run_cli(f"{DB}.events", "--keys", "hr", "--desc", "--limit", "3", "--uri", uri)
    assert (done.returncode, done.stdout) == (0, "10\n9\n5\n"), done.stderr
    done = run_cli(f"{DB}.events", "--keys", "hr", "--all", "--uri", uri, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = [["1"], ["2"], ["5"], ["9"], ["10"], ["10"], [DEF], [DEF], [DEF]]
    assert json.loads(done.stdout) == rows
    done = run_cli(f"{DB}.events", "--keys", "ds,hr", "--order", "hr", "--limit", "4", "--uri", uri)
    assert done.stdout == f"{D2}\t1\n{D1}\t2\n{D3}\t5\n{D1}\t9\n", done.stderr
    done = run_cli(
        f"{DB}.events", "--keys", "ds", "--filter", 'ds = "2099-01-01"', "--format", "json",
        "--uri", uri,
    )  # fmt: skip
    assert (done.returncode, json.loads(done.stdout)) == (0, [])


def test_command_refusals_exit_1(running) -> None:
    uri = uri_of(running)
    done = run_cli(f"{DB}.events", "--keys", "nokey", "--uri", uri)
    assert (done.returncode, done.stdout) == (1, "")
    assert "nokey" in done.stderr
    done = run_cli(f"{DB}.nope", "--keys", "ds", "--uri", uri)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("values: ")
    done = run_cli(f"{DB}.events", "--keys", "ds", "--filter", "ds = ", "--uri", uri)
    assert done.returncode == 1
    assert "Error parsing partition filter" in done.stderr


def test_command_bad_arguments_or_unreachable_exit_2(running) -> None:
    uri = uri_of(running)
    for args in (
        ["events", "--keys", "ds", "--uri", uri],  # not db.table
        [f"{DB}.events", "--keys", "ds,,hr", "--uri", uri],
        [f"{DB}.events", "--uri", uri],  # --keys is required
        [f"{DB}.events", "--keys", "ds", "--limit", "x", "--uri", uri],
        [f"{DB}.events", "--keys", "ds", "--format", "csv", "--uri", uri],
        [f"{DB}.events", "--keys", "ds", "--analyze", "--uri", uri],  # without --explain
        [f"{DB}.events", "--keys", "ds", "--uri", "http://127.0.0.1:9083"],
        [f"{DB}.events", "--keys", "ds", "--uri", f"thrift://{LOOPBACK}:{free_port(LOOPBACK)}"],
    ):
        done = run_cli(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stdout == ""
        assert "Traceback" not in done.stderr


def test_command_default_uri_is_loopback() -> None:
    args = build_parser().parse_args(["values", f"{DB}.events", "--keys", "ds,hr"])
    assert args.uri == "thrift://127.0.0.1:9083"
    assert (args.keys, args.limit, args.all, args.desc, args.format) == (
        ["ds", "hr"],
        -1,
        False,
        False,
        "tsv",
    )


# --------------------------------------------------------------------------- explain (extension)


def test_explain_values(ms, running) -> None:
    plain = ms.explain_partition_values(DB, "events", ["ds", "hr"], filter="hr >= 5")
    assert plain.text and plain.strategy
    assert plain.rowsReturned is None and plain.rowsScanned is None
    analyzed = ms.explain_partition_values(
        DB, "events", ["ds", "hr"], filter="hr >= 5", analyze=True
    )
    assert analyzed.rowsReturned == 4
    assert analyzed.rowsScanned is not None and analyzed.rowsScanned >= 4
    with pytest.raises(hms.NoSuchObjectException):
        ms.explain_partition_values(DB, "nope", ["ds"])
    with pytest.raises(hms.MetaException, match="nokey"):
        ms.explain_partition_values(DB, "events", ["nokey"])

    uri = uri_of(running)
    done = run_cli(
        f"{DB}.events", "--keys", "ds,hr", "--filter", "hr >= 5", "--explain", "--uri", uri
    )
    assert (done.returncode, done.stdout) == (0, plain.text + "\n"), done.stderr
    done = run_cli(
        f"{DB}.events", "--keys", "ds,hr", "--filter", "hr >= 5", "--explain", "--analyze",
        "--uri", uri,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, analyzed.text + "\n"), done.stderr
    done = run_cli(f"{DB}.nope", "--keys", "ds", "--explain", "--uri", uri)
    assert done.returncode == 1
