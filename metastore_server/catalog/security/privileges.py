"""HMS's privilege calls: grants and revokes on the metastore, databases, tables, partitions
and columns, to users, groups and roles (:mod:`roles`), and what a principal holds. HMS stores
them; clients enforce them. The rows are described in :mod:`grants`; what a call names is found
by :mod:`grant_targets`. See ``docs/security.md``.

Each grant is created by compare-and-set on its own row, so two servers granting at once
neither lose nor duplicate a grant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import structlog

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.databases import Databases
from metastore_server.catalog.objects.tables import Tables
from metastore_server.catalog.reads.partition_reads import PartitionReads
from metastore_server.catalog.security.grant_targets import GrantTargets
from metastore_server.catalog.security.grants import (
    COLUMN,
    GLOBAL,
    GRANT,
    PARTITION,
    READ,
    REVOKE,
    TABLE,
    Grant,
    Principal,
    Target,
)
from metastore_server.catalog.security.roles import (
    ADMIN,
    GROUP,
    ROLE,
    USER,
    RoleBook,
    Roles,
    check_text,
    encode,
)
from metastore_server.storage import layout, retrying
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)


class Privileges:
    """HMS's privilege calls over ``meta`` rows."""

    def __init__(
        self,
        ctx: CatalogContext,
        roles: Roles,
        databases: Databases,
        tables: Tables,
        partition_reads: PartitionReads,
    ) -> None:
        self._ctx = ctx
        self._roles = roles
        self._tables = tables
        self._targets = GrantTargets(databases, tables, partition_reads)

    # -- writing -----------------------------------------------------------------------------

    def ensure_admin(self, book: RoleBook) -> None:
        """``admin`` holds ``All`` on the metastore, with the grant option (granted again at
        each start when revoked, as HMS does)."""
        admin = book.get(ADMIN)
        if admin is None:
            return
        principal = Principal(ADMIN, ROLE, admin.uid, layout.principal_part(ROLE, admin.uid))
        info = hms.PrivilegeGrantInfo(privilege="All", grantor=ADMIN, grantorType=ROLE,
                                      grantOption=True)  # fmt: skip
        self._grant_one(Target(GLOBAL), principal, info)

    def grant(self, bag: hms.PrivilegeBag | None) -> bool:
        """Grant every privilege of ``bag``, all or none. Privileges on a table or partition
        that is not there are left out, as HMS does; a privilege its principal already has
        from the same grantor is refused."""
        items = (bag.privileges if bag else None) or []
        with self._ctx.write_lock:
            book = self._roles.book()
            planned: list[tuple[bytes, bytes, bytes | None, str]] = []
            keys: set[bytes] = set()
            for item in items:
                principal = Principal.of(item.principalName, item.principalType, book)
                if principal.type == ROLE and principal.part is None:
                    raise hms.MetaException(message=f"Role {principal.name} does not exist")
                info = _info(item)
                target = self._targets.resolve(item.hiveObject, GRANT)
                if target is None:
                    continue
                for privilege in _split(info.privilege):
                    key = layout.grant_key(target.key(), principal.part or b"", privilege,
                                           info.grantor or "")  # fmt: skip
                    row = self._ctx.store.get(layout.META, key) or {}
                    stale = row.get(layout.OBJECT)
                    message = target.already(privilege, info.grantor)
                    if key in keys or (stale is not None and self._current(stale, target)):
                        raise hms.MetaException(message=message)
                    value = self._value(target, principal, privilege, info.grantor,
                                        info.grantorType, bool(info.grantOption))  # fmt: skip
                    planned.append((key, value, stale, message))
                    keys.add(key)
            self._create_all(planned)
        return True

    def grant_created(
        self, db: str | None, table: str | None, privileges: hms.PrincipalPrivilegeSet | None
    ) -> None:
        """Grant the privileges a table was created with, once it is (HMS 2.3 does, for tables
        only, not databases or partitions; grants to roles that do not exist are left out)."""
        ref = self._tables.find(names.split_catalog(db)[1], names.normalize(table))
        if privileges is None or ref is None:
            return
        book = self._roles.book()
        target = Target(TABLE, db=ref.db, table=ref.name, table_id=ref.table_id)
        for principal_type, by_name in ((USER, privileges.userPrivileges),
                                        (GROUP, privileges.groupPrivileges),
                                        (ROLE, privileges.rolePrivileges)):  # fmt: skip
            for name, infos in (by_name or {}).items():
                for info in infos or []:
                    if _usable(name, info):
                        self._grant_one(target, Principal.of(name, principal_type, book), info)

    def _grant_one(
        self, target: Target, principal: Principal, info: hms.PrivilegeGrantInfo
    ) -> None:
        """Record one grant unless its principal is a missing role or it is there already."""
        if principal.part is None:
            return
        privilege = info.privilege or ""
        key = layout.grant_key(target.key(), principal.part, privilege, info.grantor or "")
        value = self._value(target, principal, privilege, info.grantor, info.grantorType,
                            bool(info.grantOption))  # fmt: skip
        self._ctx.store.mutate([Put(layout.META, key, {layout.OBJECT: value})],
                               Condition(layout.META, key, layout.OBJECT, None))  # fmt: skip

    def revoke(self, bag: hms.PrivilegeBag | None, grant_option: bool) -> bool:
        """Revoke every privilege of ``bag`` (from whichever grantor gave it), or with
        ``grant_option`` only the right to grant it on; all checked before any is changed."""
        items = (bag.privileges if bag else None) or []
        with self._ctx.write_lock:
            book = self._roles.book()
            chosen: dict[bytes, Grant] = {}
            for item in items:
                principal = Principal.of(item.principalName, item.principalType, book)
                info = _info(item)
                target = self._targets.resolve(item.hiveObject, REVOKE)
                if target is None:
                    continue
                held = [g for g in self._grants_on(target, book) if principal.holds(g)]
                for privilege in _split(info.privilege):
                    found = next((g for g in held if g.privilege == privilege), None)
                    if found is None:
                        raise hms.MetaException(message=target.missing(privilege))
                    if grant_option and not found.option:
                        raise hms.MetaException(
                            message=f"User {principal.name} does not have grant option "
                            f"with privilege {privilege}"
                        )
                    chosen[found.key] = found
            for found in chosen.values():
                self._take_back(found, grant_option)
        return True

    def refresh(self, obj: hms.HiveObjectRef | None, bag: hms.PrivilegeBag | None) -> bool:
        """Replace every grant on ``obj`` by the grants of ``bag`` (``refresh_privileges``):
        the old ones are taken back and the new ones granted in one change (all or nothing
        where the store has transactions; a refused grant leaves the old ones)."""
        with self._ctx.write_lock:
            book = self._roles.book()
            target = self._targets.resolve(obj, READ)
            if target is None:
                raise hms.MetaException(message="The object to refresh privileges of is missing")
            for item in (bag.privileges if bag else None) or []:
                if self._targets.resolve(item.hiveObject, READ) != target:
                    raise hms.MetaException(
                        message="A privilege to refresh is on another object than refreshed"
                    )
            for held in self._grants_on(target, book):
                self._take_back(held, False)
            return self.grant(bag)

    def forget_role(self, role_uid: str) -> None:
        """Remove the grants of a dropped role."""
        start, stop = layout.grant_range()
        keys = [key for key, row in self._ctx.store.scan(layout.META, start, stop)
                if layout.OBJECT in row
                and Grant.parse(key, row[layout.OBJECT]).principal_uid == role_uid]  # fmt: skip
        if keys:
            self._ctx.store.mutate([Delete(layout.META, key) for key in keys])
        log.info("role_grants_removed", grants=len(keys))

    # -- reading -----------------------------------------------------------------------------

    def list_grants(
        self,
        principal: str | None,
        principal_type: int | None,
        obj: hms.HiveObjectRef | None,
    ) -> list[hms.HiveObjectPrivilege]:
        """The grants on an object (``principal`` None: to anyone), or with no object type
        (or no database) every grant of the principal (of that kind)."""
        book = self._roles.book()
        kind = obj.objectType if obj is not None else None
        known: dict[int, tuple[str, str]] = {}
        if kind is None or (kind != GLOBAL and obj is not None and obj.dbName is None):
            on_parts = bool(obj.partValues) if obj is not None else False
            grants = [g for g in self._every_grant(book) if _of_kind(g, kind, on_parts)]
            # HMS's order: the metastore, databases, tables, partitions, table then partition
            # columns (key order within each).
            grants.sort(key=lambda g: (g.target.kind, bool(g.target.part_name)))
        else:
            target = self._targets.resolve(obj, READ)
            if target is None:
                return []
            grants = self._grants_on(target, book)
            if target.table_id is not None:
                known[target.table_id] = (target.db or "", target.table or "")
        wanted = _principal_filter(principal, principal_type, book)
        return self._described([g for g in grants if wanted(g)], book, known)

    def privilege_set(
        self, obj: hms.HiveObjectRef | None, user: str | None, groups: Sequence[str] | None
    ) -> hms.PrincipalPrivilegeSet:
        """What a user and its groups hold on an object, directly and through their roles
        (and the roles of those roles); on the metastore itself, not through roles (HMS)."""
        groups = list(groups or [])
        kind = obj.objectType if obj is not None else None
        if obj is None or kind is None:
            return hms.PrincipalPrivilegeSet()
        book = self._roles.book()
        on_no_partition = kind == PARTITION and not obj.partValues
        target = None if on_no_partition else self._targets.resolve(obj, READ)
        grants = self._grants_on(target, book) if target is not None else []

        def infos(principal_type: int, name: str) -> list[hms.PrivilegeGrantInfo]:
            role = book.get(name) if principal_type == ROLE else None
            principal = Principal(name, principal_type, role.uid if role else None, None)
            return [g.info() for g in grants if principal.holds(g)]

        if kind == GLOBAL:
            mine = infos(USER, user) if user is not None else []
            return hms.PrincipalPrivilegeSet(
                userPrivileges={user: mine} if mine and user is not None else None,
                groupPrivileges={g: found for g in groups if (found := infos(GROUP, g))}
                if groups else None,
            )  # fmt: skip
        roles = self._roles.closure(user, groups)
        return hms.PrincipalPrivilegeSet(
            userPrivileges={user: infos(USER, user)} if user is not None else None,
            groupPrivileges={g: infos(GROUP, g) for g in groups} if groups else None,
            rolePrivileges={r: infos(ROLE, r) for r in roles} if roles else None,
        )

    # -- helpers -----------------------------------------------------------------------------

    def _current(self, raw: bytes, target: Target) -> bool:
        """Whether a row found at a grant's key is the grant on ``target`` (not one on a
        partition of the same name dropped since)."""
        return Grant.parse(b"", raw).target.part_time == target.part_time

    def _grants_on(self, target: Target, book: RoleBook) -> list[Grant]:
        """The grants on ``target`` now (none when it is not there), in key order."""
        if not target.exists:
            return []
        start, stop = layout.grant_range(target.key())
        obj = target.key()
        found = []
        for key, row in self._ctx.store.scan(layout.META, start, stop):
            if layout.OBJECT not in row:
                continue
            grant = Grant.parse(key, row[layout.OBJECT])
            if (grant.target.key() == obj and grant.target.part_time == target.part_time
                    and _live(grant, book)):  # fmt: skip
                found.append(replace(grant, target=replace(grant.target, table=target.table)))
        return found

    def _every_grant(self, book: RoleBook) -> list[Grant]:
        start, stop = layout.grant_range()
        found = (Grant.parse(key, row[layout.OBJECT])
                 for key, row in self._ctx.store.scan(layout.META, start, stop)
                 if layout.OBJECT in row)  # fmt: skip
        return [g for g in found if _live(g, book)]

    def _described(
        self, grants: list[Grant], book: RoleBook, known: dict[int, tuple[str, str]]
    ) -> list[hms.HiveObjectPrivilege]:
        """``grants`` as HMS reports them; those of tables or partitions gone are left out."""
        if any(g.target.table_id is not None and g.target.table_id not in known for g in grants):
            known = self._table_names()
        partitions: dict[tuple[int, str], bool] = {}
        result = []
        for grant in grants:
            target = grant.target
            if target.table_id is not None:
                if target.table_id not in known:
                    continue  # a dropped table's grant (written while it was being dropped)
                db, table = known[target.table_id]
                target = replace(target, db=db, table=table)
                if target.part_name and not self._targets.partition_alive(target, partitions):
                    continue
            result.append(hms.HiveObjectPrivilege(
                hiveObject=target.ref(), principalName=_principal_name(grant, book),
                principalType=grant.principal_type, grantInfo=grant.info(),
            ))  # fmt: skip
        return result

    def _table_names(self) -> dict[int, tuple[str, str]]:
        """Every table's (database, name) by its id. O(tables)."""
        found = {}
        for key, row in self._ctx.store.scan(layout.TABLES, columns=[layout.TABLE_ID]):
            db, _, table = key.partition(b"\x00")
            found[int.from_bytes(row[layout.TABLE_ID], "big")] = (db.decode(), table.decode())
        return found

    def _value(
        self,
        target: Target,
        principal: Principal,
        privilege: str,
        grantor: str | None,
        grantor_type: int | None,
        option: bool,
    ) -> bytes:
        return encode({**target.record(), "principal": principal.name, "type": principal.type,
                       "puid": principal.uid, "privilege": privilege, "grantor": grantor,
                       "grantor_type": grantor_type, "option": option,
                       "time": self._ctx.now()})  # fmt: skip

    def _create_all(self, planned: list[tuple[bytes, bytes, bytes | None, str]]) -> None:
        """Create grant rows, each by compare-and-set; when one is taken meanwhile (another
        server granted it), those created are removed again and the grant is refused."""
        done: list[bytes] = []
        for key, value, expected, message in planned:
            put = Put(layout.META, key, {layout.OBJECT: value})
            if self._ctx.store.mutate([put], Condition(layout.META, key, layout.OBJECT, expected)):
                done.append(key)
                continue
            if done:
                self._ctx.store.mutate([Delete(layout.META, k) for k in done])
            raise hms.MetaException(message=message)

    def _take_back(self, grant: Grant, option_only: bool) -> None:
        """Delete a grant (or clear its grant option) by compare-and-set, again on what another
        server left when it changed the row meanwhile."""
        key, raw = grant.key, grant.raw

        def attempt() -> None | Lost:
            nonlocal raw
            current = Grant.parse(key, raw)
            if option_only and not current.option:
                return None
            op: Put | Delete = (Put(layout.META, key, {layout.OBJECT: current.without_option()})
                                if option_only else Delete(layout.META, key))  # fmt: skip
            if self._ctx.store.mutate([op], Condition(layout.META, key, layout.OBJECT, raw)):
                return None
            row = self._ctx.store.get(layout.META, key)
            if row is None or layout.OBJECT not in row:
                return None
            raw = row[layout.OBJECT]
            return LOST

        if retrying.race(retrying.GRANTS, attempt) is LOST:
            raise hms.MetaException(message=f"Grant {grant.privilege} kept changing; try again")


