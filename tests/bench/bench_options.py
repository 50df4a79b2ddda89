"""The command-line options every partition benchmark of this folder takes (sizes, shapes,
timing, targets, loading)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_common_arguments(
    parser: argparse.ArgumentParser, *, sizes: str, sizes_help: str, data_dir: Path
) -> None:
    """The options every benchmark of this folder takes (sizes, shapes, timing, targets,
    loading); ``check_common_arguments`` reads them."""
    parser.add_argument(
        "--sizes", default=sizes, help=f"partition counts, comma-separated {sizes_help}"
    )
    parser.add_argument(
        "--shapes",
        default="",
        help="only these shapes, comma-separated (default: all; names as in the report)",
    )
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per shape")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls first")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="stop timing a shape after this long (at least one timed call; default 60)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=data_dir,
        help=f"where started servers keep their data between runs (default ./{data_dir})",
    )
    parser.add_argument(
        "--ours",
        metavar="URI",
        help="an already running server of ours instead of starting one (no rows-read "
        "figures then); 'none': no server of ours (then there is no ratio column)",
    )
    parser.add_argument(
        "--reference",
        metavar="URI",
        action="append",
        default=[],
        help="another metastore to compare (thrift://127.0.0.1:PORT), repeatable",
    )
    parser.add_argument("--batch", type=int, default=1000, help="partitions per add_partitions")
    parser.add_argument(
        "--load-size",
        type=int,
        default=20_000,
        help="partitions of the load-rate measurement, 0 to skip it (default %(default)s)",
    )
    parser.add_argument(
        "--load-connections",
        type=int,
        default=2,
        help="connections sending the load-rate measurement's calls (default %(default)s)",
    )
    parser.add_argument("--load-threads", type=int, default=4, help="client threads loading")
    parser.add_argument(
        "--hbase",
        metavar="HOST:PORT",
        default=os.environ.get("HBASE_THRIFT", ""),
        help="also measure the load rate of a server of ours on this HBase Thrift1 gateway "
        "(its tables under a fresh prefix), beside the embedded store's (default: "
        "$HBASE_THRIFT)",
    )
    parser.add_argument(
        "--server-mkdirs",
        action="store_true",
        help="let the servers create the partition directories while loading (default: create "
        "them first, as a writer of the data files would; HMS on a local warehouse forks "
        "ls/chmod/chown per directory)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="client socket timeout, s (default 600)"
    )


def check_common_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, known_shapes: set[str]
) -> None:
    """Check the options of ``add_common_arguments``; sets ``size_list`` (ascending, no
    repeats) and ``shape_names``."""
    try:
        sizes = {int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()}
    except ValueError:
        parser.error(f"--sizes must be integers, got {args.sizes!r}")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes must be positive")
    args.size_list = sorted(sizes)
    args.shape_names = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = sorted(set(args.shape_names) - known_shapes)
    if unknown:
        names = ", ".join(sorted(known_shapes))
        parser.error(f"unknown --shapes {', '.join(unknown)}; known: {names}")
    if args.repeat < 1 or args.warmup < 0:
        parser.error("--repeat must be >= 1 and --warmup >= 0")
