"""``metastore-server explain``: how a running metastore would read a partition filter."""

from __future__ import annotations

import argparse
import sys

from metastore_server.cli.common import DEFAULT_URI, add_login, ask, split_table

USAGE = "%(prog)s [-h] TABLE FILTER [--analyze] [--uri URI] [login options]"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``explain`` subcommand."""
    explain = sub.add_parser(
        "explain",
        help="show the scans a partition filter runs as",
        usage=USAGE,
        description="Print the plan of a partition filter on a table of a running metastore: "
        "the normalized filter, each key-range scan or get (bounds in readable form) and the "
        "residual filter checked on each row (on HBase also the filter string the region "
        "servers run). With --analyze the scans are run and the rows each one read and "
        "returned are shown.",
    )
    explain.add_argument("table", nargs="?", metavar="TABLE", help="the table as db.table")
    explain.add_argument(
        "filter",
        nargs="?",
        metavar="FILTER",
        help="partition filter, e.g. 'ds = \"2024-01-01\" and hr > 3'",
    )
    explain.add_argument(
        "--table",
        dest="table_option",
        metavar="TABLE",
        help="the table, as the older form (explain --table db.t FILTER) still takes it",
    )
    explain.add_argument(
        "--uri", default=DEFAULT_URI, help="metastore to ask (default %(default)s)"
    )
    explain.add_argument(
        "--analyze", action="store_true", help="run the scans and count rows read and returned"
    )
    add_login(explain)


def table_and_filter(args: argparse.Namespace) -> tuple[str, str] | None:
    """(table, filter) from ``TABLE FILTER`` or the older ``--table TABLE FILTER``; None (the
    error printed) when one is missing or the table is given twice, differently."""
    table, text, option = args.table, args.filter, args.table_option
    if option is not None and text is None:  # explain --table db.t FILTER: one positional
        table, text = option, table
    elif option is not None and option != table:
        print(
            f"explain: the table is given twice, {table!r} and --table {option!r}; give it once",
            file=sys.stderr,
        )
        return None
    if table is None or text is None:
        print("explain: give the table and the filter: explain db.table FILTER", file=sys.stderr)
        return None
    return table, text


def run(args: argparse.Namespace) -> int:
    """Ask the metastore for the plan and print it; 1 on a refused filter, 2 if unreachable."""
    from metastore_server.thrift_api import hms

    given = table_and_filter(args)
    if given is None:
        return 2
    names = split_table("explain", given[0])
    if names is None:
        return 2
    db, table = names
    request = hms.ExplainFilterRequest(
        dbName=db, tblName=table, filter=given[1], analyze=args.analyze
    )
    code, result = ask(
        "explain", args.uri, lambda client: client.explain_partition_filter(request), args
    )
    if code == 0:
        assert result is not None  # (code 0: the call's answer)
        print(result.text)
    return code