def _split(privilege: str | None) -> list[str]:
    """The privileges of a grant's text (HMS splits it at commas)."""
    found: dict[str, None] = {}
    for name in (privilege or "").split(","):
        found[check_text(name, "Privilege")] = None
    return list(found)


def _usable(name: str | None, info: hms.PrivilegeGrantInfo | None) -> bool:
    """Whether a grant a table is created with can be stored (names without NUL)."""
    texts = (name, info.privilege, info.grantor) if info is not None else (None,)
    return name is not None and all(t is None or "\x00" not in t for t in texts)


def _info(item: hms.HiveObjectPrivilege) -> hms.PrivilegeGrantInfo:
    if item.grantInfo is None:
        raise hms.MetaException(message="The grant info of a privilege cannot be null")
    if item.grantInfo.grantor is not None:
        check_text(item.grantInfo.grantor, "Grantor")
    return item.grantInfo


def _of_kind(grant: Grant, kind: int | None, on_partitions: bool) -> bool:
    """Whether a grant is on an object of ``kind`` (None: any; a column grant: on a partition's
    column when ``on_partitions``, else on a table's)."""
    if kind is None:
        return True
    target = grant.target
    return target.kind == kind and (kind != COLUMN or bool(target.part_name) == on_partitions)


def _live(grant: Grant, book: RoleBook) -> bool:
    """Whether a grant's principal still exists (a role not dropped since)."""
    return grant.principal_type != ROLE or grant.principal_uid in book.by_uid


