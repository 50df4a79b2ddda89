"""The stored procedure and package calls of HMS 4 (HPL/SQL): stored, never run here. See
``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


def _missing(message: str) -> hms.NoSuchObjectException:
    return hms.NoSuchObjectException(message=message)


class ProcedureCalls(Area):
    """Stored procedures and packages. Raises NoSuchObjectException (one not there, or its
    database) and MetaException (a request without names; for packages, a missing database)."""

    @thrift(
        since="3",
        stamp=caller_fields.owner_name(caller_fields.argument("proc")),
        rule=auth.admin_operation("CREATEFUNCTION"),
    )
    def create_stored_procedure(self, proc: hms.StoredProcedure) -> None:
        """Create or replace a stored procedure in an existing database."""
        self.catalog.procedures.procedures.put(proc, _missing)

    @thrift(since="3", rule=auth.OPEN)
    def get_stored_procedure(self, request: hms.StoredProcedureRequest) -> hms.StoredProcedure:
        """A stored procedure."""
        r = request or hms.StoredProcedureRequest()
        return self.catalog.procedures.procedures.get(r.catName, r.dbName, r.procName)

    @thrift(since="3", rule=auth.admin_operation("DROPFUNCTION"))
    def drop_stored_procedure(self, request: hms.StoredProcedureRequest) -> None:
        """Drop a stored procedure (nothing when it is not there)."""
        r = request or hms.StoredProcedureRequest()
        self.catalog.procedures.procedures.drop(r.catName, r.dbName, r.procName)

    @thrift(since="3", rule=auth.OPEN)
    def get_all_stored_procedures(self, request: hms.ListStoredProcedureRequest) -> list[str]:
        """Stored procedure names of a database, or of every database of the catalog."""
        r = request or hms.ListStoredProcedureRequest()
        return self.catalog.procedures.procedures.names(r.catName, r.dbName)

    @thrift(
        since="3",
        stamp=caller_fields.owner_name(caller_fields.argument("request")),
        rule=auth.admin_operation("CREATEFUNCTION"),
    )
    def add_package(self, request: hms.AddPackageRequest) -> None:
        """Create or replace a package in an existing database."""
        self.catalog.procedures.add_package(request)

    @thrift(since="3", rule=auth.OPEN)
    def find_package(self, request: hms.GetPackageRequest) -> hms.Package:
        """A package."""
        r = request or hms.GetPackageRequest()
        return self.catalog.procedures.packages.get(r.catName, r.dbName, r.packageName)

    @thrift(since="3", rule=auth.admin_operation("DROPFUNCTION"))
    def drop_package(self, request: hms.DropPackageRequest) -> None:
        """Drop a package (nothing when it is not there)."""
        r = request or hms.DropPackageRequest()
        self.catalog.procedures.packages.drop(r.catName, r.dbName, r.packageName)

    @thrift(since="3", rule=auth.OPEN)
    def get_all_packages(self, request: hms.ListPackageRequest) -> list[str]:
        """Package names of a database, or of every database of the catalog."""
        r = request or hms.ListPackageRequest()
        return self.catalog.procedures.packages.names(r.catName, r.dbName)
