"""HMS 4's request forms of the partition calls (``append_partition_req``,
``drop_partition_req``, ``get_partition_req``...): each checks its request, translates its
fields and passes the call to the partition call it stands for, so the semantics, checks,
events and data operations are that call's. See ``docs/hms-api.md``.
"""

from __future__ import annotations

from metastore_server.api.area import Area, ServerSettings
from metastore_server.api.arguments import (
    catalog_field,
    object_name,
    required,
    with_catalog,
)
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.api.partition_reads import PartitionReadCalls
from metastore_server.api.partition_shapes import filter_parameter_keys
from metastore_server.api.partition_writes import PartitionWriteCalls
from metastore_server.catalog import Catalog, EncodedNames, partition_specs
from metastore_server.thrift_api import hms

#: ``PartitionFilterMode`` (HMS's).
BY_NAMES, BY_VALUES, BY_EXPR = 0, 1, 2


def project_parameters(
    parts: list[hms.Partition], projection: hms.GetProjectionsSpec | None
) -> list[hms.Partition]:
    """Apply a projection's parameter-key patterns (include, then exclude) to ``parts``; the
    projection's field list is not applied (every field is answered)."""
    if projection is None:
        return parts
    return filter_parameter_keys(
        parts, projection.includeParamKeyPattern, projection.excludeParamKeyPattern
    )


