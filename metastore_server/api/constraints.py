"""The constraint calls: primary and foreign keys, unique, not null, default and check
constraints, added with a table or after it, listed and dropped. See
``docs/hms-api.md#constraints``."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Protocol, TypeVar

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.arguments import (
    catalog_named,
    context_properties,
    database_in,
    required,
)
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.api.tables import create_table
from metastore_server.catalog import CHECK, DEFAULT, NOT_NULL, UNIQUE, Catalog, Databases, Event
from metastore_server.thrift_api import hms


class _Keyed(Protocol):
    """A constraint's column as sent and answered (SQLPrimaryKey, SQLForeignKey...)."""

    catName: str


class _TableRequest(Protocol):
    """A constraints read (UniqueConstraintsRequest, NotNullConstraintsRequest...)."""

    catName: str
    db_name: str
    tbl_name: str


#: A list of constraint columns (or None), changed in place and given back.
K = TypeVar("K", bound=Sequence[_Keyed] | None)


def _table_of(request: _TableRequest | None, what: str) -> tuple[str | None, str, str]:
    """The (catalog, db, table) a constraints request names (MetaException for a missing
    one); the database is resolved by the caller."""
    request = required(request, what)
    db, table = request.db_name, request.tbl_name
    for name, value in (("db_name", db), ("tbl_name", table)):
        if value is None:  # required fields of the request (HMS: a protocol error)
            raise hms.MetaException(message=f"Required field '{name}' is unset")
    return request.catName, db, table


_DB_FIELDS = ("table_db", "fktable_db", "pktable_db")


def resolve_keys(databases: Databases, keys: K) -> K:
    """Constraint columns sent, their databases checked against their catalog (kept without
    one: the catalog is the database's)."""
    for key in () if keys is None else keys:
        if key is None:
            continue
        for field in _DB_FIELDS:
            value = getattr(key, field, None)
            if value is not None:
                setattr(key, field, database_in(databases, key.catName, value))
    return keys


def stamped(keys: K, catalog: str) -> K:
    """Constraints answered, carrying their catalog (as HMS 4 fills ``catName``)."""
    for key in () if keys is None else keys:
        key.catName = catalog
    return keys


def create_with_constraints(catalog: Catalog, req: hms.CreateTableRequest) -> None:
    """Create the table of a ``CreateTableRequest`` with its constraints (its environment
    context read as ``create_table_with_environment_context`` reads it), in one change; the
    constraints' events follow the table's, as HMS records them."""
    keys = catalog.constraints
    sent: tuple[Sequence[_Keyed] | None, ...] = (
        req.primaryKeys, req.foreignKeys, req.uniqueConstraints, req.notNullConstraints,
        req.defaultConstraints, req.checkConstraints,
    )  # fmt: skip
    for found in sent:
        resolve_keys(catalog.databases, found)
    events: list[Event] = []

    def add_keys() -> None:
        keys.add_primary_key(req.primaryKeys, events)
        keys.add_foreign_key(req.foreignKeys, events)
        keys.add_unique(req.uniqueConstraints, events)
        keys.add_each(NOT_NULL, req.notNullConstraints, events)
        keys.add_each(DEFAULT, req.defaultConstraints, events)
        keys.add_each(CHECK, req.checkConstraints, events)

    with catalog.ctx.write_lock:
        create_table(catalog, req.table, context_properties(req.envContext), also=add_keys)
        catalog.ctx.events.record(events)


