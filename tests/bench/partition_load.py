"""Loading the data set into the targets: each size's table filled once and reused by later
runs, and the load rate of ``add_partitions`` calls encoded beforehand (``load_report``)."""

from __future__ import annotations

import argparse
import contextlib
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench_report import log
from bench_targets import Target
from partition_dataset import (
    DB,
    Dataset,
    LoadDataset,
    encoded_adds,
    hms,
    make_partition,
    make_table,
)
from shape_timing import error_text
from timing_clients import raw_call


@dataclass
class LoadResult:
    """How a table came to hold its partitions."""

    partitions: int
    seconds: float
    reused: bool
    threads: int = 0
    batch: int = 0
    dirs_seconds: float | None = None  # creating the partition directories beforehand

    def describe(self) -> str:
        """One line for the report."""
        if self.reused:
            return f"reused ({self.partitions:,} partitions already there)"
        rate = self.partitions / self.seconds if self.seconds else 0.0
        dirs = (
            "the server created the partition directories"
            if self.dirs_seconds is None
            else f"directories created beforehand in {self.dirs_seconds:.1f} s, not counted"
        )
        return (
            f"loaded {self.partitions:,} in {self.seconds:.1f} s = {rate:,.0f} partitions/s "
            f"({self.threads} threads x {self.batch} per add_partitions; {dirs})"
        )


def count_partitions(target: Target, ds: Dataset) -> int | None:
    """Partitions of the data set's table, None when the table does not exist."""
    with target.connected() as client:
        try:
            client.get_table(DB, ds.table)
        except hms.NoSuchObjectException:
            return None
        return raw_call(client, "get_partition_names", DB, ds.table, -1)


def ensure_table(target: Target, ds: Dataset) -> str:
    """Create the database and the table when missing; the table's location."""
    with target.connected() as client:
        try:
            client.get_database(DB)
        except hms.NoSuchObjectException:
            with contextlib.suppress(hms.AlreadyExistsException):
                client.create_database(
                    hms.Database(name=DB, description="partition filter benchmark", parameters={})
                )
        try:
            table = client.get_table(DB, ds.table)
        except hms.NoSuchObjectException:
            client.create_table(make_table(ds))
            table = client.get_table(DB, ds.table)
        return str(table.sd.location)


def local_dir(location: str) -> Path | None:
    """The directory of a ``file:`` (or plain path) location, None for other file systems."""
    parts = urlsplit(location)
    if parts.scheme not in ("", "file") or parts.netloc not in ("", "localhost"):
        return None
    return Path(parts.path)


def precreate_dirs(ds: Dataset, table_dir: Path) -> float:
    """Create every partition directory under ``table_dir``, as a writer of the data would
    before registering the partitions; the seconds it took."""
    started = time.monotonic()
    for ds_value, hr, region in ds.values(0, ds.size):
        (table_dir / f"ds={ds_value}" / f"hr={hr}" / f"region={region}").mkdir(
            parents=True, exist_ok=True
        )
    return time.monotonic() - started


def load(
    target: Target, ds: Dataset, *, batch: int, threads: int, precreate: bool, quiet: bool
) -> LoadResult:
    """Make the data set's table hold exactly its partitions (reusing a complete one)."""
    present = count_partitions(target, ds)
    if present == ds.size:
        return LoadResult(present, 0.0, reused=True)
    if present is not None:
        log(f"  {target.name}: {ds.table} holds {present:,} partitions; dropping it")
        with target.connected() as client:
            client.drop_table(DB, ds.table, True)
    location = ensure_table(target, ds)
    dirs_s = None
    table_dir = local_dir(location) if precreate else None
    if table_dir is not None:
        dirs_s = precreate_dirs(ds, table_dir)
    batches = [(i, min(i + batch, ds.size)) for i in range(0, ds.size, batch)]
    local = threading.local()
    clients: list[Any] = []
    done = [0]
    lock = threading.Lock()
    next_report = [time.monotonic() + 10]

    def add(bounds: tuple[int, int]) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = target.client()
            with lock:
                clients.append(client)
        parts = [make_partition(ds, v, location) for v in ds.values(*bounds)]
        client.add_partitions(parts)
        with lock:
            done[0] += len(parts)
            if not quiet and time.monotonic() > next_report[0]:
                next_report[0] = time.monotonic() + 10
                rate = done[0] / (time.monotonic() - started)
                log(f"  {target.name}: {done[0]:,}/{ds.size:,} ({rate:,.0f} partitions/s)")

    started = time.monotonic()
    with ThreadPoolExecutor(threads, thread_name_prefix="load") as pool:
        try:
            list(pool.map(add, batches))
        finally:
            for client in clients:
                with contextlib.suppress(Exception):
                    client.close()
    seconds = time.monotonic() - started
    present = count_partitions(target, ds)
    if present != ds.size:
        raise RuntimeError(f"{target.name}: expected {ds.size} partitions, found {present}")
    return LoadResult(
        ds.size, seconds, reused=False, threads=threads, batch=batch, dirs_seconds=dirs_s
    )


