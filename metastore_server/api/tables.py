"""The table calls: create, read, list, alter and drop tables, their columns (``get_fields``,
``get_schema``), their metadata listing (``get_table_meta``) and names by filter. See
``docs/hms-api.md``.
"""

from __future__ import annotations

from collections.abc import Callable

from metastore_server.api import caller_fields
from metastore_server.api.area import Area
from metastore_server.api.arguments import (
    catalog_field,
    catalog_named,
    context_properties,
    context_says,
    database_in,
    object_name,
    purge_asked,
    required,
    stamp_tables,
)
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.api.meta_conf import DISALLOW_INCOMPATIBLE_TYPES
from metastore_server.catalog import (
    EXPECTED_KEY,
    EXPECTED_VALUE,
    TABLE_TYPES,
    Catalog,
    Context,
    EncodedStructs,
    names,
    string_field,
    table_index,
    table_names_by_filter,
)
from metastore_server.thrift_api import hms


def create_table(
    catalog: Catalog,
    tbl: hms.Table,
    context: Context = None,
    also: Callable[[], None] | None = None,
) -> None:
    """Create a table and grant its creator the privileges it carries; the way every call
    that creates a table goes (``create_table``, an index's table, a table with keys).
    ``context`` is the call's environment context; ``also`` runs in the same change once the
    table is written (its keys): when it fails, the table is not created."""
    if tbl is not None:
        tbl.dbName = database_in(catalog.databases, catalog_field(tbl), tbl.dbName)
    grants = catalog.security.privileges

    def then() -> None:
        grants.grant_created(tbl.dbName, tbl.tableName, tbl.privileges)
        if also is not None:
            also()

    catalog.tables.create(tbl, then=then, context=context)


def _columns(table: hms.Table) -> list[hms.FieldSchema]:
    return list(table.sd.cols or []) if table.sd else []


#: The catalog-name fields of Table and TableMeta (HMS 3 and later).
_TABLE_CATALOG_FIELD = 17
_META_CATALOG_FIELD = 5


def _table_catalog(catalog: str) -> bytes:
    """The catalog-name field of tables answered as stored: HMS 4 fills ``Table.catName``
    (rows keep none: the catalog is the database's; a 2.3 client gets none)."""
    return string_field(_TABLE_CATALOG_FIELD, catalog)


