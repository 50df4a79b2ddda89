"""``serve``'s options of the Iceberg REST catalog (``metastore_server.rest``): its port, and
the internal flag that makes a process the catalog's own."""

from __future__ import annotations

import argparse
from typing import Any, TypedDict

from metastore_server.server.config import ServerConfig


def add_rest_options(group: Any, defaults: ServerConfig) -> None:
    """Add ``--rest-port`` (and the hidden ``--rest-process``) to ``serve``'s parser."""
    group.add_argument(
        "--rest-port",
        type=int,
        default=defaults.rest_port,
        metavar="PORT",
        help="also serve the Iceberg REST catalog API over HTTP on this port of --host (TLS "
        "with --tls-cert/--tls-key; the same store and rules as the Thrift API; needs the "
        "'rest' extra); 0: not served (default %(default)s)",
    )
    group.add_argument(
        "--rest-idempotency-lifetime",
        type=int,
        default=defaults.rest_idempotency_lifetime,
        metavar="SECONDS",
        help="keep the answer of a REST request sent with an Idempotency-Key this long, in the "
        "store, so that a retry is answered without running again (advertised in /v1/config); "
        "0: keys not taken (default %(default)s)",
    )
    group.add_argument("--rest-process", action="store_true", help=argparse.SUPPRESS)


class RestArguments(TypedDict):
    """The ``ServerConfig`` fields of the REST options."""

    rest_port: int
    rest_idempotency_lifetime: int


def rest_arguments(args: argparse.Namespace) -> RestArguments:
    """The ``ServerConfig`` fields of the REST options."""
    return {"rest_port": args.rest_port,
            "rest_idempotency_lifetime": args.rest_idempotency_lifetime}
