"""Databases: create, get, list, alter, drop, with HMS's rules and messages."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import cast

from thriftpy2.thrift import TPayload, TType

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import ALTER, CREATE, DATABASE, Change
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.catalogs import DEFAULT_CATALOG, Catalogs, catalog_of
from metastore_server.catalog.objects.connectors import DataConnectors
from metastore_server.catalog.objects.table_checks import refuse_code_properties
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import deep_copy, from_bytes, to_bytes

DEFAULT_DATABASE = "default"
DEFAULT_DESCRIPTION = "Default Hive database"


def _unable_to_create(name: str) -> Callable[[str, str], Exception]:
    """HMS's refusal of a database whose directory cannot be made."""

    def refuse(uri: str, detail: str) -> Exception:
        return hms.MetaException(
            message=f"Unable to create database path {uri}, failed to create database {name} "
            f"({detail})"
        )

    return refuse


def missing_in(catalog: str, name: str) -> hms.NoSuchObjectException:
    """What a call naming a database that is not in its catalog answers."""
    return hms.NoSuchObjectException(message=f"Database {catalog}.{name} does not exist")


class _DatabaseCatalog(TPayload):
    """A Database's catalog name alone (what listings test): decoding it skips the rest."""

    catalogName: str | None
    thrift_spec = {8: (TType.STRING, "catalogName", False)}
    default_spec = [("catalogName", None)]


class _DatabaseLocation(TPayload):
    """A Database's location alone (what drops guard): decoding it skips the rest."""

    locationUri: str | None
    thrift_spec = {3: (TType.STRING, "locationUri", False)}
    default_spec = [("locationUri", None)]


#: How long every database's location, as read once, is used again while the store's database
#: version (``layout.DATABASES_VERSION``) stays the same: this bounds how long a change of a
#: writer that died before writing the version (or of an older server) goes unseen.
LOCATIONS_KEPT_S = 5.0


