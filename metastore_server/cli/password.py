"""``metastore-server hash-password``: a line for the password file of ``serve --auth password``.

The password is read from standard input (its first line) when that is not a terminal, else
asked for twice without echo; it is never taken from the command line, where ``ps`` and shell
history would show it.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from metastore_server.cli import errors
from metastore_server.server.passwords import SCHEMES, hash_password


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``hash-password`` subcommand."""
    command = sub.add_parser(
        "hash-password",
        help="print a user:hash line for the --password-file of serve --auth password",
        description="Print an argon2id (or bcrypt) hash of a password (read from standard input, "
        "or asked for on a terminal), as the line USER:HASH with --user. Append it to the "
        "password file; the server reads the file again when it changes.",
    )
    command.add_argument("--user", help="print USER:HASH, the password file's line")
    command.add_argument(
        "--scheme",
        choices=SCHEMES,
        default=SCHEMES[0],
        help="the hash: argon2 (argon2id, memory-hard; the default) or bcrypt (cost 12; reads "
        "at most 72 bytes of a password, so a longer one is refused)",
    )


def run(args: argparse.Namespace) -> int:
    """Print the hash (or the line); exit 2 on an empty password or a mismatch."""
    user = args.user
    if user is not None and (not user or ":" in user or user != user.strip()):
        message = f"--user {user!r}: a user name is not empty and has no ':' and no outer spaces"
        return errors.report(message, errors.USAGE)
    if sys.stdin.isatty():
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            return errors.report("the two passwords differ", errors.USAGE)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        return errors.report("empty password: nothing to hash", errors.USAGE)
    try:
        hashed = hash_password(password, args.scheme)
    except ValueError as exc:
        return errors.report(str(exc), errors.USAGE)
    print(f"{args.user}:{hashed}" if args.user is not None else hashed)
    return 0
