"""The password file of ``--auth password``: ``user:hash`` lines, argon2 (argon2-cffi) or bcrypt
(bcrypt) hashes.

Lines are ``user:$argon2id$...`` or ``user:$2b$12$...`` (``metastore-server hash-password
[--scheme bcrypt]`` makes them; ``$2a$`` and ``$2y$`` bcrypt hashes of other tools are taken
too); blank lines and lines starting with ``#`` are skipped. The file is read at start (a bad
line refuses the start, naming it) and read again when it changes, so users can be added or
removed without a restart (a changed file that cannot be read keeps the previous users, with a
warning).

Verifying an argon2 hash takes about 64 MiB and tens of milliseconds by design (a bcrypt hash of
cost 12 about a quarter of a second), so at most :data:`VERIFY_SLOTS` verifications run at once in
a process: a flood of logins waits (and is cut by the handshake timeout) instead of taking the
machine's memory. An unknown user is verified against a dummy hash of the scheme and cost most
users of the file have, so the time taken does not tell whether a user exists (a file mixing
schemes or costs is warned about at load: a user of a rarer one takes another time).

bcrypt reads at most 72 bytes of a password: :func:`hash_password` refuses a longer one, and a
longer one never matches a bcrypt hash (it is still checked, on its first 72 bytes, so that it
takes the same time).
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import cast

import bcrypt
import structlog
from argon2 import Parameters, PasswordHasher, extract_parameters
from argon2.exceptions import InvalidHashError, VerificationError

log = structlog.get_logger(__name__)

#: Password verifications running at once in one process.
VERIFY_SLOTS = 4
#: Seconds a verification waits for a slot before the login fails.
VERIFY_WAIT_S = 10.0

#: The hash schemes of a password file (``hash-password --scheme``); the first is the default.
SCHEMES = ("argon2", "bcrypt")
#: The cost (log2 of the rounds) of new bcrypt hashes.
BCRYPT_COST = 12
#: The most bytes of a password bcrypt reads.
BCRYPT_MAX_BYTES = 72
_BCRYPT = re.compile(r"\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}")
_DUMMY_PASSWORD = "not a password of anyone"

_hasher = PasswordHasher()
_slots = threading.BoundedSemaphore(VERIFY_SLOTS)

#: What the time to check a password against a hash depends on: its scheme and its cost.
Profile = tuple[object, ...]


def hash_password(password: str, scheme: str = "argon2") -> str:
    """A hash of ``password``: argon2id (argon2-cffi's defaults, RFC 9106's low-memory profile)
    or bcrypt (cost :data:`BCRYPT_COST`); ValueError on an unknown scheme or a password bcrypt
    cannot take whole (more than 72 bytes)."""
    if scheme == "argon2":
        return _hasher.hash(password)
    if scheme == "bcrypt":
        data = password.encode("utf-8")
        if len(data) > BCRYPT_MAX_BYTES:
            raise ValueError(
                f"bcrypt reads at most {BCRYPT_MAX_BYTES} bytes of a password; this one has "
                f"{len(data)} (UTF-8): use argon2"
            )
        return bcrypt.hashpw(data, bcrypt.gensalt(BCRYPT_COST)).decode("ascii")
    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")


def profile(hashed: str) -> Profile | None:
    """The scheme and cost of ``hashed`` (None when it is of no scheme here)."""
    found = _BCRYPT.fullmatch(hashed)
    if found is not None:
        cost = int(found.group(1))
        return ("bcrypt", cost) if 4 <= cost <= 31 else None
    try:
        return ("argon2", *dataclasses.astuple(extract_parameters(hashed)))
    except InvalidHashError:
        return None


def _dummy_hash(kind: Profile) -> str:
    """A hash of nobody's password with the scheme and cost ``kind``."""
    if kind[0] == "bcrypt":
        salt = bcrypt.gensalt(int(cast(int, kind[1])))  # ("bcrypt", cost)
        return bcrypt.hashpw(_DUMMY_PASSWORD.encode(), salt).decode("ascii")
    params = Parameters(*kind[1:])  # type: ignore[arg-type]  # (the fields, in order)
    return PasswordHasher.from_parameters(params).hash(_DUMMY_PASSWORD)


