"""The argument checks every area of the Thrift face shares: names as HMS stores them, missing
requests, and the flags an ``EnvironmentContext`` carries.

Database arguments may carry a catalog prefix (``@cat#db``, sent by Hive 3+ clients) and
requests a catalog field: :func:`database_in` resolves both, for every area. See
``docs/hms-api.md``.
"""

from __future__ import annotations

from typing import TypeVar, overload

from thriftpy2.thrift import TApplicationException

from metastore_server.catalog import Databases, names
from metastore_server.thrift_api import hms

T = TypeVar("T")


def database_in(databases: Databases, catalog: str | None, name: str | None) -> str:
    """The one catalog resolver of the calls that name a database: the database of a
    (possibly ``@cat#db``-prefixed) argument, trimmed and lower-case, after checking it lives
    in the catalog named (the request's catalog field when set, else the prefix, else
    ``hive``). MetaException for no name (HMS fails on a null name; an empty one names no
    database).

    Database names are unique across catalogs: a database of another catalog, or a catalog
    that does not exist, is NoSuchObjectException ``Database C.D does not exist``; a database
    that exists nowhere passes, the call answering as it does for a missing database.
    """
    if name is None:
        raise hms.MetaException(message="Database name cannot be null")
    prefixed, db = names.split_catalog(name)
    databases.check_catalog(db, names.normalize(catalog) or prefixed)
    return db


@overload
def with_catalog(catalog: str | None, name: str) -> str: ...
@overload
def with_catalog(catalog: str | None, name: str | None) -> str | None: ...
def with_catalog(catalog: str | None, name: str | None) -> str | None:
    """A request's database name as the legacy call it delegates to reads it: prefixed
    ``@cat#db`` when the request names a catalog (its field wins over a prefix)."""
    if not catalog or name is None:
        return name
    return f"@{names.normalize(catalog)}#{names.split_catalog(name)[1] or '!'}"


def catalog_field(obj: object) -> str | None:
    """The catalog a request or object sent names (its ``catName`` or ``catalogName``
    field; None for one without)."""
    return getattr(obj, "catName", None) or getattr(obj, "catalogName", None)


def catalog_named(catalog: str | None, name: str | None) -> str:
    """The catalog a call names (its catalog field, else its database argument's prefix,
    else ``hive``): once :func:`database_in` passed, the catalog of the database named."""
    return names.normalize(catalog) or names.split_catalog(name)[0]


def stamp_tables(tables: list[hms.Table], catalog: str) -> list[hms.Table]:
    """Tables answered, carrying their catalog as HMS 4 fills ``Table.catName`` (rows keep
    none: the catalog is the database's; a 2.3 client skips the field)."""
    for table in tables:
        if table is not None:
            table.catName = catalog
    return tables


def object_name(name: str | None) -> str:
    """A table's, function's or index's name as HMS stores it: trimmed and lower-case (also
    a database's, in the calls that read no catalog prefix: ``@hive#db`` is then no name)."""
    return names.normalize(name)


def required(value: T | None, what: str) -> T:
    """``value``; MetaException ``<what> cannot be null`` when a client sent none."""
    if value is None:
        raise hms.MetaException(message=f"{what} cannot be null")
    return value


def internal_error(method: str) -> TApplicationException:
    """What HMS 2.3 answers where it fails on an argument (a NullPointerException or an
    assertion that escapes its handler): an internal-error TApplicationException."""
    return TApplicationException(
        TApplicationException.INTERNAL_ERROR, f"Internal error processing {method}"
    )


def context_says(context: hms.EnvironmentContext | None, key: str) -> bool:
    """Whether an environment context sets ``key`` to ``true`` (any case): ``ifPurge`` (a drop
    skips the trash, as Hive and Spark send for ``PURGE``), ``CASCADE``,
    ``DO_NOT_UPDATE_STATS``."""
    properties = (context.properties if context is not None else None) or {}
    return properties.get(key, "").lower() == "true"


def context_properties(context: hms.EnvironmentContext | None) -> dict[str, str] | None:
    """An environment context's properties as sent (None without a context)."""
    if context is None:
        return None
    return dict(context.properties or {})


def purge_asked(context: hms.EnvironmentContext | None) -> bool:
    """Whether a drop asked for its data to skip the trash (``ifPurge=TRUE``)."""
    return context_says(context, "ifPurge")
