"""Scale benchmark (docs/benchmarks.md, "Scale: 10,000,000 partitions"): one table of many
partitions on the embedded store.

Loads ``bench_db.scale_<N>`` (keys ds string, hr int, region string: days x 24 hours x
``--regions`` regions, the partitions of ``partition_dataset.Dataset``) into a server of ours
started here with ``--data-operations off`` (no directories: the load rate is the metastore's),
as ``add_partitions`` calls of ``--batch`` partitions encoded by a client thread while
``--connections`` connections send them. Then it times, each on a warm server (median of
``--repeat`` calls) with the growth of the server's peak memory (VmHWM, reset before each):

* a point lookup (``get_partition``) and the latest ``ds`` (``get_partition_values``);
* a leading-key range (one day's ``ds``), a partial spec's names (``get_partition_names_ps``)
  and ``get_partitions_by_names`` of 1,000 names;
* ``get_partition_names`` of the whole table (once: the reply is read and skipped);
* a filter over the whole table (``(region) in (...)``, twice: the listing cache must refuse
  a table that cannot fit it, and the server's memory must not grow by the table);
* a restart: the time until the server answers, its memory then, and the first point lookup.

It prints figures and asserts nothing; it is not collected by pytest. The store stays in
``--data-dir`` (default /tmp/scale-partitions) for a re-run with the same size (the load is
skipped when the table is complete) unless ``--drop``. ``--hbase-double`` (or ``--hbase
HOST:PORT``) runs it on the HBase backend instead, under a fresh table prefix dropped at the
end (the double holds everything in its process's memory: about 1,000,000 partitions is what
it holds on a machine of 24 GiB); the load rate is then printed beside the limit, HBase's own
``mutateRows`` of up to ``LIMIT_ROWS`` of the partition rows written (``hbase_limit``)::

    .venv/bin/python tests/bench/scale_partitions.py --size 1000000
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import shutil
import statistics
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from filter_shapes import latest_ds_request  # noqa: E402
from hbase_limit import store_limit  # noqa: E402
from hbase_target import add_hbase_arguments, check_hbase_arguments, hbase_storage  # noqa: E402
from partition_dataset import DB, Dataset, hms, make_partition, make_table  # noqa: E402
from process_memory import peak_kib, reset_peak, rss_kib  # noqa: E402
from support.our_server import OurServer  # noqa: E402
from thriftpy2.protocol import TBinaryProtocol  # noqa: E402
from thriftpy2.thrift import TMessageType  # noqa: E402
from thriftpy2.transport import TMemoryBuffer  # noqa: E402
from timing_clients import raw_call  # noqa: E402

from metastore_server import thrift_api  # noqa: E402

#: Partition rows put again raw for HBase's own rate (on HBase): enough for a steady rate.
LIMIT_ROWS = 200_000


class ScaleDataset(Dataset):
    """The data set in a table named by its size: ``scale_<N>``."""

    @property
    def table(self) -> str:
        """``scale_<N>``."""
        return f"scale_{self.size}"


def log(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


_MARKS = ("\x01ds\x01", "\x01hr\x01", "\x01region\x01")


def _template(ds: Dataset, location: str) -> list[bytes | int]:
    """One encoded partition cut around its varying strings: fixed bytes, and in their
    places the index of the value (0..2), or -1 for the location."""
    part = make_partition(ds, list(_MARKS), location)
    buffer = TMemoryBuffer()
    part.write(TBinaryProtocol(buffer))
    data = buffer.getvalue()
    strings = [(m.encode(), i) for i, m in enumerate(_MARKS)]
    strings.append((part.sd.location.encode(), -1))
    cuts = []
    for text, slot in strings:
        framed = struct.pack("!i", len(text)) + text
        at = data.index(framed)
        cuts.append((at, at + len(framed), slot))
    out: list[bytes | int] = []
    pos = 0
    for start, stop, slot in sorted(cuts):
        out += [data[pos:start], slot]
        pos = stop
    out.append(data[pos:])
    return out


def encoded_batches(ds: Dataset, location: str, batch: int, start: int) -> Iterator[bytes]:
    """The add_partitions calls of partitions ``start`` .. N, each encoded (binary), the
    partitions made from one encoded template (encoding each would cap the load rate)."""
    template = _template(ds, location)
    base = location.rstrip("/")
    head = TMemoryBuffer()
    proto = TBinaryProtocol(head)
    proto.write_message_begin("add_partitions", TMessageType.CALL, 0)
    head_bytes = head.getvalue()
    for first in range(start, ds.size, batch):
        values = list(ds.values(first, first + batch))
        chunks = [head_bytes, struct.pack("!bhbi", 15, 1, 12, len(values))]
        for v in values:
            texts = [x.encode() for x in v]
            where = f"{base}/ds={v[0]}/hr={v[1]}/region={v[2]}".encode()
            for piece in template:
                if isinstance(piece, bytes):
                    chunks.append(piece)
                else:
                    text = where if piece < 0 else texts[piece]
                    chunks.append(struct.pack("!i", len(text)) + text)
        chunks.append(b"\x00")  # the arguments' stop
        yield b"".join(chunks)


def load(server: OurServer, ds: Dataset, batch: int, connections: int) -> tuple[int, float]:
    """Load the partitions the table lacks (it must hold a prefix of the data set); (loaded,
    seconds)."""
    client = client_of(server)
    try:
        with contextlib.suppress(hms.AlreadyExistsException):
            client.create_database(hms.Database(name=DB, description="scale", parameters={}))
        with contextlib.suppress(hms.AlreadyExistsException):
            client.create_table(make_table(ds))
        location = str(client.get_table(DB, ds.table).sd.location)
        present = client.get_num_partitions_by_filter(DB, ds.table, "")
    finally:
        client.close()
    start = present - present % batch
    if start != present:
        raise SystemExit(f"{ds.table} holds {present:,} partitions, not whole batches: --drop")
    if start >= ds.size:
        return 0, 0.0
    messages: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
    done = [0]
    lock = threading.Lock()
    failure: list[BaseException] = []

    def produce() -> None:
        for message in encoded_batches(ds, location, batch, start):
            messages.put(message)
        for _ in range(connections):
            messages.put(None)

    def send() -> None:
        sender = client_of(server)
        try:
            trans = sender._oprot.trans
            while (message := messages.get()) is not None:
                trans.write(message)
                trans.flush()
                sender._recv("add_partitions")
                with lock:
                    done[0] += batch
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            failure.append(exc)
        finally:
            sender.close()

    started = time.monotonic()
    threads = [threading.Thread(target=produce, daemon=True)]
    threads += [threading.Thread(target=send, daemon=True) for _ in range(connections)]
    for thread in threads:
        thread.start()
    while alive := [t for t in threads[1:] if t.is_alive()]:
        alive[0].join(30)  # (one sender may end before the others: wait on one still alive)
        elapsed = time.monotonic() - started
        log(f"  {start + done[0]:,}/{ds.size:,} ({done[0] / elapsed:,.0f} partitions/s)")
    if failure:
        raise failure[0]
    return ds.size - start, time.monotonic() - started


def client_of(server: OurServer) -> Any:
    """A binary, buffered client of the server."""
    endpoint = server.endpoint
    return thrift_api.make_client(endpoint.host, endpoint.port, timeout_ms=3_600_000)


def timed(pid: int, call: Callable[[], int], repeat: int) -> tuple[float, float, int, float]:
    """(median ms, min ms, the answer's size, growth of the server's peak memory in MiB)."""
    call()  # warm
    base = rss_kib(pid)
    reset_peak(pid)
    samples = []
    size = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        size = call()
        samples.append((time.perf_counter() - t0) * 1000)
    growth = (peak_kib(pid) - base) / 1024
    return statistics.median(samples), min(samples), size, growth


def measure(
    server: OurServer, ds: Dataset, repeat: int
) -> list[tuple[str, float, float, int, float]]:
    """The timed operations of the module docstring (all but the restart)."""
    pid = server.process.pid if server.process is not None else 0
    client = client_of(server)
    mid = ds.days // 2
    day = ds.day(mid)
    regions = ds.regions
    point = [day, "7", regions[len(regions) // 2]]
    latest = latest_ds_request(ds.table)
    step = max(1, ds.size // 1000)
    names = [
        f"ds={v[0]}/hr={v[1]}/region={v[2]}"
        for i in range(0, ds.size, step)
        for v in ds.values(i, i + 1)
    ][:1000]
    table = ds.table

    def raw(method: str, *args: Any) -> Callable[[], int]:
        return lambda: raw_call(client, method, DB, table, *args)

    def point_lookup() -> int:
        return len([client.get_partition(DB, table, point)])

    def latest_value() -> int:
        return len(client.get_partition_values(latest).partitionValues)

    whole_filter = '(region) in ("r1", "r2")'
    ops: list[tuple[str, Callable[[], int], int]] = [
        ("point lookup (get_partition)", point_lookup, repeat),
        ("latest ds (get_partition_values)", latest_value, repeat),
        (
            f'leading-key range ds = "{day}"',
            raw("get_partitions_by_filter", f'ds = "{day}"', -1),
            repeat,
        ),
        ("get_partition_names_ps (one day)", raw("get_partition_names_ps", [day], -1), repeat),
        ("get_partitions_by_names (1,000 names)", raw("get_partitions_by_names", names), repeat),
        ("get_partition_names, whole table", raw("get_partition_names", -1), 1),
        ("get_partition_names, whole table again", raw("get_partition_names", -1), 1),
        (f"{whole_filter}, whole table", raw("get_partitions_by_filter", whole_filter, -1), 1),
        (f"{whole_filter}, again", raw("get_partitions_by_filter", whole_filter, -1), 1),
    ]
    out = []
    try:
        for label, call, times in ops:
            log(f"  {label} ...")
            median, low, size, growth = timed(pid, call, times)
            out.append((label, median, low, size, growth))
    finally:
        client.close()
    return out


def restart(server: OurServer, ds: Dataset) -> tuple[float, float, float]:
    """Stop and start the server: (seconds until it answers, its resident MiB then, ms of the
    first point lookup)."""
    server.stop()
    started = time.monotonic()
    server.start()
    client = client_of(server)
    try:
        client.getVersion()
        ready = time.monotonic() - started
        pid = server.process.pid if server.process is not None else 0
        memory = rss_kib(pid) / 1024
        t0 = time.perf_counter()
        client.get_partition(DB, ds.table, [ds.day(ds.days // 3), "3", ds.regions[0]])
        first = (time.perf_counter() - t0) * 1000
    finally:
        client.close()
    return ready, memory, first


def main(argv: list[str] | None = None) -> int:
    """Load, measure, restart, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000_000, help="partitions")
    parser.add_argument("--regions", type=int, default=10, help="regions per day and hour")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/scale-partitions"))
    parser.add_argument("--batch", type=int, default=1000, help="partitions per add_partitions")
    parser.add_argument("--connections", type=int, default=2, help="connections loading")
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per operation")
    parser.add_argument("--listing-cache-mb", type=int, default=256)
    parser.add_argument("--drop", action="store_true", help="delete the store afterwards")
    add_hbase_arguments(parser)
    args = parser.parse_args(argv)
    check_hbase_arguments(parser, args)
    ds = ScaleDataset(args.size, args.regions)
    server = OurServer(
        args.data_dir,
        port=None,
        extra_args=["--data-operations", "off", "--listing-cache-mb", str(args.listing_cache_mb)],
    )
    with contextlib.ExitStack() as stack:
        hbase = hbase_storage(args.hbase, args.hbase_double, stack, log)
        if hbase is not None:
            server.storage = hbase
        return run(server, ds, args)


