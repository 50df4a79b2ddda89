"""The ``metastore-server`` console script's entry: the server's packages are the ``server``
extra, so on a client-only install (``pip install hbase-metastore``) the command says what to
install instead of failing with a traceback."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

from metastore_server.distribution import install_hint

#: Modules of the ``server`` extra that every command imports (their import names).
SERVER_MODULES = ("structlog", "happybase", "sortedcontainers", "pyparsing", "rich", "fsspec",
                  "re2", "prometheus_client", "argon2", "bcrypt")  # fmt: skip
#: The exit code of a set-up problem (metastore_server.cli.errors.USAGE).
_USAGE = 2
#: The exit code of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
_INTERRUPTED = 130


def missing_server_modules() -> list[str]:
    """The server's modules that are not installed."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line when the server is installed; else say what to install."""
    missing = missing_server_modules()
    if missing:
        print(f"metastore-server: the server is not installed here ({', '.join(missing)} "
              f"missing; this is a client-only install): {install_hint('server')}",
              file=sys.stderr)  # fmt: skip
        return _USAGE
    try:
        from metastore_server.cli.main import main as run
    except KeyboardInterrupt:  # Ctrl-C in the first second, while the server's code loads
        print("metastore-server: interrupted while starting; nothing was done", file=sys.stderr)
        return _INTERRUPTED
    return run(argv)
