"""Who a call is made as, for ``--authorization privileges``: the user, its groups, the roles
it holds (directly, through its groups, through other roles, and ``public``), and whether it
is an administrator.

- The user is the session's (:attr:`Session.user`): the authenticated one, else ``set_ugi``'s
  claim, else nobody (the anonymous caller, who has only ``public``'s privileges).
- Its groups are the operating system's groups of that user name where such a user exists on
  this host (as Hadoop's shell group mapping finds them), the groups of the identity provider's
  signed token that authenticated it (the REST catalog's JWTs), and, on a connection that did
  not authenticate, the groups ``set_ugi`` named (a claim like the user itself).
- An administrator holds the ``admin`` role (directly or through a group or role), or is named
  by ``--admin-users`` (HMS's ``hive.users.in.admin.role``).

Whether an owner or a grantee named on an object is the caller: :func:`owns`, :func:`holds`.

Nothing is kept between calls: roles and grants are read from the store for each call, so a
grant or revoke made through any server counts at once. The operating system's groups are
kept :data:`GROUP_TTL_S` seconds (a user's groups change seldom, and looking them up may ask a
directory service).
"""

from __future__ import annotations

import grp
import os
import pwd
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from metastore_server.caller import Session
from metastore_server.catalog import ADMIN, PUBLIC, Roles
from metastore_server.thrift_api import hms

USER, ROLE, GROUP = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP
#: Seconds an operating system group lookup is kept.
GROUP_TTL_S = 30.0
#: Most users whose groups are kept at once.
GROUP_CACHE_SIZE = 1024


@dataclass(frozen=True)
class Caller:
    """Who a call is made as."""

    user: str | None
    groups: frozenset[str]
    roles: frozenset[str]
    admin: bool

    @property
    def shown(self) -> str:
        """The user as refusals name it (``null`` for nobody, as HMS prints a missing one)."""
        return self.user if self.user is not None else "null"

    def principal_text(self) -> str:
        """The caller as HMS's SQL-standard refusals name it."""
        return f"Principal [name={self.shown}, type=USER]"


def os_groups(user: str) -> list[str]:
    """The operating system's groups of ``user`` (none when no such user exists here)."""
    try:
        entry = pwd.getpwnam(user)
    except (KeyError, UnicodeError, ValueError):
        return []
    try:
        ids = os.getgrouplist(user, entry.pw_gid)
    except OSError:
        ids = [entry.pw_gid]
    found = []
    for gid in ids:
        try:
            found.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return found


class GroupLookup:
    """:func:`os_groups` (or another lookup), each user's answer kept a bounded time."""

    def __init__(
        self,
        lookup: Callable[[str], Iterable[str]] = os_groups,
        ttl_s: float = GROUP_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lookup = lookup
        self._ttl_s = ttl_s
        self._clock = clock
        self._kept: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def __call__(self, user: str) -> frozenset[str]:
        now = self._clock()
        with self._lock:
            kept = self._kept.get(user)
            if kept is not None and now - kept[0] < self._ttl_s:
                return kept[1]
        groups = frozenset(self._lookup(user))
        with self._lock:
            if len(self._kept) >= GROUP_CACHE_SIZE:
                self._kept.clear()
            self._kept[user] = (now, groups)
        return groups


def resolve(
    session: Session,
    roles: Roles,
    admin_users: frozenset[str],
    groups_of: Callable[[str], frozenset[str]],
) -> Caller:
    """The caller of ``session``, its roles read from the store now."""
    user = session.user
    groups = set(groups_of(user)) if user is not None else set()
    if not session.authenticated:
        groups.update(session.groups)
    groups.update(session.proven_groups)
    held = set(roles.closure(user, sorted(groups)))
    held.add(PUBLIC)
    admin = ADMIN in held or (user is not None and user in admin_users)
    return Caller(user=user, groups=frozenset(groups), roles=frozenset(held), admin=admin)


def owns(caller: Caller, name: str | None, principal_type: int | None) -> bool:
    """Whether an object owned by ``name`` (of ``principal_type``) is the caller's."""
    return name is not None and holds(caller, name, principal_type or USER)


def holds(caller: Caller, name: str | None, principal_type: int | None) -> bool:
    """Whether a grant to ``name`` (of ``principal_type``) is the caller's: its user, one of
    its groups, one of its roles."""
    if name is None:
        return False
    if principal_type == USER:
        return caller.user is not None and name == caller.user
    if principal_type == GROUP:
        return name in caller.groups
    if principal_type == ROLE:
        return name in caller.roles
    return False
