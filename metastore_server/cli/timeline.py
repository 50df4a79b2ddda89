"""``metastore-server timeline show|cover|rebuild``: the partition timelines of a running
metastore (our extensions ``get_partition_timelines``, ``cover_time_range`` and
``rebuild_partition_timelines``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from metastore_server.cli.common import add_uri_and_format, ask, split_table
from metastore_server.timeline import UpdatePeriod

COMMAND = "timeline"
_PERIODS = "SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY"


def _name_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, not {text!r}")
    return names


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``timeline`` subcommand and its ``show``, ``cover`` and ``rebuild``."""
    timeline = sub.add_parser(
        "timeline",
        help="show partition timelines, cover a time range, rebuild timelines",
        description="The partition timelines a running metastore keeps for the tables that opt "
        "in (table parameter cube.storagetable.time.partcols; partitions carry "
        "cube.storagetable.partition.update.period), as Apache Lens keeps them.",
    )
    actions = timeline.add_subparsers(dest="timeline_command", required=True)

    show = actions.add_parser(
        "show",
        help="print a table's timelines",
        description="Print a table's partition count and its timelines: per update period and "
        "time column, the implementation, how many time values (days of a DAILY timeline, "
        "hours of an HOURLY one) have partitions, the first and latest, and those values as "
        "maximal ranges [begin, end).",
    )
    show.add_argument("table", help="the table as db.table")
    show.add_argument("--period", help=f"only this update period ({_PERIODS})")
    show.add_argument("--column", help="only this time partition column")
    show.add_argument(
        "--properties", action="store_true", help="also print the Lens table parameters"
    )
    add_uri_and_format(show)

    cover = actions.add_parser(
        "cover",
        help="the partitions that best cover a time range",
        description="Print the partitions of one fact's storage tables (in preference order) "
        "that best cover [--from, --to): coarsest update periods first, finer ones for the "
        "remainders and the gaps; what nothing covers is listed as uncovered. Times are UTC, "
        "yyyy-MM-dd[-HH[-mm[-ss]]]; --to is exclusive. Exit 0 even when the cover is incomplete.",
    )
    cover.add_argument(
        "tables", type=_name_list, help="storage tables as db.t1[,db.t2...] (one database)"
    )
    cover.add_argument("--column", required=True, help="the time partition column, e.g. dt")
    cover.add_argument("--from", dest="start", required=True, help="start, e.g. 2024-01-01")
    cover.add_argument("--to", dest="end", required=True, help="end (exclusive), e.g. 2024-02-01")
    cover.add_argument(
        "--periods", type=_name_list, help="only these update periods, e.g. DAILY,HOURLY"
    )
    add_uri_and_format(cover)

    rebuild = actions.add_parser(
        "rebuild",
        help="rebuild a table's timelines from its partitions",
        description="Rebuild a table's timelines from all its partitions, store them in its "
        "parameters and print them (as show does).",
    )
    rebuild.add_argument("table", help="the table as db.table")
    add_uri_and_format(rebuild)


# -- printing -------------------------------------------------------------------------------------


def _info_json(info: Any) -> dict[str, Any]:
    return {
        "storageTable": info.storageTable,
        "updatePeriod": info.updatePeriod,
        "column": info.column,
        "implementation": info.implementation,
        "first": info.first,
        "latest": info.latest,
        "count": info.count,
        "ranges": list(info.ranges or []),
        "properties": dict(sorted((info.properties or {}).items())),
    }


def units(count: int, period: str) -> str:
    """``count`` time values of an update period, named by its unit: ``21 day(s)``."""
    known = UpdatePeriod.__members__.get(period)
    return f"{count} {known.unit_name if known is not None else f'{period} unit'}(s)"


def _print_timelines(
    table: str, result: Any, partitions: int | None, args: argparse.Namespace
) -> None:
    """The timelines, after the table's partition count (``partitions``; None: not asked)."""
    columns = list(result.timeColumns or [])
    timelines = list(result.timelines or [])
    if args.format == "json":
        payload = {
            "table": table,
            "partitions": partitions,
            "timeColumns": columns,
            "timelines": [_info_json(info) for info in timelines],
        }
        print(json.dumps(payload, indent=2))
        return
    if not columns:
        print(
            f"{table} keeps no partition timelines "
            "(it does not opt in with cube.storagetable.time.partcols)"
        )
        return
    print(
        f"{table}: {partitions} partition(s); time columns {', '.join(columns)}; "
        f"{len(timelines)} timeline(s)"
    )
    for info in timelines:
        kind = (info.implementation or "").rsplit(".", 1)[-1]
        span = f", {info.first} .. {info.latest}" if info.first is not None else ""
        ranges = list(info.ranges or [])
        print(
            f"{info.updatePeriod} {info.column}: partitions in "
            f"{units(info.count, info.updatePeriod)}{span}, {len(ranges)} range(s) ({kind})"
        )
        for text in ranges:
            print(f"  {text}")
        if getattr(args, "properties", False):
            for key, value in sorted((info.properties or {}).items()):
                print(f"  {key}={value}")


