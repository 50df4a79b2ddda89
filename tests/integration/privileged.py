"""A server with ``--auth password`` and ``--authorization privileges`` (``hive`` its
administrator) and clients logged in as its users, for the tests of that mode."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from support.sasl_client import sasl_client

from metastore_server.server.passwords import hash_password

from .conftest import RunningServer

#: Every user's password.
PASSWORD = "secret"


def privileged_server(work: Path, users: Sequence[str]) -> RunningServer:
    """A running server over ``work`` whose password file lists ``users``."""
    passwords = work / "passwords"
    passwords.write_text("".join(f"{u}:{hash_password(PASSWORD)}\n" for u in users))
    return RunningServer(work / "server", auth="password", password_file=str(passwords),
                         authorization="privileges", admin_users="hive")  # fmt: skip


def connections(server: RunningServer) -> Iterator[Callable[[str], Any]]:
    """Opens clients authenticated as a user (``connect("alice")``); closes them at the end."""
    opened: list[Any] = []

    def connect(user: str) -> Any:
        client = sasl_client(server.host, server.port, user, PASSWORD)
        opened.append(client)
        return client

    yield connect
    for client in opened:
        client.close()
