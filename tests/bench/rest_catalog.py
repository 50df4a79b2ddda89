"""Iceberg REST catalog benchmark (docs/benchmarks.md, "The Iceberg REST catalog"): the latency of
loading and committing an Iceberg table through our REST catalog, beside the same through
Iceberg's ``HiveCatalog`` on our Thrift port (and on the reference HMS with
``--reference-hms derby``), with pyiceberg as the client of both.

It starts our server with ``--rest-port`` on a fresh store, makes one table per target with
``--snapshots`` appends (the metadata a load reads grows with them), then times, p50 and p90 of
``--repeat`` calls after ``--warmup``:

- ``load_table``: the client's whole load (REST: one GET, the metadata in the answer;
  HiveCatalog: ``get_table``, then the metadata file read and parsed by the client);
- ``commit``: a transaction setting one table property (REST: one POST, the server locking,
  writing the new metadata file and swapping; HiveCatalog: lock, check, get_table, the client
  writing the file, ``alter_table``, unlock);
- ``load (wire)``: the bare call, no client model: the REST GET read whole (a kept connection),
  the Thrift ``get_table`` decoded.

It prints figures and asserts nothing; pytest does not collect it::

    .venv/bin/python tests/bench/rest_catalog.py --repeat 50
    unshare -n bash -c 'ip link set lo up; \\
        .venv/bin/python tests/bench/rest_catalog.py --reference-hms derby'
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bench_path  # noqa: F401 - puts the repository on sys.path
from bench_report import log, machine_info  # noqa: E402
from support.net import LOOPBACK, free_port  # noqa: E402
from support.our_server import OurServer  # noqa: E402

from metastore_server.thrift_api import make_client  # noqa: E402

NAMESPACE = "bench_rest"


def _hive_catalog(uri: str, warehouse: Path) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog("hive", uri=uri, warehouse=f"file://{warehouse}", **{
        "lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.2"})  # fmt: skip


def _table(catalog: Any, name: str, snapshots: int) -> Any:
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    with contextlib.suppress(Exception):  # exists already
        catalog.create_namespace(NAMESPACE)
    table = catalog.create_table(f"{NAMESPACE}.{name}", schema=schema)
    for i in range(snapshots):
        table.append(pa.Table.from_pylist([{"id": i, "name": "x"}], schema=schema))
    return table


def timed(call: Callable[[], Any], warmup: int, repeat: int) -> tuple[float, float]:
    """p50 and p90 of ``repeat`` calls after ``warmup``, milliseconds."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.9))]


def measure(name: str, catalog: Any, wire: Callable[[], Any], table: str,
            args: argparse.Namespace) -> dict[str, tuple[float, float]]:  # fmt: skip
    """The three figures of one target."""
    identifier = f"{NAMESPACE}.{table}"
    counter = iter(range(10**9))
    log(f"timing {name} ...")

    def commit() -> None:
        loaded = catalog.load_table(identifier)
        with loaded.transaction() as transaction:
            transaction.set_properties(**{"bench.seq": str(next(counter))})

    load = timed(lambda: catalog.load_table(identifier), args.warmup, args.repeat)
    figures = {"load_table": load, "load (wire)": timed(wire, args.warmup, args.repeat)}
    try:
        load_then_commit = timed(commit, args.warmup, args.repeat)
    except Exception as exc:  # noqa: BLE001 - reported beside the figures
        log(f"  {name}: commit failed: {type(exc).__name__}: {exc}")
        FAILURES[name] = f"commit failed: {type(exc).__name__}: {exc}"
        return figures
    figures["commit"] = (load_then_commit[0] - load[0], load_then_commit[1] - load[1])
    return figures


#: Target -> why an operation has no figure.
FAILURES: dict[str, str] = {}


def rest_wire(uri: str, table: str) -> Callable[[], Any]:
    """The bare REST load: one GET on a kept connection, the answer read whole."""
    import requests

    session = requests.Session()
    url = f"{uri}/v1/namespaces/{NAMESPACE}/tables/{table}"
    return lambda: session.get(url).content


