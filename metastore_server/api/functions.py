"""The function calls: permanent functions of a database, created, read, listed, altered and
dropped. See ``docs/compatibility.md``."""

from __future__ import annotations

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, catalog_named, object_name
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class FunctionCalls(Area):
    """Functions. Raises NoSuchObjectException (a missing function or database, another
    catalog), AlreadyExistsException, InvalidObjectException (a function HMS would not store)
    and InvalidOperationException (an alteration HMS refuses)."""

    @thrift(
        stamp=caller_fields.function_owner,
        rule=auth.admin_on_function(
            "CREATEFUNCTION", auth.named_fields("func", "dbName"), auth.function_name("func")
        ),
    )
    def create_function(self, func: hms.Function) -> None:
        """Create a function in its database."""
        if func is not None:
            func.dbName = self.database_in(catalog_field(func), func.dbName)
        self.catalog.functions.create(func)

    @thrift(
        rule=auth.admin_on_function(
            "DROPFUNCTION", auth.args("dbName"), auth.function_name("funcName")
        ),
    )
    def drop_function(self, dbName: str, funcName: str) -> None:  # noqa: N803
        """Drop a function."""
        self.catalog.functions.drop(self.database_in(None, dbName), object_name(funcName))

    @thrift(
        rule=auth.admin_on_function(
            "CREATEFUNCTION", auth.args("dbName"), auth.function_name("funcName")
        ),
    )
    def alter_function(self, dbName: str, funcName: str, newFunc: hms.Function) -> None:  # noqa: N803
        """Replace a function's definition (not onto another function's name)."""
        self.catalog.functions.alter(self.database_in(None, dbName), object_name(funcName), newFunc)

    @thrift(rule=auth.OPEN)
    def get_functions(self, dbName: str, pattern: str) -> list[str]:  # noqa: N803
        """Names of a database's functions matching an HMS pattern."""
        db = self.listed_database(None, dbName)
        return [] if db is None else self.catalog.functions.names(db, pattern)

    @thrift(catalog_named=True, rule=auth.OPEN)
    def get_function(self, dbName: str, funcName: str) -> hms.Function:  # noqa: N803
        """A function; NoSuchObjectException when it does not exist."""
        found = self.catalog.functions.get(self.database_in(None, dbName), object_name(funcName))
        found.catName = catalog_named(None, dbName)
        return found

    @thrift(catalog_named=True, rule=auth.OPEN)
    def get_all_functions(self) -> hms.GetAllFunctionsResponse:
        """Every function of every database."""
        return hms.GetAllFunctionsResponse(functions=self.catalog.functions.all())
