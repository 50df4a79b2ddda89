"""The index calls (HMS 2.3): an index is recorded beside its base table and has an index
table of its own, created and dropped with it. See ``docs/hms-api.md#indexes``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import internal_error, object_name
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.api.tables import create_table
from metastore_server.thrift_api import hms


class IndexCalls(Area):
    """Indexes. Raises NoSuchObjectException (a missing index or table),
    AlreadyExistsException, InvalidObjectException (an index HMS would not record),
    InvalidOperationException and MetaException; a missing argument is an internal error
    (TApplicationException), as in HMS 2.3."""

    @thrift(
        rule=auth.on_tables(
            "CREATEINDEX", auth.OWN, auth.named_fields("new_index", "dbName", "origTableName")
        ),
        storage=st.ADD_INDEX,
        locations=loc.ADD_INDEX,
    )
    def add_index(self, new_index: hms.Index, index_table: hms.Table) -> hms.Index:
        """Create the index table (as ``create_table`` does), then record the index; the
        index table is dropped again when the index cannot be recorded."""
        if new_index is None or index_table is None:
            raise internal_error("add_index")  # HMS 2.3 logs both arguments' toString first
        self.catalog.indexes.check_new(new_index)
        create_table(self.catalog, index_table)
        now = self.catalog.ctx.now()
        try:
            added = self.catalog.indexes.record(new_index, now)
        except Exception:
            db, name = object_name(index_table.dbName), object_name(index_table.tableName)
            self.catalog.drop_table(db, name, True, index_drop=True)
            raise
        return added

    @thrift(
        rule=auth.on_tables("ALTERINDEX_PROPS", auth.OWN, auth.args("dbname", "base_tbl_name")),
        storage=st.not_checked("changes an index's parameters only, not its index table"),
    )
    def alter_index(
        self, dbname: str, base_tbl_name: str, idx_name: str, new_idx: hms.Index
    ) -> None:
        """Change an index's parameters (the only change HMS 2.3 keeps), with a new DDL time."""
        if new_idx is None:
            raise internal_error("alter_index")
        new_idx.parameters = dict(new_idx.parameters or {})
        now = self.catalog.ctx.now()
        new_idx.parameters["transient_lastDdlTime"] = str(now)
        self.catalog.indexes.alter(dbname, base_tbl_name, idx_name, new_idx)

    @thrift(
        rule=auth.on_tables("DROPINDEX", auth.OWN, auth.args("db_name", "tbl_name")),
        storage=st.DROP_INDEX_BY_NAME,
        locations=loc.NO_LOCATION,
    )
    def drop_index_by_name(
        self,
        db_name: str,
        tbl_name: str,
        index_name: str,
        deleteData: bool,  # noqa: N803 (IDL name)
    ) -> bool:
        """Drop an index and its index table (its data too with ``deleteData``)."""
        index = self.catalog.indexes.get(db_name, tbl_name, index_name)
        index_db, index_table = self.catalog.indexes.index_table_of(db_name, tbl_name, index_name)
        if self.catalog.tables.find(index_db, index_table) is not None:
            self.catalog.drop_table(index_db, index_table, bool(deleteData), index_drop=True)
        self.catalog.indexes.remove(index)
        return True

    @thrift(rule=auth.OPEN)
    def get_index_by_name(self, db_name: str, tbl_name: str, index_name: str) -> hms.Index:
        """An index; NoSuchObjectException when it does not exist."""
        return self.catalog.indexes.get(db_name, tbl_name, index_name)

    @thrift(rule=auth.OPEN)
    def get_indexes(self, db_name: str, tbl_name: str, max_indexes: int) -> list[hms.Index]:
        """Every index on the table (HMS 2.3 does not apply ``max_indexes``)."""
        return self.catalog.indexes.all(db_name, tbl_name)

    @thrift(rule=auth.OPEN)
    def get_index_names(self, db_name: str, tbl_name: str, max_indexes: int) -> list[str]:
        """Names of the indexes on the table, sorted (HMS 2.3 does not apply ``max_indexes``)."""
        return [index.indexName for index in self.catalog.indexes.all(db_name, tbl_name)]
