"""What the client subcommands share: the table argument, the connection to a running
metastore with its errors printed the same way, and the number types of options."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from metastore_server.client import MetastoreClient

DEFAULT_URI = "thrift://127.0.0.1:9083"
T = TypeVar("T")


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
        print(f"{command}: cannot reach {uri}: {_connect_reason(exc)}", file=sys.stderr)
        print(f"{command}: {UNREACHABLE_HINT}", file=sys.stderr)
    return None


UNREACHABLE_HINT = (
    "is a metastore running there? Start one with `metastore-server serve` (or `make run`), "
    "or point --uri at one"
)


def _connect_reason(exc: BaseException) -> str:
    """A connection failure in words (thriftpy2 wraps the OS error in its message)."""
    text = getattr(exc, "message", None) or str(exc)
    if "Could not connect" in text:
        return "connection refused"
    if isinstance(exc, TimeoutError) or "timed out" in text:
        return "timed out"
    return text


def ask(command: str, uri: str, call: Callable[[MetastoreClient], T]) -> tuple[int, T | None]:
    """Run ``call`` on a client of the metastore at ``uri``: (0, its answer), or (exit code,
    None) with the error printed: 1 when the metastore refuses, 2 when it cannot be reached."""
    from thriftpy2.thrift import TApplicationException
    from thriftpy2.transport import TTransportException

    from metastore_server.thrift_api import hms

    client = connect(command, uri)
    if client is None:
        return 2, None
    try:
        with client:
            return 0, call(client)
    except (
        hms.MetaException,
        hms.NoSuchObjectException,
        hms.AlreadyExistsException,
        hms.InvalidObjectException,
        hms.InvalidOperationException,
    ) as exc:
        print(f"{command}: {exc.message}", file=sys.stderr)
        return 1, None
    except TApplicationException as exc:  # e.g. a metastore without our extension
        print(f"{command}: the metastore refused the call: {exc}", file=sys.stderr)
        return 1, None
    except (TTransportException, OSError) as exc:
        print(f"{command}: connection to {uri} failed: {exc}", file=sys.stderr)
        return 2, None


def add_uri_and_format(parser: argparse.ArgumentParser) -> None:
    """The ``--uri`` and ``--format text|json`` options every query command takes."""
    parser.add_argument("--uri", default=DEFAULT_URI, help="metastore to ask (default %(default)s)")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="human-readable text or JSON (default %(default)s)",
    )


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None


def positive_int(text: str) -> int:
    """An option's whole number of at least 1 (argparse ``type``)."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def non_negative_int(text: str) -> int:
    """An option's whole number of at least 0 (argparse ``type``)."""
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def positive_number(text: str) -> float:
    """An option's finite number greater than 0, e.g. seconds (argparse ``type``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, not {text!r}")
    return value