class ConstraintCalls(Area):
    """Primary and foreign keys. Raises NoSuchObjectException (a missing key),
    AlreadyExistsException, InvalidObjectException (a key on a missing table or column) and
    MetaException (a key HMS refuses)."""

    @thrift(
        stamp=caller_fields.table_owner(caller_fields.argument("tbl")),
        rule=auth.create(auth.TABLE),
        storage=st.CREATE_TABLE,
        locations=loc.CREATE_TABLE,
    )
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

    @thrift(rule=auth.alter(auth.REQ, "ALTERTABLE_DROPCONSTRAINT"))
    def drop_constraint(self, req: hms.DropConstraintRequest) -> None:
        """Drop a constraint (of any kind) by name."""
        req = required(req, "DropConstraintRequest")
        db = self.database_in(req.catName, req.dbname) if req.dbname is not None else None
        self.catalog.constraints.drop(db, req.tablename, req.constraintname)

    def _keys(self, keys: K) -> K:
        return resolve_keys(self.catalog.databases, keys)

    def _read(self, request: _TableRequest | None, what: str) -> tuple[str, str, str]:
        """(catalog, db, table) of a constraints read, the database checked."""
        catalog, db, table = _table_of(request, what)
        return catalog_named(catalog, db), self.database_in(catalog, db), table

    @thrift(rule=auth.alter(auth.each("req", "primaryKeyCols"), "ALTERTABLE_ADDCONSTRAINT"))
    def add_primary_key(self, req: hms.AddPrimaryKeyRequest) -> None:
        """Add a table's primary key."""
        self.catalog.constraints.add_primary_key(self._keys(req.primaryKeyCols if req else None))

    @thrift(
        rule=auth.alter(
            auth.named_fields(
                "req", "fktable_db", "fktable_name", listed=True, path=("foreignKeyCols",)
            ),
            "ALTERTABLE_ADDCONSTRAINT",
        ),
    )
    def add_foreign_key(self, req: hms.AddForeignKeyRequest) -> None:
        """Add foreign keys."""
        self.catalog.constraints.add_foreign_key(self._keys(req.foreignKeyCols if req else None))

    @thrift(
        since="3",
        rule=auth.alter(auth.each("req", "uniqueConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"),
    )
    def add_unique_constraint(self, req: hms.AddUniqueConstraintRequest) -> None:
        """Add a unique constraint over the columns given."""
        self.catalog.constraints.add_unique(self._keys(req.uniqueConstraintCols if req else None))

    @thrift(
        since="3",
        rule=auth.alter(auth.each("req", "notNullConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"),
    )
    def add_not_null_constraint(self, req: hms.AddNotNullConstraintRequest) -> None:
        """Add not null constraints (one per entry)."""
        self.catalog.constraints.add_each(
            NOT_NULL, self._keys(req.notNullConstraintCols if req else None)
        )

    @thrift(
        since="3",
        rule=auth.alter(auth.each("req", "defaultConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"),
    )
    def add_default_constraint(self, req: hms.AddDefaultConstraintRequest) -> None:
        """Add default constraints (one per entry)."""
        self.catalog.constraints.add_each(
            DEFAULT, self._keys(req.defaultConstraintCols if req else None)
        )

    @thrift(
        since="3",
        rule=auth.alter(auth.each("req", "checkConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"),
    )
    def add_check_constraint(self, req: hms.AddCheckConstraintRequest) -> None:
        """Add check constraints (one per entry)."""
        self.catalog.constraints.add_each(
            CHECK, self._keys(req.checkConstraintCols if req else None)
        )

    @thrift(since="3", rule=auth.read(auth.REQUEST))
    def get_unique_constraints(
        self, request: hms.UniqueConstraintsRequest
    ) -> hms.UniqueConstraintsResponse:
        """A table's unique constraints."""
        catalog, db, table = self._read(request, "UniqueConstraintsRequest")
        found = stamped(self.catalog.constraints.of_kind(UNIQUE, db, table), catalog)
        return hms.UniqueConstraintsResponse(uniqueConstraints=found)

    @thrift(since="3", rule=auth.read(auth.REQUEST))
    def get_not_null_constraints(
        self, request: hms.NotNullConstraintsRequest
    ) -> hms.NotNullConstraintsResponse:
        """A table's not null constraints."""
        catalog, db, table = self._read(request, "NotNullConstraintsRequest")
        found = stamped(self.catalog.constraints.of_kind(NOT_NULL, db, table), catalog)
        return hms.NotNullConstraintsResponse(notNullConstraints=found)

    @thrift(since="3", rule=auth.read(auth.REQUEST))
    def get_default_constraints(
        self, request: hms.DefaultConstraintsRequest
    ) -> hms.DefaultConstraintsResponse:
        """A table's default constraints."""
        catalog, db, table = self._read(request, "DefaultConstraintsRequest")
        found = stamped(self.catalog.constraints.of_kind(DEFAULT, db, table), catalog)
        return hms.DefaultConstraintsResponse(defaultConstraints=found)

    @thrift(since="3", rule=auth.read(auth.REQUEST))
    def get_check_constraints(
        self, request: hms.CheckConstraintsRequest
    ) -> hms.CheckConstraintsResponse:
        """A table's check constraints."""
        catalog, db, table = self._read(request, "CheckConstraintsRequest")
        found = stamped(self.catalog.constraints.of_kind(CHECK, db, table), catalog)
        return hms.CheckConstraintsResponse(checkConstraints=found)

    @thrift(since="3", rule=auth.read(auth.REQUEST))
    def get_all_table_constraints(
        self, request: hms.AllTableConstraintsRequest
    ) -> hms.AllTableConstraintsResponse:
        """Every constraint of a table, by kind."""
        request = required(request, "AllTableConstraintsRequest")
        catalog = catalog_named(request.catName, request.dbName)
        db = self.database_in(request.catName, request.dbName)
        found = self.catalog.constraints.all_of(db, request.tblName)
        answered: tuple[Sequence[_Keyed] | None, ...] = (
            found.primaryKeys, found.foreignKeys, found.uniqueConstraints,
            found.notNullConstraints, found.defaultConstraints, found.checkConstraints,
        )  # fmt: skip
        for keys in answered:
            stamped(keys, catalog)
        return hms.AllTableConstraintsResponse(allTableConstraints=found)

    @thrift(catalog_named=True, rule=auth.read(auth.REQUEST))
    def get_primary_keys(self, request: hms.PrimaryKeysRequest) -> hms.PrimaryKeysResponse:
        """A table's primary key columns."""
        request = required(request, "PrimaryKeysRequest")
        for name, value in (("db_name", request.db_name), ("tbl_name", request.tbl_name)):
            if value is None:  # required fields of the request (HMS: a protocol error)
                raise hms.MetaException(message=f"Required field '{name}' is unset")
        catalog = catalog_named(request.catName, request.db_name)
        db = self.database_in(request.catName, request.db_name)
        keys = stamped(self.catalog.constraints.primary_keys(db, request.tbl_name), catalog)
        return hms.PrimaryKeysResponse(primaryKeys=keys)

    @thrift(
        catalog_named=True,
        rule=auth.combined(
            "QUERY",
            auth.on_tables(
                "",
                auth.READ,
                auth.named_fields("request", "parent_db_name", "parent_tbl_name"),
                optional=True,
            ),
            auth.on_tables(
                "",
                auth.READ,
                auth.named_fields("request", "foreign_db_name", "foreign_tbl_name"),
                optional=True,
            ),
        ),
    )
    def get_foreign_keys(self, request: hms.ForeignKeysRequest) -> hms.ForeignKeysResponse:
        """A child table's foreign keys (only those onto one parent when it is named)."""
        request = required(request, "ForeignKeysRequest")
        catalog = catalog_named(request.catName, request.foreign_db_name)
        asked = copy.copy(request)
        for field in ("parent_db_name", "foreign_db_name"):
            if getattr(request, field):
                setattr(asked, field, self.database_in(request.catName, getattr(request, field)))
        found = stamped(self.catalog.constraints.foreign_keys(asked), catalog)
        return hms.ForeignKeysResponse(foreignKeys=found)
