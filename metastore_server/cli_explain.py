"""``metastore-server explain``: how a running metastore would read a partition filter."""

from __future__ import annotations

import argparse
import sys
from urllib.parse import urlparse

DEFAULT_URI = "thrift://127.0.0.1:9083"


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


def run(args: argparse.Namespace) -> int:
    """Ask the metastore for the plan and print it; 1 on a refused filter, 2 if unreachable."""
    from metastore_server.thrift_api import hms, make_client

    db, sep, table = args.table.partition(".")
    if not sep or not db or not table:
        print(f"explain: --table must be db.table, not {args.table!r}", file=sys.stderr)
        return 2
    target = urlparse(args.uri)
    if target.scheme != "thrift" or not target.hostname:
        print(f"explain: --uri must be thrift://host:port, not {args.uri!r}", file=sys.stderr)
        return 2
    try:
        client = make_client(target.hostname, target.port or 9083)
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported the same way
        print(f"explain: cannot reach {args.uri}: {exc}", file=sys.stderr)
        return 2
    request = hms.ExplainFilterRequest(
        dbName=db, tblName=table, filter=args.filter, analyze=args.analyze
    )
    try:
        result = client.explain_partition_filter(request)
    except (hms.MetaException, hms.NoSuchObjectException) as exc:
        print(f"explain: {exc.message}", file=sys.stderr)
        return 1
    finally:
        client.close()
    print(result.text)
    return 0
