"""Peak server memory while returning a whole big table (docs/benchmarks.md: huge results stream
without the server holding several copies).

Starts our server on a store, asks ``get_partitions(db, table, -1)`` with a client that reads
the reply without building objects, and samples the server's resident memory
(``/proc/<pid>/status``) meanwhile. Prints the resident memory before the call, the peak during
it, the reply's size on the wire, and the growth as a multiple of the reply. Either on a store
of its own, loaded first with N partitions (``add_partitions_req`` of 1,000 at a time; about
5 minutes for a million)::

    python tests/bench/peak_rss.py --load 1000000 [--store var/bench/peak/metastore.db]

or on an existing one (the 1M-partition store the partition-filter benchmark loads)::

    python tests/bench/peak_rss.py --table bench_db.events_1000000
        [--store var/bench/ours/metastore.db] [--transport buffered|framed]
        [--listing-cache-mb 256] [--repeat 2]

A store given with ``--load`` is reused when it already holds the table.

Run it inside ``unshare -n`` (loopback only) like the other benchmarks; it binds 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TMessageType, TType
from thriftpy2.transport import TCyBufferedTransport, TCyFramedTransport, TSocket

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from process_memory import peak_kib, reset_peak, rss_kib  # noqa: E402

from metastore_server.thrift_api import hms, make_client  # noqa: E402
from metastore_server.tools.benchmark import Layout, load_table  # noqa: E402
from metastore_server.tools.progress import ProgressBar  # noqa: E402


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _CountingSocket(TSocket):
    """A client socket that counts the bytes it receives."""

    received = 0

    def read(self, sz: int) -> bytes:
        data = super().read(sz)
        self.received += len(data)
        return data


def _drain_get_partitions(port: int, db: str, table: str, framed: bool) -> tuple[int, float]:
    """Call get_partitions(db, table, -1) and skip through the reply; (bytes, seconds)."""
    sock = _CountingSocket("127.0.0.1", port, socket_timeout=600_000)
    sock.open()
    trans = TCyFramedTransport(sock) if framed else TCyBufferedTransport(sock)
    proto = TCyBinaryProtocol(trans)
    started = time.perf_counter()
    proto.write_message_begin("get_partitions", TMessageType.CALL, 1)
    hms.ThriftHiveMetastore.get_partitions_args(db_name=db, tbl_name=table, max_parts=-1).write(
        proto
    )
    proto.write_message_end()
    trans.flush()
    _, kind, _ = proto.read_message_begin()
    if kind != TMessageType.REPLY:
        raise RuntimeError(f"get_partitions answered message type {kind}")
    proto.skip(TType.STRUCT)
    seconds = time.perf_counter() - started
    sock.close()
    return sock.received, seconds


def _load(port: int, db: str, size: int, framed: bool) -> None:
    """Create ``db`` and the benchmark's table of ``size`` partitions, unless already there."""
    client = make_client("127.0.0.1", port, framed=framed, timeout_ms=600_000)
    try:
        if db in client.get_all_databases():
            return
        client.create_database(hms.Database(name=db, description="peak rss", parameters={}))
        progress = ProgressBar(sys.stderr, visible=sys.stderr.isatty())
        load_table(client, db, Layout(size), 1000, progress)
    finally:
        client.close()


def measure(args: argparse.Namespace) -> int:
    if args.load:
        args.table = args.table or f"peak_db.{Layout(args.load).table}"
        args.store = args.store or "var/bench/peak/metastore.db"
        Path(args.store).parent.mkdir(parents=True, exist_ok=True)
    if not args.table:
        raise SystemExit("peak_rss: give --table db.table, or --load N")
    db, _, table = args.table.partition(".")
    port = _free_port()
    scratch = Path(tempfile.mkdtemp(prefix="peak-rss-"))
    command = [
        sys.executable, "-m", "metastore_server", "serve", "--host", "127.0.0.1",
        "--port", str(port), "--storage", f"sqlite:///{Path(args.store).resolve()}",
        "--warehouse", str(scratch / "warehouse"), "--transport", args.transport,
        "--listing-cache-mb", str(args.listing_cache_mb), "--log-level", "warning",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(REPO))
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, cwd=scratch)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.2)
        if args.load:
            _load(port, db, args.load, args.transport == "framed")
        client = make_client("127.0.0.1", port, framed=args.transport == "framed")
        count = client.get_num_partitions_by_filter(db, table, "")
        client.close()
        print(f"{args.table}: {count} partitions; transport {args.transport}; "
              f"listing cache {args.listing_cache_mb} MiB")  # fmt: skip
        print("call  before MiB  peak MiB  growth MiB  reply MiB  growth/reply  seconds")
        for call in range(1, args.repeat + 1):
            before = rss_kib(server.pid)
            reset_peak(server.pid)
            reply, seconds = _drain_get_partitions(port, db, table, args.transport == "framed")
            peak = max(peak_kib(server.pid), before)
            growth = (peak - before) / 1024
            reply_mib = reply / 1024 / 1024
            print(f"{call:>4}  {before / 1024:>10.0f}  {peak / 1024:>8.0f}  {growth:>10.0f}  "
                  f"{reply_mib:>9.0f}  {growth / reply_mib:>12.2f}  {seconds:>7.1f}")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", help="db.table to list (default with --load: its table)")
    parser.add_argument(
        "--store", help="SQLite store (default var/bench/ours/metastore.db; with --load "
        "var/bench/peak/metastore.db)"
    )
    parser.add_argument("--load", type=int, help="load a table of N partitions first")
    parser.add_argument("--transport", choices=("buffered", "framed"), default="buffered")
    parser.add_argument("--listing-cache-mb", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=2, help="calls to make (default 2)")
    args = parser.parse_args(argv)
    if not args.load:
        args.store = args.store or "var/bench/ours/metastore.db"
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
