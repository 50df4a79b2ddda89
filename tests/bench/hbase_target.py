"""Our server's storage for a benchmark run on HBase: a real HBase Thrift1 gateway
(``--hbase HOST:PORT``) or the HBase test double started in a process of its own
(``--hbase-double``), under a fresh table prefix whose tables are dropped at the end."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def hbase_storage(
    hbase: str | None, double: bool, stack: contextlib.ExitStack, log: Callable[[str], None]
) -> str | None:
    """The storage URL of our server on HBase (``hbase`` as host:port, or the double when
    ``double``, stopped with ``stack``), under a fresh table prefix; None: the embedded
    store."""
    address = hbase_address(hbase, double, stack, log)
    return None if address is None else bench_url(*address, stack)


def bench_url(host: str, port: int, stack: contextlib.ExitStack, name: str = "") -> str:
    """The storage URL of a fresh table prefix (``bench<token>_[name_]``) on the HBase at
    host:port, its tables dropped when ``stack`` closes (after the servers on it stop, when
    they were entered later)."""
    from support.hbase_cleanup import drop_tables
    from support.hbase_double import storage_url  # (tests/ is on the path once a bench runs)

    prefix = f"bench{secrets.token_hex(3)}_" + (f"{name}_" if name else "")
    stack.callback(drop_tables, host, port, prefix)
    return storage_url(host, port, prefix=prefix)


def hbase_address(
    hbase: str | None, double: bool, stack: contextlib.ExitStack, log: Callable[[str], None]
) -> tuple[str, int] | None:
    """(host, port) of the HBase Thrift gateway to run on: ``hbase`` as host:port, or the
    double started in a process of its own (``python -m support.hbase_double``, stopped with
    ``stack``) when ``double``; None: the embedded store."""
    if hbase:
        host, _, port = hbase.rpartition(":")
        return host, int(port)
    if not double:
        return None
    command = [sys.executable, "-m", "support.hbase_double", "--port", "0",
               "--until-stdin-closes"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    stack.callback(process.wait, 30)
    stack.callback(process.stdin.close)  # type: ignore[union-attr]  # its end: stdin closes
    port = 0
    for line in process.stdout:  # type: ignore[union-attr]  # (its log lines come first)
        if line.startswith(b"PORT "):
            port = int(line.split()[1])
            break
    if not port:
        raise SystemExit("the HBase double did not start")
    log(f"HBase double on 127.0.0.1:{port} (pid {process.pid})")
    return "127.0.0.1", port


def add_hbase_arguments(parser: argparse.ArgumentParser) -> None:
    """``--hbase HOST:PORT`` and ``--hbase-double`` (see :func:`hbase_storage`)."""
    parser.add_argument("--hbase", metavar="HOST:PORT",
                        help="our server on this HBase Thrift gateway (a fresh table prefix) "
                        "instead of the embedded store")  # fmt: skip
    parser.add_argument("--hbase-double", action="store_true",
                        help="our server on the HBase test double, in a process of its own "
                        "(a Python stand-in for HBase: not HBase's figures)")  # fmt: skip


def check_hbase_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse both at once, or a gateway that is not host:port."""
    if args.hbase and args.hbase_double:
        parser.error("give --hbase or --hbase-double, not both")
    if args.hbase and not args.hbase.rpartition(":")[2].isdigit():
        parser.error(f"--hbase must be host:port, not {args.hbase!r}")
