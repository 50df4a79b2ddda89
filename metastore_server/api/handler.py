"""The Thrift face: one method per metastore call, each validate -> catalog -> Thrift result.

Method names and argument order are the IDL's (``thrift/hive_metastore.thrift``); the processor
(``server/thrift_server.py``) calls them positionally. Database arguments may carry a catalog prefix
(``@hive#db``, sent by Hive 3+ clients); only the default catalog exists.
"""

from __future__ import annotations

import time

import structlog

from metastore_server import __version__
from metastore_server.api import client_settings
from metastore_server.api import dependencies as dependency_api
from metastore_server.api import timelines as timeline_api
from metastore_server.api.extras import ExtraCalls
from metastore_server.api.meta_conf import MetaConf
from metastore_server.api.objects import ObjectCalls
from metastore_server.api.security import SecurityCalls
from metastore_server.api.values import explain_values, partition_values
from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.encoded import EncodedPartitions
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.objects.tables import TABLE_TYPES
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

SERVICE_NAME = "hbase-metastore"


def _db(name: str | None) -> str:
    """The database name of a (possibly catalog-prefixed) argument; other catalogs: error."""
    catalog, db = names.split_catalog(name)
    if catalog != names.DEFAULT_CATALOG:
        raise hms.NoSuchObjectException(message=f"Catalog {catalog} does not exist")
    return db


def _table(name: str | None) -> str:
    return names.normalize(name)


