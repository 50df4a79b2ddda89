"""Load-rate benchmark (docs/benchmarks.md, "Load rate"): partitions per second through Thrift
``add_partitions`` on the embedded store, in the four cases of directory handling, beside the
file system's own directory creation rate for the same tree.

Cases (each a fresh table of ``--size`` partitions, keys ds/hr/region as in
``partition_filters.py``, sent as ``add_partitions`` calls of ``--batch`` encoded beforehand, so
the client's encoding is not timed, over ``--connections`` connections at once; the table is
dropped after):

* ``external``: an external table outside the server's data roots (``--data-roots`` is the
  warehouse): the partition directories are not the server's to make;
* ``data-off``: a managed table on a server started with ``--data-operations off``;
* ``make-dirs``: a managed table whose partition directories the server must make (a server
  with data operations on and no data roots, as by default);
* ``dirs-exist``: the same, its partition directories made beforehand (untimed).

``mkdir`` is ``os.makedirs`` of the same directories (a fresh tree, this process, one thread,
measured just before each ``make-dirs`` load): what the file system itself takes, in partition
directories per second (their parents made on the way, as the server makes them);
``make-dirs`` is compared with it.

``--hbase HOST:PORT`` runs the servers on a real HBase Thrift1 gateway instead (each its own
table prefix, its tables dropped at the end), ``--hbase-double`` on the HBase test double in a
process of its own. Then each round also puts the partition rows of its first load again, raw
(``hbase-puts``: HBase's own ``mutateRows`` of the same rows, ``--batch`` a call over
``--connections`` connections, into a scratch table; ``hbase_limit``), the limit each case is
shown beside (``limit / case``).

It prints figures and never asserts anything; it is not collected by pytest::

    .venv/bin/python tests/bench/load_rate.py --size 20000 --batch 1000 --repeat 3
    .venv/bin/python tests/bench/load_rate.py --hbase hbase-host:9090 --cases data-off
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import log, machine_info  # noqa: E402
from bench_targets import Target  # noqa: E402
from hbase_limit import raw_put_rate, read_rows  # noqa: E402
from hbase_target import (  # noqa: E402
    add_hbase_arguments,
    bench_url,
    check_hbase_arguments,
    hbase_address,
)
from partition_dataset import DB, LoadDataset, encoded_adds, make_table  # noqa: E402
from partition_load import count_partitions, send_adds  # noqa: E402

from metastore_server import __version__ as OUR_VERSION  # noqa: E402
from metastore_server.thrift_api import hms  # noqa: E402

CASES = ("external", "data-off", "make-dirs", "dirs-exist")


@dataclass(frozen=True)
class Case:
    """One way of loading: the server it runs on, the table's kind and location, and whether
    the directories are made beforehand."""

    name: str
    #: "plain" (data operations on, no data roots), "roots" (the warehouse is the only data
    #: root) or "off" (--data-operations off).
    server: str
    external: bool = False
    precreate: bool = False


CASE_TABLE = {
    "external": Case("external", "roots", external=True),
    "data-off": Case("data-off", "off"),
    "make-dirs": Case("make-dirs", "plain"),
    "dirs-exist": Case("dirs-exist", "plain", precreate=True),
}


def partition_dirs(ds: LoadDataset, table_dir: Path) -> list[str]:
    """Every partition directory of the data set under ``table_dir``."""
    return [f"{table_dir}/ds={d}/hr={h}/region={r}" for d, h, r in ds.values(0, ds.size)]


def mkdir_rate(ds: LoadDataset, scratch: Path) -> float:
    """Directories per second ``os.makedirs`` creates for the data set's tree (fresh)."""
    top = scratch / "mkdir-tree"
    shutil.rmtree(top, ignore_errors=True)
    dirs = partition_dirs(ds, top)
    started = time.perf_counter()
    for path in dirs:
        os.makedirs(path, exist_ok=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(top, ignore_errors=True)
    settle()
    return len(dirs) / seconds


def settle() -> None:
    """Flush what the file system holds to be written (``sync``) before a load's clock starts:
    the directories this benchmark has just made or removed would otherwise be written out by
    the load's first commit (a journaling file system's flush takes every change before it),
    which a load of directories made earlier by a writer does not pay."""
    os.sync()


def fresh_table(target: Target, ds: LoadDataset, case: Case, external_root: Path) -> str:
    """Drop and create the case's table; its location."""
    table = make_table(ds)
    table.tableName = ds.table
    if case.external:
        location = external_root / ds.table
        shutil.rmtree(location, ignore_errors=True)
        table.tableType = "EXTERNAL_TABLE"
        table.parameters = {**table.parameters, "EXTERNAL": "TRUE"}
        table.sd.location = f"file:{location}"
    with target.connected() as client:
        with contextlib.suppress(hms.NoSuchObjectException):
            client.drop_table(DB, ds.table, True)
        with contextlib.suppress(hms.AlreadyExistsException):
            client.create_database(hms.Database(name=DB, description="load rate", parameters={}))
        client.create_table(table)
        return str(client.get_table(DB, ds.table).sd.location)


def run_case(
    target: Target,
    case: Case,
    args: argparse.Namespace,
    external_root: Path,
    loaded: Callable[[], None] | None = None,
) -> float:
    """One load of the case; partitions per second. ``loaded`` is called once the partitions
    are in, before the table is dropped (untimed)."""
    ds = LoadDataset(args.size)
    location = fresh_table(target, ds, case, external_root)
    if case.precreate:
        for path in partition_dirs(ds, Path(location.removeprefix("file:"))):
            os.makedirs(path, exist_ok=True)
    messages = encoded_adds(ds, location, args.batch, framed=False)
    settle()
    seconds = send_adds(target, messages, args.connections)
    present = count_partitions(target, ds)
    if loaded is not None:
        loaded()
    with target.connected() as client:
        client.drop_table(DB, ds.table, True)
    if present != ds.size:
        raise RuntimeError(f"{case.name}: expected {ds.size} partitions, found {present}")
    return ds.size / seconds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=20_000, help="partitions per load")
    parser.add_argument("--batch", type=int, default=1000, help="partitions per add_partitions")
    parser.add_argument("--connections", type=int, default=2, help="connections sending")
    parser.add_argument("--repeat", type=int, default=3, help="loads per case (median shown)")
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path("var/bench-load"),
        help="where the servers keep their stores and warehouses (default %(default)s)",
    )
    parser.add_argument(
        "--ours-args",
        default="",
        help="extra command-line options for the servers started here (space-separated)",
    )
    add_hbase_arguments(parser)
    args = parser.parse_args(argv)
    check_hbase_arguments(parser, args)
    args.case_list = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(args.case_list) - set(CASES))
    if unknown:
        parser.error(f"unknown --cases {', '.join(unknown)}; known: {', '.join(CASES)}")
    if min(args.size, args.batch, args.connections, args.repeat) < 1:
        parser.error("--size, --batch, --connections and --repeat must be >= 1")
    return args


