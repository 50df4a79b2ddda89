"""Scale benchmark: one database of 200,000 tables (docs/benchmarks.md, "Scale: 200,000 tables").

Loads ``scale_db`` with N tables through the API (``create_table``: one pre-encoded request
with the name patched in, pipelined on a few connections, each table with a comment), unless the
store already holds them, then times on our server:

* ``get_all_tables``, ``get_tables`` with a prefix pattern and with a suffix pattern,
  ``get_tables_by_type`` and ``get_table_meta`` of the whole database: each reply read off the
  wire without building objects (the server's work plus the transfer), the median of
  ``--repeat`` calls, and the rows returned (counted once with a plain client);
* ``get_table`` of random tables (p50 / p99);
* a restart of the server: SIGTERM, start again, until the first ``get_table`` answers (no
  start-up scan of the tables: the time does not grow with N);
* the server's resident memory (VmRSS) after each, and its peak (VmHWM).

Each ``create_table`` commits with a synchronous write (the embedded store's durability), so the
load runs at the disk's flush rate: the default store lives in ``/dev/shm`` (memory, where a
flush costs nothing) to load 200,000 tables in minutes; ``--data-dir`` puts it elsewhere (a
store there is reused when it holds the tables). ``--hbase HOST:PORT`` runs on the HBase
backend against a real HBase Thrift1 gateway, ``--hbase-double`` against the HBase test double
in a process of its own (use fewer tables: it keeps its data in memory and is slower), each
under a fresh table prefix dropped at the end; the load rate is then printed beside the limit,
HBase's own ``mutateRows`` of the table rows written (``hbase_limit``). It prints figures and
asserts nothing; pytest does not collect it::

    unshare -n bash -c 'ip link set lo up; .venv/bin/python tests/bench/scale_tables.py'
    .venv/bin/python tests/bench/scale_tables.py --tables 20000 --hbase-double
    .venv/bin/python tests/bench/scale_tables.py --tables 20000 --hbase hbase-host:9090
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from thriftpy2.protocol import TCyBinaryProtocol
from thriftpy2.thrift import TMessageType, TType
from thriftpy2.transport import TCyBufferedTransport, TMemoryBuffer, TSocket

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "bench"))

from bench_report import log  # noqa: E402
from hbase_limit import store_limit  # noqa: E402
from hbase_target import add_hbase_arguments, check_hbase_arguments, hbase_storage  # noqa: E402

from metastore_server.thrift_api import hms, make_client  # noqa: E402

DB = "scale_db"
#: The name in the pre-encoded request, patched for each table (same length as every name).
PLACEHOLDER = b"t0000000"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _rss_mib(pid: int, field: str = "VmRSS") -> float:
    """``field`` of ``/proc/<pid>/status`` in MiB, summed over the process and its children
    (the supervisor and its workers)."""
    total = 0.0
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    total += int(line.split()[1]) / 1024
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                total += sum(_rss_mib(int(child), field) for child in children.read().split())
    except FileNotFoundError:
        pass  # gone meanwhile
    return total


class Server:
    """Our server as a subprocess on one store; restartable."""

    def __init__(self, storage: str, workdir: Path, workers: int | None) -> None:
        self.workers = workers
        self.storage = storage
        self.workdir = workdir
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start it; seconds until a get_table (of a missing table) is answered."""
        command = [
            sys.executable, "-m", "metastore_server", "serve", "--host", "127.0.0.1",
            "--port", str(self.port), "--storage", self.storage,
            "--warehouse", str(self.workdir / "warehouse"), "--log-level", "warning",
        ]  # fmt: skip
        if self.workers is not None:
            command += ["--workers", str(self.workers)]
        env = dict(os.environ, PYTHONPATH=str(REPO))
        started = time.perf_counter()
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, cwd=self.workdir
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                client = make_client("127.0.0.1", self.port, timeout_ms=600_000)
                break
            except Exception:  # noqa: BLE001 - not listening yet
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.05)
        try:
            client.get_table(DB, "t_missing")
        except (hms.NoSuchObjectException, hms.MetaException):
            pass
        client.close()
        return time.perf_counter() - started

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=60)
            self.process = None

    def rss(self) -> tuple[float, float]:
        """(resident MiB now, peak resident MiB) of the server's processes together."""
        assert self.process is not None
        return _rss_mib(self.process.pid), _rss_mib(self.process.pid, "VmHWM")


