"""The database calls: create, read, list, alter and drop databases. See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import database_name, require_default_catalog
from metastore_server.thrift_api import hms


class DatabaseCalls(Area):
    """Databases. Raises NoSuchObjectException (a missing database, another catalog),
    AlreadyExistsException, InvalidObjectException (a bad name or location),
    InvalidOperationException (dropping the default database, or one that is not empty
    without ``cascade``) and MetaException."""

    def create_database(self, database: hms.Database) -> None:
        """Create a database (and its directory where data operations are on)."""
        self.catalog.databases.create(database)

    def get_database(self, name: str) -> hms.Database:
        """A database; NoSuchObjectException when it does not exist."""
        return self.catalog.databases.get(database_name(name))

    def get_database_req(self, request: hms.GetDatabaseRequest) -> hms.Database:
        """The request form of ``get_database``; MetaException without a name."""
        if request is None or not request.name:
            raise hms.MetaException(message="Database name cannot be null")
        require_default_catalog(request.catalogName)
        return self.catalog.databases.get(database_name(request.name))

    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:  # noqa: N803
        """Drop a database (its tables too with ``cascade``, their data with ``deleteData``)."""
        self.catalog.drop_database(database_name(name), bool(deleteData), bool(cascade))

    def get_databases(self, pattern: str) -> list[str]:
        """Names of the databases matching an HMS pattern, sorted."""
        return self.catalog.databases.names(pattern)

    def get_all_databases(self) -> list[str]:
        """Names of every database, sorted."""
        return self.catalog.databases.names(None)

    def alter_database(self, dbname: str, db: hms.Database) -> None:
        """Change a database's owner, parameters or location."""
        self.catalog.databases.alter(database_name(dbname), db)