class Databases:
    """Database rows on the store."""

    def __init__(self, ctx: CatalogContext, catalogs: Catalogs, connectors: DataConnectors) -> None:
        self._ctx = ctx
        self._catalogs = catalogs
        self._connectors = connectors
        #: (database version, when read, the locations) of the last ``located`` read.
        self._located: tuple[bytes | None, float, dict[str, str]] | None = None
        self._located_lock = threading.Lock()

    def ensure_default(self) -> None:
        """Create the ``default`` database on first start (owner ``public``, a ROLE)."""
        if self.find(DEFAULT_DATABASE) is not None:
            return
        db = hms.Database(
            name=DEFAULT_DATABASE,
            description=DEFAULT_DESCRIPTION,
            locationUri=self._ctx.warehouse.database_location(DEFAULT_DATABASE),
            parameters={},
            ownerName="public",
            ownerType=hms.PrincipalType.ROLE,
        )
        self._ctx.data.make_dirs([db.locationUri], _unable_to_create(DEFAULT_DATABASE))
        self._insert(db)

    def find(self, name: str, catalog: str | None = None) -> hms.Database | None:
        """The database, or None (an empty name names none); with ``catalog``, only one of
        that catalog."""
        if not name:
            return None
        row = self._ctx.store.get(layout.DATABASES, layout.database_key(name))
        if row is None:
            return None
        db = from_bytes(hms.Database, row[layout.OBJECT])
        if catalog is not None and catalog_of(db) != catalog:
            return None
        return db

    def get(self, name: str, catalog: str | None = None) -> hms.Database:
        """The database (with ``catalog``: of that catalog); NoSuchObjectException when it
        does not exist."""
        db = self.find(name, catalog)
        if db is None:
            in_other = catalog not in (None, DEFAULT_CATALOG)
            raise hms.NoSuchObjectException(message=f"{catalog}.{name}" if in_other else name)
        return db

    def require_in(self, name: str, catalog: str) -> hms.Database:
        """The database of that catalog; NoSuchObjectException when it does not exist there
        (a missing catalog: ``Catalog X does not exist``)."""
        if catalog != DEFAULT_CATALOG:
            self._catalogs.require(catalog)
        return self.get(name, catalog)

    def check_catalog(self, name: str, catalog: str) -> None:
        """Refuse a call naming ``catalog`` for database ``name`` when the catalog does not
        exist or the database lives in another one (NoSuchObjectException ``Database C.D does
        not exist``); a database that exists nowhere passes (each call has its own answer)."""
        if catalog != DEFAULT_CATALOG and self._catalogs.find(catalog) is None:
            raise missing_in(catalog, name)
        if not name:
            return
        db = self.find(name)
        if db is not None and catalog_of(db) != catalog:
            raise missing_in(catalog, name)

    def require(self, name: str) -> None:
        """Raise NoSuchObjectException unless the database exists."""
        self.get(name)

    def names(self, pattern: str | None = None, catalog: str | None = None) -> list[str]:
        """Database names matching an HMS pattern (with ``catalog``: of that catalog only),
        sorted: read from the rows' keys and catalog column (``layout.DATABASE_CATALOG``),
        no database decoded (but those of rows written before that column existed)."""
        found = self._catalog_names(catalog)
        matcher = names.NamePattern(pattern)
        if not matcher.everything or not names.all_plain(found):
            found = [found[i] for i in matcher.select(found)]
        return sorted(found)

    def _catalog_names(self, catalog: str | None) -> list[str]:
        """The names of the databases (with ``catalog``: of that catalog), in key order."""
        wanted = None if catalog is None else catalog.encode("utf-8")
        columns = (layout.DATABASE_CATALOG, layout.OBJECT)
        scan_columns = self._ctx.capabilities.scan_columns
        if scan_columns is not None:
            rows, read, _lacking = scan_columns(layout.DATABASES, b"", None, columns[:1])
            if read == len(rows):  # every row holds its catalog column
                keys = cast(list[bytes], [  # (each row's key)
                    row[1] for row in rows if wanted is None or row[0] == wanted
                ])  # fmt: skip
                # one decode for all (a name holds no NUL)
                return b"\x00".join(keys).decode("utf-8").split("\x00") if keys else []
            rows, _read, _lacking = scan_columns(layout.DATABASES, b"", None, columns)
        else:
            rows = [
                (row.get(columns[0]), row.get(columns[1]), key)
                for key, row in self._ctx.store.scan(layout.DATABASES, columns=columns)
            ]
        found = []
        for held, stored, key in rows:
            if held is None and stored is not None:
                held = catalog_of(from_bytes(_DatabaseCatalog, stored)).encode("utf-8")
            if held is not None and (wanted is None or held == wanted):
                found.append(cast(bytes, key).decode("utf-8"))  # (each row's key)
        return found

    def located(self) -> dict[str, str]:
        """Each database's location, by name: read again when the store's database version
        changed (or after ``LOCATIONS_KEPT_S``), decoding only the location of each row."""
        version = self._version()
        now = time.monotonic()
        kept = self._located
        if kept is not None and kept[0] == version and now - kept[1] < LOCATIONS_KEPT_S:
            return dict(kept[2])
        found = self._read_located()
        with self._located_lock:
            self._located = (version, now, found)
        return dict(found)

    def _read_located(self) -> dict[str, str]:
        found = {}
        scan_columns = self._ctx.capabilities.scan_columns
        if scan_columns is not None:
            rows, _read, _lacking = scan_columns(layout.DATABASES, b"", None, (layout.OBJECT,))
            pairs = [(key, stored) for stored, key in rows]
        else:
            pairs = [(k, r.get(layout.OBJECT)) for k, r in self._ctx.store.scan(layout.DATABASES)]
        for key, stored in pairs:
            location = None if stored is None else from_bytes(_DatabaseLocation, stored).locationUri
            if location and key is not None:
                found[key.decode("utf-8")] = location
        return found

    def locations(self) -> list[str]:
        """The location of every database, in name order (a table drop never deletes one)."""
        return list(self.located().values())

    def create(self, db: hms.Database) -> None:
        """Create a database; its directory is created under the warehouse when not given."""
        if db is None:
            raise hms.InvalidObjectException(message="Database cannot be null")
        name = names.normalize(db.name)
        if not names.is_valid_name(name):
            raise hms.InvalidObjectException(message=f"{db.name} is not a valid database name")
        refuse_code_properties(db.parameters, None, f"Database {name}",
                               hms.InvalidObjectException)
        stored = deep_copy(db)
        stored.name = name
        catalog = names.normalize(db.catalogName) or DEFAULT_CATALOG
        # Databases of ``hive`` keep no catalog name (as rows always have).
        stored.catalogName = None if catalog == DEFAULT_CATALOG else catalog
        self._check_remote(stored)
        if not stored.locationUri:
            stored.locationUri = self._ctx.warehouse.database_location(name)
        if stored.parameters is None:
            stored.parameters = {}
        if stored.ownerType is None:
            stored.ownerType = hms.PrincipalType.USER
        already = hms.AlreadyExistsException(message=f"Database {db.name} already exists")
        with self._ctx.write_lock:
            if self._catalogs.find(catalog) is None:
                raise hms.InvalidObjectException(message=f"No such catalog {catalog}")
            if self.find(name) is not None:
                raise already
            # The directory first (HMS): a database whose directory cannot be made is refused.
            made = self._ctx.data.make_dirs([stored.locationUri], _unable_to_create(name))
            try:
                if not self._insert(stored):
                    raise already
            except BaseException:
                self._ctx.data.undo(made)
                raise
            self._ctx.changes.announce(Change(DATABASE, CREATE, after=stored, when=self._ctx.now()))

    def alter(self, name: str, new_db: hms.Database) -> None:
        """Change description, location, parameters and owner of a database (not its name)."""
        if new_db is None:
            raise hms.MetaException(message="New database cannot be null")
        with self._ctx.write_lock:
            current = self.get(name)
            updated = deep_copy(current)
            if new_db.description is not None:
                updated.description = new_db.description
            if new_db.locationUri:
                updated.locationUri = new_db.locationUri
            if new_db.parameters is not None:
                refuse_code_properties(new_db.parameters, current.parameters,
                                       f"Database {name}", hms.MetaException)
                updated.parameters = dict(new_db.parameters)
            if new_db.ownerName is not None:
                updated.ownerName = new_db.ownerName
            if new_db.ownerType is not None:
                updated.ownerType = new_db.ownerType
            if new_db.managedLocationUri:
                updated.managedLocationUri = new_db.managedLocationUri
            self._check_new_locations(name, current, updated)
            self._ctx.store.mutate(
                [
                    Put(
                        layout.DATABASES,
                        layout.database_key(name),
                        {
                            layout.OBJECT: to_bytes(updated),
                            layout.DATABASE_CATALOG: catalog_of(updated).encode("utf-8"),
                        },
                    )
                ]
            )
            self._changed(name, updated.locationUri)
            self._ctx.changes.announce(
                Change(DATABASE, ALTER, before=current, after=updated, when=self._ctx.now())
            )

    def _check_new_locations(self, name: str, current: hms.Database, updated: hms.Database) -> None:
        """A new location outside the data roots is refused (the server makes and deletes
        that directory; ``managedLocationUri`` is stored, never used for data)."""

        def refuse(reason: str) -> Exception:
            return hms.MetaException(message=f"Unable to alter database {name}: {reason}")

        if updated.locationUri != current.locationUri:
            self._ctx.data.check_inside(updated.locationUri, refuse)

    def _check_remote(self, db: hms.Database) -> None:
        """A REMOTE database must name an existing data connector; a NATIVE one none."""
        if db.type != hms.DatabaseType.REMOTE:
            if db.connector_name:
                raise hms.InvalidObjectException(
                    message="Only a REMOTE database may name a data connector"
                )
            return
        if not db.connector_name:
            raise hms.InvalidObjectException(
                message="A REMOTE database must name its data connector"
            )
        db.connector_name = names.normalize(db.connector_name)
        if self._connectors.find(db.connector_name) is None:
            raise hms.InvalidObjectException(
                message=f"Dataconnector {db.connector_name} does not exist"
            )

    def delete_row(self, name: str) -> None:
        """Remove the database row (callers have removed its tables and functions)."""
        self._ctx.store.mutate([Delete(layout.DATABASES, layout.database_key(name))])
        self._changed(name, None)

    def _insert(self, db: hms.Database) -> bool:
        key = layout.database_key(db.name)
        columns = {
            layout.OBJECT: to_bytes(db),
            layout.DATABASE_CATALOG: catalog_of(db).encode("utf-8"),
        }
        inserted = self._ctx.store.mutate(
            [Put(layout.DATABASES, key, columns)],
            Condition(layout.DATABASES, key, layout.OBJECT, None),
        )
        if inserted:
            self._changed(db.name, db.locationUri)
        return inserted

    def _changed(self, name: str, location: str | None) -> None:
        """Write a new database version, after the change of database ``name`` (now at
        ``location``; None: dropped). On a store without atomic batches, whoever reads the new
        version then reads the changed row too. On one with atomic batches (whose writers shut
        each other out of a transaction once it writes), the locations kept, when they were
        those of the version this change replaces, follow the change: a drop right after a
        create reads no database row (were the change undone, its version would be gone with
        it, and the locations read again)."""
        transactional = self._ctx.store.atomic_batches
        before = self._version() if transactional else None
        version = os.urandom(8)
        self._ctx.store.mutate(
            [Put(layout.META, layout.DATABASES_VERSION_ROW, {layout.DATABASES_VERSION: version})]
        )
        kept = self._located
        if transactional and kept is not None and kept[0] == before:
            found = dict(kept[2])
            found.pop(name, None)
            if location:
                found[name] = location
            with self._located_lock:
                self._located = (version, kept[1], dict(sorted(found.items())))

    def _version(self) -> bytes | None:
        """The store's database version (None before any database changed)."""
        row = self._ctx.store.get(layout.META, layout.DATABASES_VERSION_ROW)
        return None if row is None else row.get(layout.DATABASES_VERSION)
