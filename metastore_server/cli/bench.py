"""``metastore-server bench``: time a mix of metastore calls on tables of growing partition
counts, against one or more running metastores (ours or any Hive Metastore), and write the
figures as a text table, a CSV file and a PNG plot."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import signal
import socket
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

from metastore_server.cli.common import (
    DEFAULT_URI,
    add_login,
    login_options,
    non_negative_int,
    positive_int,
    positive_number,
)
from metastore_server.client import DEFAULT_PORT, MetastoreClient
from metastore_server.tools import bench_plot, benchmark

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


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--uri",
        action="append",
        dest="uris",
        metavar="URI",
        help=f"a metastore to time, thrift://host:port; repeat to compare (default {DEFAULT_URI})",
    )
    add_login(parser)
    parser.add_argument(
        "--partitions",
        type=_counts,
        default=[100, 1000, 10000],
        metavar="N[,N...]",
        help="partition counts, one table each (default 100,1000,10000)",
    )
    parser.add_argument(
        "--calls", type=positive_int, default=20, help="timed calls per operation (default 20)"
    )
    parser.add_argument(
        "--warmup", type=non_negative_int, default=3, help="untimed calls first (default 3)"
    )
    parser.add_argument(
        "--database",
        help="database to create and use (default benchdb_<random>); it must not exist",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help=(
            f"directory for {CSV_NAME} and {PNG_NAME} (default "
            "$XDG_DATA_HOME/metastore-server/bench/<timestamp>, ~/.local/share when unset)"
        ),
    )
    parser.add_argument(
        "--batch",
        type=positive_int,
        default=1000,
        help="partitions per add_partitions_req while loading (default 1000)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_number,
        default=600.0,
        help="seconds one call may take (default 600)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the database and its tables afterwards"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar while loading partitions"
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
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
        t.identity = identify(client)
        benchmark.log(sys.stderr, f"{t.label}: {t.identity or 'did not say what it is'}")
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


def identify(client: MetastoreClient) -> str:
    """What a metastore says it is (fb303 ``getName``, ``getVersion``): ours with its version,
    else a reference HMS with the version it reports; empty when it does not answer them."""
    from metastore_server.api.service import SERVICE_NAME

    try:
        name, version = client.getName(), client.getVersion()
    except Exception:  # noqa: BLE001 - a server without fb303's calls just stays unnamed
        return ""
    if name == SERVICE_NAME:
        return f"ours: {name} {version}".rstrip()
    return f"reference HMS, version {version}" if version else "reference HMS"


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


def default_out(now: datetime | None = None) -> Path:
    """Where a run's files go without ``--out``: a directory of its own under the user's data
    directory (never the working directory)."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "metastore-server" / "bench" / f"{now or datetime.now():%Y%m%d-%H%M%S}"


def _write_outputs(
    out: Path, rows: list[benchmark.Row], metastores: dict[str, str]
) -> tuple[Path, Path | None, tuple[int, int]]:
    """Write the CSV file and, with matplotlib, the plot (None and (0, 0) without it);
    ``metastores``: each one's label (host:port) and its legend text."""
    csv_path, png_path = out / CSV_NAME, out / PNG_NAME
    benchmark.write_csv(csv_path, rows)
    panels: dict[str, dict[str, dict[int, float]]] = {}
    for name in benchmark.OPERATION_NAMES:
        panels[name] = {m: {} for m in metastores}
    for r in rows:
        panels.setdefault(r.operation, {m: {} for m in metastores})
        panels[r.operation][r.metastore][r.partitions] = r.stats.median
    if not bench_plot.available():
        return csv_path, None, (0, 0)
    size = bench_plot.write_png(
        png_path, panels, list(metastores), "median latency (ms) by partition count", metastores
    )
    return csv_path, png_path, size


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Meanwhile SIGTERM interrupts like Ctrl-C (so the database is still dropped)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous, installed = signal.signal(signal.SIGTERM, interrupt), True
    except ValueError:  # not the main thread: signals are left as they are
        previous, installed = None, False
    try:
        yield
    finally:
        if installed:  # a handler not set from Python (None) was the default one
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _prepare(
    targets: list[benchmark.Target], db: str, out: Path, created: list[benchmark.Target]
) -> int:
    """Connect, check ``db`` is free, make ``out`` and create ``db``: 0, else the exit code."""
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
    return 0


def _measure(
    args: argparse.Namespace, targets: list[benchmark.Target], db: str, rows: list[benchmark.Row]
) -> int:
    """Load and time every partition count on every target, appending to ``rows``: 0, or 1
    when loading failed (the rows measured before are kept)."""
    progress = not args.no_progress and benchmark.stderr_is_tty()
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
    return 0


def _save_partial(out: Path, rows: list[benchmark.Row], metastores: dict[str, str]) -> None:
    """Write what was measured before the run stopped, if anything."""
    if not rows:
        return
    try:
        csv_path, png_path, _ = _write_outputs(out, rows, metastores)
    except OSError as exc:
        print(f"{COMMAND}: cannot write the results so far to {out}: {exc}", file=sys.stderr)
        return
    written = csv_path if png_path is None else f"{csv_path} and {png_path}"
    print(
        f"{COMMAND}: wrote the {len(rows)} result(s) measured so far to {written}",
        file=sys.stderr,
    )


def _print_results(
    args: argparse.Namespace,
    db: str,
    rows: list[benchmark.Row],
    out: Path,
    metastores: dict[str, str],
) -> None:
    csv_path, png_path, (width, height) = _write_outputs(out, rows, metastores)
    print(benchmark.format_table(rows))
    print()
    largest = args.partitions[-1]
    print(f"operations (on {largest:,} partitions):")
    for name, what in benchmark.describe_operations(db, benchmark.Layout(largest)):
        print(f"  {name:<24} {what}")
    print()
    if png_path is None:
        print(f"wrote {csv_path}; no plot: {bench_plot.INSTALL_HINT}")
    else:
        print(f"wrote {csv_path} and {png_path} ({width}x{height})")
    if args.keep:
        print(f"kept database {db}")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; 0 on success, 1 when the metastore refused the setup or loading, 2
    when a metastore cannot be reached (or the arguments are wrong), 130 when interrupted
    (Ctrl-C or SIGTERM). A run that stops early still writes what it measured."""
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
    out = args.out or default_out()
    if args.out is None:
        benchmark.log(sys.stderr, f"results go to {out} (--out to choose)")
    login = login_options(COMMAND, args)
    if login is None:
        return 2
    targets = [
        benchmark.Target(label, uri, timeout_ms=int(args.timeout * 1000), login=login)
        for label, uri in zip(benchmark.labels(uris), uris, strict=True)
    ]
    created: list[benchmark.Target] = []
    rows: list[benchmark.Row] = []
    with _sigterm_interrupts():
        try:
            code = _prepare(targets, db, out, created) or _measure(args, targets, db, rows)
        except KeyboardInterrupt:
            print(f"{COMMAND}: interrupted", file=sys.stderr)
            code = 130
        finally:
            if created and not args.keep:
                _drop_databases(created, db)
            for t in targets:
                t.close()
    metastores = {t.label: bench_plot.series_label(t.label, t.identity) for t in targets}
    if code:
        _save_partial(out, rows, metastores)
        return code
    _print_results(args, db, rows, out, metastores)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m metastore_server.cli.bench``: the subcommand on its own."""
    parser = argparse.ArgumentParser(
        prog=f"metastore-server {COMMAND}",
        description="Time metastore calls on tables of growing partition counts.",
    )
    _configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