def thrift_wire(host: str, port: int, table: str) -> Callable[[], Any]:
    """The bare Thrift load: ``get_table`` decoded."""
    client = make_client(host, port)
    return lambda: client.get_table(NAMESPACE, table)


def report(rows: dict[str, dict[str, tuple[float, float]]]) -> str:
    names = list(rows)
    lines = ["", f"{'operation':<14}" + "".join(f"{n + ' p50':>22}{'p90':>8}" for n in names)]
    lines.append("-" * len(lines[-1]))
    for op in ("load_table", "commit", "load (wire)"):
        cells = [rows[n].get(op) for n in names]
        lines.append(f"{op:<14}" + "".join(f"{c[0]:>22.2f}{c[1]:>8.2f}" if c else
                                           f"{'-':>22}{'-':>8}" for c in cells))  # fmt: skip
    lines.append("(ms; commit: a load and a one-property commit, less the load's p50/p90)")
    lines += [f"{name}: {why}" for name, why in FAILURES.items()]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per operation")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first")
    parser.add_argument("--snapshots", type=int, default=20, help="appends before timing")
    parser.add_argument("--reference-hms", choices=("derby", "none"), default="none",
                        help="also time HiveCatalog on the reference HMS 2.3 started here")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0 or args.snapshots < 0:
        parser.error("--repeat must be >= 1, --warmup and --snapshots >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from pyiceberg.catalog.rest import RestCatalog

    print("\n".join(machine_info()), flush=True)
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-rest-")))
        rest_port = free_port(LOOPBACK)
        endpoint = stack.enter_context(OurServer(work / "ours", extra_args=[
            "--rest-port", str(rest_port), "--log-level", "warning"]))  # fmt: skip
        uri = f"http://{LOOPBACK}:{rest_port}"
        rest = None
        deadline = time.monotonic() + 60
        while rest is None:
            try:
                rest = RestCatalog("rest", uri=uri)
            except Exception:  # noqa: BLE001 - not listening yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        hive = _hive_catalog(f"thrift://{endpoint.host}:{endpoint.port}", work / "lake")
        log(f"making the tables ({args.snapshots} snapshots each) ...")
        _table(rest, "via_rest", args.snapshots)
        _table(hive, "via_thrift", args.snapshots)
        rows = {
            "ours REST": measure("ours REST", rest, rest_wire(uri, "via_rest"), "via_rest", args),
            "ours HiveCatalog": measure("ours HiveCatalog", hive, thrift_wire(
                endpoint.host, endpoint.port, "via_thrift"), "via_thrift", args),
        }  # fmt: skip
        if args.reference_hms != "none":
            from support.reference_hms import ReferenceHms

            log("starting the reference HMS (Derby) ...")
            ref = stack.enter_context(ReferenceHms(
                work / "reference", heap="2g", properties={"hive.in.test": "true"}))  # fmt: skip
            hms_catalog = _hive_catalog(f"thrift://{ref.host}:{ref.port}", work / "lake-ref")
            # HMS 2.3 refuses the locks pyiceberg's commits take ("operationType=UNSET"): its
            # table is the REST table's metadata, registered (no lock needed).
            hms_catalog.create_namespace(NAMESPACE)
            hms_catalog.register_table(f"{NAMESPACE}.via_hms",
                                       rest.load_table(f"{NAMESPACE}.via_rest").metadata_location)
            rows["HMS HiveCatalog"] = measure("HMS HiveCatalog", hms_catalog, thrift_wire(
                ref.host, ref.port, "via_hms"), "via_hms", args)  # fmt: skip
        print(f"{args.snapshots} snapshots a table; p50/p90 of {args.repeat} calls after "
              f"{args.warmup} warm-up; pyiceberg clients", flush=True)  # fmt: skip
        print(report(rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
