"""API benchmark (docs/benchmarks.md, "The API benchmark"): the metastore calls engines make,
timed on our server and the reference HMS side by side, in the spirit of Hive's own metastore
benchmark (hmsbench).

For each size N it creates the data of :mod:`api_ops` on every target (N databases, N tables
in one database, N partitions in one table), then times each operation (p50 of ``--repeat``
calls after ``--warmup``, on each target in turn once every server started here is quiet)
from one thriftpy2 client per target. Single calls are encoded before the clock starts and
their replies read off the socket and skipped without building objects; the call sequences
(create+drop database, open+commit transaction, Iceberg's lock cycle) decode each reply, as
the next call needs it.
It prints, per operation, the rows returned, both p50s, their ratio (over 0.5 marked), our
server's own time and microseconds per returned row (its audit lines), and each server's peak
memory growth over the timed calls; for the names listings and the smallest reads
(``api_ops.LIMITED``) also the byte-copy limit (the same reply, encoded beforehand, sent by a
loopback server that does nothing else, timed after the targets) per row, and that
limit over the reference's time: the least ratio any server can show through this client.

It prints figures and asserts nothing; pytest does not collect it. Our server is started here
(a fresh store in ``--data-dir``); the reference HMS 2.3 (pyspark's jars) with
``--reference-hms derby`` (or ``postgres``) listens on every interface, so run it in a private
network namespace::

    unshare -n bash -c 'ip link set lo up; \\
        .venv/bin/python tests/bench/api_calls.py --n 1000,200 --reference-hms derby'
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_ops import (  # noqa: E402 - its imports set up sys.path (bench_path)
    NAMES_LISTINGS,
    Ctx,
    Op,
    limit_reply,
    operations,
    send_and_skip,
    setup,
    warehouse_of,
)
from bench_report import log, machine_info  # noqa: E402
from bench_targets import Target, reference_preflight, start_targets  # noqa: E402
from byte_copy import ByteCopyProcess  # noqa: E402
from hbase_target import add_hbase_arguments, check_hbase_arguments, hbase_storage  # noqa: E402
from process_memory import MemorySampler, rss_kib  # noqa: E402
from process_quiet import wait_quiet  # noqa: E402
from shape_timing import Result, error_text  # noqa: E402
from support.net import LOOPBACK  # noqa: E402
from thrift_wire import encode_call  # noqa: E402

from metastore_server.thrift_api import make_client  # noqa: E402

GOAL = 0.5  # ours / HMS at or below this
LIMIT_GOAL = 3.0  # names listings: ours at most this many times the byte-copy limit per name
HINT = (
    "unshare -n bash -c 'ip link set lo up; "
    ".venv/bin/python tests/bench/api_calls.py --reference-hms derby'"
)


@dataclass
class Figures:
    """One operation on one target at one size."""

    samples_ms: list[float] = field(default_factory=list)
    rows: int | None = None
    server_ms: float | None = None
    error: str | None = None

    @property
    def p50(self) -> float:
        return Result(samples_ms=self.samples_ms).pct(50)


# --------------------------------------------------------------------------- timing


def timed(op: Op, ctx: Ctx) -> float:
    """One call (or sequence) of ``op`` on ``ctx``, prepared untimed; its milliseconds."""
    if op.prepare is not None:
        op.prepare(ctx)
    if op.request is not None:
        method, args = op.request(ctx)
        message = encode_call(method, args)
        started = time.perf_counter()
        send_and_skip(ctx.client, method, message)
    else:
        assert op.run is not None
        started = time.perf_counter()
        op.run(ctx)
    return (time.perf_counter() - started) * 1000


def failed(ctx: Ctx, figures: Figures, exc: BaseException) -> None:
    """Note an operation's error; a fresh connection when the old one may be mid-reply."""
    figures.error = error_text(exc)
    if not hasattr(exc, "thrift_spec"):
        with contextlib.suppress(Exception):
            ctx.client.close()
        ctx.client = ctx.target.client()


