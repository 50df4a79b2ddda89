"""The argument checks every area of the Thrift face shares: names as HMS stores them, missing
requests, and the flags an ``EnvironmentContext`` carries.

Database arguments may carry a catalog prefix (``@hive#db``, sent by Hive 3+ clients); the
calls here serve the default catalog (``hive``) only; the database calls read other catalogs
(``api/databases.py``). See ``docs/hms-api.md``.
"""

from __future__ import annotations

from typing import TypeVar

from thriftpy2.thrift import TApplicationException

from metastore_server.catalog.basics import names
from metastore_server.thrift_api import hms

T = TypeVar("T")


def database_name(name: str | None, *, drop_other_catalog: bool = False) -> str:
    """The database of a (possibly catalog-prefixed) argument, trimmed and lower-case;
    MetaException for none (HMS fails on a null name; an empty one names no database).

    A prefix naming another catalog than ``hive`` is refused with NoSuchObjectException
    ``Catalog X does not exist``; with ``drop_other_catalog`` it is dropped instead and the
    database of that name in the default catalog is meant (what the partition-spec calls and
    ``get_table_names_by_filter`` have always done).
    """
    if name is None:
        raise hms.MetaException(message="Database name cannot be null")
    catalog, db = names.split_catalog(name)
    if catalog != names.DEFAULT_CATALOG and not drop_other_catalog:
        raise hms.NoSuchObjectException(message=f"Catalog {catalog} does not exist")
    return db


def object_name(name: str | None) -> str:
    """A table's, function's or index's name as HMS stores it: trimmed and lower-case (also
    a database's, in the calls that read no catalog prefix: ``@hive#db`` is then no name)."""
    return names.normalize(name)


def require_default_catalog(catalog: str | None) -> None:
    """Refuse a request's catalog field naming another catalog than ``hive``
    (NoSuchObjectException ``Catalog X does not exist``, X as sent); None or empty is fine."""
    if catalog and names.normalize(catalog) != names.DEFAULT_CATALOG:
        raise hms.NoSuchObjectException(message=f"Catalog {catalog} does not exist")


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
