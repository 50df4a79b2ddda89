"""``metastore-server dependency describe|dependents|create|repoint``: the dependent tables of a
running metastore (our extensions ``resolve_dependencies``, ``get_dependents``,
``create_dependent_table`` and ``alter_dependency``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from metastore_server.cli.common import add_uri_and_format, ask, positive_int, split_table

COMMAND = "dependency"
_DROP_POLICIES = "refuse, allow, mark_incomplete"
_SCHEMA_POLICIES = "refuse, propagate"
#: ``repoint`` without --all or --limit: base partitions listed per dependent partition, and
#: dependent partitions listed.
SUMMARY_BASE_NAMES = 3
SUMMARY_PARTITIONS = 5


def _completeness(text: str) -> tuple[str, list[str]]:
    """(period, columns) of ``PERIOD:col1,col2``."""
    period, colon, rest = text.partition(":")
    columns = [name.strip() for name in rest.split(",")]
    if not colon or not period.strip() or not all(columns):
        raise argparse.ArgumentTypeError(f"expected PERIOD:col1[,col2...], not {text!r}")
    return period.strip(), columns


def _limit(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    parser.add_argument(
        "--limit",
        type=positive_int,
        help="list at most N base partitions (and missing units) per dependent partition",
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``dependency`` subcommand and its ``describe``, ``dependents``, ``create``
    and ``repoint``."""
    dependency = sub.add_parser(
        "dependency",
        help="describe, list, create and re-point dependent tables",
        description="Dependent tables: a table declaring a base table (table property "
        "metastore.dependent.base), partitioned by a prefix of the base's keys; each of its "
        "partitions stands for the base partitions matching its spec (partition parameter "
        "metastore.dependent.depends.on = db.table@k=v/...).",
    )
    actions = dependency.add_subparsers(dest="dependency_command", required=True)

    describe = actions.add_parser(
        "describe",
        help="what a dependent table and its partitions depend on now",
        description="Print a dependent table's base, every base its partitions depend on, its "
        "policies and completeness rule, then per dependent partition: what it depends on, "
        "whether it is marked incomplete, its completeness and the base partitions it resolves "
        "to now.",
    )
    describe.add_argument("table", help="the dependent table as db.table")
    describe.add_argument("--partition", help="only this dependent partition, e.g. ds=2024-01-01")
    _limit(describe)
    add_uri_and_format(describe)

    dependents = actions.add_parser(
        "dependents",
        help="the tables and partitions depending on a base table",
        description="Print the dependent tables of a base table and their partitions that "
        "depend on --partition (on any partition of the base without it).",
    )
    dependents.add_argument("table", help="the base table as db.table")
    dependents.add_argument("--partition", help="a base partition, e.g. ds=2024-01-01/hr=03")
    add_uri_and_format(dependents)

    create = actions.add_parser(
        "create",
        help="create a dependent table",
        description="Create a dependent table: the base's columns and storage format, "
        "partitioned by the base's first --keys keys; external unless --managed.",
    )
    create.add_argument("table", help="the new dependent table as db.table")
    create.add_argument("--base", required=True, help="the base table as db.table")
    create.add_argument(
        "--keys", type=int, default=1, help="how many leading base keys (default %(default)s)"
    )
    create.add_argument("--on-base-drop", help=f"policy: {_DROP_POLICIES} (default refuse)")
    create.add_argument("--on-schema-change", help=f"policy: {_SCHEMA_POLICIES} (default refuse)")
    create.add_argument(
        "--completeness",
        type=_completeness,
        metavar="PERIOD:COLUMNS",
        help="the completeness rule, e.g. HOURLY:ds,hr (the base's time keys)",
    )
    create.add_argument("--location", help="the table's location (default: the warehouse's)")
    create.add_argument(
        "--managed", action="store_true", help="a managed table rather than an external one"
    )
    add_uri_and_format(create)

    repoint = actions.add_parser(
        "repoint",
        help="make a dependent table (or one partition) depend on another base",
        description="Make the dependent table's new partitions depend on --base or, with "
        "--partition, that partition on the same spec of --base; then print a summary of what "
        f"the table depends on: the counts, the first {SUMMARY_PARTITIONS} dependent "
        f"partitions and the first {SUMMARY_BASE_NAMES} base partitions of each (--all or "
        "--limit N to list more, as describe does).",
    )
    repoint.add_argument("table", help="the dependent table as db.table")
    repoint.add_argument("--base", required=True, help="the new base table as db.table")
    repoint.add_argument("--partition", help="only this dependent partition, e.g. ds=2024-01-10")
    listing = repoint.add_mutually_exclusive_group()
    _limit(listing)
    listing.add_argument(
        "--all",
        action="store_true",
        help="list every dependent partition and every base partition (as describe does)",
    )
    add_uri_and_format(repoint)


# -- printing -------------------------------------------------------------------------------------