def time_op(
    op: Op, ctxs: list[Ctx], warmup: int, repeat: int, limit: ByteCopyTurn | None = None
) -> dict[str, Figures]:
    """Time ``repeat`` calls on each target in turn (then on ``limit``, the operation's
    byte-copy server), each after its warm-up calls and once every server started here is
    quiet: what one server does after its replies (a JVM compiling the code they ran, its
    collector, a checkpoint) is not timed in the other's calls, which it would be whenever
    they share a CPU (``--pin``). Call by call turns were tried: they put it there."""
    out = {ctx.target.name: Figures() for ctx in ctxs}
    pids = [ctx.target.pid for ctx in ctxs if ctx.target.pid is not None]
    for ctx in ctxs:
        figures = out[ctx.target.name]
        try:
            for _ in range(warmup):
                timed(op, ctx)
        except Exception as exc:  # noqa: BLE001 - reported in the table
            failed(ctx, figures, exc)
            continue
        if ctx.target.audit is not None:
            ctx.target.audit.mark()
        if pids and wait_quiet(pids) is None:
            log(f"  {op.name}: a server was still busy; {ctx.target.name} timed anyway")
        for _ in range(repeat):
            try:
                figures.samples_ms.append(timed(op, ctx))
            except Exception as exc:  # noqa: BLE001 - reported in the table
                failed(ctx, figures, exc)
                break
    if limit is not None:
        for _ in range(warmup):
            limit.timed()
        limit.samples_ms.extend(limit.timed() for _ in range(repeat))
    for ctx in ctxs:
        figures = out[ctx.target.name]
        if figures.error is None:
            figures.server_ms = server_ms(ctx.target, op, len(figures.samples_ms))
            try:
                figures.rows = op.count(ctx)
            except Exception as exc:  # noqa: BLE001 - reported in the table
                failed(ctx, figures, exc)
    return out


def server_ms(target: Target, op: Op, calls: int) -> float | None:
    """Our server's own time for one timed call or sequence of ``op``, from its audit lines:
    the median of a single call's, the mean of a sequence's sum."""
    if target.audit is None or not calls:
        return None
    deadline = time.monotonic() + 2  # the last lines may still be on their way to the file
    while True:
        lines = [e for m in op.methods for e in target.audit.calls(m) if "ms" in e]
        if len(lines) >= calls * len(op.methods) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if not lines:
        return None
    if len(op.methods) == 1:
        return Result(samples_ms=[float(e["ms"]) for e in lines]).pct(50)
    return sum(float(e["ms"]) for e in lines) / calls


class ByteCopyTurn:
    """``with ByteCopyTurn(method, reply) as turn:`` the byte-copy limit of an operation: a
    server answering ``method`` with ``reply`` (encoded beforehand), called through the same
    client code as the targets' and timed in their rotation (``turn.timed()``), so that the
    limit is measured under the same conditions of the machine as the servers."""

    def __init__(self, method: str, reply: bytes, cpus: set[int] | None = None) -> None:
        self.method = method
        self.message = encode_call(method, ())  # the arguments do not matter to this server
        self.samples_ms: list[float] = []
        self._server = ByteCopyProcess(reply, cpus)
        self._client: Any = None

    def __enter__(self) -> ByteCopyTurn:
        port = self._server.__enter__()
        self._client = make_client(LOOPBACK, port)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        with contextlib.suppress(Exception):
            self._client.close()
        self._server.__exit__(*exc_info)

    def timed(self) -> float:
        """One call's milliseconds."""
        started = time.perf_counter()
        send_and_skip(self._client, self.method, self.message)
        return (time.perf_counter() - started) * 1000

    def p50(self) -> float:
        """The p50 of the timed calls."""
        return Result(samples_ms=self.samples_ms).pct(50)


# --------------------------------------------------------------------------- one size


@dataclass
class SizeRun:
    """The figures of one size."""

    n: int
    figures: dict[tuple[str, str], Figures] = field(default_factory=dict)
    limits: dict[str, tuple[float, int]] = field(default_factory=dict)  # op: (ms, names)
    memory: dict[str, tuple[float, float]] = field(default_factory=dict)  # rss MiB, growth