def run(server: OurServer, ds: ScaleDataset, args: argparse.Namespace) -> int:
    """Load, measure, restart and print on ``server``."""
    try:
        server.start()
        log(f"loading {DB}.{ds.table}: {ds.size:,} partitions ({ds.days:,} days) ...")
        loaded, seconds = load(server, ds, args.batch, args.connections)
        db_file = args.data_dir / "metastore.db"
        store = (
            f"store {db_file.stat().st_size / 2**30:.2f} GiB"
            if server.storage.startswith("sqlite:")
            else f"store {server.storage}"
        )
        print(
            f"table {DB}.{ds.table}: {ds.size:,} partitions, {ds.days:,} days x 24 hours x "
            f"{len(ds.regions)} regions; {store}"
        )
        if loaded:
            print(
                f"load: {loaded:,} partitions in {seconds:,.0f} s = {loaded / seconds:,.0f} "
                f"partitions/s ({args.connections} connections, {args.batch} per call, "
                "encoded by one client thread meanwhile, no directories)"
            )
            if server.storage.startswith("hbase:"):
                log("HBase's own rate (the limit) ...")
                line = store_limit(server.storage, loaded / seconds, batch=args.batch,
                                   connections=args.connections, max_rows=LIMIT_ROWS)
                print(line)
        log("restart ...")
        ready, memory, first = restart(server, ds)
        print(
            f"restart: answering after {ready:.2f} s with {memory:.0f} MiB resident; first "
            f"point lookup {first:.2f} ms"
        )
        log("measuring ...")
        rows = measure(server, ds, args.repeat)
        print(
            f"{'operation':45s} {'p50 ms':>10s} {'min ms':>10s} {'returned':>12s} "
            f"{'peak +MiB':>10s}"
        )
        for label, median, low, size, growth in rows:
            print(f"{label:45s} {median:10.2f} {low:10.2f} {size:12,d} {growth:10.1f}")
    finally:
        server.stop()
        if args.drop:
            shutil.rmtree(args.data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
