"""The constraint calls: primary and foreign keys, added with a table or after it, listed and
dropped. See ``docs/hms-api.md#constraints``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import required
from metastore_server.api.tables import create_table
from metastore_server.thrift_api import hms


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
        """Create a table with its keys, in one change: a refused key leaves no table (and
        no event)."""
        if uniqueConstraints or notNullConstraints or defaultConstraints or checkConstraints:
            raise hms.MetaException(
                message="unique, not null, default and check constraints are not kept yet"
            )
        keys = self.catalog.constraints

        def add_keys() -> None:
            keys.add_primary_key(primaryKeys)
            keys.add_foreign_key(foreignKeys)

        create_table(self.catalog, tbl, also=add_keys)

    def drop_constraint(self, req: hms.DropConstraintRequest) -> None:
        """Drop a key by name."""
        req = required(req, "DropConstraintRequest")
        self.catalog.constraints.drop(req.dbname, req.tablename, req.constraintname)

    def add_primary_key(self, req: hms.AddPrimaryKeyRequest) -> None:
        """Add a table's primary key."""
        self.catalog.constraints.add_primary_key(req.primaryKeyCols if req else None)

    def add_foreign_key(self, req: hms.AddForeignKeyRequest) -> None:
        """Add foreign keys."""
        self.catalog.constraints.add_foreign_key(req.foreignKeyCols if req else None)

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
