"""May a user read or write a place: the file system's own permissions, checked for a user
other than the server's (``--authorization storage``).

Local places are judged from POSIX owner, group and mode bits, as the kernel would judge a
process of that user: the user's uid and groups come from this machine's user database
(``pwd``, ``os.getgrouplist``); reaching a directory needs search (``x``) on every directory
above it, with symbolic links resolved; reading a directory needs ``r`` and ``x``, writing
into it ``w`` and ``x``. A place that does not exist yet is judged by its nearest existing
ancestor (the directory it would be made in). Creating, changing or removing a place needs
writing into its parent, the directory whose entry changes (for a removal from a sticky
parent: also owning the parent or the place). ``root`` and the user the server runs as are
superusers, as HDFS's superuser: never refused.

Other file systems (S3, HDFS through pyarrow, ...) report no owner and mode bits this server
can judge a user by: every check there is refused (:class:`NotCheckable`), never passed.
See ``docs/security.md``.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from metastore_server.caller import current_user
from metastore_server.catalog.data.files import reason
from metastore_server.catalog.data.filesystems import FileSystems, FileSystemUnavailable

READ = "READ"
WRITE = "WRITE"
EXECUTE = "EXECUTE"
#: Mode bits of each access, for the owner, the group and others.
_BITS = {
    READ: (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH),
    WRITE: (stat.S_IWUSR, stat.S_IWGRP, stat.S_IWOTH),
    EXECUTE: (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH),
}

log = structlog.get_logger(__name__)


class Refused(Exception):
    """A check that did not pass; the message says why, in HMS's words where it has them."""


class PermissionDenied(Refused):
    """The user lacks an access on an inode."""


class UnknownUser(Refused):
    """The user has no entry in this machine's user database."""


class NotCheckable(Refused):
    """The place's file system keeps no permissions the server can judge a user by."""


@dataclass(frozen=True)
class Principal:
    """A user as the file system sees it."""

    name: str
    uid: int
    gids: frozenset[int]
    superuser: bool = False


