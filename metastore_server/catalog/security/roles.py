"""Roles and role memberships, as HMS 2.3 stores them (clients enforce what they mean).

One ``meta`` row per role (``layout.role_key``) holding a fresh id, its owner and creation time,
and one row per membership (``layout.role_member_key``) under the role's id. Both are created by
compare-and-set on their own row, so two servers granting at once neither lose nor duplicate a
membership. A role created again after a drop has a new id: memberships and grants of the old
one (even ones another server wrote while it was being dropped) never come back.

``admin`` and ``public`` exist from the start and cannot be dropped; every user belongs to
``public`` implicitly (it is answered, never stored as a membership).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import structlog

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

ADMIN = "admin"
PUBLIC = "public"
USER, ROLE, GROUP = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP


def encode(record: dict[str, object]) -> bytes:
    """A row value (JSON)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8")


def decode(raw: bytes) -> dict[str, Any]:
    """A row value written by :func:`encode` (JSON: its values as :func:`encode` was given
    them)."""
    record: dict[str, Any] = json.loads(raw)
    return record


def check_text(text: str | None, what: str) -> str:
    """``text``, refused (MetaException) when missing or holding NUL (it goes into row keys)."""
    if text is None:
        raise hms.MetaException(message=f"{what} cannot be null")
    if "\x00" in text:
        raise hms.MetaException(message=f"{what} cannot contain the NUL character")
    return text


#: Principal types HMS knows (USER, ROLE, GROUP).
PRINCIPAL_TYPES = frozenset(
    {hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP}
)


def check_principal_type(principal_type: int | None) -> int:
    """``principal_type``, refused (MetaException) when missing or not USER, ROLE or GROUP."""
    if principal_type is None:
        raise hms.MetaException(message="Principal type cannot be null")
    if principal_type not in PRINCIPAL_TYPES:
        raise hms.MetaException(message=f"Unknown principal type {principal_type}")
    return principal_type


@dataclass(frozen=True)
class Role:
    """A stored role."""

    name: str
    uid: str
    owner: str | None
    created: int
    raw: bytes


@dataclass(frozen=True)
class Member:
    """A principal's membership of a role (a role principal is known by its id)."""

    key: bytes
    raw: bytes
    role_uid: str
    principal: str
    principal_type: int
    principal_uid: str | None
    grantor: str | None
    grantor_type: int | None
    option: bool
    time: int


class RoleBook:
    """The roles of one moment: by name and by id."""

    def __init__(self, roles: Iterable[Role]) -> None:
        self.by_name = {role.name: role for role in roles}
        self.by_uid = {role.uid: role for role in self.by_name.values()}

    def get(self, name: str | None) -> Role | None:
        """The role named ``name``, or None."""
        return self.by_name.get(name) if name is not None else None

    def principal_part(self, name: str | None, principal_type: int | None) -> bytes | None:
        """A principal as keys hold it; None for a role that does not exist (or no name)."""
        if name is None or principal_type is None:
            return None
        if principal_type == ROLE:
            role = self.get(name)
            return layout.principal_part(ROLE, role.uid) if role else None
        return layout.principal_part(principal_type, name)

    def live(self, member: Member) -> bool:
        """Whether a membership belongs to roles that exist (not to dropped ones)."""
        if member.role_uid not in self.by_uid:
            return False
        return member.principal_type != ROLE or member.principal_uid in self.by_uid

    def held_by(self, member: Member, principal: str | None, principal_type: int | None) -> bool:
        """Whether ``member`` is the membership of that principal."""
        if member.principal_type != principal_type or principal is None:
            return False
        if principal_type == ROLE:
            role = self.get(principal)
            return role is not None and member.principal_uid == role.uid
        return member.principal == principal

    def member_name(self, member: Member) -> str:
        """The principal's name (a role's current name)."""
        if member.principal_type == ROLE and member.principal_uid in self.by_uid:
            return self.by_uid[member.principal_uid].name
        return member.principal


