"""``metastore-server bench`` run in-process against one and two in-process servers (loopback),
with tiny sizes: the printed table, the CSV, the PNG and the clean-up of its database."""

from __future__ import annotations

import csv
import io
import math
import os
import signal
import struct
import zlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support.net import LOOPBACK, free_port

from metastore_server import __version__
from metastore_server.cli import bench as cli_bench
from metastore_server.thrift_api import hms
from metastore_server.tools import bench_plot, benchmark
from metastore_server.tools.progress import ProgressBar

from .conftest import RunningServer

pytestmark = pytest.mark.any_store

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


#: Bytes per pixel of 8-bit PNGs by colour type (grey, RGB, grey+alpha, RGBA).
PNG_PIXEL_BYTES = {0: 1, 2: 3, 4: 2, 6: 4}


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of each chunk after the signature, checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack("!I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack("!I", data[at + 8 + length : at + 12 + length])
        assert len(body) == length and crc == zlib.crc32(kind + body), kind
        chunks.append((kind, body))
        at += 12 + length
    return chunks


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a well-formed 8-bit PNG: chunks and CRCs checked, and the image data
    inflating to one filter byte plus one row of pixels per line."""
    chunks = png_chunks(path.read_bytes())
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b"")
    width, height, depth, colour = struct.unpack("!IIBB", chunks[0][1][:10])
    assert depth == 8 and colour in PNG_PIXEL_BYTES
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(pixels) == height * (1 + width * PNG_PIXEL_BYTES[colour])
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
    in_list = next(line for line in lines if line.strip().startswith("filter_in_list"))
    assert in_list.endswith('(ds) in ("2024-01-01")')  # 50 partitions: one day, named once
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
    argv += ["--batch", "7"]  # loading takes several add_partitions_req per table
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
            assert len(client.get_partition_names("bench_two", "parts_10", -1)) == 10
            assert len(client.get_partition_names("bench_two", "parts_50", -1)) == 50
            client.drop_database("bench_two", True, True)
        finally:
            client.close()


def test_the_plot_legend_says_what_each_line_is(
    running: RunningServer,
    second: RunningServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    figures: list[Any] = []
    original = bench_plot.draw

    def draw(*args: Any, **kwargs: Any) -> Any:
        figures.append(original(*args, **kwargs))
        return figures[-1]

    monkeypatch.setattr(bench_plot, "draw", draw)
    argv = ["--uri", uri(running), "--uri", uri(second), *TINY, "--partitions", "10"]
    code = cli_bench.main([*argv, "--out", str(tmp_path / "out"), "--database", "bench_legend"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    ours = [f"ours: hbase-metastore {__version__} ({label(s)})" for s in (running, second)]
    (figure,) = figures
    (legend,) = figure.legends
    assert [text.get_text() for text in legend.get_texts()] == ours
    assert f"{label(running)}: ours: hbase-metastore {__version__}" in printed.err
    # The CSV still names each metastore by host:port.
    rows = read_csv(tmp_path / "out" / cli_bench.CSV_NAME)
    assert {r["metastore"] for r in rows} == {label(running), label(second)}


class _Answers:
    """A client answering fb303's getName and getVersion as given (None: refused)."""

    def __init__(self, name: str | None, version: str = "") -> None:
        self.name, self.version = name, version

    def getName(self) -> str:  # noqa: N802 (IDL name)
        if self.name is None:
            raise hms.MetaException(message="no fb303 here")
        return self.name

    def getVersion(self) -> str:  # noqa: N802
        return self.version


def test_a_metastore_is_named_by_what_it_says_it_is() -> None:
    identify = cli_bench.identify
    assert identify(_Answers("hbase-metastore", "1.2.0")) == "ours: hbase-metastore 1.2.0"
    assert identify(_Answers("hive metastore", "4.0.1")) == "reference HMS, version 4.0.1"
    assert identify(_Answers("hive metastore")) == "reference HMS"
    assert identify(_Answers(None)) == ""
    assert bench_plot.series_label("h:1", "reference HMS") == "reference HMS (h:1)"
    assert bench_plot.series_label("h:1", "") == "h:1 (did not say what it is)"


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
    assert "x parts_10" in text and "5/10 partitions 5/s" in text
    assert "10/10 partitions" in text
    assert text.endswith("x parts_10: 10/10 partitions 5/s\n")  # the bar gives way to a line
    quiet = io.StringIO()
    off = ProgressBar(quiet, visible=False)
    off.start("x", 10)
    off.advance(5)
    off.end()
    assert quiet.getvalue() == "" and off.done == 5


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--timeout", "-5", "argument --timeout: must be a number greater than 0, not '-5'"),
        ("--timeout", "0", "argument --timeout: must be a number greater than 0, not '0'"),
        ("--timeout", "nan", "argument --timeout: must be a number greater than 0, not 'nan'"),
        ("--timeout", "soon", "argument --timeout: expected a number, not 'soon'"),
        ("--calls", "x", "argument --calls: expected a whole number, not 'x'"),
        ("--calls", "0", "argument --calls: must be at least 1, not 0"),
        ("--warmup", "-1", "argument --warmup: must be at least 0, not -1"),
        ("--batch", "1.5", "argument --batch: expected a whole number, not '1.5'"),
    ],
)
def test_bad_numbers_are_refused_clearly(
    option: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli_bench.main(["--uri", "thrift://127.0.0.1:1", option, value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "cannot reach" not in err


def stop_before_loading(monkeypatch: pytest.MonkeyPatch, size: int, stop: Any) -> None:
    """Run ``stop(client, db, layout)`` just before the table of ``size`` partitions is loaded."""
    original = benchmark.load_table

    def load_table(client: Any, db: str, layout: benchmark.Layout, *args: Any) -> Any:
        if layout.size == size:
            stop(client, db, layout)
        return original(client, db, layout, *args)

    monkeypatch.setattr(benchmark, "load_table", load_table)


def measured_so_far(out: Path, server: RunningServer) -> None:
    """The CSV and PNG hold the table of 10 partitions, fully timed, and nothing else."""
    rows = read_csv(out / cli_bench.CSV_NAME)
    assert sorted((r["partitions"], r["operation"]) for r in rows) == sorted(
        ("10", op) for op in benchmark.OPERATION_NAMES
    )
    assert all(r["error"] == "" and int(r["calls"]) == 3 for r in rows)
    assert all(r["metastore"] == label(server) for r in rows)
    assert png_size(out / cli_bench.PNG_NAME) == bench_plot.plot_size(
        len(benchmark.OPERATION_NAMES)
    )


def test_failed_run_keeps_what_it_measured(
    running: RunningServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def table_taken(client: Any, db: str, layout: benchmark.Layout) -> None:
        client.create_table(benchmark.make_table(db, layout))  # so creating it again fails

    stop_before_loading(monkeypatch, 50, table_taken)
    out = tmp_path / "out"
    code = cli_bench.main(
        ["--uri", uri(running), *TINY, "--database", "bench_fail", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 1, err
    assert "benchmarking bench_fail.parts_50" in err and "AlreadyExistsException" in err
    assert "wrote the 10 result(s) measured so far" in err
    measured_so_far(out, running)
    assert not database_exists(running, "bench_fail")


def test_sigterm_stops_like_ctrl_c(
    running: RunningServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unhandled: list[int] = []

    def outside(signum: int, frame: object) -> None:  # SIGTERM not taken over by the bench
        unhandled.append(signum)

    stop_before_loading(monkeypatch, 50, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
    out = tmp_path / "out"
    before = signal.signal(signal.SIGTERM, outside)
    try:
        code = cli_bench.main(
            ["--uri", uri(running), *TINY, "--database", "bench_term", "--out", str(out)]
        )
        assert signal.getsignal(signal.SIGTERM) is outside  # the bench put it back
    finally:
        signal.signal(signal.SIGTERM, before)
    err = capsys.readouterr().err
    assert unhandled == []
    assert code == 130, err
    assert "bench: interrupted" in err and "dropped database bench_term" in err
    measured_so_far(out, running)
    assert not database_exists(running, "bench_term")


def test_without_matplotlib_the_figures_are_written_and_the_plot_is_named(
    running: RunningServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench_plot, "available", lambda: False)
    out = tmp_path / "out"
    code = cli_bench.main(
        ["--uri", uri(running), *TINY, "--database", "bench_noplot", "--out", str(out)]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    check_rows(read_csv(out / cli_bench.CSV_NAME), [label(running)])
    assert not (out / cli_bench.PNG_NAME).exists()
    assert f"no plot: {bench_plot.INSTALL_HINT}" in printed.out


def test_results_go_to_a_directory_of_their_own_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    when = datetime(2026, 11, 26, 5, 30, 0)
    assert cli_bench.default_out(when) == tmp_path / "data/metastore-server/bench/20261126-053000"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home_share = tmp_path / "home/.local/share"
    assert cli_bench.default_out(when).parent == home_share / "metastore-server/bench"