def server_user() -> str:
    """The name of the user this server runs as (its uid as text when it has none)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def principal(name: str, superusers: Iterable[str] = ()) -> Principal:
    """The user ``name`` with its groups, from this machine's user database; UnknownUser
    when it has no entry. ``root`` and ``superusers`` are superusers."""
    try:
        entry = pwd.getpwnam(name)
    except (KeyError, UnicodeError, ValueError):
        raise UnknownUser(
            f"storage-based authorization: user {name} is not known to the operating system "
            "of this server (no passwd entry), so its permissions cannot be checked"
        ) from None
    try:
        gids = frozenset(os.getgrouplist(name, entry.pw_gid))
    except OSError:
        gids = frozenset({entry.pw_gid})
    superuser = entry.pw_uid == 0 or name in set(superusers)
    return Principal(name, entry.pw_uid, gids, superuser)


def allows(st_mode: int, st_uid: int, st_gid: int, who: Principal, access: str) -> bool:
    """Whether mode bits grant ``who`` an access: the owner's bits for the owner, else the
    group's for a member of the group, else the others' (POSIX: only the first class that
    applies counts)."""
    if who.superuser:
        return True
    owner, group, other = _BITS[access]
    if who.uid == st_uid:
        return bool(st_mode & owner)
    if st_gid in who.gids:
        return bool(st_mode & group)
    return bool(st_mode & other)


def _name(lookup: Callable[[int], Sequence[Any]], number: int) -> str:
    try:
        name: str = lookup(number)[0]
        return name
    except (KeyError, OverflowError):
        return str(number)


def denial(who: Principal, access: str, path: str, st: os.stat_result) -> PermissionDenied:
    """HMS's refusal (Hadoop's AccessControlException, as HDFS words it) of ``access`` on
    ``path``."""
    owner, group = _name(pwd.getpwuid, st.st_uid), _name(grp.getgrgid, st.st_gid)
    return PermissionDenied(
        "org.apache.hadoop.security.AccessControlException: Permission denied: "
        f'user={who.name}, access={access}, inode="{path}":{owner}:{group}:'
        f"{stat.filemode(st.st_mode)}"
    )


def nearest_existing(path: str) -> str:
    """``path`` itself when something is there (following links), else its nearest existing
    ancestor (the directory it would be made in)."""
    current = os.path.normpath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _reach(real: str, who: Principal) -> None:
    """Refuse unless ``who`` may search every directory above ``real``."""
    parts = [part for part in real.split("/") if part]
    for depth in range(len(parts)):
        ancestor = "/" + "/".join(parts[:depth])
        st = os.stat(ancestor)
        if not allows(st.st_mode, st.st_uid, st.st_gid, who, EXECUTE):
            raise denial(who, EXECUTE, ancestor, st)


def check_local(path: str, who: Principal, access: str) -> None:
    """Refuse (PermissionDenied) unless ``who`` may read (``READ``) or write into
    (``WRITE``) the local ``path``, or the nearest existing ancestor when it does not exist:
    links resolved, search on every directory above it, and for a directory search on it
    too."""
    if who.superuser:
        return
    real = os.path.realpath(nearest_existing(path))
    _reach(real, who)
    st = os.stat(real)
    if not allows(st.st_mode, st.st_uid, st.st_gid, who, access):
        raise denial(who, access, real, st)
    if stat.S_ISDIR(st.st_mode) and not allows(st.st_mode, st.st_uid, st.st_gid, who, EXECUTE):
        raise denial(who, EXECUTE, real, st)


def parent_of(path: str) -> str:
    """The directory holding ``path`` (``/`` for ``/``)."""
    return os.path.dirname(os.path.normpath(path)) or "/"


def check_local_change(path: str, who: Principal) -> None:
    """Refuse unless ``who`` may create, change or remove the entry of the local ``path``:
    write into its parent (or the parent's nearest existing ancestor)."""
    check_local(parent_of(path), who, WRITE)


def check_local_delete(path: str, who: Principal) -> None:
    """Refuse unless ``who`` may remove the local ``path``: write into its parent, and when
    the parent has the sticky bit, own the parent or the path."""
    if who.superuser:
        return
    check_local_change(path, who)
    parent = parent_of(path)
    if not os.path.lexists(path) or not os.path.exists(parent):
        return
    parent_st = os.stat(parent)
    if parent_st.st_mode & stat.S_ISVTX:
        own_st = os.lstat(path)
        if who.uid not in (parent_st.st_uid, own_st.st_uid):
            raise PermissionDenied(
                f"java.io.IOException: Permission Denied: User {who.name} can't delete {path} "
                "because sticky bit is set on the parent dir and user does not own this file "
                "or its parent"
            )


class StoragePermissions:
    """Checks of a user's access to locations of any file system (``FileSystems``)."""

    def __init__(self, filesystems: FileSystems, superusers: Iterable[str] = ()) -> None:
        self.filesystems = filesystems
        #: Users never refused, besides root: the server's own user by default.
        self.superusers = frozenset(superusers) or frozenset({server_user()})

    def principal(self, name: str) -> Principal:
        """The user ``name`` (UnknownUser when the OS does not know it)."""
        return principal(name, self.superusers)

    def _local_path(self, location: str, who: Principal, access: str) -> str:
        try:
            place = self.filesystems.resolve(location)
        except FileSystemUnavailable as exc:
            raise NotCheckable(
                f"storage-based authorization cannot check {access} for {who.name} on "
                f"{location}: {exc}"
            ) from None
        if not place.is_local:
            raise NotCheckable(
                f"storage-based authorization cannot check {access} for {who.name} on "
                f"{place.uri}: {place.scheme} keeps no owner, group and mode bits this server "
                "can judge a user by, so changes there are refused"
            )
        return place.path

    def check(self, location: str, who: Principal, access: str) -> None:
        """Refuse (a Refused) unless ``who`` may ``READ`` or ``WRITE`` ``location`` (or its
        nearest existing ancestor)."""
        if who.superuser:
            return
        path = self._local_path(location, who, access)
        check_local(path, who, access)

    def check_change(self, location: str, who: Principal) -> None:
        """Refuse (a Refused) unless ``who`` may create or change ``location``: write into
        its parent."""
        if who.superuser:
            return
        path = self._local_path(location, who, WRITE)
        check_local_change(path, who)

    def check_delete(self, location: str, who: Principal) -> None:
        """Refuse (a Refused) unless ``who`` may remove ``location`` and what it holds."""
        if who.superuser:
            return
        path = self._local_path(location, who, WRITE)
        check_local_delete(path, who)


def give_to_caller(top: str, path: str) -> None:
    """Make the current caller the owner (its primary group the group) of the directories
    from ``top`` down to ``path``; logged, never raised, when it cannot be done."""
    user = current_user()
    if not user:
        return
    try:
        entry = pwd.getpwnam(user)
    except (KeyError, UnicodeError, ValueError):
        return
    current = path
    while True:
        try:
            os.chown(current, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
        except OSError as exc:
            log.warning("data_owner_not_set", location=current, user=user, error=reason(exc))
            return
        if current == top or len(current) <= len(top):
            return
        current = os.path.dirname(current)