class MetastoreHandler(ExtraCalls, SecurityCalls, ObjectCalls):
    """Implements ThriftHiveMetastore (and fb303's FacebookService) over a Catalog."""

    def __init__(self, catalog: Catalog, config_values: dict[str, str] | None = None) -> None:
        self.catalog = catalog
        self._config_values = dict(config_values or {})
        self._alive_since = int(time.time())
        self._options: dict[str, str] = {}
        self._meta_conf = MetaConf()

    # -- fb303 -------------------------------------------------------------------------------

    def getName(self) -> str:  # noqa: N802 (IDL name)
        return SERVICE_NAME

    def getVersion(self) -> str:  # noqa: N802
        return __version__

    def getStatus(self) -> int:  # noqa: N802
        return hms.fb_status.ALIVE if hasattr(hms, "fb_status") else 2

    def getStatusDetails(self) -> str:  # noqa: N802
        return "serving"

    def getCounters(self) -> dict[str, int]:  # noqa: N802
        return {}

    def getCounter(self, key: str) -> int:  # noqa: N802
        return 0

    def setOption(self, key: str, value: str) -> None:  # noqa: N802
        self._options[key] = value

    def getOption(self, key: str) -> str:  # noqa: N802
        return self._options.get(key, "")

    def getOptions(self) -> dict[str, str]:  # noqa: N802
        return dict(self._options)

    def aliveSince(self) -> int:  # noqa: N802
        return self._alive_since

    def reinitialize(self) -> None:
        """Accepted and ignored (oneway)."""

    def shutdown(self) -> None:
        """Accepted and ignored: a client must not be able to stop a shared metastore."""

    # -- session / config --------------------------------------------------------------------

    def set_ugi(self, user_name: str, group_names: list[str] | None) -> list[str]:
        """HMS 2.3 answers with the group list as sent."""
        return list(group_names or [])

    def setMetaConf(self, key: str, value: str) -> None:  # noqa: N802
        self._meta_conf.set(key, value)

    def getMetaConf(self, key: str) -> str:  # noqa: N802
        return self._meta_conf.get(key)

    def get_config_value(self, name: str, defaultValue: str) -> str:  # noqa: N803
        """A server setting clients may read (e.g. the warehouse dir); else the default.

        Keys outside ``hive*``/``hdfs*``/``mapred*`` and secrets are refused, as HMS does.
        """
        if not client_settings.is_readable(name or ""):
            raise hms.ConfigValSecurityException(message=client_settings.refusal_message(name))
        return self._config_values.get(name, defaultValue)

    # -- databases ---------------------------------------------------------------------------

    def get_database(self, name: str) -> hms.Database:
        return self.catalog.databases.get(_db(name))

    def get_database_req(self, request: hms.GetDatabaseRequest) -> hms.Database:
        if request is None or not request.name:
            raise hms.MetaException(message="Database name cannot be null")
        if request.catalogName and names.normalize(request.catalogName) != names.DEFAULT_CATALOG:
            raise hms.NoSuchObjectException(message=f"Catalog {request.catalogName} does not exist")
        return self.catalog.databases.get(_db(request.name))

    def get_databases(self, pattern: str) -> list[str]:
        return self.catalog.databases.names(pattern)

    def get_all_databases(self) -> list[str]:
        return self.catalog.databases.names(None)

    def create_database(self, database: hms.Database) -> None:
        self.catalog.databases.create(database)

    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:  # noqa: N803
        self.catalog.drop_database(_db(name), bool(deleteData), bool(cascade))

    def alter_database(self, dbname: str, db: hms.Database) -> None:
        self.catalog.databases.alter(_db(dbname), db)

    # -- tables ------------------------------------------------------------------------------

    def get_table(self, dbname: str, tbl_name: str) -> hms.Table:
        return self.catalog.tables.get(_db(dbname), _table(tbl_name)).table

    def get_table_req(self, req: hms.GetTableRequest) -> hms.GetTableResult:
        if req is None:
            raise hms.MetaException(message="GetTableRequest cannot be null")
        if req.catName and names.normalize(req.catName) != names.DEFAULT_CATALOG:
            raise hms.NoSuchObjectException(message=f"Catalog {req.catName} does not exist")
        table = self.catalog.tables.get(_db(req.dbName), _table(req.tblName)).table
        return hms.GetTableResult(table=table)

    def get_tables(self, db_name: str, pattern: str) -> list[str]:
        return self.catalog.tables.names(_db(db_name), pattern)

    def get_all_tables(self, db_name: str) -> list[str]:
        return self.catalog.tables.names(_db(db_name))

    def get_tables_by_type(self, db_name: str, pattern: str, tableType: str) -> list[str]:  # noqa: N803
        if tableType and tableType not in TABLE_TYPES:
            raise hms.MetaException(
                message="java.lang.IllegalArgumentException: No enum constant "
                f"org.apache.hadoop.hive.metastore.TableType.{tableType}"
            )
        return self.catalog.tables.names(_db(db_name), pattern, tableType or None)

    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> list[hms.Table]:
        db = _db(dbname)
        if self.catalog.databases.find(db) is None:
            raise hms.UnknownDBException(message=f"Could not find database {db}")
        return self.catalog.tables.objects(db, tbl_names)

    def create_table(self, tbl: hms.Table) -> None:
        if tbl is not None:
            tbl.dbName = _db(tbl.dbName)
        grants = self.catalog.security.privileges
        self.catalog.tables.create(
            tbl, then=lambda: grants.grant_created(tbl.dbName, tbl.tableName, tbl.privileges)
        )

    def create_table_with_environment_context(
        self, tbl: hms.Table, environment_context: hms.EnvironmentContext
    ) -> None:
        self.create_table(tbl)

    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:  # noqa: N803
        self.catalog.drop_table(_db(dbname), _table(name), bool(deleteData))

    def drop_table_with_environment_context(
        self,
        dbname: str,
        name: str,
        deleteData: bool,
        environment_context: hms.EnvironmentContext,  # noqa: N803
    ) -> None:
        self.catalog.drop_table(
            _db(dbname), _table(name), bool(deleteData), purge=_purge(environment_context)
        )

    def alter_table(self, dbname: str, tbl_name: str, new_tbl: hms.Table) -> None:
        self.catalog.alter_table(_db(dbname), _table(tbl_name), new_tbl, cascade=False)

    def alter_table_with_environment_context(
        self,
        dbname: str,
        tbl_name: str,
        new_tbl: hms.Table,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        properties = (environment_context.properties if environment_context else None) or {}
        self.catalog.alter_table(
            _db(dbname),
            _table(tbl_name),
            new_tbl,
            cascade=properties.get("CASCADE", "").lower() == "true",
            update_stats=properties.get("DO_NOT_UPDATE_STATS", "").lower() != "true",
        )

    def alter_table_with_cascade(
        self, dbname: str, tbl_name: str, new_tbl: hms.Table, cascade: bool
    ) -> None:
        self.catalog.alter_table(_db(dbname), _table(tbl_name), new_tbl, cascade=bool(cascade))

    def get_fields(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        table = self._table_for_schema(db_name, table_name)
        return list(table.sd.cols or []) if table.sd else []

    def get_fields_with_environment_context(
        self, db_name: str, table_name: str, environment_context: hms.EnvironmentContext
    ) -> list[hms.FieldSchema]:
        return self.get_fields(db_name, table_name)

    def get_schema(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        table = self._table_for_schema(db_name, table_name)
        columns = list(table.sd.cols or []) if table.sd else []
        return columns + list(table.partitionKeys or [])

    def get_schema_with_environment_context(
        self, db_name: str, table_name: str, environment_context: hms.EnvironmentContext
    ) -> list[hms.FieldSchema]:
        return self.get_schema(db_name, table_name)

    def _table_for_schema(self, db_name: str, table_name: str) -> hms.Table:
        db, name = _db(db_name), _table((table_name or "").split(".", 1)[0])
        if self.catalog.databases.find(db) is None:
            raise hms.UnknownDBException(message=f"Database {db} does not exist")
        ref = self.catalog.tables.find(db, name)
        if ref is None:
            raise hms.UnknownTableException(message=f"{db}.{name} table not found")
        return ref.table

    # -- partitions: add ---------------------------------------------------------------------

    def add_partition(self, new_part: hms.Partition) -> hms.Partition:
        if new_part is None:
            raise hms.InvalidObjectException(message="Partition cannot be null.")
        added = self.catalog.partitions.add(
            _db(new_part.dbName), _table(new_part.tableName), [new_part]
        )
        return added[0]

    def add_partition_with_environment_context(
        self, new_part: hms.Partition, environment_context: hms.EnvironmentContext
    ) -> hms.Partition:
        return self.add_partition(new_part)

    def add_partitions(self, new_parts: list[hms.Partition]) -> int:
        if not new_parts:
            return 0
        first = new_parts[0]
        added = self.catalog.partitions.add(_db(first.dbName), _table(first.tableName), new_parts)
        return len(added)

    def add_partitions_req(self, request: hms.AddPartitionsRequest) -> hms.AddPartitionsResult:
        if request is None:
            raise hms.MetaException(message="AddPartitionsRequest cannot be null")
        db, table = _db(request.dbName), _table(request.tblName)
        added = self.catalog.partitions.add(
            db,
            table,
            request.parts,
            bool(request.ifNotExists),
            missing_table_message=(
                f"Unable to add partitions because database or table {db}.{table} does not exist"
            ),
        )
        need_result = request.needResult is None or request.needResult
        # HMS answers no list at all when the request holds no partition.
        return hms.AddPartitionsResult(partitions=added if need_result and request.parts else None)

    def append_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        part = hms.Partition(values=list(part_vals or []), dbName=db_name, tableName=tbl_name)
        return self.add_partition(part)

    def append_partition_by_name(
        self, db_name: str, tbl_name: str, part_name: str
    ) -> hms.Partition:
        ref = self.catalog.tables.get(_db(db_name), _table(tbl_name))
        try:
            values = self.catalog.partitions.values_from_name(ref, part_name)
        except hms.NoSuchObjectException as exc:
            raise hms.InvalidObjectException(message=exc.message) from exc
        return self.append_partition(db_name, tbl_name, values)

    # -- partitions: read --------------------------------------------------------------------

    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        return self.catalog.partitions.get(_db(db_name), _table(tbl_name), part_vals)

    def get_partition_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        user_name: str,
        group_names: list[str],
    ) -> hms.Partition:
        return self.get_partition(db_name, tbl_name, part_vals)

    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> hms.Partition:
        return self.catalog.partitions.get_by_name(_db(db_name), _table(tbl_name), part_name)

    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> EncodedPartitions:
        return self.catalog.partitions.list_all(_db(db_name), _table(tbl_name), max_parts)

    def get_partitions_with_auth(
        self, db_name: str, tbl_name: str, max_parts: int, user_name: str, group_names: list[str]
    ) -> list[hms.Partition]:
        return self.get_partitions(db_name, tbl_name, max_parts)

    def get_partitions_req(self, req: hms.PartitionsRequest) -> hms.PartitionsResponse:
        parts = self.catalog.partitions.list_all(_db(req.dbName), _table(req.tblName), req.maxParts)
        return hms.PartitionsResponse(partitions=parts.decode())

    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        return self.catalog.partitions.list_names(_db(db_name), _table(tbl_name), max_parts)

    def get_partitions_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> EncodedPartitions:
        return self.catalog.partitions.list_ps(_db(db_name), _table(tbl_name), part_vals, max_parts)

    def get_partitions_ps_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        max_parts: int,
        user_name: str,
        group_names: list[str],
    ) -> list[hms.Partition]:
        return self.get_partitions_ps(db_name, tbl_name, part_vals, max_parts)

    def get_partitions_ps_with_auth_req(
        self, req: hms.GetPartitionsPsWithAuthRequest
    ) -> hms.GetPartitionsPsWithAuthResponse:
        parts = self.catalog.partitions.list_ps(
            _db(req.dbName), _table(req.tblName), req.partVals, req.maxParts
        )
        return hms.GetPartitionsPsWithAuthResponse(partitions=parts.decode())

    def get_partition_names_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> list[str]:
        return self.catalog.partitions.list_names_ps(
            _db(db_name), _table(tbl_name), part_vals, max_parts
        )

    def get_partition_names_ps_req(
        self, req: hms.GetPartitionNamesPsRequest
    ) -> hms.GetPartitionNamesPsResponse:
        found = self.catalog.partitions.list_names_ps(
            _db(req.dbName), _table(req.tblName), req.partValues, req.maxParts
        )
        return hms.GetPartitionNamesPsResponse(names=found)

    def get_partitions_by_filter(
        self,
        db_name: str,
        tbl_name: str,
        filter: str,
        max_parts: int,  # noqa: A002
    ) -> EncodedPartitions:
        return self.catalog.partitions.by_filter(_db(db_name), _table(tbl_name), filter, max_parts)

    def get_partitions_by_filter_req(
        self, req: hms.GetPartitionsByFilterRequest
    ) -> EncodedPartitions:
        return self.catalog.partitions.by_filter(
            _db(req.dbName), _table(req.tblName), req.filter, req.maxParts
        )

    def get_num_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str) -> int:  # noqa: A002
        return self.catalog.partitions.count_by_filter(_db(db_name), _table(tbl_name), filter)

    def get_partitions_by_names(
        self, db_name: str, tbl_name: str, names: list[str]
    ) -> EncodedPartitions:
        return self.catalog.partitions.get_by_names(_db(db_name), _table(tbl_name), names)

    def get_partitions_by_names_req(
        self, req: hms.GetPartitionsByNamesRequest
    ) -> hms.GetPartitionsByNamesResult:
        parts = self.catalog.partitions.get_by_names(
            _db(req.db_name), _table(req.tbl_name), req.names
        )
        return hms.GetPartitionsByNamesResult(partitions=parts.decode())

    def get_partitions_by_expr(
        self, req: hms.PartitionsByExprRequest
    ) -> hms.PartitionsByExprResult:
        """Exact for filter text (Hive's display form, MSCK's form); for an expression only Hive
        can read (Kryo bytes), every partition with hasUnknownPartitions set, so Hive prunes."""
        parts, unknown = self.catalog.partitions.by_expr(
            _db(req.dbName), _table(req.tblName), req.expr, req.maxParts
        )
        return hms.PartitionsByExprResult(partitions=parts.decode(), hasUnknownPartitions=unknown)

    def get_partition_names_req(self, req: hms.PartitionsByExprRequest) -> list[str]:
        """Hive 4: partition names for an expression (read as get_partitions_by_expr does)."""
        if req is None:
            raise hms.MetaException(message="PartitionsByExprRequest cannot be null")
        return self.catalog.partitions.names_by_expr(
            _db(req.dbName), _table(req.tblName), req.expr, req.maxParts
        )

    # -- extensions ----------------------------------------------------------------------------

    def explain_partition_filter(self, req: hms.ExplainFilterRequest) -> hms.ExplainFilterResult:
        """Which rows a filter reads (our extension; ``metastore-server explain`` prints it)."""
        if req is None:
            raise hms.MetaException(message="ExplainFilterRequest cannot be null")
        return self.catalog.partitions.explain(
            _db(req.dbName), _table(req.tblName), req.filter, bool(req.analyze)
        )

    def get_partition_values(
        self, request: hms.PartitionValuesRequest
    ) -> hms.PartitionValuesResponse:
        if request is None:
            raise hms.MetaException(message="PartitionValuesRequest cannot be null")
        rows = partition_values(self.catalog, _db(request.dbName), _table(request.tblName), request)
        return hms.PartitionValuesResponse(
            partitionValues=[hms.PartitionValuesRow(row=row) for row in rows]
        )

    def explain_partition_values(self, req: hms.ExplainValuesRequest) -> hms.ExplainValuesResult:
        """How get_partition_values reads a request (our extension; ``metastore-server values
        --explain`` prints it)."""
        request = req.request if req is not None else None
        if request is None:
            raise hms.MetaException(message="ExplainValuesRequest needs a PartitionValuesRequest")
        return explain_values(
            self.catalog,
            _db(request.dbName),
            _table(request.tblName),
            request,
            bool(req.analyze),
        )

    def get_partition_timelines(
        self, req: hms.GetPartitionTimelinesRequest
    ) -> hms.GetPartitionTimelinesResult:
        """A table's partition timelines (our extension; ``metastore-server timeline show``)."""
        if req is None:
            raise hms.MetaException(message="GetPartitionTimelinesRequest cannot be null")
        return timeline_api.partition_timelines(
            self.catalog, _db(req.dbName), _table(req.tblName), req.updatePeriod, req.column
        )

    def cover_time_range(self, req: hms.CoverTimeRangeRequest) -> hms.CoverTimeRangeResult:
        """The partitions that best cover a time range (our extension; ``metastore-server
        timeline cover``)."""
        if req is None:
            raise hms.MetaException(message="CoverTimeRangeRequest cannot be null")
        return timeline_api.cover_time_range(
            self.catalog,
            _db(req.dbName),
            [_table(name) for name in req.tables or []],
            req.column,
            req.startTime,
            req.endTime,
            req.updatePeriods,
        )

    def rebuild_partition_timelines(
        self, req: hms.RebuildTimelinesRequest
    ) -> hms.GetPartitionTimelinesResult:
        """Rebuild a table's timelines from its partitions (our extension; ``metastore-server
        timeline rebuild``)."""
        if req is None:
            raise hms.MetaException(message="RebuildTimelinesRequest cannot be null")
        return timeline_api.rebuild_timelines(self.catalog, _db(req.dbName), _table(req.tblName))

    def resolve_dependencies(
        self, req: hms.ResolveDependenciesRequest
    ) -> hms.ResolveDependenciesResult:
        """A dependent table's partitions and the base partitions they stand for now (our
        extension; ``metastore-server dependency describe``)."""
        if req is None:
            raise hms.MetaException(message="ResolveDependenciesRequest cannot be null")
        max_parts = -1 if req.maxParts is None else req.maxParts
        return dependency_api.resolve(
            self.catalog, _db(req.dbName), _table(req.tblName), req.partName, max_parts
        )

    def get_dependents(self, req: hms.GetDependentsRequest) -> hms.GetDependentsResult:
        """The tables and partitions depending on a base table or partition (our extension;
        ``metastore-server dependency dependents``)."""
        if req is None:
            raise hms.MetaException(message="GetDependentsRequest cannot be null")
        return dependency_api.dependents(
            self.catalog, _db(req.dbName), _table(req.tblName), req.partName
        )

    def create_dependent_table(self, req: hms.CreateDependentTableRequest) -> hms.Table:
        """Declare a dependent table from its base (our extension; ``metastore-server
        dependency create``)."""
        if req is None:
            raise hms.MetaException(message="CreateDependentTableRequest cannot be null")
        return dependency_api.create_dependent_table(self.catalog, req)

    def alter_dependency(self, req: hms.AlterDependencyRequest) -> hms.ResolveDependenciesResult:
        """Re-point a dependent table or one of its partitions (our extension;
        ``metastore-server dependency repoint``)."""
        if req is None:
            raise hms.MetaException(message="AlterDependencyRequest cannot be null")
        return dependency_api.alter_dependency(self.catalog, req)

    # -- partitions: change ------------------------------------------------------------------

    def drop_partition(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,  # noqa: N803
    ) -> bool:
        return self.drop_partition_with_environment_context(
            db_name, tbl_name, part_vals, deleteData, None
        )

    def drop_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext | None,
    ) -> bool:
        self.catalog.partitions.drop(
            _db(db_name),
            _table(tbl_name),
            part_vals,
            bool(deleteData),
            purge=_purge(environment_context),
        )
        return True

    def drop_partition_by_name(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,  # noqa: N803
    ) -> bool:
        return self.drop_partition_by_name_with_environment_context(
            db_name, tbl_name, part_name, deleteData, None
        )

    def drop_partition_by_name_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext | None,
    ) -> bool:
        ref = self.catalog.tables.get(_db(db_name), _table(tbl_name))
        values = self.catalog.partitions.values_from_name(ref, part_name)
        return self.drop_partition_with_environment_context(
            db_name, tbl_name, values, deleteData, environment_context
        )

    def drop_partitions_req(self, req: hms.DropPartitionsRequest) -> hms.DropPartitionsResult:
        if req is None or req.parts is None:
            raise hms.MetaException(message="DropPartitionsRequest must name partitions")
        if req.parts.names is None:
            raise hms.MetaException(
                message="Dropping partitions by expression is not supported; send partition names"
            )
        if_exists = req.ifExists is None or req.ifExists
        dropped = self.catalog.partitions.drop_by_names(
            _db(req.dbName),
            _table(req.tblName),
            req.parts.names,
            bool(req.deleteData),
            if_exists,
            purge=_purge(req.environmentContext),
        )
        need_result = req.needResult is None or req.needResult
        return hms.DropPartitionsResult(partitions=dropped if need_result else None)

    def alter_partition(self, db_name: str, tbl_name: str, new_part: hms.Partition) -> None:
        self.catalog.partitions.alter(_db(db_name), _table(tbl_name), [new_part])

    def alter_partitions(self, db_name: str, tbl_name: str, new_parts: list[hms.Partition]) -> None:
        self.catalog.partitions.alter(_db(db_name), _table(tbl_name), new_parts)

    def alter_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        new_part: hms.Partition,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self.alter_partition(db_name, tbl_name, new_part)

    def alter_partitions_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        new_parts: list[hms.Partition],
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self.alter_partitions(db_name, tbl_name, new_parts)

    def rename_partition(
        self, db_name: str, tbl_name: str, part_vals: list[str], new_part: hms.Partition
    ) -> None:
        self.catalog.partitions.rename(_db(db_name), _table(tbl_name), part_vals, new_part)

    # -- partition names ---------------------------------------------------------------------

    def partition_name_to_vals(self, part_name: str) -> list[str]:
        return [value for _, value in _parse_name(part_name)]

    def partition_name_to_spec(self, part_name: str) -> dict[str, str]:
        return dict(_parse_name(part_name))

    # -- functions ---------------------------------------------------------------------------

    # -- column statistics --------------------------------------------------------------------

    def update_table_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        return self.catalog.statistics.update(stats_obj, table_level=True)

    def update_partition_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        return self.catalog.statistics.update(stats_obj, table_level=False)

    def set_aggr_stats_for(self, request: hms.SetPartitionsStatsRequest) -> bool:
        if request is None:
            raise hms.InvalidInputException(message="SetPartitionsStatsRequest cannot be null")
        for stats in request.colStats or []:
            table_level = bool(stats.statsDesc and stats.statsDesc.isTblLevel)
            self.catalog.statistics.update(stats, table_level=table_level,
                                           merge=bool(request.needMerge))  # fmt: skip
        return True

    def get_table_column_statistics(
        self, db_name: str, tbl_name: str, col_name: str
    ) -> hms.ColumnStatistics:
        return self.catalog.statistics.column(db_name, tbl_name, None, col_name)

    def get_partition_column_statistics(
        self, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> hms.ColumnStatistics:
        return self.catalog.statistics.column(db_name, tbl_name, part_name or "", col_name)

    def get_table_statistics_req(self, request: hms.TableStatsRequest) -> hms.TableStatsResult:
        if request is None:
            raise hms.MetaException(message="TableStatsRequest cannot be null")
        found = self.catalog.statistics.table_stats(request.dbName, request.tblName,
                                                    request.colNames)  # fmt: skip
        return hms.TableStatsResult(tableStats=found)

    def get_partitions_statistics_req(
        self, request: hms.PartitionsStatsRequest
    ) -> hms.PartitionsStatsResult:
        if request is None:
            raise hms.MetaException(message="PartitionsStatsRequest cannot be null")
        found = self.catalog.statistics.partition_stats(
            request.dbName, request.tblName, request.partNames, request.colNames
        )
        return hms.PartitionsStatsResult(partStats=found)

    def get_aggr_stats_for(self, request: hms.PartitionsStatsRequest) -> hms.AggrStats:
        if request is None:
            raise hms.MetaException(message="PartitionsStatsRequest cannot be null")
        return self.catalog.statistics.aggregate(
            request.dbName, request.tblName, request.partNames, request.colNames
        )

    def delete_table_column_statistics(self, db_name: str, tbl_name: str, col_name: str) -> bool:
        return self.catalog.statistics.delete(db_name, tbl_name, None, col_name)

    def delete_partition_column_statistics(
        self, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> bool:
        return self.catalog.statistics.delete(db_name, tbl_name, part_name or "", col_name)

    # -- locks, transactions, compaction requests --------------------------------------------

    def lock(self, rqst: hms.LockRequest) -> hms.LockResponse:
        return self.catalog.transactions.lock(rqst)

    def check_lock(self, rqst: hms.CheckLockRequest) -> hms.LockResponse:
        return self.catalog.transactions.check_lock(rqst)

    def unlock(self, rqst: hms.UnlockRequest) -> None:
        self.catalog.transactions.unlock(rqst)

    def show_locks(self, rqst: hms.ShowLocksRequest) -> hms.ShowLocksResponse:
        return self.catalog.transactions.show_locks(rqst)

    def heartbeat(self, ids: hms.HeartbeatRequest) -> None:
        self.catalog.transactions.heartbeat(ids)

    def heartbeat_txn_range(
        self, txns: hms.HeartbeatTxnRangeRequest
    ) -> hms.HeartbeatTxnRangeResponse:
        if txns is None:
            raise hms.MetaException(message="HeartbeatTxnRangeRequest cannot be null")
        return self.catalog.transactions.heartbeat_txn_range(txns)

    def open_txns(self, rqst: hms.OpenTxnRequest) -> hms.OpenTxnsResponse:
        return self.catalog.transactions.open_txns(rqst)

    def commit_txn(self, rqst: hms.CommitTxnRequest) -> None:
        self.catalog.transactions.commit_txn(rqst)

    def abort_txn(self, rqst: hms.AbortTxnRequest) -> None:
        self.catalog.transactions.abort_txns([rqst.txnid if rqst else 0], strict=True)

    def abort_txns(self, rqst: hms.AbortTxnsRequest) -> None:
        self.catalog.transactions.abort_txns(list((rqst.txn_ids if rqst else None) or []),
                                             strict=False)  # fmt: skip

    def get_open_txns(self) -> hms.GetOpenTxnsResponse:
        return self.catalog.transactions.get_open_txns()

    def get_open_txns_info(self) -> hms.GetOpenTxnsInfoResponse:
        return self.catalog.transactions.get_open_txns_info()

    def compact(self, rqst: hms.CompactionRequest) -> None:
        self.catalog.transactions.compact(rqst)

    def compact2(self, rqst: hms.CompactionRequest) -> hms.CompactionResponse:
        return self.catalog.transactions.compact(rqst)

    def show_compact(self, rqst: hms.ShowCompactRequest) -> hms.ShowCompactResponse:
        return self.catalog.transactions.show_compact()

    def create_function(self, func: hms.Function) -> None:
        if func is not None:
            func.dbName = _db(func.dbName)
        self.catalog.functions.create(func)

    def drop_function(self, dbName: str, funcName: str) -> None:  # noqa: N803
        self.catalog.functions.drop(_db(dbName), names.normalize(funcName))

    def alter_function(self, dbName: str, funcName: str, newFunc: hms.Function) -> None:  # noqa: N803
        self.catalog.functions.alter(_db(dbName), names.normalize(funcName), newFunc)

    def get_functions(self, dbName: str, pattern: str) -> list[str]:  # noqa: N803
        return self.catalog.functions.names(_db(dbName), pattern)

    def get_function(self, dbName: str, funcName: str) -> hms.Function:  # noqa: N803
        return self.catalog.functions.get(_db(dbName), names.normalize(funcName))

    def get_all_functions(self) -> hms.GetAllFunctionsResponse:
        return hms.GetAllFunctionsResponse(functions=self.catalog.functions.all())


def _purge(context: hms.EnvironmentContext | None) -> bool:
    """Whether a drop asked for its data to skip the trash (``ifPurge=TRUE``, as Hive and
    Spark send for ``PURGE``)."""
    properties = (context.properties if context is not None else None) or {}
    return properties.get("ifPurge", "").lower() == "true"


def _parse_name(part_name: str) -> list[tuple[str, str]]:
    return names.parse_partition_name(part_name)


def result_size(result: object) -> int | None:
    """Rows in a call's result, for the audit line."""
    if result is None:
        return None
    if isinstance(result, (list, tuple, dict, EncodedPartitions)):
        return len(result)
    for attr in ("partitions", "partitionValues", "names", "functions"):
        value = getattr(result, attr, None)
        if isinstance(value, list):
            return len(value)
    return 1


def split_audit_target(args: dict[str, object]) -> tuple[str | None, str | None]:
    """(db, table) named by a call's arguments, for the audit line."""
    db = table = None
    for key in ("db_name", "dbname", "dbName"):
        if isinstance(args.get(key), str):
            db = args[key]  # type: ignore[assignment]
    for key in ("tbl_name", "table_name", "tblName"):
        if isinstance(args.get(key), str):
            table = args[key]  # type: ignore[assignment]
    for value in args.values():
        if db is None and hasattr(value, "dbName") and isinstance(value.dbName, str):
            db = value.dbName
        if table is None:
            for attr in ("tblName", "tableName", "tbl_name"):
                if isinstance(getattr(value, attr, None), str):
                    table = getattr(value, attr)
                    break
        if db is None and isinstance(getattr(value, "db_name", None), str):
            db = value.db_name
    return db, table
