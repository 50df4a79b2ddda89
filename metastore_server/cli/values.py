"""``metastore-server values``: partition key values of a table of a running metastore."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from metastore_server.cli.common import DEFAULT_URI, add_login, ask, split_table

if TYPE_CHECKING:
    from metastore_server.client import MetastoreClient


def _key_list(text: str) -> list[str]:
    keys = [key.strip() for key in text.split(",")]
    if not all(keys):
        raise argparse.ArgumentTypeError(f"expected comma-separated key names, not {text!r}")
    return keys


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``values`` subcommand."""
    values = sub.add_parser(
        "values",
        help="list the values of partition keys (get_partition_values)",
        description="Print the values of the given partition keys of the partitions matching a "
        "filter, one row per line, ordered by the keys' types (the default partition last). "
        "With --explain, print how the metastore reads the request instead.",
    )
    values.add_argument("table", help="the table as db.table")
    values.add_argument(
        "--keys", required=True, type=_key_list, help="partition keys to list, e.g. ds,hr"
    )
    values.add_argument("--filter", help="partition filter, e.g. 'ds >= \"2024-01-01\"'")
    values.add_argument(
        "--order", type=_key_list, help="keys to order by (default: --keys), e.g. hr,ds"
    )
    values.add_argument("--desc", action="store_true", help="descending order")
    values.add_argument(
        "--limit", type=int, default=-1, help="at most N rows (default: all)", metavar="N"
    )
    values.add_argument("--all", action="store_true", help="one row per partition (no distinct)")
    values.add_argument("--uri", default=DEFAULT_URI, help="metastore to ask (default %(default)s)")
    add_login(values)
    values.add_argument(
        "--format",
        choices=("tsv", "json"),
        default="tsv",
        help="tab-separated lines or a JSON list of lists (default %(default)s)",
    )
    values.add_argument(
        "--explain", action="store_true", help="print the plan of the request instead"
    )
    values.add_argument(
        "--analyze", action="store_true", help="with --explain: run it and count rows read"
    )


def run(args: argparse.Namespace) -> int:
    """Print the rows (or the plan); 1 if the metastore refuses, 2 if bad or unreachable."""
    names = split_table("values", args.table)
    if names is None:
        return 2
    db, table = names
    if args.analyze and not args.explain:
        print("values: --analyze needs --explain", file=sys.stderr)
        return 2
    query = {
        "filter": args.filter,
        "order": args.order,
        "ascending": not args.desc,
        "max_parts": args.limit,
        "distinct": not args.all,
    }

    def call(client: MetastoreClient) -> Any:
        if args.explain:
            return client.explain_partition_values(
                db, table, args.keys, analyze=args.analyze, **query
            )
        return client.list_partition_values(db, table, args.keys, **query)

    code, answer = ask("values", args.uri, call, args)
    if code:
        return code
    assert answer is not None  # (code 0: the call's answer)
    result = rows = answer
    if args.explain:
        print(result.text)
    elif args.format == "json":
        print(json.dumps(rows))
    else:
        for row in rows:
            print("\t".join(row))
    return 0
