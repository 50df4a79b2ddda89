"""HBase write-rate benchmark (docs/benchmarks.md, "Writes on HBase"): partitions per second of
our server's add, alter, drop and rename on HBase, each beside HBase's own rate for the same
rows in the same run (the limit: what the gateway takes as batched puts and deletes, with no
metastore in between).

One table of ``--size`` partitions (keys ds/hr/region, as the load-rate benchmark's), data
operations off (the file system is not measured here). Each phase is timed at the client:

* ``add``: ``add_partitions`` calls of ``--batch`` partitions, encoded beforehand;
* ``alter``: ``alter_partitions`` of the same batches, one parameter changed;
* ``rename``: ``rename_partition`` of ``--renames`` partitions, one call each;
* ``drop``: ``drop_partitions_req`` of the batches by name (data kept).

The limit of each is measured right after it through happybase on the same gateway: the table's
partition rows as our server stored them (read back, untimed) put again into a scratch table
in ``mutateRows`` batches of ``--batch`` (add, alter), deleted in batches (drop), and for a
rename one row put and one deleted per partition. Targets (issue 52): adds within 2x of the
limit, alters and drops within 3x.

It prints figures and asserts nothing; it is not collected by pytest::

    .venv/bin/python tests/bench/hbase_writes.py --hbase-double --size 5000
    .venv/bin/python tests/bench/hbase_writes.py --hbase 127.0.0.1:9090 --size 20000
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_path  # noqa: E402, F401 - puts the repository on sys.path
from bench_report import log, machine_info  # noqa: E402
from hbase_target import add_hbase_arguments, check_hbase_arguments, hbase_storage  # noqa: E402
from partition_dataset import DB, LoadDataset, make_partition, make_table  # noqa: E402

from metastore_server import __version__ as OUR_VERSION  # noqa: E402
from metastore_server import thrift_api  # noqa: E402
from metastore_server.thrift_api import hms  # noqa: E402

#: Ours / limit that issue 52 aims for, by phase.
TARGETS = {"add": 2.0, "alter": 3.0, "drop": 3.0, "rename": 3.0}


@dataclass
class Phase:
    """One phase's rate and its limit's, in partitions per second."""

    name: str
    rows: int
    ours_s: float
    limit_s: float

    def line(self) -> str:
        ours, limit = self.rows / self.ours_s, self.rows / self.limit_s
        ratio = self.ours_s / self.limit_s
        target = TARGETS[self.name]
        verdict = "ok" if ratio <= target else "over"
        return (f"{self.name:<7} {self.rows:>7} {ours:>12,.0f} {limit:>12,.0f} "
                f"{ratio:>7.1f}x {target:>6.0f}x  {verdict}")  # fmt: skip


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


class RawHBase:
    """HBase's own writes of the same rows: a scratch table beside our server's, on the same
    gateway, written through happybase."""

    def __init__(self, url: str, batch: int) -> None:
        import happybase
        from metastore_server.storage.hbase_settings import HBaseSettings

        settings = HBaseSettings.from_url(url)
        self.batch = batch
        self.connection = happybase.Connection(settings.host, settings.port,
                                               autoconnect=True, timeout=600_000)  # fmt: skip
        self.ours = self.connection.table(settings.table_name("parts"))
        self.scratch_name = settings.table_name("raw_limit")
        families = {name.decode() for name in self.ours.families()}
        self.connection.create_table(self.scratch_name, {name: {} for name in families})
        self.scratch = self.connection.table(self.scratch_name)

    def rows(self) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """Our server's partition rows as stored (untimed)."""
        return list(self.ours.scan(batch_size=self.batch))

    def put_all(self, rows: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> float:
        """Seconds to put ``rows`` into the scratch table, in batches."""

        def run() -> None:
            for chunk in _batches(rows, self.batch):
                with self.scratch.batch() as batch:
                    for key, columns in chunk:
                        batch.put(key, columns)

        return _timed(run)

    def delete_all(self, rows: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> float:
        """Seconds to delete these rows of the scratch table, in batches (each row's columns
        named: happybase sends a whole-row delete as a call of its own)."""

        def run() -> None:
            for chunk in _batches(rows, self.batch):
                with self.scratch.batch() as batch:
                    for key, columns in chunk:
                        batch.delete(key, columns=list(columns))

        return _timed(run)

    def renames(self, rows: Sequence[tuple[bytes, dict[bytes, bytes]]]) -> float:
        """Seconds to move each row to a new key: one put and one delete a row, a row at a
        time (as one rename call moves one partition)."""

        def run() -> None:
            for key, columns in rows:
                self.scratch.put(key + b"~", columns)
                self.scratch.delete(key, columns=list(columns))

        return _timed(run)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.disable_table(self.scratch_name)
            self.connection.delete_table(self.scratch_name)
        self.connection.close()


def _names(ds: LoadDataset, count: int) -> list[str]:
    return [f"ds={v[0]}/hr={v[1]}/region={v[2]}" for v in ds.values(0, count)]


def run_phases(
    client: Any, raw: RawHBase, ds: LoadDataset, args: argparse.Namespace
) -> list[Phase]:
    """The four phases on one fresh table, each followed by its limit."""
    client.create_table(make_table(ds))
    location = client.get_table(DB, ds.table).sd.location
    parts = [make_partition(ds, v, location) for v in ds.values(0, ds.size)]
    batches = list(_batches(parts, args.batch))
    phases = []
    ours = _timed(lambda: [client.add_partitions(list(b)) for b in batches])
    rows = raw.rows()
    phases.append(Phase("add", len(parts), ours, raw.put_all(rows)))
    for part in parts:
        part.parameters = {"bench": "altered"}
    ours = _timed(lambda: [client.alter_partitions(DB, ds.table, list(b)) for b in batches])
    rows = raw.rows()
    phases.append(Phase("alter", len(parts), ours, raw.put_all(rows)))
    count = min(args.renames, len(parts))

    def rename() -> None:
        for part in parts[:count]:
            values = [part.values[0], part.values[1], part.values[2] + "x"]
            moved = hms.Partition(values=values, dbName=DB, tableName=ds.table, sd=part.sd,
                                  parameters={})  # fmt: skip
            client.rename_partition(DB, ds.table, list(part.values), moved)

    ours = _timed(rename)
    phases.append(Phase("rename", count, ours, raw.renames(rows[:count])))
    names = _names(ds, ds.size)
    for index in range(count):  # the renamed ones go by their new names
        head, _, region = names[index].rpartition("=")
        names[index] = f"{head}={region}x"

    def drop() -> None:
        for chunk in _batches(names, args.batch):
            request = hms.DropPartitionsRequest(
                dbName=DB, tblName=ds.table, parts=hms.RequestPartsSpec(names=list(chunk)),
                deleteData=False, ifExists=True, needResult=False,
            )  # fmt: skip
            client.drop_partitions_req(request)

    ours = _timed(drop)
    phases.append(Phase("drop", len(names), ours, raw.delete_all(rows)))
    client.drop_table(DB, ds.table, True)
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000, help="partitions (default 5000)")
    parser.add_argument("--batch", type=int, default=1000, help="partitions a call (1000)")
    parser.add_argument("--renames", type=int, default=200, help="renamed partitions (200)")
    add_hbase_arguments(parser)
    args = parser.parse_args()
    check_hbase_arguments(parser, args)
    if not args.hbase:
        args.hbase_double = True
    from support.our_server import OurServer

    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        url = hbase_storage(args.hbase, args.hbase_double, stack, log)
        assert url is not None
        server = OurServer(Path(scratch) / "ours", extra_args=["--data-operations", "off"])
        server.storage = url
        endpoint = stack.enter_context(server)
        client = thrift_api.make_client(endpoint.host, endpoint.port, timeout_ms=600_000)
        stack.callback(client.close)
        with contextlib.suppress(Exception):
            client.create_database(hms.Database(name=DB, parameters={}))
        raw = RawHBase(url, args.batch)
        stack.callback(raw.close)
        phases = run_phases(client, raw, LoadDataset(args.size), args)
    where = f"HBase at {args.hbase}" if args.hbase else "the HBase double (not HBase's figures)"
    print(f"\nWrites on HBase: hbase-metastore {OUR_VERSION} on {where}")
    print("\n".join(machine_info()))
    print(f"\n{'phase':<7} {'rows':>7} {'ours rows/s':>12} {'limit rows/s':>12} "
          f"{'ratio':>8} {'target':>7}")  # fmt: skip
    for phase in phases:
        print(phase.line())


if __name__ == "__main__":
    main()