def run_size(targets: list[Target], n: int, ops: list[Op], args: argparse.Namespace) -> SizeRun:
    """Set up size ``n`` on every target and time every operation."""
    run = SizeRun(n)
    ctxs = []
    for target in targets:
        client = target.client()
        ctx = Ctx(target, client, n, warehouse_of(client))
        log(f"[{n:,}] setting up {target.name} ...")
        started = time.monotonic()
        setup(ctx, log)
        log(f"  {target.name}: set up in {time.monotonic() - started:.0f} s")
        ctxs.append(ctx)
    samplers = {t.name: MemorySampler(t.pid) for t in targets if t.pid is not None}
    base = {name: rss_kib(s.pid) / 1024 for name, s in samplers.items()}
    with contextlib.ExitStack() as stack:
        for sampler in samplers.values():
            stack.enter_context(sampler)
        for op in ops:
            log(f"[{n:,}] {op.name} ...")
            reply = limit_reply(ctxs[0], op)
            with contextlib.ExitStack() as turns:
                limit = None
                if reply is not None:
                    turn = ByteCopyTurn(reply[0], reply[1], args.server_cpus)
                    limit = turns.enter_context(turn)
                for name, figures in time_op(op, ctxs, args.warmup, args.repeat, limit).items():
                    run.figures[(op.name, name)] = figures
                if limit is not None and reply is not None:
                    run.limits[op.name] = (limit.p50(), reply[2])
    for name, sampler in samplers.items():
        run.memory[name] = (base[name], sampler.growth_mib)
    for ctx in ctxs:
        with contextlib.suppress(Exception):
            ctx.client.close()
    return run


# --------------------------------------------------------------------------- report


def _ms(f: Figures | None) -> str:
    if f is None:
        return "-"
    return "error" if f.error is not None else f"{f.p50:.2f}"


def report(run: SizeRun, ops: list[Op], ours: str, ref: str | None) -> str:
    """The table of one size, the memory lines, the byte-copy table and the errors."""
    head = (f"{'operation':<32} {'rows':>11} {'ours ms':>9} {'HMS ms':>9} {'ours/HMS':>8} "
            f"{'srv ms':>8} {'srv us/row':>10}")  # fmt: skip
    lines = ["", f"== N = {run.n:,} ==", head, "-" * len(head)]
    errors = []
    for op in ops:
        mine = run.figures.get((op.name, ours))
        theirs = run.figures.get((op.name, ref)) if ref else None
        rows = "-" if mine is None or mine.rows is None else f"{mine.rows:,}"
        if theirs is not None and theirs.rows is not None and mine and theirs.rows != mine.rows:
            rows += f"/{theirs.rows:,}"
        ratio, mark = "", ""
        if mine and theirs and mine.samples_ms and theirs.samples_ms and not theirs.error:
            value = mine.p50 / theirs.p50
            ratio, mark = f"{value:.2f}x", ("  over 0.5x" if value > GOAL else "")
        srv = per_row = "-"
        if mine is not None and mine.server_ms is not None:
            srv = f"{mine.server_ms:.2f}"
            if mine.rows:
                per_row = f"{mine.server_ms * 1000 / mine.rows:.2f}"
        lines.append(f"{op.name:<32} {rows:>11} {_ms(mine):>9} {_ms(theirs):>9} {ratio:>8} "
                     f"{srv:>8} {per_row:>10}{mark}")  # fmt: skip
        for name, f in ((ours, mine), (ref, theirs)):
            if f is not None and f.error is not None:
                errors.append(f"  {op.name} on {name}: {f.error}")
    for name, (rss, growth) in run.memory.items():
        lines.append(f"{name}: resident {rss:,.0f} MiB when the timed calls began; peak growth "
                     f"over them {growth:,.0f} MiB")  # fmt: skip
    if run.limits:
        lines += ["", byte_copy_header(), "-" * len(byte_copy_header())]
        for op_name, (limit, names) in run.limits.items():
            mine = run.figures.get((op_name, ours))
            theirs = run.figures.get((op_name, ref)) if ref else None
            lines.append(byte_copy_line(op_name, limit, names, mine, theirs))
    if errors:
        lines += ["", "errors:", *errors]
    return "\n".join(lines)


