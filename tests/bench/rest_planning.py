"""Server-side scan planning benchmark (docs/benchmarks.md, "Server-side scan planning"): the
latency of planning one scan through our REST catalog (``scan-planning-mode=server``: one POST,
plus a POST a batch of ``--batch`` tasks) beside pyiceberg planning the same scan on the
client (reading the manifest list and manifests itself), pyiceberg the client of both.

It starts our server with ``--rest-port`` on a fresh store, makes one table with ``--appends``
appends (a data file, a manifest each), then times p50 and p90 of ``--repeat`` plans after
``--warmup``:

- ``client``: ``table.scan(row_filter=...).plan_files()`` on a table loaded once (pyiceberg
  keeps the manifests it read: the figures after the warm-up are its warm ones);
- ``server, cached``: the same scan planned by the server, whose plan cache answers it;
- ``server, not cached``: a scan of another filter every time (``id >= i``), planned anew.

Every planned scan is checked to find the files the client finds. It prints figures and
asserts nothing; pytest does not collect it::

    .venv/bin/python tests/bench/rest_planning.py --appends 200 --repeat 50
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

import bench_path  # noqa: F401 - puts the repository on sys.path
from bench_report import log, machine_info  # noqa: E402
from rest_catalog import timed  # noqa: E402
from support.net import LOOPBACK, free_port  # noqa: E402
from support.our_server import OurServer  # noqa: E402

NAME = "bench_plan.events"


def _table(uri: str, appends: int) -> Any:
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    catalog = RestCatalog("client", uri=uri)
    catalog.create_namespace("bench_plan")
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    table = catalog.create_table(NAME, schema=schema)
    for i in range(appends):
        table.append(pa.Table.from_pylist([{"id": i, "name": f"n{i}"}], schema=schema))
    return catalog.load_table(NAME)


def _paths(scan: Any) -> list[str]:
    return sorted(task.file.file_path for task in scan.plan_files())


def measure(uri: str, args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """p50/p90 of each way of planning, milliseconds."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.expressions import GreaterThanOrEqual

    local = _table(uri, args.appends)
    remote = RestCatalog("server", uri=uri, **{"scan-planning-mode": "server"}).load_table(NAME)
    same = GreaterThanOrEqual("id", args.appends // 2)
    assert _paths(remote.scan(row_filter=same)) == _paths(local.scan(row_filter=same))
    counter = itertools.count()

    def uncached() -> Any:
        bound = next(counter) % args.appends
        return remote.scan(row_filter=GreaterThanOrEqual("id", bound)).plan_files()

    return {
        "client": timed(lambda: local.scan(row_filter=same).plan_files(), args.warmup,
                        args.repeat),  # fmt: skip
        "server, cached": timed(lambda: remote.scan(row_filter=same).plan_files(), args.warmup,
                                args.repeat),  # fmt: skip
        "server, not cached": timed(uncached, args.warmup, args.repeat),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000, help="--rest-plan-batch")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    for line in machine_info():
        print(line)
    log("starting the server, making the table")
    with tempfile.TemporaryDirectory() as work:
        port = free_port(LOOPBACK)
        server = OurServer(Path(work), extra_args=[
            "--rest-port", str(port), "--rest-plan-batch", str(args.batch)])  # fmt: skip
        with server:
            uri = f"http://{LOOPBACK}:{port}"
            _wait(uri)
            figures = measure(uri, args)
    print(f"planning a scan of a table of {args.appends} appends (files, manifests); "
          f"p50 / p90 of {args.repeat} plans, ms")  # fmt: skip
    for name, (p50, p90) in figures.items():
        print(f"  {name:<20} {p50:8.2f} / {p90:8.2f}")
    return 0


def _wait(uri: str) -> None:
    import time
    import urllib.request

    from support.rest_catalog import START_WAIT_S

    deadline = time.monotonic() + START_WAIT_S
    while True:
        try:
            with urllib.request.urlopen(uri + "/v1/config", timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
