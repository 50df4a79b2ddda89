"""get_partition_values benchmark (docs/benchmarks.md): latest / earliest / distinct partition
values.

Loads ``bench_db.values_<N>`` (partition keys ds string, hr int, region string; N partitions
through ``add_partitions``; one table per size, reused between runs) into each target
metastore, then times the requests of :func:`shapes` (``get_partition_values`` with an
``hms.PartitionValuesRequest``): p50/p90/p99 latency, rows returned and, for our server when this
script starts it, the rows it read (``rows_scanned`` and ``seeks`` of its JSON audit lines).
Each shape's p50 is also given as a multiple of its p50 at the smallest size, next to the
issue's targets. It prints figures and never asserts anything; it is not collected by pytest.

The data set is that of ``partition_filters.py`` (consecutive days x 24 hours x R regions, the
last day cut short) with R chosen for about 1,000 days instead of 200: 1,000 partitions make 42
days (one region), 100,000 make 1,042 days (4 regions), 1,000,000 make 993 days (42 regions).

Our server is started here on 127.0.0.1 with its store in ``--data-dir`` (or ``--ours
thrift://127.0.0.1:PORT``); ``--reference thrift://127.0.0.1:PORT`` adds another metastore,
e.g. the reference Hive Metastore 2.3 (it serves get_partition_values but ignores the order
fields, so its rows may differ: see the ``check`` column). The machinery (targets, server
start-up, loading, audit lines, percentiles) is ``partition_filters.py``'s::

    .venv/bin/python tests/bench/partition_values.py --sizes 1000,100000
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_options import add_common_arguments, check_common_arguments  # noqa: E402
from bench_report import log, machine_info, size_table  # noqa: E402 - sets up sys.path
from bench_targets import Target, start_targets  # noqa: E402
from partition_dataset import DB, HOURS, Dataset, hms  # noqa: E402
from partition_load import LoadResult, load_targets  # noqa: E402
from shape_timing import Result, error_text, read_audit, timed_calls  # noqa: E402

from metastore_server import __version__ as OUR_VERSION  # noqa: E402

DAYS_TARGET = 1000  # about this many distinct ds values at 100k partitions and more
KEYS = ("ds", "hr", "region")
KEY_TYPES = {"ds": "string", "hr": "int", "region": "string"}
FILTER_HR = 7
SMALL_TARGET = 1_000  # the target compares latest at 1M with latest at 1k
LARGE_TARGET = 1_000_000
TARGET_LATEST = "latest at 1M partitions costs at most 1.5x latest at 1k"
TARGET_DISTINCT = "distinct leading values read about as many rows as there are distinct values"


# --------------------------------------------------------------------------- the data set


@dataclass(frozen=True)
class ValuesDataset(Dataset):
    """``partition_dataset.Dataset`` with about DAYS_TARGET days, in tables ``values_<N>``."""

    @property
    def regions(self) -> list[str]:
        """Region values r0 .. r{R-1}, R chosen for about DAYS_TARGET days."""
        count = max(1, round(self.size / (DAYS_TARGET * HOURS)))
        return [f"r{i}" for i in range(count)]

    @property
    def table(self) -> str:
        """One table per size (not the filter benchmark's ``events_<N>``)."""
        return f"values_{self.size}"

    def typed_partitions(self) -> list[tuple[str, int, str]]:
        """Every partition as (ds, hr, region), hr as a number (for the expected answers)."""
        regions = self.regions
        out: list[tuple[str, int, str]] = []
        for d in range(self.days):
            day = self.day(d)
            for hr in range(HOURS):
                for region in regions:
                    if len(out) == self.size:
                        return out
                    out.append((day, hr, region))
        return out


# --------------------------------------------------------------------------- request shapes


@dataclass(frozen=True)
class ValuesShape:
    """One get_partition_values request, by its fields."""

    name: str
    keys: tuple[str, ...]
    ascending: bool = True
    max_parts: int = -1
    distinct: bool = True
    hr_equals: int | None = None  # the filter ``hr = N``, None: no filter

    @property
    def filter(self) -> str | None:
        """The request's filter text."""
        return None if self.hr_equals is None else f"hr = {self.hr_equals}"

    def request(self, ds: Dataset) -> Any:
        """The Thrift request on data set ``ds``."""
        return hms.PartitionValuesRequest(
            dbName=DB,
            tblName=ds.table,
            partitionKeys=[
                hms.FieldSchema(name=k, type=KEY_TYPES[k], comment=None) for k in self.keys
            ],
            applyDistinct=self.distinct,
            filter=self.filter,
            ascending=self.ascending,
            maxParts=self.max_parts,
        )

    def describe(self) -> str:
        """The request's fields, for the legend."""
        parts = [
            f"keys [{', '.join(self.keys)}]",
            "ascending" if self.ascending else "descending",
            "distinct" if self.distinct else "not distinct",
            "no limit" if self.max_parts < 0 else f"maxParts {self.max_parts}",
        ]
        if self.filter is not None:
            parts.append(f"filter {self.filter!r}")
        return ", ".join(parts)

    def expected(self, partitions: list[tuple[str, int, str]]) -> list[list[str]]:
        """The rows our server's semantics give (order by the keys, then the table's other
        keys; typed comparison; distinct keeps first occurrences; then maxParts)."""
        rows = partitions
        if self.hr_equals is not None:
            rows = [p for p in rows if p[1] == self.hr_equals]
        order = [KEYS.index(k) for k in dict.fromkeys(self.keys)]
        order += [i for i in range(len(KEYS)) if i not in order]
        rows = sorted(rows, key=lambda p: tuple(p[i] for i in order), reverse=not self.ascending)
        columns = [KEYS.index(k) for k in self.keys]
        out: list[list[str]] = []
        seen: set[tuple[str, ...]] = set()
        for p in rows:
            row = tuple(str(p[i]) for i in columns)
            if self.distinct:
                if row in seen:
                    continue
                seen.add(row)
            out.append(list(row))
            if 0 < self.max_parts <= len(out):
                break
        return out


def shapes() -> list[ValuesShape]:
    """The requests of docs/benchmarks.md (the same at every size)."""
    return [
        ValuesShape("latest_ds", ("ds",), ascending=False, max_parts=1),
        ValuesShape("earliest_ds", ("ds",), ascending=True, max_parts=1),
        ValuesShape("latest_ds_hr7", ("ds",), ascending=False, max_parts=1, hr_equals=FILTER_HR),
        ValuesShape("distinct_ds", ("ds",)),
        ValuesShape("distinct_ds_hr_100", ("ds", "hr"), max_parts=100),
        ValuesShape("distinct_region", ("region",)),
        ValuesShape("all_ds_1000", ("ds",), distinct=False, max_parts=1000),
    ]


# --------------------------------------------------------------------------- timing


@dataclass
class ValuesResult(Result):
    """``shape_timing.Result`` plus what get_partition_values adds."""

    seeks: int | None = None
    rows: list[list[str]] | None = None  # the answer of the last timed call
    strategy: str | None = None  # its audit line's strategy and plan, when it has them


def call_values(client: Any, request: Any) -> tuple[list[list[str]], float]:
    """(rows, milliseconds) of one get_partition_values call, reply decoded."""
    t0 = time.perf_counter()
    response = client.get_partition_values(request)
    ms = (time.perf_counter() - t0) * 1000
    return [list(r.row) for r in response.partitionValues or []], ms


def time_values(
    target: Target,
    shape: ValuesShape,
    ds: Dataset,
    *,
    warmup: int,
    repeat: int,
    max_seconds: float,
) -> ValuesResult:
    """As ``shape_timing.time_shape``: warm up, then time ``repeat`` calls
    (``timed_calls``)."""
    result = ValuesResult()
    request = shape.request(ds)
    client = None
    try:
        client = target.client()
        rows = timed_calls(
            target,
            result,
            lambda: call_values(client, request),
            warmup=warmup,
            repeat=repeat,
            max_seconds=max_seconds,
        )
        result.rows = rows
        result.returned = len(rows)
    except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
        result.error = error_text(exc)
        return result
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
    calls = read_audit(target, "get_partition_values", result)
    if calls:
        last = calls[-1]
        result.seeks = last.get("seeks")
        described = [
            f"{key} {last[key]}" if key == "plan" else str(last[key])
            for key in ("strategy", "plan")
            if last.get(key)
        ]
        result.strategy = "; ".join(described) or None
    return result


# --------------------------------------------------------------------------- report


def _show_row(rows: list[list[str]] | None) -> str:
    if not rows:
        return "(none)"
    text = ",".join(rows[0])
    return text if len(rows) == 1 else f"{text} .."


def _check(r: ValuesResult, expected: list[list[str]]) -> str:
    if r.rows is None:
        return "-"
    if r.rows == expected:
        return "ok"
    if sorted(map(tuple, r.rows)) == sorted(map(tuple, expected)):
        return "order"
    return "DIFFERS"


def report(
    ds: ValuesDataset,
    targets: list[Target],
    loads: dict[str, LoadResult],
    results: dict[tuple[str, str], ValuesResult],
    expected: dict[str, list[list[str]]],
    baseline: dict[tuple[str, str], tuple[int, float]],
    shape_list: list[ValuesShape],
) -> str:
    """The table of one size: one row per shape and target."""
    heading = (
        f"== {ds.size:,} partitions: {DB}.{ds.table} (ds: {ds.days} distinct days from "
        f"{ds.day(0)} to {ds.day(ds.days - 1)}, hr: 0..23, region: {len(ds.regions)} value(s)) =="
    )
    header = (
        f"{'shape':<19} {'target':<10} {'n':>3} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} "
        f"{'srv p50':>8} {'returned':>8} {'scanned':>9} {'seeks':>6} {'x small':>8} "
        f"{'ref/ours':>8} {'check':>7}  first row"
    )

    def row(shape: ValuesShape, i: int, r: ValuesResult, base: ValuesResult | None) -> str:
        name = targets[i].name
        p50 = r.pct(50)
        srv = f"{Result(samples_ms=r.server_ms).pct(50):.2f}" if r.server_ms else "-"
        scanned = "-" if r.scanned is None else f"{r.scanned:,}"
        seeks = "-" if r.seeks is None else f"{r.seeks:,}"
        small = baseline.get((name, shape.name))
        times_small = "" if small is None else f"{p50 / small[1]:.2f}x"
        ratio = ""
        if name != "ours" and base is not None and base.error is None and base.samples_ms:
            ratio = f"{p50 / base.pct(50):.2f}x"
        return (
            f"{len(r.samples_ms):>3} {p50:>8.2f} "
            f"{r.pct(90):>8.2f} {r.pct(99):>8.2f} {srv:>8} {r.returned or 0:>8,} "
            f"{scanned:>9} {seeks:>6} {times_small:>8} {ratio:>8} "
            f"{_check(r, expected[shape.name]):>7}  {_show_row(r.rows)}"
        )

    lines = size_table(heading, targets, loads, header, 19, shape_list, results, row)
    strategies = [
        (shape.name, results[("ours", shape.name)].strategy)
        for shape in shape_list
        if ("ours", shape.name) in results and results[("ours", shape.name)].strategy
    ]
    if strategies:
        lines += ["", "our server's strategy and filter plan (audit line):"]
        lines += [f"  {name:<19} {text}" for name, text in strategies]
    lines += targets_at_size(ds, results, expected)
    return "\n".join(lines)


def targets_at_size(
    ds: ValuesDataset,
    results: dict[tuple[str, str], ValuesResult],
    expected: dict[str, list[list[str]]],
) -> list[str]:
    """The distinct-values target at this size (rows our server read per value returned)."""
    r = results.get(("ours", "distinct_ds"))
    if r is None or r.error is not None or r.scanned is None:
        return []
    values = len(expected["distinct_ds"])
    read = r.scanned + (r.seeks or 0)
    return [
        "",
        f"target: {TARGET_DISTINCT}: distinct_ds read {r.scanned:,} rows"
        + (f" + {r.seeks:,} seeks" if r.seeks else "")
        + f" for {values:,} distinct values = {read / values:,.1f} rows per value "
        f"({ds.size / values:,.0f} partitions per value)",
    ]


def scaling(
    sizes: list[int],
    targets: list[Target],
    all_results: dict[int, dict[tuple[str, str], ValuesResult]],
    shape_list: list[ValuesShape],
) -> str:
    """p50 of each shape at each size, and its multiple of the smallest size's."""
    smallest = sizes[0]
    lines = ["", f"== p50 ms by size (x: multiple of the p50 at {smallest:,} partitions) =="]
    header = f"{'shape':<19} {'target':<10}" + "".join(f" {f'{s:,}':>18}" for s in sizes)
    lines += [header, "-" * len(header)]
    for shape in shape_list:
        for i, t in enumerate(targets):
            cells = []
            base = all_results[smallest].get((t.name, shape.name))
            base_ok = base is not None and base.error is None and base.samples_ms
            for s in sizes:
                r = all_results[s].get((t.name, shape.name))
                if r is None or r.error is not None or not r.samples_ms:
                    cells.append(f" {'error':>18}")
                    continue
                x = f"{r.pct(50) / base.pct(50):.2f}x" if base_ok else "?"
                cells.append(f" {f'{r.pct(50):.2f} ({x})':>18}")
            lines.append(f"{shape.name if i == 0 else '':<19} {t.name:<10}" + "".join(cells))
    lines += ["", f"target: {TARGET_LATEST}:"]
    for t in targets:
        small = all_results[smallest].get((t.name, "latest_ds"))
        large_size = sizes[-1]
        large = all_results[large_size].get((t.name, "latest_ds"))
        if small is None or large is None or small.error or large.error or len(sizes) < 2:
            lines.append(f"  {t.name}: not measured at two sizes")
            continue
        x = large.pct(50) / small.pct(50)
        if smallest == SMALL_TARGET and large_size == LARGE_TARGET:
            verdict = "met" if x <= 1.5 else "NOT met"
            note = f"{verdict} (target <= 1.50x)"
        else:
            note = (
                f"the target compares {LARGE_TARGET:,} with {SMALL_TARGET:,} partitions "
                f"(--sizes {SMALL_TARGET},{LARGE_TARGET})"
            )
        lines.append(
            f"  {t.name}: latest_ds p50 {large.pct(50):.2f} ms at {large_size:,} = {x:.2f}x "
            f"{small.pct(50):.2f} ms at {smallest:,}; {note}"
        )
    lines.append(f"target: {TARGET_DISTINCT}: see each size's table above.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="get_partition_values benchmark: prints latency figures per request shape.",
    )
    add_common_arguments(
        parser,
        sizes="1000,100000",
        sizes_help="(default %(default)s; 1000000 allowed, ~12 min to load into our server)",
        data_dir=Path("var/bench-values"),
    )
    args = parser.parse_args(argv)
    check_common_arguments(parser, args, {shape.name for shape in shapes()})
    # What bench_targets.start_targets reads: no reference HMS started here.
    args.reference_hms = None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark."""
    args = parse_args(argv)
    shape_list = [s for s in shapes() if not args.shape_names or s.name in args.shape_names]
    with contextlib.ExitStack() as stack:
        targets = start_targets(args, stack)
        print("\n".join(machine_info()))
        for t in targets:
            print(f"{t.name}: {t.description}; getVersion() = {t.version()}")
        print(
            f"client: Python thriftpy2, replies decoded; binary protocol, buffered transport; "
            f"warm-up {args.warmup}, then {args.repeat} timed calls per shape "
            f"(capped at {args.max_seconds:.0f} s); our server {OUR_VERSION}"
        )
        print(
            "columns: n = timed calls; srv p50 = our server's own time (audit line); returned = "
            "rows in the reply; scanned / seeks = rows our server read / seeks it made (audit "
            "line, '-' when absent); x small = p50 / p50 of the same shape and target at the "
            "smallest size; ref/ours = p50 / p50 of ours; check = the rows against the expected "
            "answer (ok; order: same rows in another order; DIFFERS); first row = of the reply"
        )
        print(f"targets: {TARGET_LATEST}; {TARGET_DISTINCT}")
        print("shapes (get_partition_values on bench_db.values_<N>):")
        for shape in shape_list:
            print(f"  {shape.name:<19} {shape.describe()}")
        sys.stdout.flush()
        all_results: dict[int, dict[tuple[str, str], ValuesResult]] = {}
        baseline: dict[tuple[str, str], tuple[int, float]] = {}
        for size in args.size_list:
            ds = ValuesDataset(size)
            loads = load_targets(targets, ds, args)
            partitions = ds.typed_partitions()
            expected = {shape.name: shape.expected(partitions) for shape in shape_list}
            del partitions
            results: dict[tuple[str, str], ValuesResult] = {}
            for shape in shape_list:
                for t in targets:
                    log(f"[{size:,}] {shape.name} on {t.name} ...")
                    r = time_values(
                        t,
                        shape,
                        ds,
                        warmup=args.warmup,
                        repeat=args.repeat,
                        max_seconds=args.max_seconds,
                    )
                    results[(t.name, shape.name)] = r
                    if size == args.size_list[0] and r.error is None and r.samples_ms:
                        baseline[(t.name, shape.name)] = (size, r.pct(50))
            all_results[size] = results
            print(report(ds, targets, loads, results, expected, baseline, shape_list), flush=True)
        if len(args.size_list) > 1:
            print(scaling(args.size_list, targets, all_results, shape_list), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