def byte_copy_header() -> str:
    return (f"{'byte-copy limit':<31} {'rows':>7} {'limit us/row':>12} {'ours us/row':>11} "
            f"{'HMS us/row':>10} {'ours/limit':>10} {'limit/HMS':>9}")  # fmt: skip


def byte_copy_line(
    op_name: str, limit: float, rows: int, mine: Figures | None, theirs: Figures | None
) -> str:
    """One operation against its byte-copy limit: per row (a name of a listing), ours over
    the limit (a names listing marked when over LIMIT_GOAL), and the limit over the
    reference's time: the least ratio to it that any server can show through this client."""
    per = max(rows, 1) / 1000  # us per row from ms

    def us(f: Figures | None) -> str:
        return "-" if f is None or not f.samples_ms else f"{f.p50 / per:.3f}"

    ratio = mark = best = ""
    if mine is not None and mine.samples_ms:
        value = mine.p50 / limit
        ratio = f"{value:.2f}x"
        mark = "  over 3x" if op_name in NAMES_LISTINGS and value > LIMIT_GOAL else ""
    if theirs is not None and theirs.samples_ms:
        best = f"{limit / theirs.p50:.2f}x"
    return (f"{op_name:<31} {rows:>7,} {limit / per:>12.3f} {us(mine):>11} {us(theirs):>10} "
            f"{ratio:>10} {best:>9}{mark}")  # fmt: skip


CSV_FIELDS = ("n", "operation", "rows_ours", "rows_ref", "ours_ms", "ref_ms", "ours_over_ref",
              "server_ms", "server_us_per_row", "limit_ms", "ours_over_limit", "error")  # fmt: skip


def csv_rows(run: SizeRun, ops: list[Op], ours: str, ref: str | None) -> list[dict[str, Any]]:
    """The CSV lines of one size."""
    out = []
    for op in ops:
        mine = run.figures.get((op.name, ours)) or Figures()
        theirs = run.figures.get((op.name, ref)) if ref else None
        limit = run.limits.get(op.name)
        row: dict[str, Any] = {"n": run.n, "operation": op.name, "rows_ours": mine.rows,
                               "server_ms": mine.server_ms, "error": mine.error or ""}  # fmt: skip
        if mine.samples_ms:
            row["ours_ms"] = round(mine.p50, 4)
        if theirs is not None:
            row["rows_ref"] = theirs.rows
            if theirs.samples_ms:
                row["ref_ms"] = round(theirs.p50, 4)
                if mine.samples_ms:
                    row["ours_over_ref"] = round(mine.p50 / theirs.p50, 4)
            row["error"] = "; ".join(x for x in (row["error"], theirs.error or "") if x)
        if mine.server_ms is not None and mine.rows:
            row["server_us_per_row"] = round(mine.server_ms * 1000 / mine.rows, 3)
        if limit is not None:
            row["limit_ms"] = round(limit[0], 4)
            if mine.samples_ms:
                row["ours_over_limit"] = round(mine.p50 / limit[0], 4)
        out.append(row)
    return out


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="API benchmark: metastore calls on our server and the reference HMS.",
        epilog=f"Reference HMS on Derby (as root): {HINT}",
    )
    parser.add_argument("--n", default="1000", help="sizes, comma-separated (default 1000)")
    parser.add_argument("--repeat", type=int, default=21, help="timed calls per operation")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls first")
    parser.add_argument("--reference-hms", choices=("derby", "postgres", "none"), default="none",
                        help="start the reference HMS 2.3 here (default none)")  # fmt: skip
    parser.add_argument(
        "--reference",
        metavar="URI",
        help="a running metastore to compare instead (thrift://127.0.0.1:PORT)",
    )
    parser.add_argument("--reference-heap", default="2g", help="its JVM heap (default 2g)")
    parser.add_argument("--only", default="", help="only these operations, comma-separated")
    parser.add_argument("--out", type=Path, help="also write the figures to this CSV file")
    parser.add_argument("--data-dir", type=Path,
                        help="where the servers keep their data (default: a new directory "
                        "under var/bench-api, removed afterwards unless --keep)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    parser.add_argument("--pin", metavar="CLIENT:SERVERS",
                        help="run the client on the CPUs CLIENT and every server (ours, the "
                        "reference, the byte-copy limit) on SERVERS, e.g. 0:1 (lists as "
                        "taskset takes them: 0,2-3)")  # fmt: skip
    add_hbase_arguments(parser)
    parser.add_argument("--timeout", type=float, default=600.0, help="client timeout, s")
    args = parser.parse_args(argv)
    try:
        args.sizes = sorted({int(s) for s in args.n.replace("_", "").split(",") if s.strip()})
    except ValueError:
        parser.error(f"--n takes integers, not {args.n!r}")
    if not args.sizes or args.sizes[0] < 2 or args.repeat < 1 or args.warmup < 0:
        parser.error("--n must be >= 2, --repeat >= 1, --warmup >= 0")
    known = {op.name for op in operations()}
    args.only_ops = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(args.only_ops) - known)
    if unknown:
        parser.error(f"unknown operations {unknown}; known: {', '.join(sorted(known))}")
    if args.reference and args.reference_hms != "none":
        parser.error("give --reference or --reference-hms, not both")
    check_hbase_arguments(parser, args)
    args.client_cpus = args.server_cpus = None
    if args.pin:
        try:
            args.client_cpus, args.server_cpus = (cpu_list(part) for part in args.pin.split(":"))
        except ValueError:
            parser.error(f"--pin takes CLIENT:SERVERS CPU lists (0:1), not {args.pin!r}")
    # what start_targets of bench_targets reads
    args.ours = None
    args.reference = [args.reference] if args.reference else []
    args.reference_props = {"hive.in.test": "true"} if args.reference_hms == "derby" else {}
    args.reference_hms = None if args.reference_hms == "none" else args.reference_hms
    return args


