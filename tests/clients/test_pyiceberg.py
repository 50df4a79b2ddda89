"""Apache Iceberg on our metastore through pyiceberg's HiveCatalog (from PyPI): every commit
takes an HMS table lock (``lock``, ``check_lock`` while WAITING, ``alter_table``, ``unlock``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from integration.conftest import RunningServer

pa = pytest.importorskip("pyarrow", reason="pyiceberg's writes need pyarrow")
hive = pytest.importorskip("pyiceberg.catalog.hive", reason="pyiceberg[hive] is not installed")
from pyiceberg.types import DoubleType  # noqa: E402

from metastore_server.thrift_api import hms  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def catalog(server: RunningServer, warehouse: Path) -> Any:
    return hive.HiveCatalog(
        "ours",
        uri=f"thrift://{server.host}:{server.port}",
        warehouse=f"file://{warehouse}",
        # Poll a WAITING lock often (pyiceberg's defaults wait up to a minute between looks).
        **{"lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.2",
           "lock-check-retries": "100"},  # fmt: skip
    )


def rows(*pairs: tuple[int, str]) -> Any:
    return pa.Table.from_pylist([{"id": i, "name": n} for i, n in pairs], schema=SCHEMA)


def test_a_whole_iceberg_table_cycle(server: RunningServer, tmp_path: Path) -> None:
    cat = catalog(server, tmp_path)
    cat.create_namespace("ice")
    assert ("ice",) in cat.list_namespaces()
    table = cat.create_table("ice.events", schema=SCHEMA)
    table.append(rows((1, "a"), (2, "b")))
    table.append(rows((3, "c")))
    table = cat.load_table("ice.events")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert len(table.snapshots()) == 2

    with table.update_schema() as update:
        update.add_column("score", DoubleType())
    with table.transaction() as transaction:
        transaction.set_properties(owner="data-team")
    table = cat.load_table("ice.events")
    assert "score" in [f.name for f in table.schema().fields]
    assert table.properties["owner"] == "data-team"

    cat.rename_table("ice.events", "ice.events_v2")
    assert cat.load_table("ice.events_v2").scan().to_arrow().num_rows == 3
    cat.drop_table("ice.events_v2")
    assert cat.list_tables("ice") == []
    conn = server.client()
    try:  # no lock left behind by the commits
        assert conn.show_locks(hms.ShowLocksRequest(dbname="ice")).locks == []
    finally:
        conn.close()


WRITER = """
import sys, time
import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import CommitFailedException

uri, warehouse, number, appends = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cat = HiveCatalog("ours", uri=uri, warehouse=warehouse, **{
    "lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.2",
    "lock-check-retries": "100"})
schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
for step in range(appends):
    for attempt in range(100):
        try:
            rows = pa.Table.from_pylist([{"id": number * 1000 + step, "name": f"w{number}"}],
                                        schema=schema)
            cat.load_table("busy.t").append(rows)
            break
        except CommitFailedException:
            time.sleep(0.02)
    else:
        sys.exit(f"writer {number} step {step} never committed")
"""


def test_four_processes_appending_at_once_lose_no_snapshot(
    server: RunningServer, tmp_path: Path
) -> None:
    """Four processes append 25 times each to one table at once. Each commit is made under
    the table's lock; a writer whose table changed meanwhile (Iceberg's own check) reloads it
    and tries again. All 100 snapshots and rows are there."""
    setup = catalog(server, tmp_path)
    setup.create_namespace("busy")
    setup.create_table("busy.t", schema=SCHEMA)
    writers, appends = 4, 25
    uri = f"thrift://{server.host}:{server.port}"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), uri, f"file://{tmp_path}", str(n), str(appends)],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        for n in range(writers)
    ]
    outputs = [p.communicate(timeout=600)[0].decode(errors="replace") for p in processes]
    assert [p.returncode for p in processes] == [0] * writers, outputs
    table = setup.load_table("busy.t")
    assert len(table.snapshots()) == writers * appends
    ids = sorted(table.scan().to_arrow().column("id").to_pylist())
    assert ids == sorted(n * 1000 + s for n in range(writers) for s in range(appends))
    conn = server.client()
    try:
        assert conn.show_locks(hms.ShowLocksRequest(dbname="busy")).locks == []
    finally:
        conn.close()
