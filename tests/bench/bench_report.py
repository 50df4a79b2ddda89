"""What the benchmarks print: progress on stderr, the machine they ran on, and the table of
one size's figures."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from partition_dataset import DB, Dataset
from shape_timing import Result

if TYPE_CHECKING:
    from bench_targets import Target
    from filter_shapes import Shape
    from partition_load import LoadResult


def log(message: str) -> None:
    """Progress on stderr (the figures go to stdout)."""
    print(message, file=sys.stderr, flush=True)


def _rate(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n:.0f}"


def _median(xs: list[float]) -> float:
    return Result(samples_ms=xs).pct(50)


def report(
    ds: Dataset,
    targets: list[Target],
    loads: dict[str, LoadResult],
    results: dict[tuple[str, str], Result],
    shape_list: list[Shape],
) -> str:
    """The table of one size: one row per shape and target."""
    heading = (
        f"== {ds.size:,} partitions: {DB}.{ds.table} (ds: {ds.days} days from {ds.day(0)}, "
        f"hr: 0..23, region: {len(ds.regions)} value(s)) =="
    )
    header = (
        f"{'shape':<17} {'target':<10} {'n':>3} {'p50 ms':>9} {'p90 ms':>9} {'p99 ms':>9} "
        f"{'returned':>9} {'parts/s':>8} {'scanned':>9} {'srv p50':>8} {'srv us/row':>10} "
        f"{'ref/ours':>8}"
    )

    def row(shape: Shape, i: int, r: Result, base: Result | None) -> str:
        p50 = r.pct(50)
        per_s = "-" if shape.returns_count else _rate((r.returned or 0) / (p50 / 1000))
        scanned = "-" if r.scanned is None else f"{r.scanned:,}"
        srv = f"{_median(r.server_ms):.2f}" if r.server_ms else "-"
        per_row = "-"
        if r.server_ms and r.returned and not shape.returns_count:
            per_row = f"{_median(r.server_ms) * 1000 / r.returned:.2f}"
        ratio = ""
        if i > 0 and base is not None and base.error is None and base.samples_ms:
            ratio = f"{p50 / base.pct(50):.2f}x"
        return (
            f"{len(r.samples_ms):>3} {p50:>9.2f} {r.pct(90):>9.2f} "
            f"{r.pct(99):>9.2f} {r.returned or 0:>9,} {per_s:>8} {scanned:>9} {srv:>8} "
            f"{per_row:>10} {ratio:>8}"
        )

    lines = size_table(heading, targets, loads, header, 17, shape_list, results, row)
    for t in targets:
        listing = results.get((t.name, "full_listing"))
        if listing is not None and listing.memory_mib is not None:
            lines.append(
                f"{t.name}: server memory grew by at most {listing.memory_mib:,.0f} MiB while it "
                f"answered full_listing ({listing.returned or 0:,} partitions)"
            )
    lines += ["", "shapes:"]
    for shape in shape_list:
        what = shape.filter if shape.filter is not None else "(no filter)"
        lines.append(f"  {shape.name:<17} {shape.method}: {what}")
    return "\n".join(lines)


def size_table(
    heading: str,
    targets: list[Target],
    loads: Mapping[str, LoadResult],
    header: str,
    width: int,
    shape_list: Sequence[Any],
    results: Mapping[tuple[str, str], Any],
    row: Callable[[Any, int, Any, Any], str],
) -> list[str]:
    """The lines of one size's table: its heading, each target's load, the header, then per
    shape and target its name (``width`` wide), the target's and ``row(shape, index of the
    target, its Result, our server's Result or None)``, or the error."""
    lines = ["", heading]
    for t in targets:
        if t.name in loads:
            lines.append(f"load {t.name}: {loads[t.name].describe()}")
    lines += ["", header, "-" * len(header)]
    for shape in shape_list:
        base = results.get(("ours", shape.name))
        for i, t in enumerate(targets):
            r = results[(t.name, shape.name)]
            label = shape.name if i == 0 else ""
            figures = f"error: {r.error}" if r.error is not None else row(shape, i, r, base)
            lines.append(f"{label:<{width}} {t.name:<10} {figures}")
    return lines


def machine_info() -> list[str]:
    """Cores, CPU, memory, Python."""
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    import thriftpy2

    return [
        f"machine: {os.cpu_count()} cores ({cpu}), {mem} RAM, {platform.platform()}",
        f"python: {platform.python_version()} ({sys.executable}), "
        f"thriftpy2 {thriftpy2.__version__}",
    ]