def _table_json(info: Any) -> dict[str, Any]:
    return {
        "dbName": info.dbName,
        "tblName": info.tblName,
        "base": info.base,
        "bases": list(info.bases or []),
        "onBaseDrop": info.onBaseDrop,
        "onBaseSchemaChange": info.onBaseSchemaChange,
        "completenessPeriod": info.completenessPeriod,
        "completenessColumns": (
            None if info.completenessColumns is None else list(info.completenessColumns)
        ),
    }


def _completeness_json(done: Any) -> dict[str, Any] | None:
    if done is None:
        return None
    return {
        "period": done.period,
        "window": done.window,
        "startTime": done.startTime,
        "endTime": done.endTime,
        "expected": done.expected,
        "missing": list(done.missing or []),
        "complete": bool(done.complete),
    }


def _resolved_json(result: Any) -> dict[str, Any]:
    return {
        "table": _table_json(result.table),
        "partitions": [
            {
                "partName": p.partName,
                "dependsOn": p.dependsOn,
                "baseDbName": p.baseDbName,
                "baseTblName": p.baseTblName,
                "baseSpec": p.baseSpec,
                "baseExists": bool(p.baseExists),
                "basePartNames": list(p.basePartNames or []),
                "basePartCount": p.basePartCount,
                "markedIncomplete": bool(p.markedIncomplete),
                "completeness": _completeness_json(p.completeness),
                "completenessUnknown": p.completenessUnknown,
            }
            for p in result.partitions or []
        ],
    }


def _print_list(names: list[str], total: int, limit: int | None, indent: str) -> None:
    """``names`` one a line, at most ``limit`` of them, then how many of ``total`` were left."""
    shown = names if limit is None else names[:limit]
    for name in shown:
        print(f"{indent}{name}")
    if total > len(shown):
        print(f"{indent}... and {total - len(shown)} more")


def _print_table_info(info: Any) -> None:
    print(f"{info.dbName}.{info.tblName}: dependent table, base {info.base}")
    print(f"  bases: {', '.join(info.bases or []) or 'none'}")
    print(f"  on base drop: {info.onBaseDrop}")
    print(f"  on base schema change: {info.onBaseSchemaChange}")
    if info.completenessPeriod:
        columns = ", ".join(info.completenessColumns or [])
        print(f"  completeness: {info.completenessPeriod} on {columns}")
    else:
        print("  completeness: not checked")


def _completeness_text(done: Any) -> str:
    window = f"{done.window} [{done.startTime}, {done.endTime})"
    if done.complete:
        return f"{window}: complete, {done.expected} {done.period} unit(s)"
    missing = len(done.missing or [])
    return f"{window}: incomplete, {missing} of {done.expected} {done.period} unit(s) missing"


def _print_resolved(
    result: Any, args: argparse.Namespace, limit: int | None, parts_shown: int | None = None
) -> None:
    """What a dependent table depends on: every dependent partition (at most ``parts_shown``
    of them, then a count), each with at most ``limit`` base partitions and missing units."""
    if args.format == "json":
        print(json.dumps(_resolved_json(result), indent=2))
        return
    _print_table_info(result.table)
    partitions = list(result.partitions or [])
    if parts_shown is None:
        print(f"{len(partitions)} dependent partition(s)")
    else:
        bases = sum(p.basePartCount or 0 for p in partitions if p.baseExists)
        print(f"{len(partitions)} dependent partition(s) on {bases} base partition(s)")
    for part in partitions if parts_shown is None else partitions[:parts_shown]:
        _print_partition(part, limit)
    if parts_shown is not None and len(partitions) > parts_shown:
        print(f"... and {len(partitions) - parts_shown} more dependent partition(s)")


def _print_partition(part: Any, limit: int | None) -> None:
    print(part.partName)
    print(f"  depends on: {part.dependsOn}")
    print(f"  marked incomplete: {'yes' if part.markedIncomplete else 'no'}")
    done = part.completeness
    if done is not None:
        print(f"  completeness: {_completeness_text(done)}")
        missing = list(done.missing or [])
        if missing:
            print("  missing:")
            _print_list(missing, len(missing), limit, "    ")
    elif part.completenessUnknown:
        print(f"  completeness: unknown ({part.completenessUnknown})")
    base = f"{part.baseDbName}.{part.baseTblName}"
    if not part.baseExists:
        print(f"  base partitions: none (the base table {base} does not exist)")
        return
    names = list(part.basePartNames or [])
    print(f"  base partitions of {base} ({part.basePartCount}):")
    _print_list(names, max(part.basePartCount, len(names)), limit, "    ")


def _print_repointed(result: Any, args: argparse.Namespace, summary: bool) -> None:
    """``repoint``'s answer: what was done, then what the table depends on (a summary unless
    --all or --limit, with how to see the rest when something was left out)."""
    if args.format == "json":
        _print_resolved(result, args, args.limit)
        return
    what = f"{args.table} {args.partition}" if args.partition else args.table
    print(f"re-pointed {what} to {args.base}")
    if not summary:
        _print_resolved(result, args, args.limit)
        return
    _print_resolved(result, args, SUMMARY_BASE_NAMES, SUMMARY_PARTITIONS)
    if _left_out(list(result.partitions or [])):
        only = f" --partition {args.partition}" if args.partition else ""
        describe = f"dependency describe {args.table}{only}"
        print(f"(a summary: --all lists every one, as `{describe}` does)")


