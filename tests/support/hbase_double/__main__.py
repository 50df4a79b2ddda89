"""The HBase test double as a process of its own (a stand-in for an HBase Thrift1 gateway, for
the benchmarks' ``--hbase HOST:PORT`` and for trying a command by hand)::

    cd tests && ../.venv/bin/python -m support.hbase_double --port 9090

It prints ``PORT <n>`` once it listens (``--port 0``: a free port), then serves until
SIGINT / SIGTERM, or until its standard input closes with ``--until-stdin-closes`` (a parent
process's pipe). Not HBase: see the package docstring.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from support.hbase_double.scanners import DEFAULT_SCAN_ROWS_PER_CALL
from support.hbase_double.server import HBaseDouble


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="python -m support.hbase_double",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9090, help="0: a free port")
    parser.add_argument("--table-ddl-s", type=float, default=0.0,
                        help="seconds each table creation, enabling, disabling and deletion "
                        "takes (a real HBase: about 1)")  # fmt: skip
    parser.add_argument("--reverse-filter-bug", action="store_true",
                        help="fail reversed scans with a filter, as HBase 1.2.x does")  # fmt: skip
    parser.add_argument("--scan-rows-per-call", type=int, default=DEFAULT_SCAN_ROWS_PER_CALL,
                        help="rejected rows one scanner call may pass over before it fails as "
                        "a scanner RPC timeout (0: no limit)")  # fmt: skip
    parser.add_argument("--until-stdin-closes", action="store_true",
                        help="stop when standard input closes")  # fmt: skip
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until told to stop."""
    args = parse_args(argv)
    double = HBaseDouble(
        args.host,
        args.port,
        table_ddl_s=args.table_ddl_s,
        reverse_filter_bug=args.reverse_filter_bug,
        scan_rows_per_call=args.scan_rows_per_call or None,
    )
    done = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: done.set())
    if args.until_stdin_closes:
        threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    with double:
        print(f"PORT {double.port}", flush=True)
        done.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
