"""The password file of ``--auth password``: ``user:hash`` lines, argon2 hashes (argon2-cffi).

Lines are ``user:$argon2id$...`` (``metastore-server hash-password`` makes them); blank lines and
lines starting with ``#`` are skipped. The file is read at start (a bad line refuses the start,
naming it) and read again when it changes, so users can be added or removed without a restart
(a changed file that cannot be read keeps the previous users, with a warning).

Verifying an argon2 hash takes about 64 MiB and tens of milliseconds by design, so at most
:data:`VERIFY_SLOTS` verifications run at once in a process: a flood of logins waits (and is cut
by the handshake timeout) instead of taking the machine's memory. An unknown user is verified
against a dummy hash, so the time taken does not tell whether a user exists.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import structlog
from argon2 import PasswordHasher, extract_parameters
from argon2.exceptions import InvalidHashError, VerificationError

log = structlog.get_logger(__name__)

#: Password verifications running at once in one process.
VERIFY_SLOTS = 4
#: Seconds a verification waits for a slot before the login fails.
VERIFY_WAIT_S = 10.0

_hasher = PasswordHasher()
_slots = threading.BoundedSemaphore(VERIFY_SLOTS)


def hash_password(password: str) -> str:
    """An argon2id hash of ``password`` (argon2-cffi's defaults, RFC 9106's low-memory profile)."""
    return _hasher.hash(password)


def parse_password_file(path: str) -> dict[str, str]:
    """user -> hash of the password file at ``path``; ValueError names the file and the line."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise ValueError(f"password file {path!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"password file {path!r} cannot be read: {exc}") from None
    users: dict[str, str] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        user, colon, hashed = line.partition(":")
        where = f"password file {path!r} line {number}"
        if not colon or not user or not hashed:
            raise ValueError(f"{where}: expected user:hash")
        if user in users:
            raise ValueError(f"{where}: user {user!r} appears twice")
        try:
            extract_parameters(hashed)
        except InvalidHashError:
            raise ValueError(
                f"{where}: the hash of {user!r} is not an argon2 hash "
                "(make one with `metastore-server hash-password`)"
            ) from None
        users[user] = hashed
    return users


@dataclass(frozen=True)
class _Snapshot:
    users: dict[str, str]
    stamp: tuple[int, int]


class PasswordFile:
    """The users of a password file, read again when the file changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._snapshot = _Snapshot(parse_password_file(path), self._stamp())
        self._dummy = hash_password("not a password of anyone")
        if not self._snapshot.users:
            log.warning("password_file_empty", path=path, detail="no client can log in")

    def _stamp(self) -> tuple[int, int]:
        try:
            info = os.stat(self.path)
        except OSError:
            return (-1, -1)
        return (info.st_mtime_ns, info.st_size)

    def users(self) -> dict[str, str]:
        """user -> hash, the file read again if it changed since it was last read."""
        stamp = self._stamp()
        with self._lock:
            if stamp != self._snapshot.stamp:
                try:
                    self._snapshot = _Snapshot(parse_password_file(self.path), stamp)
                    log.info("password_file_reloaded", path=self.path,
                             users=len(self._snapshot.users))  # fmt: skip
                except ValueError as exc:
                    # Keep the users we had; say so once per change of the file.
                    self._snapshot = _Snapshot(self._snapshot.users, stamp)
                    log.warning("password_file_unreadable", path=self.path, error=str(exc))
            return self._snapshot.users

    def verify(self, user: str, password: str) -> str | None:
        """None when ``password`` is ``user``'s; else why not (for the log, not the client)."""
        hashed = self.users().get(user)
        if not _slots.acquire(timeout=VERIFY_WAIT_S):
            return "too many logins being verified at once"
        try:
            _hasher.verify(hashed or self._dummy, password)
        except VerificationError:
            return "unknown user" if hashed is None else "wrong password"
        except InvalidHashError:
            return "the user's hash is not valid"
        finally:
            _slots.release()
        return None if hashed is not None else "unknown user"
