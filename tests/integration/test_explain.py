"""EXPLAIN of partition filters: the extension call and the ``metastore-server explain`` command,
against a running server with real data; rows scanned against rows returned."""

from __future__ import annotations

import subprocess
import sys

import pytest

from metastore_server.thrift_api import hms

from .conftest import ON_HBASE, create_db, make_partition, make_table

DB = "explain_db"
DAYS = [f"2024-01-{d:02d}" for d in range(1, 6)]
REGIONS = ["eu", "us"]


@pytest.fixture(scope="module", autouse=True)
def events(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    keys = [("ds", "string"), ("hr", "int"), ("region", "string")]
    connection.create_table(make_table(DB, "events", keys=keys))
    connection.add_partitions(
        [
            make_partition(DB, "events", [ds, str(hr), region])
            for ds in DAYS
            for hr in range(10)
            for region in REGIONS
        ]
    )
    connection.close()


def explain(client, text: str, analyze: bool = True) -> hms.ExplainFilterResult:
    request = hms.ExplainFilterRequest(dbName=DB, tblName="events", filter=text, analyze=analyze)
    return client.explain_partition_filter(request)


def test_leading_key_range_reads_only_what_it_returns(client) -> None:
    result = explain(client, 'ds = "2024-01-02" and hr >= 3 and hr < 7')
    assert [(s.kind, s.start, s.stop, s.residual) for s in result.scans] == [
        ("scan", '[ds="2024-01-02", hr=3]', '[ds="2024-01-02", hr=7)', None)
    ]
    assert (result.rowsScanned, result.rowsReturned) == (8, 8)
    found = client.get_partitions_by_filter(
        DB, "events", 'ds = "2024-01-02" and hr >= 3 and hr < 7', -1
    )
    assert len(found) == result.rowsReturned


def test_non_leading_key_is_a_residual_with_an_hbase_filter(client) -> None:
    result = explain(client, 'region = "eu"')
    (scan,) = result.scans
    assert scan.residual == 'region = "eu"'
    assert scan.hbaseFilter.startswith("SingleColumnValueFilter('k', '2', =, 'binary:")
    # The text shows the HBase filter only where the store runs it.
    shown = f"      hbase filter: {scan.hbaseFilter}" in result.text.splitlines()
    assert shown == ON_HBASE
    assert ON_HBASE or "hbase" not in result.text.lower()
    # The embedded store reads every row; HBase runs the filter on the region servers.
    assert result.rowsReturned == 50
    assert 50 <= result.rowsScanned <= 100


def test_in_list_reads_points(client) -> None:
    result = explain(client, '(ds) in ("2024-01-01", "2024-01-04") and hr = 2 and region = "us"')
    assert result.rowsReturned == 2
    assert result.rowsScanned <= result.rowsReturned + len(result.scans)
    assert "get" in {scan.kind for scan in result.scans}


def test_contradiction_reads_nothing(client) -> None:
    result = explain(client, 'ds = "2024-01-01" and ds = "2024-01-02"')
    assert result.scans == []
    assert "empty" in result.text


def test_without_analyze_nothing_is_counted(client) -> None:
    result = explain(client, 'ds = "2024-01-01"', analyze=False)
    assert result.rowsScanned is None
    assert all(scan.rowsScanned is None for scan in result.scans)


def test_bad_filter_and_missing_table(client) -> None:
    with pytest.raises(hms.MetaException, match="Error parsing partition filter"):
        explain(client, "ds = ")
    with pytest.raises(hms.NoSuchObjectException):
        client.explain_partition_filter(
            hms.ExplainFilterRequest(dbName=DB, tblName="nope", filter="")
        )


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "metastore_server", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_console_command_prints_the_plan(running) -> None:
    uri = f"thrift://{running.host}:{running.port}"
    done = run_cli("explain", f"{DB}.events", 'ds >= "2024-01-04"', "--uri", uri, "--analyze")
    assert done.returncode == 0, done.stderr
    assert 'scan [ds="2024-01-04"] .. [<end>]' in done.stdout
    assert "total: rows scanned 40, returned 40" in done.stdout


def test_console_command_still_takes_the_table_as_an_option(running) -> None:
    uri = f"thrift://{running.host}:{running.port}"
    text = 'ds >= "2024-01-04"'
    positional = run_cli("explain", f"{DB}.events", text, "--uri", uri)
    assert positional.returncode == 0, positional.stderr
    for args in (
        ("--table", f"{DB}.events", text),
        (text, "--table", f"{DB}.events"),
        (f"{DB}.events", text, "--table", f"{DB}.events"),  # the same table twice
    ):
        done = run_cli("explain", *args, "--uri", uri)
        assert (done.returncode, done.stdout) == (0, positional.stdout), (args, done.stderr)


def test_console_command_refuses_two_tables_or_a_missing_filter(running) -> None:
    uri = f"thrift://{running.host}:{running.port}"
    done = run_cli("explain", f"{DB}.events", "hr = 1", "--table", f"{DB}.other", "--uri", uri)
    assert (done.returncode, done.stdout) == (2, "")
    assert f"the table is given twice, '{DB}.events' and --table '{DB}.other'" in done.stderr
    for args in ((f"{DB}.events",), ("--table", f"{DB}.events"), ()):
        done = run_cli("explain", *args, "--uri", uri)
        assert (done.returncode, done.stdout) == (2, ""), args
        assert "give the table and the filter: explain db.table FILTER" in done.stderr, args


def test_console_command_reports_a_refused_filter(running) -> None:
    uri = f"thrift://{running.host}:{running.port}"
    done = run_cli("explain", f"{DB}.events", "nokey = 1", "--uri", uri)
    assert done.returncode == 1
    assert "Specified key <nokey> is not a partitioning key" in done.stderr
