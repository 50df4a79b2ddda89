"""``metastore-server explain``: how a running metastore would read a partition filter."""

from __future__ import annotations

import argparse

from metastore_server.cli.common import DEFAULT_URI, add_login, ask, split_table


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the ``explain`` subcommand."""
    explain = sub.add_parser(
        "explain",
        help="show the scans a partition filter runs as",
        description="Print the plan of a partition filter on a table of a running metastore: "
        "the normalized filter, each key-range scan or get (bounds in readable form), the "
        "residual filter checked on each row, and its HBase filter string. With --analyze the "
        "scans are run and the rows each one read and returned are shown.",
    )
    explain.add_argument("filter", help='partition filter, e.g. \'ds = "2024-01-01" and hr > 3\'')
    explain.add_argument("--table", required=True, help="the table as db.table")
    explain.add_argument(
        "--uri", default=DEFAULT_URI, help="metastore to ask (default %(default)s)"
    )
    explain.add_argument(
        "--analyze", action="store_true", help="run the scans and count rows read and returned"
    )
    add_login(explain)


def run(args: argparse.Namespace) -> int:
    """Ask the metastore for the plan and print it; 1 on a refused filter, 2 if unreachable."""
    from metastore_server.thrift_api import hms

    names = split_table("explain", args.table)
    if names is None:
        return 2
    db, table = names
    request = hms.ExplainFilterRequest(
        dbName=db, tblName=table, filter=args.filter, analyze=args.analyze
    )
    code, result = ask(
        "explain", args.uri, lambda client: client.explain_partition_filter(request), args
    )
    if code == 0:
        print(result.text)
    return code