def cpu_list(text: str) -> set[int]:
    """The CPUs of a list such as ``0,2-3``; ValueError when it names none or one not here."""
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    if not cpus or not cpus <= os.sched_getaffinity(0):
        raise ValueError(text)
    return cpus


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when it ran (failed operations are reported, not fatal)."""
    args = parse_args(argv)
    if args.reference_hms:
        reason = reference_preflight(args.reference_hms)
        if reason is not None:
            reason = reason.replace("partition_filters", "api_calls")
            log(f"cannot start the reference HMS: {reason}")
            return 2
    own_dir = args.data_dir is None
    if own_dir:
        args.data_dir = Path("var/bench-api") / datetime.now().strftime("%Y%m%d-%H%M%S")
    args.data_dir.mkdir(parents=True, exist_ok=True)
    ops = [op for op in operations() if not args.only_ops or op.name in args.only_ops]
    rows: list[dict[str, Any]] = []
    try:
        with contextlib.ExitStack() as stack:
            if args.server_cpus is not None:  # the servers started now inherit it
                os.sched_setaffinity(0, args.server_cpus)
            args.ours_storage = hbase_storage(args.hbase, args.hbase_double, stack, log)
            targets = start_targets(args, stack)
            if args.client_cpus is not None:
                os.sched_setaffinity(0, args.client_cpus)
            ref = targets[1].name if len(targets) > 1 else None
            print("\n".join(machine_info()))
            for t in targets:
                print(f"{t.name}: {t.description}; getVersion() = {t.version()}")
            print(f"client: thriftpy2, binary protocol, buffered transport, one connection per "
                  f"server; requests encoded before the clock, replies read and skipped (call "
                  f"sequences decoded); p50 of {args.repeat} calls after {args.warmup} warm-up, "
                  f"servers taking turns", flush=True)  # fmt: skip
            if args.pin:
                print(f"pinned: the client on CPUs {sorted(args.client_cpus)}, the servers "
                      f"on CPUs {sorted(args.server_cpus)}", flush=True)  # fmt: skip
            for n in args.sizes:
                run = run_size(targets, n, ops, args)
                print(report(run, ops, targets[0].name, ref), flush=True)
                rows += csv_rows(run, ops, targets[0].name, ref)
    finally:
        if args.out is not None:
            with args.out.open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
                writer.writeheader()
                writer.writerows(rows)
        if own_dir and not args.keep:
            shutil.rmtree(args.data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
