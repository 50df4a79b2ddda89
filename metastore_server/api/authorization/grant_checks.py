"""Who may make the role and privilege calls under ``--authorization privileges``, after
HMS's SQL-standard access controller (an administrator may make them all):

- creating, dropping and listing roles: administrators only;
- granting or revoking a role, and listing who holds it: those who hold it with the admin
  option (``WITH ADMIN OPTION``; directly, or through a group or role);
- granting a privilege on a database or table: those who hold it there with the grant option
  (``WITH GRANT OPTION``; the owner holds every privilege so); privileges on partitions and
  columns are judged on their table; on the metastore itself (GLOBAL): administrators only;
- revoking a privilege: the user who granted it;
- reading the roles or privileges of a principal (``SHOW ROLE GRANT``, ``SHOW GRANT``,
  ``get_privilege_set``): one's own, one's groups' and one's roles'; of everyone: administrators;
- ``refresh_privileges`` (replacing every grant on an object): administrators only.

Refusals are MetaExceptions with the access controller's words.
"""

from __future__ import annotations

from typing import Any, Protocol

from metastore_server.api.authorization.callers import Caller
from metastore_server.api.authorization.rules import (
    DATABASE,
    TABLE,
    Demand,
    database_name,
    expand,
    table_name,
)
from metastore_server.catalog import Catalog
from metastore_server.thrift_api import hms


class PrivilegeAuthorizer(Protocol):
    """What these checks use of the authorizer (:mod:`.privileges`)."""

    catalog: Catalog

    def require(self, caller: Caller, operation: str, demands: list[Demand]) -> None:
        """Refuse unless the caller holds every demand."""

    def holdings(self, caller: Caller, demand: Demand) -> Any:
        """What the caller holds on a demand's object (None: no such object)."""


ADMIN_ONLY = "User has to belong to ADMIN role and have it as current role, for this action."
ADMIN_OPTION = (
    "Otherwise, grantor need to have ADMIN OPTION on role being granted and have it as a "
    "current role for this action."
)
USER, ROLE, GROUP = hms.PrincipalType.USER, hms.PrincipalType.ROLE, hms.PrincipalType.GROUP
GRANT = hms.GrantRevokeType.GRANT


def check(
    authorizer: PrivilegeAuthorizer, api: str, values: dict[str, Any], caller: Caller
) -> None:
    """Refuse (MetaException) a role or privilege call ``caller`` (no administrator) may not
    make."""
    if api in ("create_role", "drop_role", "get_role_names", "refresh_privileges"):
        action = {"create_role": "add roles", "drop_role": "drop role",
                  "get_role_names": "list roles",
                  "refresh_privileges": "refresh privileges"}[api]  # fmt: skip
        raise _refused(f"Current user : {caller.shown} is not allowed to {action}. {ADMIN_ONLY}")
    if api in ("grant_role", "revoke_role"):
        _role_admin(authorizer, caller, values.get("role_name"), api.split("_")[0])
    elif api == "grant_revoke_role":
        request = values.get("request")
        verb = "grant" if getattr(request, "requestType", None) == GRANT else "revoke"
        _role_admin(authorizer, caller, getattr(request, "roleName", None), verb)
    elif api == "get_principals_in_role":
        role = getattr(values.get("request"), "roleName", None)
        if not _has_admin_option(authorizer, caller, role):
            raise _refused(f"Current user : {caller.shown} is not allowed get principals in a "
                           f"role. {ADMIN_ONLY} {ADMIN_OPTION}")  # fmt: skip
    elif api == "list_roles":
        _own(caller, values.get("principal_name"), values.get("principal_type"))
    elif api == "get_role_grants_for_principal":
        request = values.get("request")
        _own(caller, getattr(request, "principal_name", None),
             getattr(request, "principal_type", None))  # fmt: skip
    elif api == "list_privileges":
        name = values.get("principal_name")
        if name is None:
            raise _refused(f"User : {caller.shown} has to specify a user name or role in the "
                           f"show grant. {ADMIN_ONLY}")  # fmt: skip
        _own(caller, name, values.get("principal_type"))
    elif api == "get_privilege_set":
        _own(caller, values.get("user_name"), USER)
        for group in values.get("group_names") or []:
            _own(caller, group, GROUP)
    elif api == "grant_privileges":
        _grant(authorizer, caller, values.get("privileges"))
    elif api == "revoke_privileges":
        _revoke(authorizer, caller, values.get("privileges"))
    elif api == "grant_revoke_privileges":
        request = values.get("request")
        if getattr(request, "requestType", None) == GRANT:
            _grant(authorizer, caller, getattr(request, "privileges", None))
        else:
            _revoke(authorizer, caller, getattr(request, "privileges", None))
    else:  # a role or privilege call of a later IDL: the admin's until judged
        raise _refused(f"User {caller.shown} is not allowed to perform this API call")


