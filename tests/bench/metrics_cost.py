"""What the metrics cost a call (docs/operations.md#monitoring). Prints figures; asserts
nothing; not collected by pytest.

Times, in a process set up as a served worker is (``PROMETHEUS_MULTIPROC_DIR`` named before
anything records, so every figure goes to its file), the work each call adds:

* ``record_call ok``: what ``audit_call`` adds to every call (one histogram child observed);
* ``record_call error``: a call answered with an error (the error counted too);
* ``store get (sampled)``: what the embedded store's ``get`` adds (one in 16 timed);
* ``store op (timed)``: a timed store operation (every HBase request, the embedded commits).

    .venv/bin/python tests/bench/metrics_cost.py --calls 200000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def per_call_us(action: Callable[[], object], calls: int) -> float:
    """Microseconds one ``action`` takes, less an empty call's, best of three runs."""

    def run(what: Callable[[], object]) -> float:
        started = time.perf_counter()
        for _ in range(calls):
            what()
        return (time.perf_counter() - started) / calls * 1e6

    empty = min(run(lambda: None) for _ in range(3))
    return min(run(action) for _ in range(3)) - empty


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--in-memory", action="store_true",
                        help="without PROMETHEUS_MULTIPROC_DIR (a process of its own)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        if not args.in_memory:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        from metastore_server.storage import telemetry

        from metastore_server import metrics

        sampled = telemetry.sampled("get")(lambda: None)
        figures = {
            "record_call ok": lambda: metrics.record_call("get_table", 0.2, "ok"),
            "record_call error": lambda: metrics.record_call(
                "get_table", 0.2, "NoSuchObjectException"),
            "store get (sampled)": sampled,
            "store op (timed)": lambda: telemetry.store_operation("get", 0.0001),
        }
        mode = "in memory" if args.in_memory else "PROMETHEUS_MULTIPROC_DIR"
        print(f"{mode}, {args.calls} calls each, best of 3, us per call")
        for name, action in figures.items():
            print(f"  {name:22s} {per_call_us(action, args.calls):6.2f}")


if __name__ == "__main__":
    main()