class PartitionRequestCalls(Area):
    """The request forms of the partition calls. Raises what the calls they stand for raise
    (NoSuchObjectException, InvalidObjectException, AlreadyExistsException,
    InvalidOperationException) and MetaException (also for a missing request)."""

    def __init__(self, catalog: Catalog, settings: ServerSettings) -> None:
        super().__init__(catalog, settings)
        self._writes = PartitionWriteCalls(catalog, settings)
        self._reads = PartitionReadCalls(catalog, settings)

    @thrift(
        since="3",
        rule=auth.add_parts(auth.field("appendPartitionsReq")),
        storage=st.APPEND_PARTITION_REQ,
        locations=loc.SERVER_PLACES,
    )
    def append_partition_req(
        self,
        appendPartitionsReq: hms.AppendPartitionsRequest,  # noqa: N803 (IDL name)
    ) -> hms.Partition:
        """``append_partition_by_name`` when the request names the partition, else
        ``append_partition`` of its values."""
        req = required(appendPartitionsReq, "AppendPartitionsRequest")
        if req.name:
            return self._writes.append_partition_by_name(
                with_catalog(req.catalogName, req.dbName), req.tableName, req.name
            )
        if req.partVals is None:
            raise hms.MetaException(message="The partition values must not be null.")
        return self._writes.append_partition(
            with_catalog(req.catalogName, req.dbName), req.tableName, req.partVals
        )

    @thrift(
        since="3",
        rule=auth.drop_parts(auth.field("dropPartitionReq")),
        storage=st.DROP_PARTITION_REQ,
        locations=loc.NO_LOCATION,
    )
    def drop_partition_req(
        self,
        dropPartitionReq: hms.DropPartitionRequest,  # noqa: N803 (IDL name)
    ) -> bool:
        """``drop_partition_by_name_with_environment_context`` when the request names the
        partition, else ``drop_partition_with_environment_context`` of its values
        (``deleteData`` unset: the data stays, as an unset flag reads in HMS)."""
        req = required(dropPartitionReq, "DropPartitionRequest")
        delete = bool(req.deleteData)
        if req.partName:
            return self._writes.drop_partition_by_name_with_environment_context(
                with_catalog(req.catName, req.dbName),
                req.tblName,
                req.partName,
                delete,
                req.environmentContext,
            )
        return self._writes.drop_partition_with_environment_context(
            with_catalog(req.catName, req.dbName),
            req.tblName,
            req.partVals,
            delete,
            req.environmentContext,
        )

    @thrift(
        since="3",
        rule=auth.on_tables("ALTERTABLE_RENAMEPART", auth.OWN, auth.REQ),
        storage=st.RENAME_PARTITION_REQ,
        locations=loc.RENAME_PARTITION_REQ,
    )
    def rename_partition_req(self, req: hms.RenamePartitionRequest) -> hms.RenamePartitionResponse:
        """``rename_partition``."""
        req = required(req, "RenamePartitionRequest")
        self._writes.rename_partition(
            with_catalog(req.catName, req.dbName), req.tableName, req.partVals, req.newPart
        )
        return hms.RenamePartitionResponse()

    @thrift(
        since="3",
        rule=auth.alter_parts(auth.REQ),
        storage=st.ALTER_PARTITIONS_REQ,
        locations=loc.ALTER_PARTITIONS_REQ,
    )
    def alter_partitions_req(self, req: hms.AlterPartitionsRequest) -> hms.AlterPartitionsResponse:
        """``alter_partitions_with_environment_context``."""
        req = required(req, "AlterPartitionsRequest")
        self._writes.alter_partitions_with_environment_context(
            with_catalog(req.catName, req.dbName),
            req.tableName,
            req.partitions,
            req.environmentContext,
        )
        return hms.AlterPartitionsResponse()

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partition_req(self, req: hms.GetPartitionRequest) -> hms.GetPartitionResponse:
        """``get_partition``."""
        req = required(req, "GetPartitionRequest")
        part = self._reads.get_partition(
            with_catalog(req.catName, req.dbName), req.tblName, req.partVals
        )
        return hms.GetPartitionResponse(partition=part)

    @thrift(since="3", rule=auth.read(auth.field("partitionReq")))
    def fetch_partition_names_req(
        self,
        partitionReq: hms.PartitionsRequest,  # noqa: N803 (IDL name)
    ) -> EncodedNames:
        """``get_partition_names`` (up to ``maxParts``; unset or -1: all)."""
        req = required(partitionReq, "PartitionsRequest")
        limit = -1 if req.maxParts is None else req.maxParts
        return self._reads.get_partition_names(
            with_catalog(req.catName, req.dbName), req.tblName, limit
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partitions_spec_by_expr(
        self, req: hms.PartitionsByExprRequest
    ) -> hms.PartitionsSpecByExprResult:
        """``get_partitions_by_expr``, its partitions as partition specs (grouped as
        ``get_partitions_pspec`` groups them)."""
        req = required(req, "PartitionsByExprRequest")
        found = self._reads.get_partitions_by_expr(req)
        db, table = self.database_in(catalog_field(req), req.dbName), object_name(req.tblName)
        ref = self.catalog.tables.get(db, table)
        specs = partition_specs.specs_of(ref.table, found.partitions or [], db, table)
        return hms.PartitionsSpecByExprResult(
            partitionsSpec=specs, hasUnknownPartitions=bool(found.hasUnknownPartitions)
        )

    @thrift(since="3", rule=auth.read(auth.REQUEST))
    def get_partitions_with_specs(
        self, request: hms.GetPartitionsRequest
    ) -> hms.GetPartitionsResponse:
        """A table's partitions as partition specs (grouped as ``get_partitions_pspec``
        groups them), chosen by the filter spec: by names (``get_partitions_by_names``), by
        partial values (``get_partitions_ps``), by filter strings (all must hold:
        ``get_partitions_by_filter``), or all of them without one."""
        req = required(request, "GetPartitionsRequest")
        db, table = self.database_in(req.catName, req.dbName), object_name(req.tblName)
        ref = self.catalog.tables.get(db, table)
        reads = self.catalog.partition_reads
        spec = req.filterSpec
        filters = list(spec.filters or []) if spec is not None else []
        mode = spec.filterMode if spec is not None else None
        if mode is None or (not filters and mode != BY_NAMES):
            found = reads.list_all(db, table)
        elif mode == BY_NAMES:
            found = reads.get_by_names(db, table, filters)
        elif mode == BY_VALUES:
            found = reads.list_ps(db, table, filters)
        elif mode == BY_EXPR:
            found = reads.by_filter(db, table, " AND ".join(f"({f})" for f in filters))
        else:
            raise hms.MetaException(message=f"Unknown partition filter mode {mode}")
        parts = project_parameters(found.decode(), req.projectionSpec)
        specs = partition_specs.specs_of(ref.table, parts, db, table)
        return hms.GetPartitionsResponse(partitionSpec=specs)
