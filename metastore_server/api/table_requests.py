"""HMS 4's table calls that have no HMS 2.3 form (``truncate_table``) and the request forms
of the table calls (``create_table_req``, ``drop_table_req``...): each translates its request
and goes the way the call it stands for goes. See ``docs/hms-api.md``.
"""

from __future__ import annotations

import copy

import structlog

from metastore_server.api import caller_fields
from metastore_server.api.area import Area, ServerSettings
from metastore_server.api.arguments import (
    catalog_field,
    object_name,
    purge_asked,
    required,
    with_catalog,
)
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.constraints import create_with_constraints
from metastore_server.api.declaration import thrift
from metastore_server.api.tables import TableCalls
from metastore_server.catalog import (
    EXTERNAL_PURGE,
    EXTERNAL_TABLE,
    MANAGED_TABLE,
    MATERIALIZED_VIEW,
    VIRTUAL_VIEW,
    Catalog,
    names,
)
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: ``GetTablesExtRequestFields`` bits and ``ExtendedTableInfo.accessType`` values (HMS's).
_ACCESS_TYPE_FIELD, _CAPABILITIES_FIELD = 1, 2
_READ_ONLY, _READ_WRITE = 2, 8


def translated(table: hms.Table, database: hms.Database, warehouse_child: str) -> hms.Table:
    """``table`` as HMS 4 creates it for a client without ACID (this server serves no write
    ids): a managed table that is not transactional becomes external, its data still
    dropped with it (``external.table.purge``); names lower-case, a location by default."""
    result = copy.deepcopy(table)
    result.dbName, result.tableName = database.name, names.normalize(table.tableName)
    params = dict(result.parameters or {})
    external = params.get("EXTERNAL", "").upper() == "TRUE"
    kind = result.tableType or (EXTERNAL_TABLE if external else MANAGED_TABLE)
    if kind == MANAGED_TABLE and params.get("transactional", "").lower() != "true":
        kind = EXTERNAL_TABLE
        params["EXTERNAL"] = "TRUE"
        params.setdefault(EXTERNAL_PURGE, "TRUE")
    result.tableType, result.parameters = kind, params
    if kind not in (VIRTUAL_VIEW, MATERIALIZED_VIEW) and result.sd is not None:
        result.sd.location = result.sd.location or warehouse_child
    return result


class TableRequestCalls(Area):
    """Truncation and the HMS 4 request forms of the table calls. Raises what the calls they
    stand for raise, and MetaException (truncate: also for a missing table, the one
    exception its IDL declares)."""

    def __init__(self, catalog: Catalog, settings: ServerSettings) -> None:
        super().__init__(catalog, settings)
        self._tables = TableCalls(catalog, settings)

    @thrift(
        since="3",
        stamp=caller_fields.table_owner(caller_fields.request_table),
        rule=auth.create(auth.field("request", "table")),
        storage=st.CREATE_TABLE_REQ,
        locations=loc.CREATE_TABLE_REQ,
    )
    def create_table_req(self, request: hms.CreateTableRequest) -> None:
        """``create_table_with_constraints`` with its environment context: the table and its
        constraints in one change."""
        request = required(request, "CreateTableRequest")
        create_with_constraints(self.catalog, request)

    @thrift(
        since="3",
        rule=auth.drop(auth.field("dropTableReq")),
        storage=st.DROP_TABLE_REQ,
        locations=loc.NO_LOCATION,
    )
    def drop_table_req(self, dropTableReq: hms.DropTableRequest) -> None:  # noqa: N803
        """``drop_table_with_environment_context`` (``deleteData`` unset: the data stays, as an
        unset flag reads in HMS; the partitions always go with the table)."""
        req = required(dropTableReq, "DropTableRequest")
        delete = bool(req.deleteData)
        self.catalog.drop_table(
            self.database_in(req.catalogName, req.dbName),
            object_name(req.tableName),
            delete,
            purge=purge_asked(req.envContext),
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_fields_req(self, req: hms.GetFieldsRequest) -> hms.GetFieldsResponse:
        """``get_fields``."""
        req = required(req, "GetFieldsRequest")
        return hms.GetFieldsResponse(
            fields=self._tables.get_fields(with_catalog(req.catName, req.dbName), req.tblName)
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_schema_req(self, req: hms.GetSchemaRequest) -> hms.GetSchemaResponse:
        """``get_schema``."""
        req = required(req, "GetSchemaRequest")
        return hms.GetSchemaResponse(
            fields=self._tables.get_schema(with_catalog(req.catName, req.dbName), req.tblName)
        )

    @thrift(since="3", rule=auth.OPEN)
    def get_tables_ext(self, req: hms.GetTablesExtRequest) -> list[hms.ExtendedTableInfo]:
        """The tables of a database matching a pattern (up to ``limit``), with their access
        type (read-write; read-only for views) and no required capabilities when asked."""
        req = required(req, "GetTablesExtRequest")
        db = self.database_in(req.catalog, req.database)
        found = self.catalog.tables.names(db, req.tableNamePattern or "*")
        if req.limit is not None and req.limit >= 0:
            found = found[: req.limit]
        fields = req.requestedFields or 0
        result = []
        for name in found:
            info = hms.ExtendedTableInfo(tblName=name)
            ref = self.catalog.tables.find(db, name)
            if fields & _ACCESS_TYPE_FIELD and ref is not None:
                view = ref.table.tableType in (VIRTUAL_VIEW, MATERIALIZED_VIEW)
                info.accessType = _READ_ONLY if view else _READ_WRITE
            if fields & _CAPABILITIES_FIELD:
                info.requiredReadCapabilities, info.requiredWriteCapabilities = [], []
            result.append(info)
        return result

    @thrift(since="3", rule=auth.create(auth.field("request", "table")))
    def translate_table_dryrun(self, request: hms.CreateTableRequest) -> hms.Table:
        """The table a ``create_table_req`` of HMS 4 would create for a client without ACID,
        without creating it (``translated``); NoSuchObjectException for a missing database,
        AlreadyExistsException for an existing table."""
        request = required(request, "CreateTableRequest")
        table = required(request.table, "Table")
        db = self.database_in(catalog_field(table), table.dbName)
        database = self.catalog.databases.find(db)
        if database is None:
            raise hms.NoSuchObjectException(message=f"database {db} does not exist")
        name = names.normalize(table.tableName)
        if self.catalog.tables.find(db, name) is not None:
            raise hms.AlreadyExistsException(message=f"Table {name} already exists")
        child = self.catalog.ctx.warehouse.child_location(database.locationUri or "", name)
        return translated(table, database, child)

    @thrift(since="3", rule=auth.admin_operation("CM_RECYCLE"))
    def cm_recycle(self, request: hms.CmRecycleRequest) -> hms.CmRecycleResponse:
        """Change management (HMS's ``hive.repl.cm.enabled``) is not kept here: there is no
        change-management root to copy data into, so nothing is recycled and the call
        succeeds, as HMS answers with change management off."""
        request = required(request, "CmRecycleRequest")
        if request.dataPath is None:
            raise hms.MetaException(message="Required field 'dataPath' is unset")
        log.info("cm_recycle_skipped", path=request.dataPath, reason="no change management")
        return hms.CmRecycleResponse()

    @thrift(
        since="3",
        rule=auth.on_tables("TRUNCATETABLE", auth.OWN, auth.args("dbName", "tableName")),
        storage=st.TRUNCATE_TABLE,
        locations=loc.TRUNCATED,
    )
    def truncate_table(self, dbName: str, tableName: str, partNames: list[str]) -> None:  # noqa: N803
        """Delete the data of a managed table (or of the partitions named), keep the table
        and its partitions, and reset their basic statistics to an empty table's."""
        try:
            self.catalog.truncate_table(
                self.database_in(None, dbName),
                object_name(tableName),
                list(partNames or []) or None,
            )
        except hms.NoSuchObjectException as exc:  # not declared by the IDL: HMS wraps it
            raise hms.MetaException(message=exc.message) from None

    @thrift(
        since="3",
        rule=auth.on_tables("TRUNCATETABLE", auth.OWN, auth.REQ),
        storage=st.TRUNCATE_TABLE_REQ,
        locations=loc.TRUNCATED,
    )
    def truncate_table_req(self, req: hms.TruncateTableRequest) -> hms.TruncateTableResponse:
        """The request form of ``truncate_table``."""
        req = required(req, "TruncateTableRequest")
        self.truncate_table(req.dbName, req.tableName, req.partNames)
        return hms.TruncateTableResponse()
