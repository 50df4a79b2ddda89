"""``metastore-server import``: copy databases, tables, partitions and functions from a running
Hive Metastore (2.3 or later) into ours, resumably (see :mod:`metastore_server.tools.importer`).

Exit codes: 0 when everything selected was copied (or was already there), 1 when something was
refused (by either side) or ``--verify`` found differences, 2 when a metastore cannot be reached
(or the arguments are bad), 130 when interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from metastore_server.cli.common import (
    DEFAULT_URI,
    NEEDS_LOGIN_HINT,
    add_login,
    login_options,
    not_thrift_errors,
    positive_int,
)
from metastore_server.cli.interrupts import reliable_ctrl_c

if TYPE_CHECKING:
    from metastore_server.tools.importer import Importer

COMMAND = "import"
RESUME_HINT = "run the import again to resume"
DESCRIPTION = (
    "Copy databases, tables, partitions and functions from a running Hive Metastore (2.3 or "
    "later) into ours over Thrift. Partitions go in batches (get_partition_names, then "
    "get_partitions_by_names and add_partitions_req). What is already there is kept "
    "(differences are reported), so an interrupted import resumes when run again. "
    "Transactional (ACID) tables are skipped. Exit 0: done; 1: something refused, a named "
    "database or table not found, or --verify found differences; 2: a metastore cannot be "
    "reached; 130: interrupted."
)


def _name_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, not {text!r}")
    return names


def _table_list(text: str) -> list[tuple[str, str]]:
    tables = []
    for name in _name_list(text):
        db, sep, table = name.partition(".")
        if not sep or not db or not table or "." in table:
            raise argparse.ArgumentTypeError(f"tables must be db.table, not {name!r}")
        tables.append((db, table))
    return tables


def configure(parser: argparse.ArgumentParser) -> None:
    """The options of ``import``."""
    parser.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="thrift://host:port",
        help="the Hive Metastore to copy from",
    )
    parser.add_argument(
        "--to",
        dest="target",
        default=DEFAULT_URI,
        metavar="thrift://host:port",
        help="our metastore to copy into (default %(default)s)",
    )
    parser.add_argument(
        "--databases",
        type=_name_list,
        metavar="a,b",
        help="copy only these databases (whole: tables and functions)",
    )
    parser.add_argument(
        "--tables",
        type=_table_list,
        metavar="db.t,...",
        help="copy only these tables (and their databases, but not their functions); with "
        "--databases, both are copied",
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        default=1000,
        help="partitions fetched and added per call (default %(default)s)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="afterwards compare both sides per table (partition names and locations); "
        "exit 1 when they differ",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress on stderr (default: a bar on a terminal, else one line per table)",
    )
    parser.add_argument(
        "--timeout-ms",
        type=positive_int,
        default=120000,
        help="timeout of one metastore call (default %(default)s)",
    )
    parser.add_argument(
        "--log-level", default="warning", help="log level of the importer (default %(default)s)"
    )
    add_login(parser, "from-", "the source")
    add_login(parser, "to-", "the target")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``import`` subcommand."""
    parser = sub.add_parser(
        COMMAND,
        help="copy databases, tables, partitions and functions from another Hive Metastore",
        description=DESCRIPTION,
    )
    configure(parser)


def _connect(side: str, uri: str, args: argparse.Namespace, prefix: str, err: TextIO) -> Any | None:
    from metastore_server.client import MetastoreClient

    login = login_options(COMMAND, args, prefix, err)
    if login is None:
        return None
    try:
        return MetastoreClient.from_uri(uri, timeout_ms=args.timeout_ms, **login)
    except ValueError as exc:
        print(f"{COMMAND}: {side}: {exc}", file=err)
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported the same way
        print(f"{COMMAND}: cannot reach the {side} metastore {uri}: {exc}", file=err)
    return None


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the import; 0 done, 1 refusals or differences, 2 unreachable, 130 interrupted (Ctrl-C
    interrupts whatever the import waits for, see :func:`reliable_ctrl_c`)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        with reliable_ctrl_c():
            return _run(args, out, err)
    except KeyboardInterrupt:  # before the import began or after it ended: nothing to report
        print(f"{COMMAND}: interrupted", file=err)
        return 130


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from metastore_server.tools.importer import (
        ConnectionLost,
        Importer,
        Progress,
        Refused,
        Selection,
    )

    source = _connect("source", args.source, args, "from-", err)
    if source is None:
        return 2
    target = _connect("target", args.target, args, "to-", err)
    if target is None:
        source.close()
        return 2
    importer = Importer(
        source,
        target,
        source_uri=args.source,
        target_uri=args.target,
        selection=Selection.of(args.databases, args.tables),
        batch_size=args.batch_size,
        progress=Progress.for_stream(err, not args.no_progress),
    )
    try:
        return _import(importer, args.verify, out, err)
    except ConnectionLost as exc:
        _print_so_far(importer, out)
        print(f"{COMMAND}: {exc}; {RESUME_HINT}", file=err)
        return 2
    except KeyboardInterrupt:
        _print_so_far(importer, out)
        print(f"{COMMAND}: interrupted; {RESUME_HINT}", file=err)
        return 130
    except Refused as exc:  # outside any one object, e.g. listing the source's databases
        _print_so_far(importer, out)
        print(f"{COMMAND}: {exc}", file=err)
        return 1
    except not_thrift_errors() as exc:
        hint = NEEDS_LOGIN_HINT.replace("--auth", "--from-auth/--to-auth")
        print(f"{COMMAND}: a metastore answered with no Thrift reply ({exc}): {hint}", file=err)
        return 2
    finally:
        source.close()
        target.close()


def _import(importer: Importer, verify: bool, out: TextIO, err: TextIO) -> int:
    """Import, print the report (and the verification): 0, or 1 on refusals or differences."""
    report = importer.run()
    print("\n".join(report.lines()), file=out, flush=True)
    code = 1 if report.failed else 0
    if report.not_found:
        print(f"{COMMAND}: not found on the source: {', '.join(report.not_found)}", file=err)
        code = 1
    if verify:
        verified = importer.verify(report)
        print("\n".join(verified.lines()), file=out)
        if verified.differences:
            code = 1
    return code


def _print_so_far(importer: Importer, out: TextIO) -> None:
    """The report of an import that did not finish (nothing when it did: it is printed)."""
    report = importer.report
    if not report.finished and (report.tables or report.databases):
        print("\n".join(["interrupted; done so far:", *report.lines()]), file=out)


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone parser of ``import``'s options
    (``python -m metastore_server.cli.importing``)."""
    parser = argparse.ArgumentParser(prog="metastore-server import", description=DESCRIPTION)
    configure(parser)
    return parser


def main(
    argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """``import`` on its own; ``out``/``err`` replace stdout/stderr (for tests)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return run(args, out, err)


if __name__ == "__main__":
    from metastore_server.audit import configure_logging

    # The console script's ``import`` does the same (in-process callers keep their logging).
    configure_logging(build_parser().parse_known_args()[0].log_level)
    sys.exit(main())
