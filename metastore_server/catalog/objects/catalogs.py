"""Catalogs (HMS 3+): named groups of databases, each with a location and a description.

Each catalog is one ``meta`` row of kind ``catalog`` (``core.named_rows``) holding the Catalog
(Thrift binary), created on the name's absence and altered or dropped by compare-and-set.
The default catalog ``hive`` is made on first start at the warehouse root and is never dropped.
Names are lower-cased. A database belongs to the catalog its row names (``Database.catalogName``;
none: ``hive``); database names stay unique across catalogs (they key the database rows).
"""

from __future__ import annotations

import copy
from typing import Protocol

import structlog

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import SingleNameRows
from metastore_server.catalog.events import txn_messages as messages
from metastore_server.storage import layout
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes

DEFAULT_CATALOG = names.DEFAULT_CATALOG
DEFAULT_DESCRIPTION = "Default catalog for Hive"

_log = structlog.get_logger(__name__)


class InCatalog(Protocol):
    """A stored database, or its catalog name alone."""

    @property
    def catalogName(self) -> str | None: ...


def catalog_of(db: InCatalog) -> str:
    """The catalog a stored database belongs to (rows written before catalogs: ``hive``)."""
    return names.normalize(db.catalogName) or DEFAULT_CATALOG


class Catalogs:
    """Catalog rows on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self._rows: SingleNameRows[hms.Catalog] = SingleNameRows(ctx.store, "catalog", hms.Catalog)

    def ensure_default(self) -> None:
        """Create the ``hive`` catalog on first start (at the warehouse root)."""
        if self.find(DEFAULT_CATALOG) is not None:
            return
        default = hms.Catalog(
            name=DEFAULT_CATALOG,
            description=DEFAULT_DESCRIPTION,
            locationUri=self._ctx.warehouse.root_uri,
            createTime=int(self._ctx.now()),
        )
        # another process may have made it meanwhile: theirs stays
        self._rows.create([DEFAULT_CATALOG], default)

    def find(self, name: str | None) -> hms.Catalog | None:
        """The catalog, or None."""
        return self._rows.find_name(name)

    def get(self, name: str | None) -> hms.Catalog:
        """The catalog; NoSuchObjectException when there is none."""
        catalog = self.find(name)
        if catalog is None:
            raise hms.NoSuchObjectException(message=f"No catalog {names.normalize(name)}")
        return catalog

    def require(self, name: str | None) -> str:
        """The normalised name of an existing catalog (NoSuchObjectException
        ``Catalog X does not exist`` otherwise)."""
        normalized = names.normalize(name) or DEFAULT_CATALOG
        if self.find(normalized) is None:
            raise hms.NoSuchObjectException(message=f"Catalog {normalized} does not exist")
        return normalized

    def names(self) -> list[str]:
        """Every catalog's name, sorted."""
        return self._rows.names()

    def create(self, catalog: hms.Catalog | None) -> None:
        """Create a catalog: a valid name and a location are required."""
        name = self._rows.new_name(None if catalog is None else catalog.name, "Catalog")
        assert catalog is not None  # new_name refused a missing name
        if not catalog.locationUri:
            raise hms.InvalidObjectException(message="You must specify a path for the catalog")
        stored = copy.deepcopy(catalog)
        stored.name = name
        stored.createTime = stored.createTime or int(self._ctx.now())
        with self._ctx.write_lock:  # the event in the same change (embedded), right after
            if not self._rows.create([name], stored):
                raise hms.AlreadyExistsException(message=f"Catalog {name} already exists")
            self._ctx.events.record([messages.create_catalog(stored, self._ctx.now())])
        _log.info("catalog_created", catalog=name)

    def alter(self, name: str | None, new_catalog: hms.Catalog | None) -> None:
        """Change a catalog's description or location (never its name)."""
        if new_catalog is None:
            raise hms.MetaException(message="New catalog cannot be null")
        was = self._rows.read_name(name)
        if was is None:
            raise hms.NoSuchObjectException(message=f"No catalog {names.normalize(name)}")
        current = was.obj
        if new_catalog.name and names.normalize(new_catalog.name) != current.name:
            raise hms.InvalidOperationException(message="Catalog name cannot be changed")
        updated = copy.deepcopy(current)
        if new_catalog.locationUri:
            updated.locationUri = new_catalog.locationUri
        if new_catalog.description is not None:
            updated.description = new_catalog.description
        with self._ctx.write_lock:
            if not self._rows.replace(was, updated):
                raise hms.MetaException(message=f"Catalog {current.name} changed meanwhile, retry")
            self._ctx.events.record([messages.alter_catalog(current, updated, self._ctx.now())])

    def drop(self, name: str | None) -> None:
        """Drop an empty catalog other than ``hive``."""
        name = names.normalize(name)
        if name == DEFAULT_CATALOG:
            raise hms.MetaException(message="Can not drop hive catalog")
        with self._ctx.write_lock:
            was = self._rows.read_name(name)
            if was is None:
                raise hms.NoSuchObjectException(message=f"No catalog {name}")
            if self.database_names(name):
                raise hms.InvalidOperationException(
                    message=f"Cannot drop catalog {name} while it still contains databases"
                )
            if not self._rows.delete(was):
                raise hms.NoSuchObjectException(message=f"No catalog {name}")
            self._ctx.events.record([messages.drop_catalog(was.obj, self._ctx.now())])
        _log.info("catalog_dropped", catalog=name)

    def database_names(self, catalog: str) -> list[str]:
        """Names of the databases of a catalog, sorted."""
        return sorted(
            key.decode("utf-8")
            for key, row in self._ctx.store.scan(layout.DATABASES)
            if catalog_of(from_bytes(hms.Database, row[layout.OBJECT])) == catalog
        )
