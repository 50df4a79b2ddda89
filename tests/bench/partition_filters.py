"""Partition-filter benchmark (docs/benchmarks.md): latency of filter shapes on big partitioned
tables.

Loads ``bench_db.events_<N>`` (partition keys ds string, hr int, region string; N partitions
through ``add_partitions``; one table per size, so that a re-run of any size reuses what is
loaded) into each target metastore, then times the filter shapes of :func:`shapes` on each:
p50/p90/p99 latency, partitions returned, partitions per second and, for our server when this
script starts it, the rows it scanned (from its audit lines). It prints figures and never
asserts anything; it is not collected by pytest.

The partition directories are created before the partitions are registered, as a writer of
the data files would (``--server-mkdirs`` leaves that to the servers: HMS on a local warehouse
then forks ``ls``/``chmod``/``chown`` for every directory, pyspark's jars having no native
Hadoop library, which caps its load at ~20 partitions/s).

Targets: our server (started here on 127.0.0.1 with its store in ``--data-dir``, or
``--ours thrift://127.0.0.1:PORT``), any ``--reference thrift://127.0.0.1:PORT``, and with
``--reference-hms postgres`` the reference Apache Hive Metastore 2.3.x (pyspark's jars) on a
PostgreSQL started here. That metastore listens on every interface, so it is only started in a
private network namespace whose only interface is loopback::

    unshare -n bash -c 'ip link set lo up; \\
        .venv/bin/python tests/bench/partition_filters.py --reference-hms postgres'

Latency is measured at a client chosen with ``--client``:

* ``python`` (default): thriftpy2; the reply is read off the socket and its partitions skipped
  without building objects (thriftpy2 decodes far slower than a Java client would, and both
  servers pay the same);
* ``python-decode``: thriftpy2, replies decoded;
* ``java``: Hive's own generated Java client from the pyspark jars (what Spark runs), replies
  decoded into Java objects (``tests/bench/java/MetastoreBenchClient.java``);
* ``java-skip``: the same Java client sending the same requests, the reply walked with Thrift's
  ``TProtocolUtil.skip`` (every byte read, no object built): the server's side of a call with
  the least client cost Java's Thrift library allows;
* ``drain``: framed transport on every server (ours is started with ``--transport framed``, the
  reference HMS with ``hive.metastore.thrift.framed.transport.enabled``; a ``--reference`` or
  ``--ours`` URI must be framed too): each reply frame is read whole off the socket and only its
  result header is looked at, so the time is the server's, not a client's decoding.

With ``--byte-copy`` each shape is also timed on its byte-copy limit (a row ``limit``): a
loopback server that answers with our server's reply to the same call, encoded beforehand,
read by the same client (``python``, ``python-decode`` or ``java``/``java-skip`` clients;
not ``drain``, which needs framed servers). No server can answer a shape in less than its
limit with that client, so the limit over the reference's time is the best ratio the shape can
show with that client.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from bench_options import add_common_arguments, check_common_arguments
from bench_report import log, machine_info, report
from bench_targets import (
    ISOLATED_HINT,
    Target,
    reference_preflight,
    start_ours_on_hbase,
    start_targets,
)
from byte_copy import ByteCopyProcess, encode_reply
from filter_shapes import Shape, shapes
from partition_dataset import Dataset
from partition_load import load_report, load_targets
from process_quiet import wait_quiet
from shape_timing import Result, error_text, time_shape
from support.net import LOOPBACK
from timing_clients import CLIENT_DESCRIPTIONS, CLIENTS


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Partition-filter benchmark: prints latency figures per filter shape.",
        epilog=f"Reference HMS on PostgreSQL (as root): {ISOLATED_HINT}",
    )
    add_common_arguments(
        parser,
        sizes="10000,100000",
        sizes_help="(default %(default)s; 1000000 allowed)",
        data_dir=Path("var/bench"),
    )
    parser.add_argument(
        "--reference-hms",
        choices=("postgres", "derby"),
        help="start the reference Hive Metastore 2.3.x here, on PostgreSQL (or Derby)",
    )
    parser.add_argument("--reference-heap", default="4g", help="its JVM heap (default 4g)")
    parser.add_argument(
        "--reference-property",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a hive-site.xml property of the reference HMS started here, repeatable",
    )
    parser.add_argument(
        "--client",
        choices=CLIENTS,
        default="python",
        help="the timing client (see the module docstring; default %(default)s)",
    )
    parser.add_argument(
        "--byte-copy",
        action="store_true",
        help="also time each shape on its byte-copy limit (our reply sent as encoded; a row "
        "'limit'; not with --client drain)",
    )
    parser.add_argument(
        "--regions",
        type=int,
        default=0,
        help="regions per day and hour (default: chosen for about 200 days; tables then "
        "events_<N>_r<R>)",
    )
    args = parser.parse_args(argv)
    check_common_arguments(parser, args, {shape.name for shape in shapes(Dataset(1))})
    if args.regions < 0 or args.load_size < 0 or args.load_connections < 1:
        parser.error("--regions and --load-size must be >= 0, --load-connections >= 1")
    if args.byte_copy and (args.client == "drain" or args.ours == "none"):
        parser.error("--byte-copy needs a server of ours and a client other than drain")
    args.reference_props = {}
    for item in args.reference_property:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--reference-property takes KEY=VALUE, got {item!r}")
        args.reference_props[key.strip()] = value.strip()
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when every target could be measured."""
    args = parse_args(argv)
    if args.reference_hms:
        reason = reference_preflight(args.reference_hms)
        if reason is not None:
            log(f"cannot start the reference HMS: {reason}")
            return 2
    with contextlib.ExitStack() as stack:
        targets = start_targets(args, stack)
        print("\n".join(machine_info()))
        for t in targets:
            print(f"{t.name}: {t.description}; getVersion() = {t.version()}")
        print(
            f"client: {CLIENT_DESCRIPTIONS[args.client]}; binary protocol, buffered transport; "
            f"warm-up {args.warmup}, "
            f"then {args.repeat} timed calls per shape (capped at {args.max_seconds:.0f} s)"
        )
        print(
            "columns: n = timed calls; returned = partitions (names; the count for "
            "get_num_partitions_by_filter); parts/s = returned / p50; scanned = rows our server "
            "read (audit line); srv p50 = our server's own time (audit line); "
            "ref/ours = p50 of the row / p50 of ours"
        )
        sys.stdout.flush()
        if args.load_size > 0:
            on_hbase = start_ours_on_hbase(args, stack) if args.hbase else []
            print(load_report([*targets, *on_hbase], args), flush=True)
        for size in args.size_list:
            ds = Dataset(size, args.regions)
            loads = load_targets(targets, ds, args)
            shape_list = [
                s for s in shapes(ds) if not args.shape_names or s.name in args.shape_names
            ]
            results: dict[tuple[str, str], Result] = {}
            pids = [t.pid for t in targets if t.pid is not None]
            for shape in shape_list:
                for t in targets:
                    log(f"[{size:,}] {shape.name} on {t.name} ...")
                    if pids and wait_quiet(pids) is None:  # the other's leftovers untimed
                        log("  a server was still busy; timed anyway")
                    results[(t.name, shape.name)] = time_shape(
                        t,
                        shape,
                        client_kind=args.client,
                        warmup=args.warmup,
                        repeat=args.repeat,
                        max_seconds=args.max_seconds,
                    )
                if args.byte_copy:
                    log(f"[{size:,}] {shape.name} on its byte-copy limit ...")
                    results[(LIMIT.name, shape.name)] = time_limit(targets[0], shape, args)
            shown = [*targets, LIMIT] if args.byte_copy else targets
            print(report(ds, shown, loads, results, shape_list), flush=True)
    return 0


#: The row of the byte-copy limit in the report (its port is each shape's own).
LIMIT = Target("limit", LOOPBACK, 0, "our replies sent as encoded beforehand")


def time_limit(ours: Target, shape: Shape, args: argparse.Namespace) -> Result:
    """``shape`` timed on its byte-copy limit: our server's reply to it (decoded and encoded
    again here, untimed) sent by a server that does nothing else."""
    try:
        with ours.connected() as client:
            success = getattr(client, shape.method)(*shape.args)
        reply = encode_reply(shape.method, success)
    except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
        return Result(error=error_text(exc))
    with ByteCopyProcess(reply) as port:
        target = dataclasses.replace(LIMIT, port=port)
        return time_shape(target, shape, client_kind=args.client, warmup=args.warmup,
                          repeat=args.repeat, max_seconds=args.max_seconds)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