def _matches(hashed: str, password: str) -> bool:
    """Whether ``password`` is the one of ``hashed`` (a hash :func:`profile` knows)."""
    if hashed.startswith("$2"):
        data = password.encode("utf-8")
        same = bcrypt.checkpw(data[:BCRYPT_MAX_BYTES], hashed.encode("ascii"))
        return same and len(data) <= BCRYPT_MAX_BYTES
    try:
        return _hasher.verify(hashed, password)
    except VerificationError:
        return False


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
        if profile(hashed) is None:
            raise ValueError(
                f"{where}: the hash of {user!r} is not an argon2 or bcrypt hash "
                "(make one with `metastore-server hash-password`)"
            )
        users[user] = hashed
    return users


@dataclass(frozen=True)
class _Snapshot:
    users: dict[str, str]
    stamp: tuple[int, int]
    dummy: str  # what an unknown user's password is checked against


class PasswordFile:
    """The users of a password file, read again when the file changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._dummies: dict[Profile, str] = {}
        self._snapshot = self._snap(parse_password_file(path), self._stamp())
        if not self._snapshot.users:
            log.warning("password_file_empty", path=path, detail="no client can log in")

    def _stamp(self) -> tuple[int, int]:
        try:
            info = os.stat(self.path)
        except OSError:
            return (-1, -1)
        return (info.st_mtime_ns, info.st_size)

    def _snap(self, users: dict[str, str], stamp: tuple[int, int]) -> _Snapshot:
        """The snapshot of ``users``, with a dummy hash of the scheme and cost most have."""
        kinds = Counter(profile(hashed) for hashed in users.values())
        if len(kinds) > 1:
            log.warning(
                "password_file_mixed_schemes",
                path=self.path,
                kinds=len(kinds),
                detail="an unknown user's login takes the time of the most common scheme and "
                "cost; a user of another can be told apart by the time",
            )
        common = kinds.most_common(1)[0][0] if kinds else profile(_hasher.hash(_DUMMY_PASSWORD))
        assert common is not None
        if common not in self._dummies:
            self._dummies[common] = _dummy_hash(common)
        return _Snapshot(users, stamp, self._dummies[common])

    def users(self) -> dict[str, str]:
        """user -> hash, the file read again if it changed since it was last read."""
        return self._current().users

    def _current(self) -> _Snapshot:
        stamp = self._stamp()
        with self._lock:
            if stamp != self._snapshot.stamp:
                try:
                    self._snapshot = self._snap(parse_password_file(self.path), stamp)
                    log.info("password_file_reloaded", path=self.path,
                             users=len(self._snapshot.users))  # fmt: skip
                except ValueError as exc:
                    # Keep the users we had; say so once per change of the file.
                    self._snapshot = dataclasses.replace(self._snapshot, stamp=stamp)
                    log.warning("password_file_unreadable", path=self.path, error=str(exc))
            return self._snapshot

    def lookup(self, user: str) -> tuple[bool | None, str]:
        """Whether ``user`` is in the file as now loaded (read again if it changed), and if
        not, why not: a REST token of a user removed from the file ends at once."""
        if user in self._current().users:
            return True, ""
        return False, "not in the password file"

    def verify(self, user: str, password: str) -> str | None:
        """None when ``password`` is ``user``'s; else why not (for the log, not the client)."""
        snapshot = self._current()
        hashed = snapshot.users.get(user)
        if not _slots.acquire(timeout=VERIFY_WAIT_S):
            return "too many logins being verified at once"
        try:
            matches = _matches(hashed or snapshot.dummy, password)
        finally:
            _slots.release()
        if hashed is None:
            return "unknown user"
        return None if matches else "wrong password"
