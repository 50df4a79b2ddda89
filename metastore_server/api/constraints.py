"""The constraint calls: primary and foreign keys, unique, not null, default and check
constraints, added with a table or after it, listed and dropped. See
``docs/hms-api.md#constraints``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import (
    context_properties,
    require_default_catalog,
    required,
)
from metastore_server.api.tables import create_table
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.objects.constraints import CHECK, DEFAULT, NOT_NULL, UNIQUE
from metastore_server.thrift_api import hms


def _table_of(request: object, what: str) -> tuple[str, str]:
    """The (db, table) a constraints request names (MetaException for a missing one)."""
    request = required(request, what)
    require_default_catalog(request.catName)  # type: ignore[attr-defined]
    db, table = request.db_name, request.tbl_name  # type: ignore[attr-defined]
    for name, value in (("db_name", db), ("tbl_name", table)):
        if value is None:  # required fields of the request (HMS: a protocol error)
            raise hms.MetaException(message=f"Required field '{name}' is unset")
    return db, table


def create_with_constraints(catalog: Catalog, req: hms.CreateTableRequest) -> None:
    """Create the table of a ``CreateTableRequest`` with its constraints (its environment
    context read as ``create_table_with_environment_context`` reads it), in one change."""
    keys = catalog.constraints

    def add_keys() -> None:
        keys.add_primary_key(req.primaryKeys)
        keys.add_foreign_key(req.foreignKeys)
        keys.add_unique(req.uniqueConstraints)
        keys.add_each(NOT_NULL, req.notNullConstraints)
        keys.add_each(DEFAULT, req.defaultConstraints)
        keys.add_each(CHECK, req.checkConstraints)

    create_table(catalog, req.table, context_properties(req.envContext), also=add_keys)


class ConstraintCalls(Area):
    """Primary and foreign keys. Raises NoSuchObjectException (a missing key),
    AlreadyExistsException, InvalidObjectException (a key on a missing table or column) and
    MetaException (a key HMS refuses)."""

    def create_table_with_constraints(
        self,
        tbl: hms.Table,
        primaryKeys: list[hms.SQLPrimaryKey],  # noqa: N803 (IDL names)
        foreignKeys: list[hms.SQLForeignKey],  # noqa: N803
        uniqueConstraints: list[hms.SQLUniqueConstraint] | None = None,  # noqa: N803
        notNullConstraints: list[hms.SQLNotNullConstraint] | None = None,  # noqa: N803
        defaultConstraints: list[hms.SQLDefaultConstraint] | None = None,  # noqa: N803
        checkConstraints: list[hms.SQLCheckConstraint] | None = None,  # noqa: N803
    ) -> None:
        """Create a table with its constraints, in one change: a refused one leaves no table
        (and no event)."""
        create_with_constraints(
            self.catalog,
            hms.CreateTableRequest(
                table=tbl, primaryKeys=primaryKeys, foreignKeys=foreignKeys,
                uniqueConstraints=uniqueConstraints, notNullConstraints=notNullConstraints,
                defaultConstraints=defaultConstraints, checkConstraints=checkConstraints,
            ),
        )  # fmt: skip

    def drop_constraint(self, req: hms.DropConstraintRequest) -> None:
        """Drop a constraint (of any kind) by name."""
        req = required(req, "DropConstraintRequest")
        self.catalog.constraints.drop(req.dbname, req.tablename, req.constraintname)

    def add_primary_key(self, req: hms.AddPrimaryKeyRequest) -> None:
        """Add a table's primary key."""
        self.catalog.constraints.add_primary_key(req.primaryKeyCols if req else None)

    def add_foreign_key(self, req: hms.AddForeignKeyRequest) -> None:
        """Add foreign keys."""
        self.catalog.constraints.add_foreign_key(req.foreignKeyCols if req else None)

    def add_unique_constraint(self, req: hms.AddUniqueConstraintRequest) -> None:
        """Add a unique constraint over the columns given."""
        self.catalog.constraints.add_unique(req.uniqueConstraintCols if req else None)

    def add_not_null_constraint(self, req: hms.AddNotNullConstraintRequest) -> None:
        """Add not null constraints (one per entry)."""
        self.catalog.constraints.add_each(NOT_NULL, req.notNullConstraintCols if req else None)

    def add_default_constraint(self, req: hms.AddDefaultConstraintRequest) -> None:
        """Add default constraints (one per entry)."""
        self.catalog.constraints.add_each(DEFAULT, req.defaultConstraintCols if req else None)

    def add_check_constraint(self, req: hms.AddCheckConstraintRequest) -> None:
        """Add check constraints (one per entry)."""
        self.catalog.constraints.add_each(CHECK, req.checkConstraintCols if req else None)

    def get_unique_constraints(
        self, request: hms.UniqueConstraintsRequest
    ) -> hms.UniqueConstraintsResponse:
        """A table's unique constraints."""
        db, table = _table_of(request, "UniqueConstraintsRequest")
        found = self.catalog.constraints.of_kind(UNIQUE, db, table)
        return hms.UniqueConstraintsResponse(uniqueConstraints=found)

    def get_not_null_constraints(
        self, request: hms.NotNullConstraintsRequest
    ) -> hms.NotNullConstraintsResponse:
        """A table's not null constraints."""
        db, table = _table_of(request, "NotNullConstraintsRequest")
        found = self.catalog.constraints.of_kind(NOT_NULL, db, table)
        return hms.NotNullConstraintsResponse(notNullConstraints=found)

    def get_default_constraints(
        self, request: hms.DefaultConstraintsRequest
    ) -> hms.DefaultConstraintsResponse:
        """A table's default constraints."""
        db, table = _table_of(request, "DefaultConstraintsRequest")
        found = self.catalog.constraints.of_kind(DEFAULT, db, table)
        return hms.DefaultConstraintsResponse(defaultConstraints=found)

    def get_check_constraints(
        self, request: hms.CheckConstraintsRequest
    ) -> hms.CheckConstraintsResponse:
        """A table's check constraints."""
        db, table = _table_of(request, "CheckConstraintsRequest")
        found = self.catalog.constraints.of_kind(CHECK, db, table)
        return hms.CheckConstraintsResponse(checkConstraints=found)

    def get_all_table_constraints(
        self, request: hms.AllTableConstraintsRequest
    ) -> hms.AllTableConstraintsResponse:
        """Every constraint of a table, by kind."""
        request = required(request, "AllTableConstraintsRequest")
        require_default_catalog(request.catName)
        found = self.catalog.constraints.all_of(request.dbName, request.tblName)
        return hms.AllTableConstraintsResponse(allTableConstraints=found)

    def get_primary_keys(self, request: hms.PrimaryKeysRequest) -> hms.PrimaryKeysResponse:
        """A table's primary key columns."""
        request = required(request, "PrimaryKeysRequest")
        for name, value in (("db_name", request.db_name), ("tbl_name", request.tbl_name)):
            if value is None:  # required fields of the request (HMS: a protocol error)
                raise hms.MetaException(message=f"Required field '{name}' is unset")
        keys = self.catalog.constraints.primary_keys(request.db_name, request.tbl_name)
        return hms.PrimaryKeysResponse(primaryKeys=keys)

    def get_foreign_keys(self, request: hms.ForeignKeysRequest) -> hms.ForeignKeysResponse:
        """A child table's foreign keys (only those onto one parent when it is named)."""
        request = required(request, "ForeignKeysRequest")
        return hms.ForeignKeysResponse(foreignKeys=self.catalog.constraints.foreign_keys(request))