def _principal_name(grant: Grant, book: RoleBook) -> str:
    if grant.principal_type == ROLE and grant.principal_uid in book.by_uid:
        return book.by_uid[grant.principal_uid].name
    return grant.principal


def _principal_filter(
    name: str | None, principal_type: int | None, book: RoleBook
) -> Callable[[Grant], bool]:
    """Which grants ``list_privileges`` keeps: all (no principal named), else that
    principal's (of any type when none is given)."""
    if name is None:
        return lambda grant: True
    if principal_type is None:
        return lambda grant: _principal_name(grant, book) == name
    role = book.get(name) if principal_type == ROLE else None
    principal = Principal(name, principal_type, role.uid if role else None, None)
    if principal_type == ROLE and role is None:
        return lambda grant: False
    return principal.holds


class Security:
    """Roles and privileges together: what the handler calls."""

    def __init__(
        self,
        ctx: CatalogContext,
        databases: Databases,
        tables: Tables,
        partition_reads: PartitionReads,
    ) -> None:
        self.roles = Roles(ctx)
        self.privileges = Privileges(ctx, self.roles, databases, tables, partition_reads)

    def ensure_builtin(self) -> None:
        """The ``admin`` and ``public`` roles, and ``admin``'s privileges, on first start."""
        self.privileges.ensure_admin(self.roles.ensure_builtin())

    def drop_role(self, name: str | None) -> bool:
        """Drop a role with its memberships and privileges (a missing role: nothing to do)."""
        role = self.roles.drop(name)
        if role is not None:
            self.privileges.forget_role(role.uid)
        return True
