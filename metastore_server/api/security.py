"""The role and privilege calls. HMS stores roles and grants and answers what they are;
clients (Hive's authorizers, Spark, Trino) enforce them. See
``docs/hms-api.md#roles-and-privileges``.

Where HMS 2.3 fails with an internal error (a role created twice, a privilege granted twice, a
revoke of nothing), we answer the MetaException these calls declare, with the message HMS's
store gives for it.
"""

from __future__ import annotations

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.arguments import required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms

GRANT, REVOKE = hms.GrantRevokeType.GRANT, hms.GrantRevokeType.REVOKE


class SecurityCalls(Area):
    """Roles and privileges. Raises MetaException, the only exception these calls declare:
    for what HMS refuses (a role created twice, a grant given twice, a revoke of nothing, a
    built-in role changed) and for a missing role or object (the catalog's
    NoSuchObjectException, answered as a MetaException with its message)."""

    # -- roles -------------------------------------------------------------------------------

    @thrift(stamp=caller_fields.owner_name(caller_fields.argument("role")), rule=auth.CUSTOM)
    def create_role(self, role: hms.Role) -> bool:
        """Create a role; MetaException when it exists or is built in."""
        return self.catalog.security.roles.create(role)

    @thrift(rule=auth.CUSTOM)
    def drop_role(self, role_name: str) -> bool:
        """Drop a role with its memberships and privileges; built-in roles stay (MetaException)."""
        return self.catalog.security.drop_role(role_name)

    @thrift(rule=auth.CUSTOM)
    def get_role_names(self) -> list[str]:
        """Names of every role."""
        return self.catalog.security.roles.names()

    @thrift(stamp=caller_fields.role_grantor, rule=auth.CUSTOM)
    def grant_role(
        self,
        role_name: str,
        principal_name: str,
        principal_type: int,
        grantor: str,
        grantorType: int,  # noqa: N803 (IDL name)
        grant_option: bool,
    ) -> bool:
        """Grant a role to a user, group or role."""
        return self.catalog.security.roles.grant(
            role_name, principal_name, principal_type, grantor, grantorType, bool(grant_option)
        )

    @thrift(rule=auth.CUSTOM)
    def revoke_role(self, role_name: str, principal_name: str, principal_type: int) -> bool:
        """Revoke a role from a user, group or role."""
        return self.catalog.security.roles.revoke(role_name, principal_name, principal_type, False)

    @thrift(stamp=caller_fields.role_request_grantor, rule=auth.CUSTOM)
    def grant_revoke_role(self, request: hms.GrantRevokeRoleRequest) -> hms.GrantRevokeRoleResponse:
        """Grant or revoke a role; a revoke with ``grantOption`` takes only the grant option."""
        request = required(request, "GrantRevokeRoleRequest")
        roles = self.catalog.security.roles
        option = bool(request.grantOption)
        if request.requestType == GRANT:
            done = roles.grant(request.roleName, request.principalName, request.principalType,
                               request.grantor, request.grantorType, option)  # fmt: skip
        elif request.requestType == REVOKE:
            done = roles.revoke(request.roleName, request.principalName, request.principalType,
                                option)  # fmt: skip
        else:
            raise hms.MetaException(message=f"Unknown request type {request.requestType}")
        return hms.GrantRevokeRoleResponse(success=done)

    @thrift(rule=auth.CUSTOM)
    def list_roles(self, principal_name: str, principal_type: int) -> list[hms.Role]:
        """The roles granted to a principal."""
        return self.catalog.security.roles.roles_of(principal_name, principal_type)

    @thrift(rule=auth.CUSTOM)
    def get_principals_in_role(
        self, request: hms.GetPrincipalsInRoleRequest
    ) -> hms.GetPrincipalsInRoleResponse:
        """The grants of a role to principals."""
        request = required(request, "GetPrincipalsInRoleRequest")
        grants = self.catalog.security.roles.principals_in(request.roleName)
        return hms.GetPrincipalsInRoleResponse(principalGrants=grants)

    @thrift(rule=auth.CUSTOM)
    def get_role_grants_for_principal(
        self, request: hms.GetRoleGrantsForPrincipalRequest
    ) -> hms.GetRoleGrantsForPrincipalResponse:
        """The grants of roles to a principal."""
        request = required(request, "GetRoleGrantsForPrincipalRequest")
        grants = self.catalog.security.roles.grants_of(request.principal_name,
                                                       request.principal_type)  # fmt: skip
        return hms.GetRoleGrantsForPrincipalResponse(principalGrants=grants)

    # -- privileges --------------------------------------------------------------------------

    @thrift(
        stamp=caller_fields.privilege_grantors(caller_fields.argument("privileges")),
        rule=auth.CUSTOM,
    )
    def grant_privileges(self, privileges: hms.PrivilegeBag) -> bool:
        """Grant privileges on objects."""
        return self.catalog.security.privileges.grant(privileges)

    @thrift(
        stamp=caller_fields.privilege_grantors(caller_fields.argument("privileges")),
        rule=auth.CUSTOM,
    )
    def revoke_privileges(self, privileges: hms.PrivilegeBag) -> bool:
        """Revoke privileges on objects."""
        return self.catalog.security.privileges.revoke(privileges, False)

    @thrift(
        stamp=caller_fields.privilege_grantors(caller_fields.request_privileges),
        rule=auth.CUSTOM,
    )
    def grant_revoke_privileges(
        self, request: hms.GrantRevokePrivilegeRequest
    ) -> hms.GrantRevokePrivilegeResponse:
        """Grant or revoke privileges; a revoke with ``revokeGrantOption`` takes only the grant
        option."""
        request = required(request, "GrantRevokePrivilegeRequest")
        privileges = self.catalog.security.privileges
        if request.requestType == GRANT:
            done = privileges.grant(request.privileges)
        elif request.requestType == REVOKE:
            done = privileges.revoke(request.privileges, bool(request.revokeGrantOption))
        else:
            raise hms.MetaException(message=f"Unknown request type {request.requestType}")
        return hms.GrantRevokePrivilegeResponse(success=done)

    @thrift(since="3", rule=auth.CUSTOM)
    def refresh_privileges(
        self,
        objToRefresh: hms.HiveObjectRef,  # noqa: N803 (IDL names)
        authorizer: str,
        grantRequest: hms.GrantRevokePrivilegeRequest,  # noqa: N803
    ) -> hms.GrantRevokePrivilegeResponse:
        """Replace the privileges on an object by the request's (a grant request), all or
        nothing. Grants keep no authorizer here: every grant on the object is replaced."""
        request = required(grantRequest, "GrantRevokePrivilegeRequest")
        if request.requestType not in (None, GRANT):
            raise hms.MetaException(message="refresh_privileges takes a grant request")
        done = self.catalog.security.privileges.refresh(objToRefresh, request.privileges)
        return hms.GrantRevokePrivilegeResponse(success=done)

    @thrift(rule=auth.CUSTOM)
    def list_privileges(
        self, principal_name: str, principal_type: int, hiveObject: hms.HiveObjectRef  # noqa: N803
    ) -> list[hms.HiveObjectPrivilege]:
        """The privileges a principal holds on an object."""
        return self.catalog.security.privileges.list_grants(
            principal_name, principal_type, hiveObject
        )

    @thrift(rule=auth.CUSTOM)
    def get_privilege_set(
        self, hiveObject: hms.HiveObjectRef, user_name: str, group_names: list[str]  # noqa: N803
    ) -> hms.PrincipalPrivilegeSet:
        """What a user and its groups hold on an object, directly and through their roles."""
        return self.catalog.security.privileges.privilege_set(hiveObject, user_name, group_names)
