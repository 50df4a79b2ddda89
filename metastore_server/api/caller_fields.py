"""The authenticated user in the requests that record a user.

On a connection that authenticated (SASL), the user a request names as an owner, a grantor, a
lock's or a transaction's user is what the client claims; the server writes the authenticated
user there instead before the call is served, so what is stored says who really did it. On a
connection without authentication requests are served as sent (as HMS without SASL).

A method that records a user declares its stamp (``@thrift(stamp=...)``, built with the
functions here): it takes the call's arguments (by IDL name) and the user, and sets the user
fields of that call's request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore_server.api.declaration import Stamp
from metastore_server.caller import Session
from metastore_server.thrift_api import hms

_USER = hms.PrincipalType.USER


def database_owner(arg: str) -> Stamp:
    """The database of argument ``arg`` is owned by the user."""
    def stamp(values: dict[str, Any], user: str) -> None:
        database = values.get(arg)
        if database is not None:
            database.ownerName, database.ownerType = user, _USER

    return stamp


def table_owner(table_of: Callable[[dict[str, Any]], Any]) -> Stamp:
    """The table ``table_of`` finds is owned by the user."""
    def stamp(values: dict[str, Any], user: str) -> None:
        table = table_of(values)
        if table is not None:
            table.owner, table.ownerType = user, _USER

    return stamp


def function_owner(values: dict[str, Any], user: str) -> None:
    """The function (``func``) is owned by the user."""
    function = values.get("func")
    if function is not None:
        function.ownerName, function.ownerType = user, _USER


def request_user(values: dict[str, Any], user: str) -> None:
    """The request (``rqst``: a lock, transactions) is the user's."""
    request = values.get("rqst")
    if request is not None:
        request.user = user


def role_grantor(values: dict[str, Any], user: str) -> None:
    """The user grants the role (``grant_role``'s arguments)."""
    values["grantor"], values["grantorType"] = user, _USER


def role_request_grantor(values: dict[str, Any], user: str) -> None:
    """The user grants the role (``request``)."""
    request = values.get("request")
    if request is not None:
        request.grantor, request.grantorType = user, _USER


def privilege_grantors(bag_of: Callable[[dict[str, Any]], Any]) -> Stamp:
    """The user grants each privilege of the bag ``bag_of`` finds."""
    def stamp(values: dict[str, Any], user: str) -> None:
        bag = bag_of(values)
        for privilege in getattr(bag, "privileges", None) or ():
            info = getattr(privilege, "grantInfo", None)
            if info is not None:
                info.grantor, info.grantorType = user, _USER

    return stamp


def owner_name(of: Callable[[dict[str, Any]], Any]) -> Stamp:
    """What ``of`` finds is owned by the user (its ``ownerName``)."""
    def stamp(values: dict[str, Any], user: str) -> None:
        owned = of(values)
        if owned is not None:
            owned.ownerName = user

    return stamp


def scheduled_query_user(values: dict[str, Any], user: str) -> None:
    """The scheduled query of the request runs as the user."""
    query = getattr(values.get("request"), "scheduledQuery", None)
    if query is not None:
        query.user = user


def argument(name: str) -> Callable[[dict[str, Any]], Any]:
    """Finds argument ``name``."""
    return lambda values: values.get(name)


def request_table(values: dict[str, Any]) -> Any:
    """The table of the request (``request.table``)."""
    return getattr(values.get("request"), "table", None)


def request_privileges(values: dict[str, Any]) -> Any:
    """The privileges of the request (``request.privileges``)."""
    return getattr(values.get("request"), "privileges", None)


def stamp_caller(stamp: Stamp | None, values: dict[str, Any], session: Session) -> None:
    """Write the authenticated user into the user fields of a call's arguments (``values``,
    by IDL name; changed in place) with the call's declared ``stamp`` (None: it records no
    user). Nothing changes without authentication."""
    user = session.authenticated_user
    if user is not None and stamp is not None:
        stamp(values, user)
