"""HPL/SQL stored procedures (``create_stored_procedure`` and friends) and packages
(``add_package`` and friends), stored as HMS 4 keeps them; we never run them.

Each is named by catalog, database and name (lower-case, as HMS normalizes them) and lives in an
existing database of the catalog (only ``hive`` exists here). Creating one of a name that exists
replaces it (HMS creates or updates); dropping one that is not there does nothing (as HMS);
reading one that is not there is NoSuchObjectException. Listing gives the names, in one
database or in all of the catalog's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import CAS_TRIES, NamedRows
from metastore_server.catalog.objects.databases import Databases
from metastore_server.thrift_api import hms


class _InDatabase(Protocol):
    """An object named in a database (a stored procedure, a package)."""

    catName: str
    dbName: str


T = TypeVar("T", bound=_InDatabase)


def _normal(value: str | None) -> str:
    """A catalog, database or object name as HMS keeps it: trimmed, lower-case."""
    return names.normalize(value)


class DatabaseObjects(Generic[T]):
    """Objects of one kind named (catalog, database, name) in existing databases."""

    def __init__(
        self,
        ctx: CatalogContext,
        databases: Databases,
        kind: str,
        struct: type[T],
        name_field: str,
        label: str,
    ) -> None:
        self._ctx = ctx
        self._databases = databases
        self._rows: NamedRows[T] = NamedRows(ctx.store, kind, struct)
        self._name_field = name_field
        self._label = label

    def _parts(self, catalog: str | None, db: str | None, name: str | None) -> tuple[str, ...]:
        parts = (_normal(catalog) or names.DEFAULT_CATALOG, _normal(db), _normal(name))
        if not parts[1] or not parts[2] or any("\x00" in part for part in parts):
            raise hms.MetaException(message=f"{self._label} needs a database and a name")
        return parts

    def put(self, obj: T | None, missing_db: Callable[[str], Exception]) -> None:
        """Create or replace an object; ``missing_db(message)`` when its database is not
        there."""
        if obj is None:
            raise hms.MetaException(message=f"{self._label} cannot be null")
        parts = self._parts(obj.catName, obj.dbName, getattr(obj, self._name_field))
        stored = copy.deepcopy(obj)
        stored.catName, stored.dbName = parts[0], parts[1]
        setattr(stored, self._name_field, parts[2])
        with self._ctx.write_lock:
            if parts[0] != names.DEFAULT_CATALOG or self._databases.find(parts[1]) is None:
                raise missing_db(f"Database {parts[0]}.{parts[1]} does not exist")
            for _ in range(CAS_TRIES):
                was = self._rows.read(parts)
                if was is None and self._rows.create(parts, stored):
                    return
                if was is not None and self._rows.replace(was, stored):
                    return
        raise hms.MetaException(message=f"{self._label} {parts[2]} kept changing meanwhile")

    def get(self, catalog: str | None, db: str | None, name: str | None) -> T:
        """An object; NoSuchObjectException when it is not there."""
        parts = self._parts(catalog, db, name)
        found = self._rows.find(parts)
        if found is None:
            raise hms.NoSuchObjectException(
                message=f"{self._label} not found: {parts[0]}.{parts[1]}.{parts[2]}"
            )
        return found

    def drop(self, catalog: str | None, db: str | None, name: str | None) -> None:
        """Drop an object; nothing happens when it is not there."""
        parts = self._parts(catalog, db, name)
        for _ in range(CAS_TRIES):
            was = self._rows.read(parts)
            if was is None or self._rows.delete(was):
                return
        raise hms.MetaException(message=f"{self._label} {parts[2]} kept changing meanwhile")

    def names(self, catalog: str | None, db: str | None = None) -> list[str]:
        """The names in one database (None: in every database of the catalog), sorted."""
        prefix = [_normal(catalog) or names.DEFAULT_CATALOG]
        if db is not None:
            prefix.append(_normal(db))
        return sorted(stored.parts[2] for stored in self._rows.scan(prefix))


class Procedures:
    """Stored procedures and packages."""

    def __init__(self, ctx: CatalogContext, databases: Databases) -> None:
        self.procedures: DatabaseObjects[hms.StoredProcedure] = DatabaseObjects(
            ctx, databases, "proc", hms.StoredProcedure, "name", "Stored procedure"
        )
        self.packages: DatabaseObjects[hms.Package] = DatabaseObjects(
            ctx, databases, "package", hms.Package, "packageName", "Package"
        )

    def add_package(self, request: hms.AddPackageRequest | None) -> None:
        """Create or replace a package (MetaException when its database is not there)."""
        if request is None:
            raise hms.MetaException(message="Package cannot be null")
        package = hms.Package(
            catName=request.catName,
            dbName=request.dbName,
            packageName=request.packageName,
            ownerName=request.ownerName,
            header=request.header,
            body=request.body,
        )
        self.packages.put(package, lambda message: hms.MetaException(message=message))
