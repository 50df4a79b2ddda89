"""Isolation benchmark (docs/benchmarks.md): how long point lookups take while one client runs a
heavy or hostile call. Prints p50/p99/max of the point calls; asserts nothing; not collected by
pytest.

Starts our server (``serve --workers W --call-timeout S``) on a fresh embedded store in a
scratch directory, loads ``bench_db.big`` with ``--partitions`` partitions (keys ds, hr), then
runs three phases of ``--seconds`` each, 16 clients (``--clients``) doing ``get_partition``
point lookups on connections of their own:

* ``quiet``: nothing else;
* ``listing``: one more client listing the whole table (``get_partitions``) again and again;
* ``skip bomb``: one more client sending, again and again, a 38-byte call whose unknown field
  is a list of 2^31-1 elements of a type that takes no bytes (thriftpy2's decoder would spin on
  it for seconds; the wire walker refuses it at its header);
* ``stuck call``: one more client making a call that holds its worker's interpreter for minutes
  (the test fault of ``tests/support/stall_site``; the supervisor replaces that worker after
  ``--call-timeout`` and the other clients of that worker reconnect).

Goal: p99 of the point calls <= 100 ms in every phase.

    .venv/bin/python tests/bench/isolation.py --partitions 100000 --workers 2
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.our_server import OurServer  # noqa: E402
from support.stall_site.sitecustomize import STALLING_NAME  # noqa: E402
from support.thrift_bytes import Splice, bomb_field, message  # noqa: E402

from metastore_server.thrift_api import hms, make_client  # noqa: E402

DB, TABLE = "bench_db", "big"


def _load(host: str, port: int, count: int) -> list[list[str]]:
    conn = make_client(host, port, timeout_ms=600_000)
    conn.create_database(hms.Database(name=DB, description="", parameters={}))
    cols = [hms.FieldSchema(name="v", type="int")]
    sd = hms.StorageDescriptor(cols=cols, serdeInfo=hms.SerDeInfo(parameters={}),
                               parameters={}, bucketCols=[], sortCols=[])  # fmt: skip
    keys = [hms.FieldSchema(name="ds", type="string"), hms.FieldSchema(name="hr", type="int")]
    conn.create_table(hms.Table(tableName=TABLE, dbName=DB, sd=sd, partitionKeys=keys,
                                parameters={}, tableType="EXTERNAL_TABLE"))  # fmt: skip
    values = [[f"d{n // 24:07d}", str(n % 24)] for n in range(count)]
    for start in range(0, count, 1000):
        parts = [hms.Partition(dbName=DB, tableName=TABLE, values=v, parameters={},
                               sd=hms.StorageDescriptor(cols=cols, parameters={}))
                 for v in values[start : start + 1000]]  # fmt: skip
        conn.add_partitions(parts)
    conn.close()
    return values


def _skip_bomb() -> bytes:
    args = hms.ThriftHiveMetastore.get_all_databases_args()
    return message("get_all_databases", args, Splice((), tail=bomb_field()))


def _stuck_call() -> bytes:
    args = hms.ThriftHiveMetastore.get_database_args(name=STALLING_NAME)
    return message("get_database", args)


def _phase(host: str, port: int, values: list[list[str]], clients: int, seconds: float,
           disturb: str) -> list[float]:  # fmt: skip
    latencies: list[float] = []
    errors: list[str] = []
    stop = threading.Event()

    def lookups(index: int) -> None:
        conn = make_client(host, port, timeout_ms=120_000)
        n = index
        while not stop.is_set():
            wanted = values[n * 7919 % len(values)]
            started = time.perf_counter()
            try:
                conn.get_partition(DB, TABLE, wanted)
            except Exception as exc:  # noqa: BLE001 - counted, connection renewed
                errors.append(type(exc).__name__)
                conn = make_client(host, port, timeout_ms=120_000)
                continue
            latencies.append(time.perf_counter() - started)
            n += clients

    def disturber() -> None:
        while not stop.is_set():
            if disturb == "listing":
                conn = make_client(host, port, timeout_ms=600_000)
                conn.get_partitions(DB, TABLE, -1)
                conn.close()
            elif disturb in ("skip bomb", "stuck call"):
                with socket.create_connection((host, port)) as bomb:
                    bomb.sendall(_skip_bomb() if disturb == "skip bomb" else _stuck_call())
                    bomb.settimeout(seconds + 60)
                    try:
                        bomb.recv(1)
                    except OSError:
                        pass
            else:
                return

    threads = [threading.Thread(target=lookups, args=(i,)) for i in range(clients)]
    threads.append(threading.Thread(target=disturber))
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    if errors:
        print(f"  {len(errors)} point calls failed ({sorted(set(errors))}), their clients "
              "reconnected")  # fmt: skip
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--call-timeout", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-isolation-") as scratch:
        extra = ["--workers", str(args.workers), "--call-timeout", str(args.call_timeout),
                 "--log-level", "warning"]  # fmt: skip
        stall_site = Path(__file__).resolve().parents[1] / "support" / "stall_site"
        server = OurServer(Path(scratch) / "server", extra_args=extra,
                           env={"PYTHONPATH": str(stall_site)})  # fmt: skip
        with server as endpoint:
            started = time.perf_counter()
            values = _load(endpoint.host, endpoint.port, args.partitions)
            print(f"loaded {args.partitions} partitions in {time.perf_counter() - started:.1f} s; "
                  f"{args.workers} workers, {args.clients} point clients, "
                  f"{args.seconds:g} s a phase")  # fmt: skip
            print(f"{'phase':<12} {'calls':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
            for disturb in ("quiet", "listing", "skip bomb", "stuck call"):
                got = sorted(_phase(endpoint.host, endpoint.port, values, args.clients,
                                    args.seconds, disturb))  # fmt: skip
                if not got:
                    print(f"{disturb:<12} {'0':>7}")
                    continue
                p99 = got[min(len(got) - 1, int(len(got) * 0.99))]
                print(f"{disturb:<12} {len(got):>7} {statistics.median(got) * 1000:>8.1f} "
                      f"{p99 * 1000:>8.1f} {got[-1] * 1000:>8.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