def start_server(
    kind: str,
    data_dir: Path,
    extra: list[str],
    stack: contextlib.ExitStack,
    hbase: tuple[str, int] | None = None,
) -> tuple[Target, str]:
    """A server of ours (and its storage URL) on a fresh store: ``plain``, ``roots`` (data
    roots = its warehouse) or ``off`` (``--data-operations off``); the store a SQLite file, or
    a fresh table prefix on the HBase at ``hbase`` (host, port)."""
    from support.our_server import OurServer

    workdir = data_dir / kind
    shutil.rmtree(workdir, ignore_errors=True)
    server = OurServer(workdir)
    store = f"SQLite store {workdir / 'metastore.db'}"
    if hbase is not None:  # (its tables dropped once the server has stopped)
        server.storage = bench_url(*hbase, stack, kind)
        store = f"HBase store {server.storage}"
    options = {
        "plain": [],
        "roots": ["--data-roots", f"file:{server.warehouse}"],
        "off": ["--data-operations", "off"],
    }[kind]
    server.extra_args = [*options, "--log-level", "warning", *extra]
    server.warehouse.mkdir(parents=True, exist_ok=True)
    endpoint = stack.enter_context(server)
    target = Target(
        f"ours-{kind}",
        endpoint.host,
        endpoint.port,
        f"hbase-metastore {OUR_VERSION}, {store} {' '.join(options) or '(default options)'}",
        timeout_ms=600_000,
    )
    return target, server.storage