class Roles:
    """HMS's role calls over ``meta`` rows."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx

    # -- reading -----------------------------------------------------------------------------

    def book(self) -> RoleBook:
        """Every role, read now. O(roles)."""
        start, stop = layout.role_range()
        return RoleBook(_role(key, row[layout.OBJECT])
                        for key, row in self._ctx.store.scan(layout.META, start, stop)
                        if layout.OBJECT in row)  # fmt: skip

    def members(self, book: RoleBook, role_uid: str | None = None) -> list[Member]:
        """The memberships of one role (None: of all), of roles that exist, in key order."""
        start, stop = layout.role_member_range(role_uid)
        found = (_member(key, row[layout.OBJECT])
                 for key, row in self._ctx.store.scan(layout.META, start, stop)
                 if layout.OBJECT in row)  # fmt: skip
        return [member for member in found if book.live(member)]

    def names(self) -> list[str]:
        """Every role's name, sorted."""
        return sorted(self.book().by_name)

    def roles_of(self, principal: str | None, principal_type: int | None) -> list[hms.Role]:
        """The roles granted to a principal directly; a user also has ``public``."""
        book = self.book()
        found = [book.by_uid[m.role_uid] for m in self._memberships_of(book, principal,
                                                                       principal_type)]  # fmt: skip
        roles = [hms.Role(roleName=r.name, createTime=r.created, ownerName=r.owner)
                 for r in sorted(found, key=lambda r: r.name)]  # fmt: skip
        if principal_type == USER:
            roles.append(hms.Role(roleName=PUBLIC, createTime=0, ownerName=PUBLIC))
        return roles

    def grants_of(
        self, principal: str | None, principal_type: int | None
    ) -> list[hms.RolePrincipalGrant]:
        """The role grants of a principal; a user also has ``public`` (granted by nobody)."""
        book = self.book()
        members = sorted(self._memberships_of(book, principal, principal_type),
                         key=lambda m: book.by_uid[m.role_uid].name)  # fmt: skip
        grants = [_grant(book, m) for m in members]
        if principal_type == USER:
            grants.append(hms.RolePrincipalGrant(
                roleName=PUBLIC, principalName=principal, principalType=USER,
                grantOption=False, grantTime=0, grantorName=None, grantorPrincipalType=None,
            ))  # fmt: skip
        return grants

    def principals_in(self, role_name: str | None) -> list[hms.RolePrincipalGrant]:
        """Who has been granted a role (a missing role: nobody)."""
        book = self.book()
        role = book.get(role_name)
        if role is None:
            return []
        members = self.members(book, role.uid)
        members.sort(key=lambda m: (book.member_name(m), m.principal_type))
        return [_grant(book, m) for m in members]

    def closure(self, user: str | None, groups: Iterable[str]) -> list[str]:
        """Names of the roles a user (with ``public``) and groups have, and the roles those
        roles have, and so on. O(memberships)."""
        book = self.book()
        members = self.members(book)
        holders = {(GROUP, group) for group in groups}
        if user is not None:
            holders.add((USER, user))
        pending = [m.role_uid for m in members if (m.principal_type, m.principal) in holders]
        if user is not None and PUBLIC in book.by_name:
            pending.append(book.by_name[PUBLIC].uid)
        seen: dict[str, None] = {}  # (insertion-ordered set)
        while pending:
            uid = pending.pop(0)
            if uid in seen:
                continue
            seen[uid] = None
            pending.extend(m.role_uid for m in members
                           if m.principal_type == ROLE and m.principal_uid == uid)  # fmt: skip
        return [book.by_uid[uid].name for uid in seen]

    def _memberships_of(
        self, book: RoleBook, principal: str | None, principal_type: int | None
    ) -> list[Member]:
        return [m for m in self.members(book) if book.held_by(m, principal, principal_type)]

    def _ancestors(self, book: RoleBook, role: Role) -> set[str]:
        """Ids of the roles ``role`` belongs to, directly or through others."""
        members = self.members(book)
        found: set[str] = set()
        pending = [role.uid]
        while pending:
            uid = pending.pop()
            for m in members:
                if m.principal_type == ROLE and m.principal_uid == uid and m.role_uid not in found:
                    found.add(m.role_uid)
                    pending.append(m.role_uid)
        return found

    # -- writing -----------------------------------------------------------------------------

    def ensure_builtin(self) -> RoleBook:
        """Create ``admin`` and ``public`` on first start (owned by themselves)."""
        for name in (ADMIN, PUBLIC):
            if self._ctx.store.get(layout.META, layout.role_key(name)) is None:
                self._insert(name, name)
        return self.book()

    def create(self, role: hms.Role | None) -> bool:
        """Create a role; MetaException (HMS's words) for ``public`` or one that exists."""
        name = check_text(role.roleName if role else None, "Role name")
        if name == PUBLIC:
            raise hms.MetaException(message=f"{PUBLIC} role implictly exists. It can't be created.")
        if not self._insert(name, role.ownerName if role else None):
            raise hms.MetaException(message=f"Role {name} already exists.")
        log.info("role_created", role=name)
        return True

    def drop(self, name: str | None) -> Role | None:
        """Remove a role and its memberships (both ways); the role removed (None: there was
        none). Its privileges are the caller's to remove."""
        if name in (ADMIN, PUBLIC):
            raise hms.MetaException(message=f"{PUBLIC},{ADMIN} roles can't be dropped.")
        key = layout.role_key(check_text(name, "Role name"))
        with self._ctx.write_lock:
            row = self._ctx.store.get(layout.META, key)
            if row is None or layout.OBJECT not in row:
                return None
            role = _role(key, row[layout.OBJECT])
            # One compare-and-set makes the role and everything under its id unseen at once.
            if not self._ctx.store.mutate(
                [Delete(layout.META, key)], Condition(layout.META, key, layout.OBJECT, role.raw)
            ):
                return None
            start, stop = layout.role_member_range()
            rows = self._ctx.store.scan(layout.META, start, stop)
            stale = [
                k for k, row in rows
                if layout.OBJECT in row and _involves(_member(k, row[layout.OBJECT]), role.uid)
            ]  # fmt: skip
            if stale:
                self._ctx.store.mutate([Delete(layout.META, k) for k in stale])
        log.info("role_dropped", role=name, memberships=len(stale))
        return role

    def grant(
        self,
        role_name: str | None,
        principal: str | None,
        principal_type: int | None,
        grantor: str | None,
        grantor_type: int | None,
        option: bool,
    ) -> bool:
        """Grant a role to a user, group or role (no cycles among roles)."""
        if role_name == PUBLIC:
            raise hms.MetaException(message=f"No user can be added to {PUBLIC}. Since all users "
                                    f"implictly belong to {PUBLIC} role.")  # fmt: skip
        principal = check_text(principal, "Principal name")
        check_principal_type(principal_type)
        with self._ctx.write_lock:
            book = self.book()
            role = self._role_named(book, role_name)
            member_role = book.get(principal) if principal_type == ROLE else None
            if principal_type == ROLE and (
                principal == role.name
                or (member_role is not None and member_role.uid in self._ancestors(book, role))
            ):
                raise hms.MetaException(
                    message=f"Cannot grant role {principal} to {role.name} as {role.name} "
                    f"already belongs to the role {principal}. (no cycles allowed)"
                )
            part = book.principal_part(principal, principal_type)
            if part is None:  # a role that does not exist
                raise hms.MetaException(message=f"Role {principal} does not exist")
            key = layout.role_member_key(role.uid, part)
            value = encode({"principal": principal, "type": principal_type,
                            "principal_uid": member_role.uid if member_role else None,
                            "grantor": grantor, "grantor_type": grantor_type,
                            "option": bool(option), "time": self._ctx.now()})  # fmt: skip
            if not self._ctx.store.mutate([Put(layout.META, key, {layout.OBJECT: value})],
                                          Condition(layout.META, key, layout.OBJECT, None)):
                raise hms.MetaException(
                    message=f"Principal {principal} already has the role {role.name}"
                )
        return True

    def revoke(
        self, role_name: str | None, principal: str | None, principal_type: int | None,
        grant_option: bool,
    ) -> bool:  # fmt: skip
        """Take a role from a principal (a principal without it: nothing to do), or with
        ``grant_option`` only the right to grant it on."""
        if role_name == PUBLIC:
            raise hms.MetaException(message=f"{PUBLIC} role can't be revoked.")
        no_option = hms.MetaException(
            message=f"User {principal} does not have grant option with role {role_name}"
        )

        def attempt() -> bool | Lost:
            book = self.book()
            role = self._role_named(book, role_name)
            part = book.principal_part(principal, principal_type)
            key = layout.role_member_key(role.uid, part) if part else None
            row = self._ctx.store.get(layout.META, key) if key else None
            if key is None or row is None or layout.OBJECT not in row:
                if grant_option:
                    raise no_option
                return True
            raw = row[layout.OBJECT]
            if grant_option:
                record = decode(raw)
                if not record.get("option"):
                    raise no_option
                record["option"] = False
                op: Put | Delete = Put(layout.META, key, {layout.OBJECT: encode(record)})
            else:
                op = Delete(layout.META, key)
            if self._ctx.store.mutate([op], Condition(layout.META, key, layout.OBJECT, raw)):
                return True
            return LOST

        with self._ctx.write_lock:
            revoked = retrying.race(retrying.GRANTS, attempt)
        if revoked is LOST:
            raise hms.MetaException(message=f"Role {role_name} kept changing; try again")
        return revoked

    def _role_named(self, book: RoleBook, name: str | None) -> Role:
        role = book.get(name)
        if role is None:
            raise hms.MetaException(message=f"{name} role can not be found.")
        return role

    def _insert(self, name: str, owner: str | None) -> bool:
        key = layout.role_key(name)
        value = encode({"uid": uuid.uuid4().hex, "owner": owner, "created": self._ctx.now()})
        return self._ctx.store.mutate([Put(layout.META, key, {layout.OBJECT: value})],
                                      Condition(layout.META, key, layout.OBJECT, None))  # fmt: skip


