"""How the console script reports a failure: one or two lines saying what went wrong and what
to do, never a traceback (unless ``--debug``), and an exit code by kind: 2 for a usage or set-up
problem (a flag, a file, a port, a store that cannot be reached), 1 for a refused call or an
unexpected error."""

from __future__ import annotations

import errno
import sys
from typing import TextIO

from metastore_server.storage.hbase import HBaseError, HBaseUnavailableError

PROGRAM = "metastore-server"
DEBUG_HINT = f"{PROGRAM}: run again with --debug to see the Python traceback"

#: Exit codes.
USAGE = 2
REFUSED = 1


def bind_problem(host: str, port: int, exc: OSError, flag: str = "--port") -> str:
    """Why a server could not listen on host:port (given by ``flag``), and what to do."""
    where = f"cannot serve on {host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"{where}: the port is in use (another metastore-server or Hive Metastore?); "
            f"stop it, or choose a free port with {flag}"
        )
    if exc.errno == errno.EACCES:
        example = "--port 9083" if flag == "--port" else f"a port above 1023 for {flag}"
        return f"{where}: permission denied (ports below 1024 need privileges); use {example}"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{where}: no interface of this machine has the address {host}; check --host"
    return f"{where}: {exc.strerror or exc}"


def store_problem(url: str, exc: Exception) -> str:
    """Why the store at ``url`` could not be opened, and what to do."""
    if isinstance(exc, HBaseUnavailableError):
        return f"storage {url}: {exc}"
    if isinstance(exc, HBaseError):
        return f"storage {url}: HBase refused: {exc}"
    if isinstance(exc, PermissionError):
        return f"storage {url}: permission denied on {exc.filename or 'the store file'}"
    if isinstance(exc, OSError):
        return f"storage {url}: {exc.strerror or exc}" + (
            f" ({exc.filename})" if exc.filename else ""
        )
    return f"storage {url}: {exc}"


def report(message: str, code: int, err: TextIO | None = None) -> int:
    """Print ``PROGRAM: message`` on stderr; ``code``."""
    print(f"{PROGRAM}: {message}", file=err or sys.stderr)
    return code


def unexpected(exc: BaseException, err: TextIO | None = None) -> int:
    """Report an error nothing else explained (the traceback only with --debug)."""
    stream = err or sys.stderr
    text = str(exc) or type(exc).__name__
    print(f"{PROGRAM}: {type(exc).__name__}: {text}", file=stream)
    print(DEBUG_HINT, file=stream)
    return REFUSED