def _left_out(partitions: list[Any]) -> bool:
    """Whether the summary of ``partitions`` leaves a partition, base partition or missing
    unit out."""
    if len(partitions) > SUMMARY_PARTITIONS:
        return True
    for part in partitions:
        missing = part.completeness.missing if part.completeness is not None else None
        bases = (part.basePartCount or 0) if part.baseExists else 0
        if max(bases, len(missing or [])) > SUMMARY_BASE_NAMES:
            return True
    return False


def _print_dependents(table: str, args: argparse.Namespace, result: Any) -> None:
    tables = list(result.tables or [])
    partitions = list(result.partitions or [])
    if args.format == "json":
        payload = {
            "table": table,
            "partition": args.partition,
            "tables": tables,
            "partitions": [
                {
                    "dbName": p.dbName,
                    "tblName": p.tblName,
                    "partName": p.partName,
                    "dependsOn": p.dependsOn,
                    "markedIncomplete": bool(p.markedIncomplete),
                }
                for p in partitions
            ],
        }
        print(json.dumps(payload, indent=2))
        return
    if not tables:
        print(f"{table} has no dependent tables")
        return
    print(f"dependent tables of {table}: {', '.join(tables)}")
    of = f" on {args.partition}" if args.partition else ""
    print(f"{len(partitions)} dependent partition(s){of}")
    rows = [(f"{p.dbName}.{p.tblName}", p.partName, p.dependsOn, p) for p in partitions]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(2)]
    for name, part_name, depends_on, p in rows:
        mark = "  (marked incomplete)" if p.markedIncomplete else ""
        print(f"  {name:<{widths[0]}}  {part_name:<{widths[1]}}  <- {depends_on}{mark}")


def _print_created(table: Any, args: argparse.Namespace) -> None:
    keys = [(k.name, k.type) for k in table.partitionKeys or []]
    base = (table.parameters or {}).get("metastore.dependent.base")
    if args.format == "json":
        payload = {
            "table": f"{table.dbName}.{table.tableName}",
            "tableType": table.tableType,
            "keys": [{"name": n, "type": t} for n, t in keys],
            "base": base,
            "location": table.sd.location if table.sd is not None else None,
        }
        print(json.dumps(payload, indent=2))
        return
    shown = ", ".join(f"{n} {t}" for n, t in keys)
    print(
        f"created {table.dbName}.{table.tableName} ({table.tableType}) partitioned by {shown}; "
        f"base {base}"
    )


# -- running --------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """Run ``dependency describe|dependents|create|repoint``; 1 if the metastore refuses, 2 if
    the arguments are bad or the metastore cannot be reached."""

    command = f"{COMMAND} {args.dependency_command}"
    summary = (
        args.dependency_command == "repoint"
        and args.format == "text"
        and not args.all
        and args.limit is None
    )
    split = split_table(command, args.table)
    if split is None:
        return 2
    db, table = split
    base: tuple[str, str] | None = None
    if getattr(args, "base", None) is not None:
        base = split_table(f"{command} --base", args.base)
        if base is None:
            return 2

    call: Callable[[Any], Any]
    show: Callable[[Any], None]
    if args.dependency_command == "describe":

        def call(ms: Any) -> Any:
            limit = -1 if args.limit is None else args.limit
            return ms.resolve_dependencies(db, table, args.partition, max_parts=limit)

        def show(result: Any) -> None:
            _print_resolved(result, args, args.limit)

    elif args.dependency_command == "dependents":

        def call(ms: Any) -> Any:
            return ms.dependents(db, table, args.partition)

        def show(result: Any) -> None:
            _print_dependents(args.table, args, result)

    elif args.dependency_command == "create":
        assert base is not None
        period, columns = args.completeness or (None, None)

        def call(ms: Any) -> Any:
            return ms.create_dependent_table(
                db,
                table,
                base[0],
                base[1],
                key_count=args.keys,
                on_base_drop=args.on_base_drop,
                on_base_schema_change=args.on_schema_change,
                completeness_period=period,
                completeness_columns=columns,
                location=args.location,
                external=not args.managed,
            )

        def show(result: Any) -> None:
            _print_created(result, args)

    else:
        assert base is not None

        def call(ms: Any) -> Any:
            ms.repoint_dependency(db, table, base[0], base[1], partition=args.partition)
            # Its answer lists no base partition names: ask for them (as describe does).
            limit = SUMMARY_BASE_NAMES if summary else args.limit
            return ms.resolve_dependencies(
                db, table, args.partition, max_parts=-1 if limit is None else limit
            )

        def show(result: Any) -> None:
            _print_repointed(result, args, summary)

    code, result = ask(command, args.uri, call, args)
    if code == 0:
        show(result)
    return code