def _role(key: bytes, raw: bytes) -> Role:
    record = decode(raw)
    return Role(name=layout.role_name(key), uid=str(record["uid"]),
                owner=record.get("owner"), created=int(record.get("created") or 0),
                raw=raw)  # fmt: skip


def _member(key: bytes, raw: bytes) -> Member:
    record = decode(raw)
    role_uid = key[len(layout.role_member_range()[0]) :].split(b"\x00", 1)[0].decode("utf-8")
    return Member(
        key=key, raw=raw, role_uid=role_uid, principal=str(record["principal"]),
        principal_type=int(record["type"]), principal_uid=record.get("principal_uid"),
        grantor=record.get("grantor"), grantor_type=record.get("grantor_type"),
        option=bool(record.get("option")), time=int(record.get("time") or 0),
    )  # fmt: skip


def _involves(member: Member, role_uid: str) -> bool:
    """Whether a membership is of, or held by, the role with id ``role_uid``."""
    return member.role_uid == role_uid or member.principal_uid == role_uid


def _grant(book: RoleBook, member: Member) -> hms.RolePrincipalGrant:
    return hms.RolePrincipalGrant(
        roleName=book.by_uid[member.role_uid].name, principalName=book.member_name(member),
        principalType=member.principal_type, grantOption=member.option, grantTime=member.time,
        grantorName=member.grantor, grantorPrincipalType=member.grantor_type,
    )  # fmt: skip
