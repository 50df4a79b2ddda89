"""``metastore-server bench``: time a mix of metastore calls on tables of growing partition
counts, against one or more running metastores (ours or any Hive Metastore), and write the
figures as a text table, a CSV file and a PNG plot."""

from __future__ import annotations

import argparse
import re
import secrets
import socket
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

from metastore_server import bench_plot, benchmark
from metastore_server.cli_common import DEFAULT_URI
from metastore_server.client import DEFAULT_PORT

COMMAND = "bench"
CSV_NAME = "results.csv"
PNG_NAME = "latency.png"
CONNECT_TIMEOUT_S = 10.0
_DB_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def _counts(text: str) -> list[int]:
    try:
        counts = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        counts = []
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive counts like 100,1000, not {text!r}")
    return counts


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--uri",
        action="append",
        dest="uris",
        metavar="URI",
        help=f"a metastore to time, thrift://host:port; repeat to compare (default {DEFAULT_URI})",
    )
    parser.add_argument(
        "--partitions",
        type=_counts,
        default=[100, 1000, 10000],
        metavar="N[,N...]",
        help="partition counts, one table each (default 100,1000,10000)",
    )
    parser.add_argument(
        "--calls", type=_positive, default=20, help="timed calls per operation (default 20)"
    )
    parser.add_argument(
        "--warmup", type=_non_negative, default=3, help="untimed calls first (default 3)"
    )
    parser.add_argument(
        "--database",
        help="database to create and use (default benchdb_<random>); it must not exist",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help=f"directory for {CSV_NAME} and {PNG_NAME} (default ./bench-<timestamp>)",
    )
    parser.add_argument(
        "--batch",
        type=_positive,
        default=1000,
        help="partitions per add_partitions_req while loading (default 1000)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds one call may take (default 600)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the database and its tables afterwards"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar while loading partitions"
    )


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the ``bench`` subcommand."""
    bench = sub.add_parser(
        COMMAND,
        help="time metastore calls on tables of 100 to 10,000+ partitions",
        description="Create a database, then per partition count N a table of N partitions "
        "(keys ds string, hr int, region string), and time get_table, get_partition_names, "
        "get_partitions_by_filter (point, leading-key range, non-leading key, IN list), "
        "get_partitions_by_names, get_partition_values and adding then dropping partitions on "
        "each metastore given. Prints mean/median/p95/p99 latencies, writes them to a CSV file "
        "and plots the medians against N in a PNG; drops the database afterwards.",
    )
    _configure(bench)


def _check_uri(uri: str) -> str | None:
    """Why ``uri`` is not thrift://host[:port], or None."""
    parts = urlparse(uri)
    if parts.scheme != "thrift" or not parts.hostname:
        return f"metastore URI must be thrift://host:port, not {uri!r}"
    try:
        _ = parts.port
    except ValueError:
        return f"bad port in {uri!r}"
    return None


def _open(targets: list[benchmark.Target], db: str) -> int:
    """Connect to every target and check ``db`` is free: 0, else the exit code (printed)."""
    from thriftpy2.thrift import TApplicationException
    from thriftpy2.transport import TTransportException

    from metastore_server.thrift_api import hms

    for t in targets:
        parts = urlparse(t.uri)
        try:  # a short probe first: an unanswering host fails in seconds, not --timeout
            socket.create_connection(
                (parts.hostname, parts.port or DEFAULT_PORT), timeout=CONNECT_TIMEOUT_S
            ).close()
            client = t.connect()
        except Exception as exc:  # noqa: BLE001 - any connection failure is reported the same way
            print(f"{COMMAND}: cannot reach {t.uri}: {exc}", file=sys.stderr)
            return 2
        try:
            client.get_database(db)
        except hms.NoSuchObjectException:
            continue
        except (TTransportException, OSError, TApplicationException) as exc:
            print(f"{COMMAND}: {t.uri} does not answer as a metastore: {exc}", file=sys.stderr)
            return 2
        except hms.MetaException as exc:
            print(f"{COMMAND}: {t.uri}: {exc.message}", file=sys.stderr)
            return 1
        print(
            f"{COMMAND}: database {db} already exists in {t.uri}; pick another --database "
            "(the benchmark drops its database afterwards)",
            file=sys.stderr,
        )
        return 1
    return 0


def _create_databases(
    targets: list[benchmark.Target], db: str, created: list[benchmark.Target]
) -> None:
    """Create ``db`` in every target, appending each to ``created`` (dropped afterwards)."""
    from metastore_server.thrift_api import hms

    for t in targets:
        assert t.client is not None
        t.client.create_database(
            hms.Database(name=db, description="metastore-server bench", parameters={})
        )
        created.append(t)