def send_adds(target: Target, messages: list[bytes], connections: int) -> float:
    """Send encoded ``add_partitions`` calls over ``connections`` connections at once, each
    reading its answer before its next call; the seconds taken."""
    pending = list(reversed(messages))
    lock = threading.Lock()

    def send_all() -> None:
        with target.connected() as client:
            socket_trans = client._oprot.trans
            while True:
                with lock:
                    if not pending:
                        return
                    message = pending.pop()
                socket_trans.write(message)
                socket_trans.flush()
                client._recv("add_partitions")

    started = time.perf_counter()
    with ThreadPoolExecutor(connections, thread_name_prefix="load") as pool:
        for future in [pool.submit(send_all) for _ in range(connections)]:
            future.result()
    return time.perf_counter() - started


def measure_load(target: Target, size: int, *, batch: int, connections: int) -> LoadResult:
    """The server's load rate: ``size`` partitions into a fresh table, as add_partitions calls
    of ``batch`` encoded beforehand (the client's encoding is not timed) and sent over
    ``connections`` connections at once, directories made first. The table is dropped after."""
    ds = LoadDataset(size)
    with target.connected() as client, contextlib.suppress(hms.NoSuchObjectException):
        client.drop_table(DB, ds.table, True)
    location = ensure_table(target, ds)
    table_dir = local_dir(location)
    dirs_s = precreate_dirs(ds, table_dir) if table_dir is not None else None
    seconds = send_adds(target, encoded_adds(ds, location, batch, target.framed), connections)
    present = count_partitions(target, ds)
    with target.connected() as client:
        client.drop_table(DB, ds.table, True)
    if present != ds.size:
        raise RuntimeError(f"{target.name}: expected {ds.size} partitions, found {present}")
    return LoadResult(
        ds.size, seconds, reused=False, threads=connections, batch=batch, dirs_seconds=dirs_s
    )


def load_targets(
    targets: Sequence[Target], ds: Dataset, args: argparse.Namespace
) -> dict[str, LoadResult]:
    """Load data set ``ds`` into every target (``add_common_arguments``' loading options)."""
    loads: dict[str, LoadResult] = {}
    for t in targets:
        log(f"[{ds.size:,}] loading {DB}.{ds.table} into {t.name} ...")
        loads[t.name] = load(
            t,
            ds,
            batch=args.batch,
            threads=args.load_threads,
            precreate=not args.server_mkdirs,
            quiet=False,
        )
        log(f"  {t.name}: {loads[t.name].describe()}")
    return loads


def load_report(targets: list[Target], args: argparse.Namespace) -> str:
    """Each target's load rate (``measure_load``), side by side."""
    lines = [
        "",
        f"== load: {args.load_size:,} partitions in add_partitions calls of {args.batch}, "
        f"encoded beforehand, over {args.load_connections} connections ==",
    ]
    rates: dict[str, float] = {}
    for t in targets:
        log(f"measuring the load rate of {t.name} ...")
        try:
            result = measure_load(
                t, args.load_size, batch=args.batch, connections=args.load_connections
            )
        except Exception as exc:  # noqa: BLE001 - reported, the run goes on
            lines.append(f"load {t.name}: error: {error_text(exc)}")
            continue
        rates[t.name] = result.partitions / result.seconds
        ratio = ""
        if "ours" in rates and t.name != "ours":
            ratio = f"  (ours / {t.name} = {rates['ours'] / rates[t.name]:,.1f}x)"
        lines.append(f"load {t.name}: {result.describe()}{ratio}")
    return "\n".join(lines)
