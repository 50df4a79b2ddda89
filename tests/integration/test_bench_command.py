"""``metastore-server bench`` run in-process against one and two in-process servers (loopback),
with tiny sizes: the printed table, the CSV, the PNG and the clean-up of its database."""

from __future__ import annotations

import csv
import io
import math
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.net import LOOPBACK, free_port

from metastore_server import bench_plot, benchmark, cli_bench
from metastore_server.progress import ProgressBar
from metastore_server.thrift_api import hms

from .conftest import RunningServer

SIZES = (10, 50)
TINY = ["--partitions", "10,50", "--calls", "3", "--warmup", "1", "--no-progress"]


@pytest.fixture(scope="module")
def second(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A second server, for the side-by-side run."""
    server = RunningServer(tmp_path_factory.mktemp("metastore-b"))
    yield server
    server.stop()


def uri(server: RunningServer) -> str:
    """The server's thrift:// URI."""
    return f"thrift://{server.host}:{server.port}"


def label(server: RunningServer) -> str:
    """How the reports name the server."""
    return f"{server.host}:{server.port}"


def read_csv(path: Path) -> list[dict[str, str]]:
    """The CSV rows, checking the header."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == benchmark.CSV_COLUMNS
        return list(reader)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the PNG's IHDR, checking the signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack("!II", data[16:24])
    assert data[-8:-4] == b"IEND"
    return width, height


def database_exists(server: RunningServer, name: str) -> bool:
    """Whether ``name`` is a database of ``server``."""
    client = server.client()
    try:
        client.get_database(name)
        return True
    except hms.NoSuchObjectException:
        return False
    finally:
        client.close()


def expected_rows(operation: str, n: int) -> int:
    """Rows each operation returns on the table of ``n`` partitions (filters worked out here)."""
    layout = benchmark.Layout(n)
    f = benchmark.FilterValues.of(layout)
    parts = [layout.values(i) for i in range(n)]
    return {
        "get_table": 1,
        "get_partition_names": n,
        "filter_point": sum(p == f.point for p in parts),
        "filter_leading_range": sum(f.range_start <= p[0] < f.range_end for p in parts),
        "filter_non_leading": sum(p[1] == f.hour for p in parts),
        "filter_in_list": sum(p[0] in f.in_days for p in parts),
        "get_partitions_by_names": min(benchmark.BY_NAMES, n),
        "get_partition_values": layout.days,
        "add_partitions": benchmark.CHURN,
        "drop_partitions": benchmark.CHURN,
    }[operation]


def check_rows(rows: list[dict[str, str]], labels: list[str]) -> None:
    """One plausible row per metastore x size x operation."""
    keys = [(r["metastore"], int(r["partitions"]), r["operation"]) for r in rows]
    assert sorted(keys) == sorted(
        (m, n, op) for m in labels for n in SIZES for op in benchmark.OPERATION_NAMES
    )
    for r in rows:
        assert r["error"] == "", r
        assert int(r["calls"]) == 3
        mean, median = float(r["mean_ms"]), float(r["median_ms"])
        p95, p99 = float(r["p95_ms"]), float(r["p99_ms"])
        low, high = float(r["min_ms"]), float(r["max_ms"])
        assert all(math.isfinite(v) for v in (mean, median, p95, p99, low, high))
        assert 0 < low <= median <= p95 <= p99 <= high < 10_000, r
        assert low <= mean <= high
        assert int(r["rows"]) == expected_rows(r["operation"], int(r["partitions"])), r


def test_one_server(
    running: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = cli_bench.main(
        ["--uri", uri(running), *TINY, "--database", "bench_one", "--out", str(out)]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    check_rows(read_csv(out / cli_bench.CSV_NAME), [label(running)])
    assert png_size(out / cli_bench.PNG_NAME) == bench_plot.plot_size(
        len(benchmark.OPERATION_NAMES)
    )
    lines = printed.out.splitlines()  # the in-process servers log to stdout too
    header = next(line for line in lines if line.startswith("metastore ")).split()
    assert header[:3] == ["metastore", "partitions", "operation"]
    assert {"mean", "median", "p95", "p99", "rows"} <= set(header)
    table_ops = {line.split()[2] for line in lines if line.startswith(label(running))}
    assert table_ops == set(benchmark.OPERATION_NAMES)
    assert "dropped database bench_one" in printed.err
    assert not database_exists(running, "bench_one")


def test_two_servers_and_keep(
    running: RunningServer,
    second: RunningServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    argv = ["--uri", uri(running), "--uri", uri(second), *TINY, "--out", str(out), "--keep"]
    code = cli_bench.main([*argv, "--database", "bench_two"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    check_rows(read_csv(out / cli_bench.CSV_NAME), [label(running), label(second)])
    assert png_size(out / cli_bench.PNG_NAME) == bench_plot.plot_size(
        len(benchmark.OPERATION_NAMES)
    )
    assert label(running) in printed.out and label(second) in printed.out
    assert "kept database bench_two" in printed.out
    for server in (running, second):
        client = server.client()
        try:
            assert sorted(client.get_all_tables("bench_two")) == ["parts_10", "parts_50"]
            assert len(client.get_partition_names("bench_two", "parts_50", -1)) == 50
            client.drop_database("bench_two", True, True)
        finally:
            client.close()


def test_existing_database_is_refused_and_left_alone(
    running: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = running.client()
    try:
        client.create_database(hms.Database(name="bench_taken", description="", parameters={}))
        code = cli_bench.main(
            ["--uri", uri(running), *TINY, "--database", "bench_taken", "--out", str(tmp_path)]
        )
        assert code == 1
        assert "already exists" in capsys.readouterr().err
        assert database_exists(running, "bench_taken")
    finally:
        client.drop_database("bench_taken", True, True)
        client.close()


def test_unreachable_uri_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = f"thrift://{LOOPBACK}:{free_port(LOOPBACK)}"
    assert cli_bench.main(["--uri", dead, *TINY, "--out", str(tmp_path / "out")]) == 2
    assert f"cannot reach {dead}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_bad_uri_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_bench.main(["--uri", "http://127.0.0.1:1", *TINY]) == 2
    assert "thrift://host:port" in capsys.readouterr().err


def test_progress_bar() -> None:
    stream = io.StringIO()
    now = [0.0]
    bar = ProgressBar(stream, clock=lambda: now[0])
    bar.start("x parts_10", 10)
    now[0] = 1.0
    bar.advance(5)
    now[0] = 2.0
    bar.advance(5)
    bar.end()
    text = stream.getvalue()
    assert text.startswith("\rx parts_10 [") and "[##########..........] 5/10 partitions" in text
    assert "5/s ETA 00:01" in text
    assert "ETA" in text and "10/10" in text and text.endswith("\n")
    quiet = io.StringIO()
    off = ProgressBar(quiet, visible=False)
    off.start("x", 10)
    off.advance(5)
    off.end()
    assert quiet.getvalue() == ""
