"""Warehouses: the spec's ``prefix`` (``/v1/{prefix}/...``) names a catalog of the metastore
(HMS 3+ catalogs), and ``GET /v1/config?warehouse=W`` tells a client the prefix of warehouse
``W`` (a catalog's name, or its location). Without a prefix, the default catalog ``hive``."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from metastore_server.catalog.basics import names
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import RestError, bad_request
from metastore_server.thrift_api import hms

DEFAULT = names.DEFAULT_CATALOG
#: The first segments of the unprefixed paths: a catalog of such a name has no prefix (its
#: paths would be read as the default catalog's).
RESERVED = frozenset({"namespaces", "tables", "views", "transactions", "config", "oauth"})


def no_such_warehouse(name: str) -> RestError:
    """404: no catalog of that name (or location)."""
    return RestError(404, "NoSuchWarehouseException", f"Warehouse does not exist: {name}")


def catalog_of(path: dict[str, str]) -> str:
    """The catalog a request's path names (its ``prefix``; none: ``hive``); 404 for one that
    cannot name a catalog. Whether it exists is asked later (``require``), as the caller."""
    prefix = path.get("prefix")
    if prefix is None:
        return DEFAULT
    name = names.normalize(unquote(prefix))
    if not names.is_valid_name(name) or name in RESERVED:
        raise no_such_warehouse(prefix)
    return name


def require(calls: MetastoreCalls) -> None:
    """404 unless the calls' catalog exists (the default one always does)."""
    if calls.catalog != DEFAULT and _find(calls, calls.catalog) is None:
        raise no_such_warehouse(calls.catalog)


def overrides(calls: MetastoreCalls, warehouse: str | None) -> dict[str, str]:
    """The ``overrides`` of ``GET /v1/config`` for ``warehouse``: ``{"prefix": catalog}``
    for a catalog of that name or location, none without a warehouse; 404 for another,
    400 for a catalog whose name cannot be a prefix."""
    if not warehouse:
        return {}
    name = names.normalize(warehouse)
    found = _find(calls, name) if names.is_valid_name(name) else None
    if found is None:
        found = _by_location(calls, warehouse)
    if found is None:
        raise no_such_warehouse(warehouse)
    if found.name in RESERVED:
        raise bad_request(f"Catalog {found.name} cannot be a REST prefix (its name is a "
                          "path segment of the catalog API)")  # fmt: skip
    return {"prefix": found.name}


def _find(calls: MetastoreCalls, name: str) -> Any:
    """The catalog ``name``, or None."""
    try:
        return calls.get_catalog(hms.GetCatalogRequest(name=name)).catalog
    except hms.NoSuchObjectException:
        return None


def _by_location(calls: MetastoreCalls, location: str) -> Any:
    """The catalog at ``location`` (a trailing ``/`` ignored, ``file:///p`` as ``file:/p``),
    or None."""
    wanted = same_place(location)
    for name in calls.get_catalogs().names or []:
        found = _find(calls, name)
        if found is not None and same_place(found.locationUri or "") == wanted:
            return found
    return None


def same_place(location: str) -> str:
    """``location`` in one spelling: no trailing ``/``, a local URI as ``file:/path``."""
    if location.startswith("file:///"):
        location = "file:/" + location.removeprefix("file:///")
    return location.rstrip("/")