def _drop_databases(targets: list[benchmark.Target], db: str) -> None:
    for t in targets:
        try:
            client = t.connect()
            client.drop_database(db, True, True)
            benchmark.log(sys.stderr, f"dropped database {db} from {t.label}")
        except Exception as exc:  # noqa: BLE001 - report and go on with the others
            print(
                f"{COMMAND}: could not drop database {db} from {t.uri}: "
                f"{benchmark.error_text(exc)}",
                file=sys.stderr,
            )


def _write_outputs(
    out: Path, rows: list[benchmark.Row], metastores: list[str]
) -> tuple[Path, Path, tuple[int, int]]:
    csv_path, png_path = out / CSV_NAME, out / PNG_NAME
    benchmark.write_csv(csv_path, rows)
    panels: dict[str, dict[str, dict[int, float]]] = {}
    for name in benchmark.OPERATION_NAMES:
        panels[name] = {m: {} for m in metastores}
    for r in rows:
        panels.setdefault(r.operation, {m: {} for m in metastores})
        panels[r.operation][r.metastore][r.partitions] = r.stats.median
    size = bench_plot.write_png(
        png_path, panels, metastores, "median latency (ms) by partition count"
    )
    return csv_path, png_path, size


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; 0 on success, 1 when the metastore refused the setup, 2 when a
    metastore cannot be reached (or the arguments are wrong)."""
    uris = args.uris or [DEFAULT_URI]
    for uri in uris:
        problem = _check_uri(uri)
        if problem is not None:
            print(f"{COMMAND}: --uri: {problem}", file=sys.stderr)
            return 2
    db = args.database or f"benchdb_{secrets.token_hex(4)}"
    if not _DB_NAME.match(db):
        print(f"{COMMAND}: --database must be letters, digits and _, not {db!r}", file=sys.stderr)
        return 2
    out = args.out or Path(f"bench-{datetime.now():%Y%m%d-%H%M%S}")
    timeout_ms = int(args.timeout * 1000)
    targets = [
        benchmark.Target(label, uri, timeout_ms=timeout_ms)
        for label, uri in zip(benchmark.labels(uris), uris, strict=True)
    ]
    progress = not args.no_progress and benchmark.stderr_is_tty()
    created: list[benchmark.Target] = []
    rows: list[benchmark.Row] = []
    try:
        code = _open(targets, db)
        if code:
            return code
        try:  # before the run, not after it: an unwritable --out would lose the figures
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"{COMMAND}: --out {out}: {exc}", file=sys.stderr)
            return 2
        try:
            _create_databases(targets, db, created)
        except Exception as exc:  # noqa: BLE001 - e.g. no permission
            message = benchmark.error_text(exc)
            print(f"{COMMAND}: cannot create database {db}: {message}", file=sys.stderr)
            return 1
        benchmark.log(
            sys.stderr,
            f"database {db} on {', '.join(t.label for t in targets)}; partitions "
            f"{','.join(map(str, args.partitions))}; {args.warmup} warm-up + {args.calls} calls",
        )
        for n in args.partitions:
            layout = benchmark.Layout(n)
            for t in targets:
                try:
                    load, target_rows = benchmark.bench_target(
                        t,
                        db,
                        layout,
                        warmup=args.warmup,
                        calls=args.calls,
                        batch=args.batch,
                        progress=progress,
                        err=sys.stderr,
                    )
                except Exception as exc:  # noqa: BLE001 - loading failed: stop here
                    print(
                        f"{COMMAND}: benchmarking {db}.{layout.table} on {t.uri} failed: "
                        f"{benchmark.error_text(exc)}",
                        file=sys.stderr,
                    )
                    return 1
                rows.extend(target_rows)
                benchmark.log(
                    sys.stderr,
                    f"{t.label}: loaded {n:,} partitions in {load.seconds:.2f} s "
                    f"({load.rate:,.0f} partitions/s), timed {len(target_rows)} operations",
                )
    except KeyboardInterrupt:
        print(f"{COMMAND}: interrupted", file=sys.stderr)
        return 130
    finally:
        if created and not args.keep:
            _drop_databases(created, db)
        for t in targets:
            t.close()
    csv_path, png_path, (width, height) = _write_outputs(out, rows, [t.label for t in targets])
    print(benchmark.format_table(rows))
    print()
    largest = args.partitions[-1]
    print(f"operations (on {largest:,} partitions):")
    for name, what in benchmark.describe_operations(db, benchmark.Layout(largest)):
        print(f"  {name:<24} {what}")
    print()
    print(f"wrote {csv_path} and {png_path} ({width}x{height})")
    if args.keep:
        print(f"kept database {db}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m metastore_server.cli_bench``: the subcommand on its own."""
    parser = argparse.ArgumentParser(
        prog=f"metastore-server {COMMAND}",
        description="Time metastore calls on tables of growing partition counts.",
    )
    _configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
