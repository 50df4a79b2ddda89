"""The database calls: create, read, list, alter and drop databases, in the legacy forms and
HMS 4's request forms, within a catalog (``@cat#db`` or the request's catalog name; none:
``hive``). See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.catalog import catalog_of, names
from metastore_server.thrift_api import hms


def _split(name: str | None, catalog: str | None = None) -> tuple[str, str]:
    """(catalog, database) of a possibly prefixed name; a request's catalog field, when set,
    names the catalog. MetaException for no name."""
    if name is None:
        raise hms.MetaException(message="Database name cannot be null")
    prefixed, db = names.split_catalog(name)
    return names.normalize(catalog) or prefixed, db


def _stamped(db: hms.Database) -> hms.Database:
    """A database answered, carrying its catalog (HMS 4 fills ``catalogName``; rows of
    ``hive`` keep none)."""
    db.catalogName = catalog_of(db)
    return db


class DatabaseCalls(Area):
    """Databases. Raises NoSuchObjectException (a missing database, or one of another
    catalog), AlreadyExistsException, InvalidObjectException (a bad name or location, a
    REMOTE database without an existing connector), InvalidOperationException (dropping the
    default database, or one that is not empty without ``cascade``) and MetaException."""

    @thrift(
        stamp=caller_fields.database_owner("database"),
        rule=auth.NAMED,
        storage=st.CREATE_DATABASE,
        locations=loc.CREATE_DATABASE,
    )
    def create_database(self, database: hms.Database) -> None:
        """Create a database in its catalog (and its directory where data operations are on)."""
        self.catalog.databases.create(database)

    @thrift(
        since="3",
        rule=auth.NAMED,
        storage=st.CREATE_DATABASE_REQ,
        locations=loc.CREATE_DATABASE_REQ,
    )
    def create_database_req(self, createDatabaseRequest: hms.CreateDatabaseRequest) -> None:  # noqa: N803
        """The request form of ``create_database``."""
        req = createDatabaseRequest
        if req is None or not req.databaseName:
            raise hms.InvalidObjectException(message="Database name cannot be empty")
        self.catalog.databases.create(
            hms.Database(
                name=req.databaseName,
                description=req.description,
                locationUri=req.locationUri,
                parameters=dict(req.parameters or {}),
                privileges=req.privileges,
                ownerName=req.ownerName,
                ownerType=req.ownerType,
                catalogName=req.catalogName,
                createTime=req.createTime,
                managedLocationUri=req.managedLocationUri,
                type=req.type,
                connector_name=req.dataConnectorName,
                remote_dbname=req.remote_dbname,
            )
        )

    @thrift(catalog_named=True, kept="wire", rule=auth.OPEN, storage=st.GET_DATABASE)
    def get_database(self, name: str) -> hms.Database:
        """A database; NoSuchObjectException when it does not exist in the catalog named."""
        catalog, db = _split(name)
        return _stamped(self.catalog.databases.require_in(db, catalog))

    @thrift(since="3", rule=auth.OPEN, storage=st.GET_DATABASE_REQ)
    def get_database_req(self, request: hms.GetDatabaseRequest) -> hms.Database:
        """The request form of ``get_database``; MetaException without a name."""
        if request is None or not request.name:
            raise hms.MetaException(message="Database name cannot be null")
        catalog, db = _split(request.name, request.catalogName)
        return _stamped(self.catalog.databases.require_in(db, catalog))

    @thrift(
        rule=auth.on_databases("DROPDATABASE", auth.OWN, auth.args("name")),
        storage=st.DROP_DATABASE,
        locations=loc.NO_LOCATION,
    )
    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:  # noqa: N803
        """Drop a database (its tables too with ``cascade``, their data with ``deleteData``)."""
        catalog, db = _split(name)
        self.catalog.databases.require_in(db, catalog)
        self.catalog.drop_database(db, bool(deleteData), bool(cascade))

    @thrift(
        since="3",
        rule=auth.on_databases("DROPDATABASE", auth.OWN, auth.named_fields("req", "name")),
        storage=st.DROP_DATABASE_REQ,
        locations=loc.NO_LOCATION,
    )
    def drop_database_req(self, req: hms.DropDatabaseRequest) -> None:
        """The request form of ``drop_database``: ``ignoreUnknownDb`` makes a missing
        database no error (``softDelete``, ``txnId`` and ``deleteManagedDir`` are not read)."""
        if req is None or not req.name:
            raise hms.MetaException(message="Database name cannot be null")
        catalog, db = _split(req.name, req.catalogName)
        if self.catalog.databases.find(db, catalog) is None and req.ignoreUnknownDb:
            return
        self.catalog.databases.require_in(db, catalog)
        self.catalog.drop_database(db, bool(req.deleteData), bool(req.cascade))

    @thrift(kept="listing", rule=auth.OPEN)
    def get_databases(self, pattern: str) -> list[str]:
        """Names of a catalog's databases matching an HMS pattern, sorted: ``@cat#`` (or
        ``@cat``) is every database of ``cat``, ``@cat#pat`` those matching ``pat``; an
        unknown catalog has none."""
        catalog, wanted = names.split_catalog_pattern(pattern)
        return self.catalog.databases.names(wanted, catalog)

    @thrift(kept="listing", rule=auth.OPEN)
    def get_all_databases(self) -> list[str]:
        """Names of every database of the default catalog, sorted."""
        return self.catalog.databases.names(None, names.DEFAULT_CATALOG)

    @thrift(
        rule=auth.on_databases("ALTERDATABASE", (auth.ADMIN,), auth.args("dbname")),
        storage=st.ALTER_DATABASE,
        locations=loc.ALTER_DATABASE,
    )
    def alter_database(self, dbname: str, db: hms.Database) -> None:
        """Change a database's owner, parameters or location."""
        catalog, name = _split(dbname)
        self.catalog.databases.require_in(name, catalog)
        self.catalog.databases.alter(name, db)

    @thrift(
        since="3",
        rule=auth.on_databases(
            "ALTERDATABASE", (auth.ADMIN,), auth.named_fields("alterDbReq", "oldDbName")
        ),
        storage=st.ALTER_DATABASE_REQ,
        locations=loc.ALTER_DATABASE_REQ,
    )
    def alter_database_req(self, alterDbReq: hms.AlterDatabaseRequest) -> None:  # noqa: N803
        """The request form of ``alter_database`` (the catalog: the new database's)."""
        req = alterDbReq
        if req is None or not req.oldDbName:
            raise hms.MetaException(message="Database name cannot be null")
        new_db = req.newDb
        catalog, name = _split(req.oldDbName, new_db.catalogName if new_db else None)
        self.catalog.databases.require_in(name, catalog)
        self.catalog.databases.alter(name, new_db)
