"""What read committed costs on HBase (docs/benchmarks.md, "Reads on HBase: committed only"):
each kind of read through the store as readers make it (committed only: the register read
before and after, ``storage.committed_reads``) beside the same read as rows land (the store's
``raw`` reads, what every read was before), in the same run, on the same rows; quiet, and while
a change touching ``--open`` rows of the range is held open by another store (a writer).

Reads, each repeated ``--repeat`` times: a point read, a read of 100 keys, a scan of the whole
table (``--rows`` rows, 1,000 a batch), a scan with a limit of 1, a reverse scan with a limit
of 1 (the latest partition). Figures are medians in milliseconds; the ratio is committed over
raw. It prints figures and asserts nothing; it is not collected by pytest::

    .venv/bin/python tests/bench/committed_reads.py --hbase-double
    .venv/bin/python tests/bench/committed_reads.py --hbase 127.0.0.1:9090 --rows 20000
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_path  # noqa: E402, F401 - puts the repository on sys.path
from bench_report import log, machine_info  # noqa: E402
from hbase_target import add_hbase_arguments, check_hbase_arguments, hbase_storage  # noqa: E402
from metastore_server.storage.hbase import HBaseStore  # noqa: E402
from metastore_server.storage.port import Put, TableSpec  # noqa: E402

T = "t"


def _reads(rows: int) -> dict[str, Callable[[Any], Any]]:
    keys = [b"r%08d" % n for n in range(0, rows, max(rows // 100, 1))][:100]
    return {
        "get": lambda s: s.get(T, b"r%08d" % (rows // 2)),
        "get_many 100": lambda s: s.get_many(T, keys),
        f"scan {rows}": lambda s: sum(1 for _ in s.scan(T, batch_size=1000)),
        "scan limit 1": lambda s: list(s.scan(T, limit=1)),
        "reverse limit 1": lambda s: list(s.scan(T, reverse=True, limit=1)),
    }


def _median_ms(read: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _measure(store: HBaseStore, rows: int, repeat: int, label: str) -> None:
    for name, read in _reads(rows).items():
        raw = _median_ms(lambda r=read: r(store.raw), repeat)
        committed = _median_ms(lambda r=read: r(store), repeat)
        log(f"  {label:<6} {name:<16} raw {raw:9.2f} ms   committed {committed:9.2f} ms   "
            f"x{committed / raw:5.2f}")  # fmt: skip


def _held_open(url: str, rows: int, count: int) -> tuple[threading.Event, threading.Thread]:
    """A writer store's change of ``count`` rows spread over the table, held open."""
    made, done = threading.Event(), threading.Event()

    def run() -> None:
        with HBaseStore.from_url(url) as writer, writer.transaction():
            step = max(rows // count, 1)
            writer.mutate([Put(T, b"r%08d" % n, {b"c:x": b"changed"})
                           for n in range(0, rows, step)][:count])  # fmt: skip
            made.set()
            done.wait()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    made.wait(120)
    return done, thread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_hbase_arguments(parser)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--open", type=int, default=100, help="rows the open change touches")
    args = parser.parse_args()
    check_hbase_arguments(parser, args)
    if not (args.hbase or args.hbase_double):
        parser.error("give --hbase HOST:PORT or --hbase-double")
    for line in machine_info():
        log(line)
    with contextlib.ExitStack() as stack:
        url = hbase_storage(args.hbase, args.hbase_double, stack, log)
        assert url is not None
        store = stack.enter_context(HBaseStore.from_url(url))
        store.ensure_tables([TableSpec(T)])
        for first in range(0, args.rows, 1000):
            store.mutate([Put(T, b"r%08d" % n, {b"c:x": b"v" * 200})
                          for n in range(first, min(first + 1000, args.rows))])  # fmt: skip
        log(f"committed reads beside raw reads, {args.rows} rows, median of {args.repeat}:")
        _measure(store, args.rows, args.repeat, "quiet")
        done, writer = _held_open(url, args.rows, args.open)
        _measure(store, args.rows, args.repeat, "open")
        done.set()
        writer.join(60)


if __name__ == "__main__":
    main()