def _refused(message: str) -> hms.MetaException:
    return hms.MetaException(message=message)


def _role_admin(authorizer: PrivilegeAuthorizer, caller: Caller, role: Any, verb: str) -> None:
    if not _has_admin_option(authorizer, caller, role):
        raise _refused(f"Current user : {caller.shown} is not allowed to {verb} role. "
                       f"{ADMIN_ONLY} {ADMIN_OPTION}")  # fmt: skip


def _has_admin_option(authorizer: PrivilegeAuthorizer, caller: Caller, role: Any) -> bool:
    """Whether the caller, a group of it or a role it holds was granted ``role`` with the
    admin option."""
    if not isinstance(role, str):
        return False
    roles = authorizer.catalog.security.roles
    book = roles.book()
    wanted = book.get(role)
    if wanted is None:
        return False
    for member in roles.members(book, wanted.uid):
        name = book.member_name(member)
        if member.option and _is_callers(caller, name, member.principal_type):
            return True
    return False


def _is_callers(caller: Caller, name: str, principal_type: int | None) -> bool:
    if principal_type == USER:
        return caller.user is not None and name == caller.user
    if principal_type == GROUP:
        return name in caller.groups
    return principal_type == ROLE and name in caller.roles


def _own(caller: Caller, name: Any, principal_type: Any) -> None:
    """Refuse reading another principal's roles or privileges."""
    if name is None or _is_callers(caller, str(name), principal_type):
        return
    if principal_type == ROLE:
        what = "a role it does not belong to"
    elif principal_type == GROUP:
        what = "a group it does not belong to"
    else:
        what = "another user"
    raise _refused(f"User : {caller.shown} is not allowed check privileges of {what} : {name}. "
                   f"{ADMIN_ONLY}")  # fmt: skip


def _demand_on(ref: Any, privileges: tuple[str, ...]) -> Demand | None:
    """The object a privilege call names, as a demand (None: the metastore itself)."""
    kind = getattr(ref, "objectType", None)
    db = database_name(getattr(ref, "dbName", None))
    if kind == hms.HiveObjectType.DATABASE:
        return Demand(privileges, DATABASE, db)
    if kind in (hms.HiveObjectType.TABLE, hms.HiveObjectType.PARTITION, hms.HiveObjectType.COLUMN):
        return Demand(privileges, TABLE, db, table_name(getattr(ref, "objectName", None)))
    return None


def _grant(authorizer: PrivilegeAuthorizer, caller: Caller, bag: Any) -> None:
    """Grants need each privilege held with the grant option on the object."""
    demands = []
    for item in getattr(bag, "privileges", None) or []:
        info = getattr(item, "grantInfo", None)
        wanted = tuple(f"{p} with grant" for p in expand(getattr(info, "privilege", None)))
        demand = _demand_on(getattr(item, "hiveObject", None), wanted)
        if demand is None:
            raise _refused(
                f"Operation type AUTHORIZATION_API_CALL not allowed for user:{caller.shown}"
            )
        demands.append(demand)
    authorizer.require(caller, "GRANT_PRIVILEGE", demands)


def _revoke(authorizer: PrivilegeAuthorizer, caller: Caller, bag: Any) -> None:
    """Revokes need the caller to be the grantor of each grant taken back."""
    problems = []
    for item in getattr(bag, "privileges", None) or []:
        ref = getattr(item, "hiveObject", None)
        demand = _demand_on(ref, ())
        if demand is None:
            raise _refused(
                f"Operation type AUTHORIZATION_API_CALL not allowed for user:{caller.shown}"
            )
        if authorizer.holdings(caller, demand) is None:
            continue  # no such object: the call answers
        grants = authorizer.catalog.security.privileges.list_grants(
            item.principalName, item.principalType, ref
        )
        mine = {
            p
            for g in grants
            if g.grantInfo is not None
            and g.grantInfo.grantor == caller.user
            and g.grantInfo.grantorType in (USER, None)
            for p in expand(g.grantInfo.privilege)
        }
        principal = f"Principal [name={item.principalName}, type={_type_name(item.principalType)}]"
        for privilege in expand(getattr(item.grantInfo, "privilege", None)):
            if privilege not in mine:
                problems.append(f"Cannot find privilege {privilege} for {principal} on "
                                f"{demand.object_text()} granted by {caller.shown}")  # fmt: skip
    if problems:
        raise _refused("\n".join(problems))


def _type_name(principal_type: Any) -> str:
    return {USER: "USER", ROLE: "ROLE", GROUP: "GROUP"}.get(principal_type, str(principal_type))
