"""The partition-filter benchmark (tests/bench/partition_filters.py) end to end against our
server only, with a tiny table and its byte-copy limit: each shape answers on both, with the
same partitions. No timing is asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
REPO = BENCH.parents[1]
SIZE = 200


def _rows(stdout: str) -> dict[tuple[str, str], list[str]]:
    """The report's rows by (shape, target): their figures split on white space."""
    rows: dict[tuple[str, str], list[str]] = {}
    shape = ""
    table = stdout.split("\nshape ", 1)[1].split("\nshapes:", 1)[0]
    for line in table.splitlines()[2:]:
        if not line.strip() or line.startswith(("ours:", "ref")):
            continue
        if not line.startswith(" "):
            shape, line = line.split(None, 1)
        target, *figures = line.split()
        rows[(shape, target)] = figures
    return rows


def test_each_shape_is_timed_on_its_byte_copy_limit(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH / "partition_filters.py"), "--sizes", str(SIZE),
         "--repeat", "1", "--warmup", "0", "--load-size", "0", "--byte-copy",
         "--shapes", "point,region_in,full_listing,partition_names",
         "--data-dir", str(tmp_path / "data")],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    rows = _rows(run.stdout)
    shapes = {"point", "region_in", "full_listing", "partition_names"}
    assert {shape for shape, _ in rows} == shapes
    for shape in shapes:
        ours, limit = rows[(shape, "ours")], rows[(shape, "limit")]
        assert "error:" not in ours and "error:" not in limit, (ours, limit)
        assert ours[4] == limit[4]  # the partitions (names) returned: the same reply
    assert rows[("full_listing", "ours")][4] == f"{SIZE}"


def test_byte_copy_is_refused_with_the_drain_client(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH / "partition_filters.py"), "--byte-copy", "--client",
         "drain", "--data-dir", str(tmp_path / "data")],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert "--byte-copy needs" in run.stderr