def _runs(parts: list[Any]) -> list[tuple[Any, Any, int]]:
    """Consecutive parts of one table and period, as (first, last, count)."""
    runs: list[tuple[Any, Any, int]] = []
    for part in parts:
        if runs:
            first, last, count = runs[-1]
            same = (first.storageTable, first.updatePeriod) == (
                part.storageTable,
                part.updatePeriod,
            )
            if same and last.endTime == part.startTime:
                runs[-1] = (first, part, count + 1)
                continue
        runs.append((part, part, 1))
    return runs


def _print_cover(args: argparse.Namespace, result: Any) -> None:
    parts = list(result.parts or [])
    uncovered = list(result.uncovered or [])
    if args.format == "json":
        payload = {
            "parts": [
                {
                    "storageTable": p.storageTable,
                    "updatePeriod": p.updatePeriod,
                    "partition": p.partition,
                    "start": p.startTime,
                    "end": p.endTime,
                }
                for p in parts
            ],
            "uncovered": [{"start": u.startTime, "end": u.endTime} for u in uncovered],
            "complete": bool(result.complete),
            "lookups": result.lookups,
        }
        print(json.dumps(payload, indent=2))
        return
    # One line per run of consecutive partitions of one table and period (period, table, the
    # time range, how many partitions), and per uncovered range, in time order.
    rows: list[tuple[str, str, str, str, str]] = []
    for first, last, count in _runs(parts):
        rows.append(
            (
                first.startTime,
                first.updatePeriod,
                first.storageTable,
                f"[{first.startTime}, {last.endTime})",
                units(count, first.updatePeriod),
            )
        )
    for u in uncovered:
        rows.append((u.startTime, "uncovered", "", f"[{u.startTime}, {u.endTime})", ""))
    rows.sort(key=lambda row: _sortable(row[0]))
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(1, 4)]
    for _, period, table, span, what in rows:
        line = f"{period:<{widths[0]}}  {table:<{widths[1]}}  {span:<{widths[2]}}  {what}"
        print(line.rstrip())
    state = "complete" if result.complete else f"incomplete: {len(uncovered)} uncovered range(s)"
    print(
        f"cover of [{args.start}, {args.end}) on {args.column}: {state}; "
        f"{_parts_text(parts)}; {result.lookups} timeline lookup(s)"
    )


def _parts_text(parts: list[Any]) -> str:
    """How many time values of each period a cover reads: ``8 day(s), 30 hour(s)``."""
    counts: dict[str, int] = {}
    for part in parts:
        counts[part.updatePeriod] = counts.get(part.updatePeriod, 0) + 1
    known = UpdatePeriod.__members__

    def weight(name: str) -> int:
        return -known[name].weight_ms if name in known else 0

    ordered = sorted(counts.items(), key=lambda item: weight(item[0]))
    return ", ".join(units(n, period) for period, n in ordered) or "nothing to read"


def _sortable(text: str) -> str:
    """A time string padded to full length, so that strings compare as times."""
    full = "0000-00-00-00-00-00"
    return text + full[len(text) :]


# -- running --------------------------------------------------------------------------------------


def _one_db(tables: list[str]) -> tuple[str, list[str]] | None:
    """(db, table names) of ``db.t1,db.t2``; None (the error printed) when not one database."""
    db: str | None = None
    names: list[str] = []
    for text in tables:
        split = split_table(f"{COMMAND} cover", text)
        if split is None:
            return None
        if db is not None and split[0].lower() != db.lower():
            print(f"{COMMAND} cover: all tables must be in one database", file=sys.stderr)
            return None
        db = split[0]
        names.append(split[1])
    assert db is not None
    return db, names


def run(args: argparse.Namespace) -> int:
    """Run ``timeline show|cover|rebuild``; 1 if the metastore refuses, 2 if bad or unreachable."""
    command = f"{COMMAND} {args.timeline_command}"
    call: Callable[[Any], Any]
    show: Callable[[Any], None]
    if args.timeline_command == "cover":
        target = _one_db(args.tables)
        if target is None:
            return 2
        db, names = target

        def call(ms: Any) -> Any:
            return ms.cover_time_range(
                db, names, args.column, args.start, args.end, periods=args.periods
            )

        def show(result: Any) -> None:
            _print_cover(args, result)

    else:
        split = split_table(command, args.table)
        if split is None:
            return 2
        db, table = split

        def call(ms: Any) -> Any:
            if args.timeline_command == "show":
                found = ms.partition_timelines(db, table, period=args.period, column=args.column)
            else:
                found = ms.rebuild_partition_timelines(db, table)
            # A timeline counts time values (days...), the table's partitions are counted here.
            return found, ms.get_num_partitions_by_filter(db, table, "")

        def show(result: Any) -> None:
            _print_timelines(args.table, result[0], result[1], args)

    code, result = ask(command, args.uri, call, args)
    if code == 0:
        show(result)
    return code