def hbase_limit(
    hbase: tuple[str, int], storage: str, args: argparse.Namespace, rates: list[float]
) -> Callable[[], None]:
    """What measures the limit once a load of the server on ``storage`` is in: its partition
    rows, put again raw."""
    from metastore_server.storage import layout
    from metastore_server.storage.hbase import HBaseSettings

    table = HBaseSettings.from_url(storage).table_name(layout.PARTITIONS)

    def measure() -> None:
        rows = read_rows(*hbase, table)
        rate = raw_put_rate(*hbase, table, rows, batch=args.batch, connections=args.connections)
        rates.append(rate)
        log(f"  hbase-puts {rate:,.0f} rows/s ({len(rows):,} rows)")

    return measure


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    args = parse_args(argv)
    data_dir = args.data_dir.resolve()
    external_root = data_dir / "external"
    external_root.mkdir(parents=True, exist_ok=True)
    extra = args.ours_args.split()
    with contextlib.ExitStack() as stack:
        hbase = hbase_address(args.hbase, args.hbase_double, stack, log)
        started = {
            kind: start_server(kind, data_dir, extra, stack, hbase)
            for kind in sorted({CASE_TABLE[c].server for c in args.case_list})
        }
        servers = {kind: target for kind, (target, _) in started.items()}
        print("\n".join(machine_info()))
        for target in servers.values():
            print(f"{target.name}: {target.description}")
        print(
            f"load: {args.size:,} partitions per run in add_partitions calls of {args.batch}, "
            f"encoded beforehand, over {args.connections} connections; median of {args.repeat}"
        )
        sys.stdout.flush()
        rates: dict[str, list[float]] = {c: [] for c in [*args.case_list, "mkdir", "hbase-puts"]}
        ds = LoadDataset(args.size)
        for run in range(args.repeat):  # interleaved: each round runs every case once
            if "make-dirs" not in args.case_list:
                rates["mkdir"].append(mkdir_rate(ds, data_dir))
            for index, name in enumerate(args.case_list):
                case = CASE_TABLE[name]
                if name == "make-dirs":  # the file system's rate just before, for the ratio
                    rates["mkdir"].append(mkdir_rate(ds, data_dir))
                target, storage = started[case.server]
                limit = None
                if hbase is not None and index == 0:  # the limit, once a round
                    limit = hbase_limit(hbase, storage, args, rates["hbase-puts"])
                rate = run_case(target, case, args, external_root, limit)
                rates[name].append(rate)
                log(f"  run {run + 1}: {name} {rate:,.0f} partitions/s")
        print_figures(args, rates)
    return 0


def print_figures(args: argparse.Namespace, rates: dict[str, list[float]]) -> None:
    """Each case's median beside the file system's rate (make-dirs) and, on HBase, beside
    HBase's own (every case)."""
    mkdir = statistics.median(rates["mkdir"])
    limit = statistics.median(rates["hbase-puts"]) if rates["hbase-puts"] else None
    for name in [*args.case_list, "mkdir", "hbase-puts"]:
        if not rates[name]:
            continue
        median = statistics.median(rates[name])
        runs = ", ".join(f"{r:,.0f}" for r in rates[name])
        line = f"{name:<11} {median:>9,.0f} partitions/s  (runs: {runs})"
        if name == "make-dirs":
            line += f"  mkdir / make-dirs = {mkdir / median:.2f}x"
        if limit is not None and name in args.case_list:
            line += f"  limit / {name} = {limit / median:.2f}x"
        if name == "mkdir":
            line = (
                f"{'mkdir':<11} {median:>9,.0f} partition directories/s "
                f"(os.makedirs of the same tree, runs: {runs})"
            )
        if name == "hbase-puts":
            line = (
                f"{name:<11} {median:>9,.0f} rows/s (the limit: HBase's own mutateRows of the "
                f"partition rows a load wrote, {args.batch} a call over {args.connections} "
                f"connections, runs: {runs})"
            )
        print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