class TableCalls(Area):
    """Tables. Raises NoSuchObjectException (a missing table or database, another catalog),
    UnknownDBException and UnknownTableException (the column and listing calls),
    AlreadyExistsException, InvalidObjectException (a table HMS would not store),
    InvalidOperationException (an alteration HMS refuses, a filter it cannot apply) and
    MetaException."""

    # -- create, alter, drop -----------------------------------------------------------------

    @thrift(
        stamp=caller_fields.table_owner(caller_fields.argument("tbl")),
        rule=auth.create(auth.TABLE),
        storage=st.CREATE_TABLE,
        locations=loc.CREATE_TABLE,
    )
    def create_table(self, tbl: hms.Table) -> None:
        """Create a table (and its directory where it owns its data)."""
        create_table(self.catalog, tbl)

    @thrift(
        stamp=caller_fields.table_owner(caller_fields.argument("tbl")),
        rule=auth.create(auth.TABLE),
        storage=st.CREATE_TABLE,
        locations=loc.CREATE_TABLE,
    )
    def create_table_with_environment_context(
        self, tbl: hms.Table, environment_context: hms.EnvironmentContext
    ) -> None:
        """``create_table``; ``STATS_GENERATED`` in the context marks counted statistics
        accurate."""
        create_table(self.catalog, tbl, context_properties(environment_context))

    @thrift(rule=auth.drop(auth.DB_NAME), storage=st.DROP_TABLE, locations=loc.NO_LOCATION)
    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:  # noqa: N803
        """Drop a table and its partitions (their data with ``deleteData``, to the trash)."""
        self.catalog.drop_table(self.database_in(None, dbname), object_name(name), bool(deleteData))

    @thrift(rule=auth.drop(auth.DB_NAME), storage=st.DROP_TABLE, locations=loc.NO_LOCATION)
    def drop_table_with_environment_context(
        self,
        dbname: str,
        name: str,
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext,
    ) -> None:
        """``drop_table``; ``ifPurge`` in the context skips the trash."""
        self.catalog.drop_table(
            self.database_in(None, dbname),
            object_name(name),
            bool(deleteData),
            purge=purge_asked(environment_context),
        )

    @thrift(
        rule=auth.alter_table(auth.DB_TABLE, "dbname", "new_tbl"),
        storage=st.ALTER_TABLE,
        locations=loc.ALTER_TABLE,
    )
    def alter_table(self, dbname: str, tbl_name: str, new_tbl: hms.Table) -> None:
        """Change (or rename) a table; its partitions keep their columns."""
        self.catalog.alter_table(
            self.database_in(None, dbname),
            object_name(tbl_name),
            new_tbl,
            cascade=False,
            check_types=self._check_types(),
        )

    @thrift(
        rule=auth.alter_table(auth.DB_TABLE, "dbname", "new_tbl"),
        storage=st.ALTER_TABLE,
        locations=loc.ALTER_TABLE,
    )
    def alter_table_with_environment_context(
        self,
        dbname: str,
        tbl_name: str,
        new_tbl: hms.Table,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        """``alter_table``; ``CASCADE`` in the context changes the partitions' columns too,
        ``DO_NOT_UPDATE_STATS`` keeps the table's basic statistics as sent, ``STATS_GENERATED``
        marks counted ones accurate, ``expected_parameter_key``/``_value`` alter only while
        the stored parameter holds that value (MetaException otherwise)."""
        self.catalog.alter_table(
            self.database_in(None, dbname),
            object_name(tbl_name),
            new_tbl,
            cascade=context_says(environment_context, "CASCADE"),
            context=context_properties(environment_context),
            check_types=self._check_types(),
        )

    @thrift(
        since="3",
        rule=auth.alter_table(auth.REQ, "", "req", "table"),
        storage=st.ALTER_TABLE_REQ,
        locations=loc.ALTER_TABLE_REQ,
    )
    def alter_table_req(self, req: hms.AlterTableRequest) -> hms.AlterTableResponse:
        """The request form of ``alter_table_with_environment_context``; its
        ``expectedParameterKey``/``Value`` make the alter a compare-and-set on that table
        parameter as the context's ``expected_parameter_key``/``_value`` do."""
        req = required(req, "AlterTableRequest")
        context = context_properties(req.environmentContext) or {}
        if req.expectedParameterKey is not None and req.expectedParameterValue is not None:
            context[EXPECTED_KEY] = req.expectedParameterKey
            context[EXPECTED_VALUE] = req.expectedParameterValue
        self.catalog.alter_table(
            self.database_in(req.catName, req.dbName),
            object_name(req.tableName),
            req.table,
            cascade=context.get("CASCADE", "").lower() == "true",
            context=context or None,
            check_types=self._check_types(),
        )
        return hms.AlterTableResponse()

    @thrift(
        rule=auth.alter_table(auth.DB_TABLE, "dbname", "new_tbl"),
        storage=st.ALTER_TABLE,
        locations=loc.ALTER_TABLE,
    )
    def alter_table_with_cascade(
        self, dbname: str, tbl_name: str, new_tbl: hms.Table, cascade: bool
    ) -> None:
        """``alter_table``; with ``cascade`` the partitions' columns change too."""
        self.catalog.alter_table(
            self.database_in(None, dbname),
            object_name(tbl_name),
            new_tbl,
            cascade=bool(cascade),
            check_types=self._check_types(),
        )

    def _check_types(self) -> bool:
        """Whether this connection disallows incompatible column type changes (HMS's
        ``hive.metastore.disallow.incompatible.col.type.changes``, true unless set false)."""
        return self.settings.meta_conf.get(DISALLOW_INCOMPATIBLE_TYPES) == "true"

    # -- read --------------------------------------------------------------------------------

    @thrift(catalog_named=True, kept="wire", rule=auth.read(auth.DB_TABLE), storage=st.GET_TABLE)
    def get_table(self, dbname: str, tbl_name: str) -> hms.Table:
        """A table; NoSuchObjectException when it does not exist."""
        table = self.catalog.tables.get(self.database_in(None, dbname), object_name(tbl_name)).table
        return stamp_tables([table], catalog_named(None, dbname))[0]

    @thrift(catalog_named=True, rule=auth.read(auth.REQ), storage=st.GET_TABLE_REQ)
    def get_table_req(self, req: hms.GetTableRequest) -> hms.GetTableResult:
        """The request form of ``get_table``; with ``getColumnStats``, the table's column
        statistics of the request's engine attached (``colStats``)."""
        req = required(req, "GetTableRequest")
        ref = self.catalog.tables.get(
            self.database_in(req.catName, req.dbName), object_name(req.tblName)
        )
        table = ref.table
        if req.getColumnStats:
            columns = [c.name for c in (table.sd.cols if table.sd else None) or []]
            table.colStats = self.catalog.statistics.attached(
                ref.db, ref.name, None, columns, req.engine
            )
        return hms.GetTableResult(
            table=stamp_tables([table], catalog_named(req.catName, req.dbName))[0]
        )

    @thrift(catalog_named=True, rule=auth.OPEN)
    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> EncodedStructs:
        """The tables that exist among ``tbl_names`` (their stored bytes, passed through);
        UnknownDBException for a missing or empty database name, InvalidOperationException for
        no list (HMS's words)."""
        if not dbname:
            raise hms.UnknownDBException(message="DB name is null or empty")
        db = self.database_in(None, dbname)
        if tbl_names is None:
            raise hms.InvalidOperationException(message=f"{db} cannot find null tables")
        if self.catalog.databases.find(db) is None:
            raise hms.UnknownDBException(message=f"Could not find database {db}")
        found = self.catalog.tables.stored_objects(db, tbl_names)
        return EncodedStructs(hms.Table, found, _table_catalog(catalog_named(None, dbname)))

    @thrift(catalog_named=True, rule=auth.OPEN)
    def get_table_objects_by_name_req(self, req: hms.GetTablesRequest) -> EncodedStructs:
        """The request form of ``get_table_objects_by_name`` (no names: every table)."""
        req = required(req, "GetTablesRequest")
        db = self.database_in(req.catName, req.dbName) if req.dbName else ""
        if not db:
            raise hms.UnknownDBException(message="DB name is null or empty")
        if self.catalog.databases.find(db) is None:
            raise hms.UnknownDBException(message=f"Could not find database {db}")
        wanted = req.tblNames if req.tblNames is not None else self.catalog.tables.names(db)
        found = self.catalog.tables.stored_objects(db, wanted)
        catalog = _table_catalog(catalog_named(req.catName, req.dbName))
        return EncodedStructs(hms.Table, found, catalog, within=(hms.GetTablesResult, 1))

    @thrift(rule=auth.read(auth.COLUMN_TABLE))
    def get_fields(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        """A table's columns (not its partition keys)."""
        return _columns(self._table_for_schema(db_name, table_name))

    @thrift(rule=auth.read(auth.COLUMN_TABLE))
    def get_fields_with_environment_context(
        self, db_name: str, table_name: str, environment_context: hms.EnvironmentContext
    ) -> list[hms.FieldSchema]:
        """``get_fields``."""
        return self.get_fields(db_name, table_name)

    @thrift(rule=auth.read(auth.COLUMN_TABLE))
    def get_schema(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        """A table's columns, then its partition keys."""
        table = self._table_for_schema(db_name, table_name)
        return _columns(table) + list(table.partitionKeys or [])

    @thrift(rule=auth.read(auth.COLUMN_TABLE))
    def get_schema_with_environment_context(
        self, db_name: str, table_name: str, environment_context: hms.EnvironmentContext
    ) -> list[hms.FieldSchema]:
        """``get_schema``."""
        return self.get_schema(db_name, table_name)

    def _table_for_schema(self, db_name: str, table_name: str) -> hms.Table:
        """The table of a column call (``db.table.column`` names the table);
        UnknownTableException when it or its database is missing, as HMS answers."""
        db, name = self.database_in(None, db_name), object_name((table_name or "").split(".", 1)[0])
        ref = self.catalog.tables.find(db, name)
        if ref is None:
            raise hms.UnknownTableException(message=f"{db}.{name} table not found")
        return ref.table

    # -- list --------------------------------------------------------------------------------

    @thrift(kept="listing", rule=auth.OPEN)
    def get_tables(self, db_name: str, pattern: str) -> list[str]:
        """Names of a database's tables matching an HMS pattern."""
        db = self.listed_database(None, db_name)
        return [] if db is None else self.catalog.tables.names(db, pattern)

    @thrift(kept="listing", rule=auth.OPEN)
    def get_all_tables(self, db_name: str) -> list[str]:
        """Names of every table of a database."""
        db = self.listed_database(None, db_name)
        return [] if db is None else self.catalog.tables.names(db)

    @thrift(kept="listing", rule=auth.OPEN)
    def get_tables_by_type(self, db_name: str, pattern: str, tableType: str) -> list[str]:  # noqa: N803
        """Names of a database's tables of one type matching a pattern; MetaException (HMS's
        words) for a type HMS does not know."""
        if tableType and tableType not in TABLE_TYPES:
            raise hms.MetaException(
                message="java.lang.IllegalArgumentException: No enum constant "
                f"org.apache.hadoop.hive.metastore.TableType.{tableType}"
            )
        db = self.listed_database(None, db_name)
        return [] if db is None else self.catalog.tables.names(db, pattern, tableType or None)

    @thrift(catalog_named=True, kept="listing", rule=auth.OPEN)
    def get_table_meta(
        self, db_patterns: str, tbl_patterns: str, tbl_types: list[str]
    ) -> EncodedStructs:
        """Database, name, type and comment of the tables matching HMS patterns, in the
        catalog the database pattern names (``@cat#pattern``; none: ``hive``): each written
        from the table row's index column, no definition decoded (``table_index``)."""
        types = {t.upper() for t in tbl_types or []}
        catalog, pattern = names.split_catalog_pattern(db_patterns)
        found = []
        for db in self.catalog.databases.names(pattern or "*", catalog):
            listed, metas = self.catalog.tables.listed(db, tbl_patterns or "*")
            if types:
                kept = [
                    (name, meta)
                    for name, meta in zip(listed, metas, strict=True)
                    if table_index.meta_type(meta).upper() in types
                ]
                listed, metas = [name for name, _ in kept], [meta for _, meta in kept]
            found += table_index.table_meta_blobs(db, listed, metas)
        return EncodedStructs(hms.TableMeta, found, string_field(_META_CATALOG_FIELD, catalog))

    @thrift(rule=auth.OPEN)
    def get_table_names_by_filter(
        self,
        dbname: str,
        filter: str,  # noqa: A002 (IDL name)
        max_tables: int,
    ) -> list[str]:
        """Names of the tables whose owner, last access time or parameters match a filter
        (UnknownDBException without a database, InvalidOperationException without a filter)."""
        if not dbname:
            raise hms.UnknownDBException(message="DB name is null or empty")
        if filter is None:
            raise hms.InvalidOperationException(message="null cannot apply null filter")
        db = self.database_in(None, dbname)
        return table_names_by_filter(self.catalog.ctx.store, db, filter, max_tables)
