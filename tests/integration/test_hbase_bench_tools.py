"""What the benchmarks on HBase stand on: the HBase double as a process of its own (``python -m
support.hbase_double``, what ``--hbase-double`` starts and what ``--hbase HOST:PORT`` can be
tried against), HBase's own write rate for the same rows (``tests/bench/hbase_limit.py``), and
the ``--hbase`` flags of the write benchmarks."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import happybase
import pytest
from support.hbase_double import HBaseDouble

pytestmark = pytest.mark.own_double

TESTS = Path(__file__).resolve().parents[1]


def bench_module(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A module of tests/bench (on the path for the test only)."""
    monkeypatch.syspath_prepend(str(TESTS / "bench"))
    return importlib.import_module(name)


def test_the_double_runs_as_a_process_of_its_own() -> None:
    command = [sys.executable, "-m", "support.hbase_double", "--port", "0", "--table-ddl-s",
               "0.01", "--reverse-filter-bug", "--until-stdin-closes"]  # fmt: skip
    process = subprocess.Popen(command, cwd=TESTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        port = 0
        for line in process.stdout:  # type: ignore[union-attr]
            if line.startswith(b"PORT "):
                port = int(line.split()[1])
                break
        assert port
        connection = happybase.Connection("127.0.0.1", port)
        connection.create_table("standalone", {"c": {}})
        connection.table("standalone").put(b"r", {b"c:q": b"v"})
        assert connection.tables() == [b"standalone"]
        assert dict(connection.table("standalone").scan()) == {b"r": {b"c:q": b"v"}}
        connection.close()
    finally:
        process.stdin.close()  # type: ignore[union-attr]  # its end
        assert process.wait(timeout=30) == 0


def test_hbase_s_own_rate_puts_the_same_rows_into_a_scratch_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hbase_limit = bench_module("hbase_limit", monkeypatch)
    with HBaseDouble() as double:
        connection = happybase.Connection(*double.address)
        connection.create_table("src", {"c": {}, "k": {}})
        rows = {b"r%03d" % i: {b"c:v": b"%d" % i, b"k:n": b"x"} for i in range(50)}
        with connection.table("src").batch() as batch:
            for key, cells in rows.items():
                batch.put(key, cells)
        read = hbase_limit.read_rows(*double.address, b"src", limit=30)
        assert read == sorted(rows.items())[:30]
        before = len(double.tables_created)
        rate = hbase_limit.raw_put_rate(*double.address, b"src", read, batch=7, connections=3)
        assert rate > 0
        assert len(double.tables_created) == before + 1  # a scratch table, dropped again
        assert connection.tables() == [b"src"]
        assert double.calls["mutateRows"] >= 1 + 30 // 7
        connection.close()


def test_load_rate_takes_an_hbase_gateway(monkeypatch: pytest.MonkeyPatch) -> None:
    load_rate = bench_module("load_rate", monkeypatch)
    assert load_rate.parse_args(["--hbase", "hbase-host:9090"]).hbase == "hbase-host:9090"
    assert load_rate.parse_args(["--hbase-double"]).hbase_double
    for wrong in (["--hbase", "hbase-host"], ["--hbase", "h:1", "--hbase-double"]):
        with pytest.raises(SystemExit):
            load_rate.parse_args(wrong)
