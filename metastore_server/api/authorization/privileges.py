"""``--authorization privileges``: the roles and privileges the server stores, enforced on every
call, after HMS's SQL-standard based authorization (what each call needs:
each method's declared rule, built with :mod:`.shorthand`; the locations a call gives objects:
:mod:`.locations`; who is calling: :mod:`.callers`; the role and privilege calls:
:mod:`.grant_checks`). See ``docs/security.md#authorization``. Drops then leave other tables'
directories standing (``DataOperations.other_tables``).

What a caller holds on an object:

- the privileges granted on that object (SELECT, INSERT, UPDATE, DELETE; ``ALL`` is all four)
  to the user, to one of its groups or to one of its roles (``public`` included); a grant with
  the grant option also lets it grant the privilege on;
- everything, with the grant option, and the object's ownership, when it owns the object (a
  table's or database's owner: the user, a group of it, or a role it holds); everyone owns the
  ``default`` database, as in HMS's model;
- everything, everywhere, when it is an administrator (the ``admin`` role, ``--admin-users``).

Grants on a database do not reach its tables (SQL-standard grants on tables). A call on an
object that does not exist is let through: it answers as it does without authorization (a
NoSuchObjectException, say, which clients such as Spark rely on to tell a table is missing).
A refusal is a MetaException in HMS's words and nothing of the call is done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import structlog

from metastore_server.api.areas import DECLARED
from metastore_server.api.authorization import grant_checks
from metastore_server.api.authorization.callers import (
    Caller,
    GroupLookup,
    holds,
    owns,
    resolve,
)
from metastore_server.api.authorization.locations import LocationCheck
from metastore_server.api.authorization.rules import (
    ADMIN,
    DATABASE,
    DELETE,
    FUNCTION,
    GRANTABLE,
    INSERT,
    OWNERSHIP,
    SELECT,
    UPDATE,
    Demand,
    Rule,
    expand,
)
from metastore_server.caller import Session
from metastore_server.catalog import Catalog
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: Every served method's rule, as declared (``@thrift(rule=...)``); a method without one
#: needs the admin (fail closed).
RULES: dict[str, Rule] = {name: d.rule for name, d in DECLARED.items() if d.rule is not None}
#: The order HMS lists missing privileges in.
ORDER = (SELECT, f"{SELECT} with grant", INSERT, f"{INSERT} with grant", UPDATE,
         f"{UPDATE} with grant", DELETE, f"{DELETE} with grant", OWNERSHIP, ADMIN)  # fmt: skip
#: The default database, which everyone owns (HMS's SQL-standard model).
DEFAULT_DATABASE = "default"


def build(catalog: Catalog, settings: dict[str, Any]) -> PrivilegeAuthorizer:
    """The ``privileges`` authorizer; ``settings``: ``admin_users`` (names, a list or
    comma-separated text)."""
    admins = parse_admin_users(settings.get("admin_users"))
    log.info("authorization_privileges", admin_users=sorted(admins) or None)
    # Locations are owned: a drop leaves other tables' directories standing.
    catalog.keep_other_tables()
    return PrivilegeAuthorizer(catalog, admins)


def parse_admin_users(value: str | Iterable[object] | None) -> frozenset[str]:
    """``--admin-users``'s names: comma-separated text or a list (blanks ignored)."""
    if value is None:
        return frozenset()
    items = value.split(",") if isinstance(value, str) else list(value)
    return frozenset(str(item).strip() for item in items if str(item).strip())


@dataclass(frozen=True)
class Held:
    """What a caller holds on one object (None from :meth:`holdings`: no such object)."""

    privileges: frozenset[str]

    def has(self, wanted: str) -> bool:
        """Whether ``wanted`` is held (a privilege with the grant option covers it without)."""
        return wanted in self.privileges or f"{wanted} with grant" in self.privileges