def _template() -> bytes:
    """A whole create_table call message for table ``PLACEHOLDER``."""
    name = PLACEHOLDER.decode()
    table = hms.Table(
        tableName=name, dbName=DB, owner="bench", tableType="MANAGED_TABLE",
        parameters={"comment": f"table {name}"}, partitionKeys=[],
        sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema(name="id", type="bigint"),
                  hms.FieldSchema(name="v", type="string")],
            inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            serdeInfo=hms.SerDeInfo(
                serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                parameters={}),
        ),
    )  # fmt: skip
    buffer = TMemoryBuffer()
    proto = TCyBinaryProtocol(buffer)
    proto.write_message_begin("create_table", TMessageType.CALL, 0)
    hms.ThriftHiveMetastore.create_table_args(tbl=table).write(proto)
    proto.write_message_end()
    proto.trans.flush()
    return buffer.getvalue()


def _create_many(port: int, numbers: Sequence[int], template: bytes, failed: list[int]) -> None:
    """create_table of each table number on one connection, requests pipelined."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send() -> None:
        for first in range(0, len(numbers), 64):
            batch = numbers[first : first + 64]
            sock.sendall(b"".join(template.replace(PLACEHOLDER, b"t%07d" % n) for n in batch))

    sender = threading.Thread(target=send)
    sender.start()
    tsock = TSocket(sock=sock)
    proto = TCyBinaryProtocol(TCyBufferedTransport(tsock))
    for _ in numbers:
        _, kind, _ = proto.read_message_begin()
        if kind == TMessageType.REPLY:
            result = hms.ThriftHiveMetastore.create_table_result()
            result.read(proto)
            if any(getattr(result, f"o{i}", None) is not None for i in range(1, 5)):
                failed.append(1)
        else:  # an application error
            proto.skip(TType.STRUCT)
            failed.append(1)
    sender.join()
    sock.close()


def load(port: int, tables: int, connections: int) -> float:
    """Create the database and tables 0..N-1 not there yet; tables made per second."""
    client = make_client("127.0.0.1", port, timeout_ms=600_000)
    if DB not in client.get_all_databases():
        client.create_database(hms.Database(name=DB, description="scale", parameters={}))
    have = set(client.get_all_tables(DB))
    client.close()
    wanted = [n for n in range(tables) if f"t{n:07d}" not in have]
    if not wanted:
        return 0.0
    template = _template()
    failed: list[int] = []
    started = time.perf_counter()
    threads = [
        threading.Thread(target=_create_many, args=(port, wanted[i::connections], template, failed))
        for i in range(connections)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    if failed:
        print(f"  {len(failed)} create_table calls failed")
    return len(wanted) / seconds


def _raw_call(port: int, method: str, args: object) -> tuple[float, int]:
    """One call, its reply skipped without building objects: (seconds, reply bytes)."""
    sock = socket.create_connection(("127.0.0.1", port))
    tsock = TSocket(sock=sock)
    received = [0]
    read = tsock.read

    def counted(size: int) -> bytes:
        data = read(size)
        received[0] += len(data)
        return data

    tsock.read = counted  # type: ignore[method-assign]
    proto = TCyBinaryProtocol(TCyBufferedTransport(tsock))
    started = time.perf_counter()
    proto.write_message_begin(method, TMessageType.CALL, 1)
    args.write(proto)  # type: ignore[attr-defined]
    proto.write_message_end()
    proto.trans.flush()
    proto.read_message_begin()
    proto.skip(TType.STRUCT)
    seconds = time.perf_counter() - started
    sock.close()
    return seconds, received[0]


def listings(tables: int) -> list[tuple[str, str, object, Callable[[object], int]]]:
    """(label, method, arguments, rows of the answer from a plain client) of the listings."""
    service = hms.ThriftHiveMetastore
    prefix = f"t{tables // 20:07d}"[:-4] + "*"  # about 1 in 20 of the names at full size
    return [
        ("get_all_tables", "get_all_tables", service.get_all_tables_args(db_name=DB),
         lambda c: len(c.get_all_tables(DB))),
        (f"get_tables '{prefix}'", "get_tables",
         service.get_tables_args(db_name=DB, pattern=prefix),
         lambda c: len(c.get_tables(DB, prefix))),
        ("get_tables '*7'", "get_tables", service.get_tables_args(db_name=DB, pattern="*7"),
         lambda c: len(c.get_tables(DB, "*7"))),
        ("get_tables_by_type MANAGED", "get_tables_by_type",
         service.get_tables_by_type_args(db_name=DB, pattern="*", tableType="MANAGED_TABLE"),
         lambda c: len(c.get_tables_by_type(DB, "*", "MANAGED_TABLE"))),
        ("get_table_meta", "get_table_meta",
         service.get_table_meta_args(db_patterns=DB, tbl_patterns="*", tbl_types=[]),
         lambda c: len(c.get_table_meta(DB, "*", []))),
    ]  # fmt: skip


def measure(server: Server, tables: int, repeat: int) -> None:
    client = make_client("127.0.0.1", server.port, timeout_ms=600_000)
    print(f"{'call':<30} {'rows':>8} {'median ms':>10} {'us/row':>7} {'reply MiB':>9} "
          f"{'RSS MiB':>8} {'peak MiB':>8}")  # fmt: skip
    for label, method, args, rows_of in listings(tables):
        rows = rows_of(client)
        runs = [_raw_call(server.port, method, args) for _ in range(repeat)]
        median = statistics.median(seconds for seconds, _ in runs)
        size = runs[0][1] / 1024 / 1024
        rss, peak = server.rss()
        per_row = median * 1e6 / rows if rows else 0.0
        print(f"{label:<30} {rows:>8} {median * 1000:>10.1f} {per_row:>7.2f} {size:>9.1f} "
              f"{rss:>8.0f} {peak:>8.0f}")  # fmt: skip
    picks = [f"t{random.randrange(tables):07d}" for _ in range(200)]
    times = []
    for name in picks:
        started = time.perf_counter()
        client.get_table(DB, name)
        times.append(time.perf_counter() - started)
    times.sort()
    print(f"get_table (200 random): p50 {times[len(times) // 2] * 1000:.2f} ms, "
          f"p99 {times[int(len(times) * 0.99)] * 1000:.2f} ms")  # fmt: skip
    client.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200_000)
    parser.add_argument("--data-dir", help="where the store lives (default: a new directory "
                        "in /dev/shm, else in the temporary directory)")  # fmt: skip
    parser.add_argument("--connections", type=int, default=2, help="loading connections")
    parser.add_argument("--repeat", type=int, default=5, help="calls per listing (median)")
    parser.add_argument("--workers", type=int, help="the server's --workers (default: its own)")
    add_hbase_arguments(parser)
    args = parser.parse_args(argv)
    check_hbase_arguments(parser, args)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    workdir = Path(args.data_dir or tempfile.mkdtemp(prefix="scale-tables-", dir=shm))
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        hbase = hbase_storage(args.hbase, args.hbase_double, stack, log)
        storage = hbase or f"sqlite:///{workdir.resolve() / 'metastore.db'}"
        server = Server(storage, workdir, args.workers)
        stack.callback(server.stop)  # (before the tables of its prefix are dropped)
        run(server, args, "HBase store " + hbase if hbase else f"embedded store in {workdir}")
    return 0


def run(server: Server, args: argparse.Namespace, backend: str) -> None:
    """Load, measure, restart and measure again on ``server``."""
    server.start()
    rate = load(server.port, args.tables, args.connections)
    print(
        f"{args.tables} tables in {DB}, {backend}; "
        + (f"loaded at {rate:.0f} tables/s" if rate else "already loaded")
    )
    if rate and server.storage.startswith("hbase:"):
        print(store_limit(server.storage, rate, batch=1000, connections=args.connections,
                          max_rows=200_000, what="table"))  # fmt: skip
    measure(server, args.tables, args.repeat)
    before = server.rss()[0]
    server.stop()
    seconds = server.start()
    print(f"restart: {seconds:.2f} s until the first get_table answered; RSS before "
          f"{before:.0f} MiB, after {server.rss()[0]:.0f} MiB")  # fmt: skip
    measure(server, args.tables, args.repeat)


if __name__ == "__main__":
    sys.exit(main())
