"""Readiness benchmark (docs/operations.md#readiness): how soon a just-started server answers.
Prints figures; asserts nothing; not collected by pytest.

Starts our server (``serve --workers W`` on a fresh embedded store in a scratch directory)
``--starts`` times for each ``--workers`` value and, from a client trying to connect every
millisecond from the moment the process is started, measures:

* ``open``: from starting the process to its port accepting a connection;
* ``first call``: from the port accepting to the answer of ``get_all_databases`` sent on that
  first connection.

Goal: the first call answered within 100 ms of the port accepting.

    .venv/bin/python tests/bench/first_call.py --workers 0,1,2 --starts 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.net import LOOPBACK  # noqa: E402
from support.our_server import OurServer  # noqa: E402
from thriftpy2.transport import TTransportException  # noqa: E402

from metastore_server.thrift_api import make_client  # noqa: E402

#: How long one start may take before it counts as failed.
START_LIMIT_S = 120.0


def one_start(workdir: Path, workers: int) -> tuple[float, float]:
    """(seconds to the port accepting, seconds from then to the first answer)."""
    server = OurServer(workdir, extra_args=["--workers", str(workers)])
    started = time.monotonic()
    server.launch()
    try:
        deadline = started + START_LIMIT_S
        while True:
            try:
                client = make_client(LOOPBACK, server.port, timeout_ms=60_000)
                break
            except TTransportException:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no port after {START_LIMIT_S:g} s") from None
                time.sleep(0.001)
        opened = time.monotonic()
        client.get_all_databases()
        answered = time.monotonic()
        client.close()
        return opened - started, answered - opened
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="0,1,2", help="worker counts (default %(default)s)")
    parser.add_argument("--starts", type=int, default=5, help="starts per count (default 5)")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.workers.split(",")]
    print(f"{'workers':>7}  {'open p50/max (ms)':>18}  {'first call p50/max (ms)':>24}")
    with tempfile.TemporaryDirectory(prefix="first-call-") as scratch:
        for workers in counts:
            opens, firsts = [], []
            for n in range(max(1, args.starts)):
                opened, first = one_start(Path(scratch) / f"w{workers}-{n}", workers)
                opens.append(opened * 1000)
                firsts.append(first * 1000)
            print(f"{workers:>7}  {statistics.median(opens):>8.0f} / {max(opens):<7.0f}  "
                  f"{statistics.median(firsts):>12.1f} / {max(firsts):<9.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
