"""What the client subcommands (``explain``, ``values``) share: the table argument and the
connection to a running metastore, with their errors printed the same way."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from metastore_server.client import MetastoreClient

DEFAULT_URI = "thrift://127.0.0.1:9083"


def split_table(command: str, text: str) -> tuple[str, str] | None:
    """(db, table) of ``db.table``; None (the error printed) when it is not that."""
    db, sep, table = text.partition(".")
    if not sep or not db or not table:
        print(f"{command}: the table must be db.table, not {text!r}", file=sys.stderr)
        return None
    return db, table


def connect(command: str, uri: str) -> MetastoreClient | None:
    """A client of the metastore at ``uri``; None (the error printed) when the URI is bad or
    the metastore cannot be reached."""
    from metastore_server.client import MetastoreClient

    try:
        return MetastoreClient.from_uri(uri)
    except ValueError as exc:
        print(f"{command}: --uri: {exc}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported the same way
        print(f"{command}: cannot reach {uri}: {exc}", file=sys.stderr)
    return None
