"""Namespaces as databases: a one-level namespace is an HMS database (nested namespaces do
not exist here). Its properties are the database's parameters, with ``comment`` its
description and ``location`` its location, as Iceberg's HiveCatalog shows them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metastore_server.catalog.basics import code_properties, names
from metastore_server.rest.boundary import FileBoundary
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import (
    RestError,
    already_exists,
    bad_request,
    from_metastore,
    no_such_namespace,
)
from metastore_server.rest.paging import WHOLE, Page, of_names
from metastore_server.thrift_api import hms

COMMENT = "comment"
LOCATION = "location"


def database_name(namespace: Sequence[str]) -> str:
    """The database of a namespace; 400 for a nested or empty one."""
    if not isinstance(namespace, list | tuple) or not all(isinstance(p, str) for p in namespace):
        raise bad_request("A namespace must be a list of strings")
    if len(namespace) != 1 or not namespace[0]:
        shown = ".".join(namespace) or "(empty)"
        raise bad_request(f"Namespace {shown} is not one level: nested namespaces are not "
                          "supported, a namespace is a database")  # fmt: skip
    if namespace[0].startswith("@"):  # Hive's catalog marker: the path's prefix names one
        raise bad_request(f"Namespace {namespace[0]} is not a database name")
    return namespace[0]


def list_namespaces(
    calls: MetastoreCalls, parent: Sequence[str] | None, page: Page = WHOLE
) -> tuple[list[list[str]], str | None]:
    """Every namespace, or those below ``parent`` (none: namespaces do not nest), in name
    order: the page asked and the next page's token."""
    if parent:
        load_database(calls, database_name(parent))
        return [], None
    found, token = of_names(calls.all_databases(), page)
    return [[name] for name in found], token


def load_database(calls: MetastoreCalls, name: str) -> Any:
    """The database; 404 when there is none."""
    try:
        return calls.get_database(name)
    except hms.NoSuchObjectException:
        raise no_such_namespace(name) from None


def properties_of(database: Any) -> dict[str, str]:
    """A database's namespace properties."""
    properties = dict(database.parameters or {})
    if database.description:
        properties[COMMENT] = database.description
    if database.locationUri:
        properties[LOCATION] = database.locationUri
    return properties


def create_namespace(
    calls: MetastoreCalls,
    namespace: Sequence[str],
    properties: Mapping[str, str],
    boundary: FileBoundary,
) -> dict[str, Any]:
    """Create the namespace's database; 409 when it exists, 400 for a name HMS refuses or a
    property naming code, 400/403 for a location the server may not write under."""
    name = database_name(namespace)
    if not names.is_valid_name(names.normalize(name)):
        raise bad_request(f"{name} is not a valid database name")
    if isinstance(properties, Mapping):
        properties = {**_catalog_location(calls, name), **properties}
    _check_properties(properties, None, boundary, f"Namespace {name}")
    database = hms.Database(name=name, parameters={}, ownerName=calls.session.user,
                            ownerType=hms.PrincipalType.USER)  # fmt: skip
    _apply(database, dict(properties), ())
    try:
        calls.create_database(database)
    except hms.AlreadyExistsException:
        raise already_exists("Namespace", name) from None
    except (hms.InvalidObjectException, hms.MetaException) as exc:
        raise from_metastore(exc) from None
    return {"namespace": [name], "properties": properties_of(load_database(calls, name))}


def _catalog_location(calls: MetastoreCalls, name: str) -> dict[str, str]:
    """The default location of a new namespace of a catalog other than ``hive``: under the
    catalog's location, as HMS places its databases (none: the warehouse's, as Thrift)."""
    if calls.catalog == names.DEFAULT_CATALOG or not isinstance(name, str):
        return {}
    catalog = calls.get_catalog(hms.GetCatalogRequest(name=calls.catalog)).catalog
    place = (catalog.locationUri or "").rstrip("/")
    return {LOCATION: f"{place}/{names.normalize(name)}.db"} if place else {}


def update_properties(
    calls: MetastoreCalls,
    namespace: Sequence[str],
    removals: Sequence[str],
    updates: Mapping[str, str],
    boundary: FileBoundary,
) -> dict[str, list[str]]:
    """Remove then set properties; what was updated, removed, and asked removed but missing.
    A key both removed and updated is refused (422, as the spec)."""
    name = database_name(namespace)
    overlap = set(removals) & set(updates)
    if overlap:
        raise RestError(422, "UnprocessableEntityException",
                        f"Updates and removals overlap: {sorted(overlap)}")  # fmt: skip
    database = load_database(calls, name)
    before = properties_of(database)
    _check_properties(updates, before, boundary, f"Namespace {name}")
    removed = [key for key in removals if key in before]
    missing = [key for key in removals if key not in before]
    _apply(database, dict(updates), removed)
    try:
        calls.alter_database(name, database)
    except hms.NoSuchObjectException:
        raise no_such_namespace(name) from None
    except (hms.InvalidOperationException, hms.MetaException) as exc:
        raise from_metastore(exc) from None
    return {"updated": sorted(updates), "removed": removed, "missing": missing}


def drop_namespace(calls: MetastoreCalls, namespace: Sequence[str]) -> None:
    """Drop the namespace's database (its data kept); 404 when missing, 409 when it holds
    tables or functions."""
    name = database_name(namespace)
    try:
        calls.drop_database(name, False, False)
    except hms.NoSuchObjectException:
        raise no_such_namespace(name) from None
    except hms.InvalidOperationException as exc:
        raise RestError(409, "NamespaceNotEmptyException", exc.message or str(exc)) from None
    except hms.MetaException as exc:
        raise from_metastore(exc) from None


def _apply(database: Any, updates: dict[str, str], removals: Sequence[str]) -> None:
    """Set and remove namespace properties on ``database``."""
    parameters = dict(database.parameters or {})
    for key in removals:
        if key == COMMENT:
            database.description = None
        elif key == LOCATION:
            continue  # a database keeps a location: removing it leaves it where it is
        else:
            parameters.pop(key, None)
    for key, value in updates.items():
        if key == COMMENT:
            database.description = value
        elif key == LOCATION:
            database.locationUri = value
        else:
            parameters[key] = value
    database.parameters = parameters


def _check_properties(
    properties: Mapping[str, Any],
    before: Mapping[str, str] | None,
    boundary: FileBoundary,
    what: str,
) -> None:
    """400 unless ``properties`` map strings to strings and set no property naming code;
    400/403 for a location the server may not write under."""
    if not isinstance(properties, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in properties.items()
    ):
        raise bad_request("Namespace properties must map strings to strings")
    keys = code_properties.keys_set(properties, before)
    if keys:
        raise bad_request(code_properties.refusal(keys, what))
    location = properties.get(LOCATION)
    if location is not None and location != (before or {}).get(LOCATION):
        boundary.check_root(location, f"{what} location")