class PrivilegeAuthorizer:
    """Decides each call by its rule, the caller and what the store holds now."""

    def __init__(
        self,
        catalog: Catalog,
        admin_users: frozenset[str] = frozenset(),
        groups_of: Callable[[str], frozenset[str]] | None = None,
    ) -> None:
        self.catalog = catalog
        self.admin_users = admin_users
        self.groups_of = groups_of if groups_of is not None else GroupLookup()
        self.locations = LocationCheck(catalog)

    def check(self, api: str, values: dict[str, Any], session: Session) -> None:
        """Return when the caller may make the call; MetaException (HMS's words) otherwise."""
        rule = RULES.get(api)
        if rule is not None and rule.style == "open":
            return
        caller = self.caller(session)
        if caller.admin:
            return
        if rule is None or rule.style == "api":
            raise refusal(f"User {caller.shown} is not allowed to perform this API call")
        if rule.style == "named":
            if caller.user is None:
                raise refusal(
                    "Permission denied: a database needs an owner, and this caller names no "
                    "user (authenticate, or name one with set_ugi)"
                )
            self.require_locations(caller, api, values)
            return
        if rule.style == "event":
            raise refusal(f"Operation type {rule.operation} not allowed for user:{caller.shown}")
        if rule.style == "admin_operation":
            raise privileges_refusal(
                caller,
                rule.operation,
                None,
                "[ADMIN PRIVILEGE on INPUT, ADMIN PRIVILEGE on OUTPUT]",
            )
        if rule.style == "custom":
            grant_checks.check(self, api, values, caller)
            return
        self.require(caller, rule.operation, rule.demands(values) if rule.demands else [])
        self.require_locations(caller, api, values)

    def require_locations(self, caller: Caller, api: str, values: dict[str, Any]) -> None:
        """Refuse (MetaException) a call giving an object a location the caller may not
        give (:mod:`.locations`)."""
        refused = self.locations.refused(api, values, caller)
        if refused is not None:
            operation, denied = refused
            raise privileges_refusal(caller, operation, None, denied)

    def caller(self, session: Session) -> Caller:
        """Who ``session``'s calls are made as, with its roles as stored now."""
        return resolve(session, self.catalog.security.roles, self.admin_users, self.groups_of)

    def require(self, caller: Caller, operation: str, demands: list[Demand]) -> None:
        """Refuse (MetaException) unless ``caller`` holds every demand (demands on objects
        that do not exist are left to the call)."""
        denied = []
        for demand in demands:
            held = self.holdings(caller, demand)
            if held is None:
                continue
            missing = [p for p in demand.privileges if not held.has(p)]
            if missing:
                ordered = sorted(set(missing), key=_rank)
                denied.append(f"[{', '.join(ordered)}] on {demand.object_text()}")
        if denied:
            raise privileges_refusal(caller, operation, denied)

    def holdings(self, caller: Caller, demand: Demand) -> Held | None:
        """What ``caller`` holds on the object of ``demand``; None when there is no such object."""
        if demand.kind == FUNCTION:
            return Held(frozenset())
        if demand.kind == DATABASE:
            database = self.catalog.databases.find(demand.db) if demand.db else None
            if database is None:
                return None
            owner = demand.db == DEFAULT_DATABASE or owns(
                caller, database.ownerName, database.ownerType
            )
            ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.DATABASE, dbName=demand.db)
        else:
            if not demand.db or not demand.name:
                return Held(frozenset())  # a call naming no table: administrators only
            table = self.catalog.tables.find(demand.db, demand.name)
            if table is None:
                return None
            owner = owns(caller, table.table.owner, table.table.ownerType)
            ref = hms.HiveObjectRef(
                objectType=hms.HiveObjectType.TABLE, dbName=table.db, objectName=table.name
            )
        if owner:
            return Held(frozenset({*(f"{p} with grant" for p in GRANTABLE), OWNERSHIP}))
        return Held(frozenset(self.granted(caller, ref)))

    def granted(self, caller: Caller, ref: hms.HiveObjectRef) -> set[str]:
        """The privileges granted on ``ref`` to the caller, its groups and its roles."""
        found: set[str] = set()
        for grant in self.catalog.security.privileges.list_grants(None, None, ref):
            if not holds(caller, grant.principalName, grant.principalType):
                continue
            info = grant.grantInfo
            for privilege in expand(info.privilege if info else None):
                found.add(privilege)
                if info is not None and info.grantOption:
                    found.add(f"{privilege} with grant")
        return found


def _rank(privilege: str) -> int:
    return ORDER.index(privilege) if privilege in ORDER else len(ORDER)


def refusal(message: str) -> hms.MetaException:
    """A refused call's answer: HMS's metastore authorizer answers a MetaException."""
    return hms.MetaException(message=message)


def privileges_refusal(
    caller: Caller, operation: str, denied: list[str] | None, text: str | None = None
) -> hms.MetaException:
    """HMS's SQL-standard refusal: ``Permission denied: Principal [name=U, type=USER] does not
    have following privileges for operation OP [[PRIV] on Object [type=T, name=N], ...]``."""
    listed = text if text is not None else f"[{', '.join(sorted(denied or []))}]"
    return refusal(
        f"Permission denied: {caller.principal_text()} does not have following privileges "
        f"for operation {operation} {listed}"
    )
