"""The authenticated user in the requests that record a user.

On a connection that authenticated (SASL), the user a request names as an owner, a grantor, a
lock's or a transaction's user is what the client claims; the server writes the authenticated
user there instead before the call is served, so what is stored says who really did it. On a
connection without authentication requests are served as sent (as HMS without SASL).

Each entry of :data:`STAMPS` takes the call's arguments (by IDL name) and the user, and sets
the user fields of that call's request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore_server.caller import Session
from metastore_server.thrift_api import hms

Stamp = Callable[[dict[str, Any], str], None]
_USER = hms.PrincipalType.USER


def _database_owner(arg: str) -> Stamp:
    def stamp(values: dict[str, Any], user: str) -> None:
        database = values.get(arg)
        if database is not None:
            database.ownerName, database.ownerType = user, _USER

    return stamp


def _table_owner(table_of: Callable[[dict[str, Any]], Any]) -> Stamp:
    def stamp(values: dict[str, Any], user: str) -> None:
        table = table_of(values)
        if table is not None:
            table.owner, table.ownerType = user, _USER

    return stamp


def _function_owner(values: dict[str, Any], user: str) -> None:
    function = values.get("func")
    if function is not None:
        function.ownerName, function.ownerType = user, _USER


def _request_user(values: dict[str, Any], user: str) -> None:
    request = values.get("rqst")
    if request is not None:
        request.user = user


def _role_grantor(values: dict[str, Any], user: str) -> None:
    values["grantor"], values["grantorType"] = user, _USER


def _role_request_grantor(values: dict[str, Any], user: str) -> None:
    request = values.get("request")
    if request is not None:
        request.grantor, request.grantorType = user, _USER


def _privilege_grantors(bag_of: Callable[[dict[str, Any]], Any]) -> Stamp:
    def stamp(values: dict[str, Any], user: str) -> None:
        bag = bag_of(values)
        for privilege in getattr(bag, "privileges", None) or ():
            info = getattr(privilege, "grantInfo", None)
            if info is not None:
                info.grantor, info.grantorType = user, _USER

    return stamp


def _owner_name(of: Callable[[dict[str, Any]], Any]) -> Stamp:
    def stamp(values: dict[str, Any], user: str) -> None:
        owned = of(values)
        if owned is not None:
            owned.ownerName = user

    return stamp


def _scheduled_query_user(values: dict[str, Any], user: str) -> None:
    query = getattr(values.get("request"), "scheduledQuery", None)
    if query is not None:
        query.user = user


def _argument(name: str) -> Callable[[dict[str, Any]], Any]:
    return lambda values: values.get(name)


def _request_table(values: dict[str, Any]) -> Any:
    return getattr(values.get("request"), "table", None)


def _request_privileges(values: dict[str, Any]) -> Any:
    return getattr(values.get("request"), "privileges", None)


#: The calls whose requests record a user, and how to set it.
STAMPS: dict[str, Stamp] = {
    "create_database": _database_owner("database"),
    "create_table": _table_owner(_argument("tbl")),
    "create_table_with_environment_context": _table_owner(_argument("tbl")),
    "create_table_with_constraints": _table_owner(_argument("tbl")),
    "create_table_req": _table_owner(_request_table),
    "create_function": _function_owner,
    "lock": _request_user,
    "open_txns": _request_user,
    "create_role": _owner_name(_argument("role")),
    "grant_role": _role_grantor,
    "grant_revoke_role": _role_request_grantor,
    "grant_privileges": _privilege_grantors(_argument("privileges")),
    "revoke_privileges": _privilege_grantors(_argument("privileges")),
    "grant_revoke_privileges": _privilege_grantors(_request_privileges),
    "scheduled_query_maintenance": _scheduled_query_user,
    "add_package": _owner_name(_argument("request")),
    "create_stored_procedure": _owner_name(_argument("proc")),
}


def stamp_caller(api: str, values: dict[str, Any], session: Session) -> None:
    """Write the authenticated user into the user fields of call ``api``'s arguments
    (``values``, by IDL name; changed in place). Nothing changes without authentication."""
    user = session.authenticated_user
    stamp = STAMPS.get(api)
    if user is not None and stamp is not None:
        stamp(values, user)
