"""The partition calls that read partitions: by values, names, partial values, filter or
expression, whole or as names, counts or partition specs. Whole partitions are answered as they
are stored (``EncodedPartitions``) where the call's answer is a bare list; the request forms
decode them into their result struct. Filters: ``docs/filters.md``.
"""

from __future__ import annotations

from metastore_server.api import partition_shapes
from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, catalog_named, object_name, required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.catalog import EncodedNames, EncodedPartitions, partition_specs
from metastore_server.thrift_api import hms


class PartitionReadCalls(Area):
    """Reading partitions. Raises NoSuchObjectException (a missing table or partition, another
    catalog) and MetaException (a bad filter or expression, more partitions than the server's
    request limit allows)."""

    # -- by values or names ------------------------------------------------------------------

    @thrift(catalog_named=True, kept="wire", rule=auth.read(auth.PARTS))
    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        """The partition of these values."""
        part = self.catalog.partition_reads.get(
            self.database_in(None, db_name), object_name(tbl_name), part_vals
        )
        part.catName = catalog_named(None, db_name)
        return part

    @thrift(catalog_named=True, rule=auth.read(auth.PARTS))
    def get_partition_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        user_name: str,
        group_names: list[str],
    ) -> hms.Partition:
        """``get_partition`` (privileges are the client's to enforce)."""
        return self.get_partition(db_name, tbl_name, part_vals)

    @thrift(catalog_named=True, kept="wire", rule=auth.read(auth.PARTS))
    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> hms.Partition:
        """The partition of a name ``k1=v1/k2=v2``."""
        part = self.catalog.partition_reads.get_by_name(
            self.database_in(None, db_name), object_name(tbl_name), part_name
        )
        part.catName = catalog_named(None, db_name)
        return part

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions_by_names(
        self, db_name: str, tbl_name: str, names: list[str]
    ) -> EncodedPartitions:
        """The partitions of these names that exist."""
        return self.catalog.partition_reads.get_by_names(
            self.database_in(None, db_name), object_name(tbl_name), names
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partitions_by_names_req(
        self, req: hms.GetPartitionsByNamesRequest
    ) -> hms.GetPartitionsByNamesResult:
        """The request form of ``get_partitions_by_names``; with ``get_col_stats``, each
        partition's column statistics of the request's engine attached (``colStats``)."""
        db = self.database_in(catalog_field(req), req.db_name)
        table = object_name(req.tbl_name)
        found = self.catalog.partition_reads.get_by_names(db, table, req.names)
        parts = partition_shapes.trimmed(found.decode(), req)
        if req.get_col_stats and parts:
            sd = self.catalog.tables.get(db, table).table.sd
            columns = [c.name for c in (sd.cols if sd else None) or []]  # the table's columns
            for part in parts:
                part.colStats = self.catalog.statistics.attached(
                    db, table, part.values or [], columns, req.engine
                )
        return hms.GetPartitionsByNamesResult(partitions=parts)

    # -- whole table -------------------------------------------------------------------------

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> EncodedPartitions:
        """Every partition of a table in key order, at most ``max_parts`` (when positive)."""
        return self.catalog.partition_reads.list_all(
            self.database_in(None, db_name), object_name(tbl_name), max_parts
        )

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions_with_auth(
        self, db_name: str, tbl_name: str, max_parts: int, user_name: str, group_names: list[str]
    ) -> EncodedPartitions:
        """``get_partitions`` (privileges are the client's to enforce)."""
        return self.get_partitions(db_name, tbl_name, max_parts)

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partitions_req(self, req: hms.PartitionsRequest) -> hms.PartitionsResponse:
        """The request form of ``get_partitions`` (trimmed as the request asks)."""
        parts = self.catalog.partition_reads.list_all(
            self.database_in(catalog_field(req), req.dbName), object_name(req.tblName), req.maxParts
        )
        return hms.PartitionsResponse(partitions=partition_shapes.trimmed(parts.decode(), req))

    @thrift(kept="listing", rule=auth.read(auth.PARTS))
    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> EncodedNames:
        """Names of a table's partitions, sorted."""
        return self.catalog.partition_reads.list_names(
            self.database_in(None, db_name), object_name(tbl_name), max_parts
        )

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions_pspec(
        self, db_name: str, tbl_name: str, max_parts: int
    ) -> list[hms.PartitionSpec]:
        """The table's partitions as specs (grouped when the table asks for it)."""
        db, table = self.database_in(None, db_name), (tbl_name or "").lower()
        ref = self.catalog.tables.get(db, object_name(tbl_name))
        limit = partition_specs.java_short(max_parts)
        parts = self.get_partitions(db_name, tbl_name, limit).decode()
        return partition_specs.specs_of(ref.table, parts, db, table)

    # -- by partial values -------------------------------------------------------------------

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> EncodedPartitions:
        """The partitions matching leading values (an empty value matches any)."""
        return self.catalog.partition_reads.list_ps(
            self.database_in(None, db_name), object_name(tbl_name), part_vals, max_parts
        )

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions_ps_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        max_parts: int,
        user_name: str,
        group_names: list[str],
    ) -> EncodedPartitions:
        """``get_partitions_ps`` (privileges are the client's to enforce)."""
        return self.get_partitions_ps(db_name, tbl_name, part_vals, max_parts)

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partitions_ps_with_auth_req(
        self, req: hms.GetPartitionsPsWithAuthRequest
    ) -> hms.GetPartitionsPsWithAuthResponse:
        """The request form of ``get_partitions_ps_with_auth``, as HMS 4 answers it: unset
        ``partVals`` is every partition (Hive 4's ``listPartitionsWithAuthInfo``), an empty
        list an error; the column lists are left out with ``skipColumnSchemaForPartition``
        and parameter keys chosen by the include/exclude patterns (SQL ``LIKE``; empty: all).
        ``validWriteIdList`` and ``id`` are ignored, as HMS ignores them."""
        req = required(req, "GetPartitionsPsWithAuthRequest")
        db, table = self.database_in(catalog_field(req), req.dbName), object_name(req.tblName)
        reads = self.catalog.partition_reads
        if req.partVals is None:
            found = reads.list_all(db, table, req.maxParts)
        else:
            found = reads.list_ps(db, table, req.partVals, req.maxParts)
        parts = partition_shapes.trimmed(found.decode(), req)
        return hms.GetPartitionsPsWithAuthResponse(partitions=parts)

    @thrift(kept="wire", rule=auth.read(auth.PARTS))
    def get_partition_names_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> EncodedNames:
        """Names of the partitions matching leading values."""
        return self.catalog.partition_reads.list_names_ps(
            self.database_in(None, db_name), object_name(tbl_name), part_vals, max_parts
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partition_names_ps_req(
        self, req: hms.GetPartitionNamesPsRequest
    ) -> hms.GetPartitionNamesPsResponse:
        """The request form of ``get_partition_names_ps``."""
        found = self.catalog.partition_reads.list_names_ps(
            self.database_in(catalog_field(req), req.dbName),
            object_name(req.tblName),
            req.partValues,
            req.maxParts,
        )
        return hms.GetPartitionNamesPsResponse(names=found.decode())

    # -- by filter or expression -------------------------------------------------------------

    @thrift(rule=auth.read(auth.PARTS))
    def get_partitions_by_filter(
        self,
        db_name: str,
        tbl_name: str,
        filter: str,  # noqa: A002 (IDL name)
        max_parts: int,
    ) -> EncodedPartitions:
        """The partitions matching a filter (``docs/filters.md``)."""
        return self.catalog.partition_reads.by_filter(
            self.database_in(None, db_name), object_name(tbl_name), filter, max_parts
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partitions_by_filter_req(
        self, req: hms.GetPartitionsByFilterRequest
    ) -> EncodedPartitions | list[hms.Partition]:
        """The request form of ``get_partitions_by_filter`` (trimmed as the request asks)."""
        found = self.catalog.partition_reads.by_filter(
            self.database_in(catalog_field(req), req.dbName),
            object_name(req.tblName),
            req.filter,
            req.maxParts,
        )
        if not partition_shapes.trims(req):
            return found  # answered as stored
        return partition_shapes.trimmed(found.decode(), req)

    @thrift(rule=auth.read(auth.PARTS))
    def get_num_partitions_by_filter(
        self,
        db_name: str,
        tbl_name: str,
        filter: str,  # noqa: A002 (IDL name)
    ) -> int:
        """How many partitions match a filter."""
        return self.catalog.partition_reads.count_by_filter(
            self.database_in(None, db_name), object_name(tbl_name), filter
        )

    @thrift(rule=auth.read(auth.PARTS))
    def get_part_specs_by_filter(
        self,
        db_name: str,
        tbl_name: str,
        filter: str,  # noqa: A002 (IDL name)
        max_parts: int,
    ) -> list[hms.PartitionSpec]:
        """The partitions matching a filter as specs (the list spec names the table as sent)."""
        ref = self.catalog.tables.find(self.database_in(None, db_name), object_name(tbl_name))
        if ref is None:  # named as sent (get_partitions_pspec lower-cases them first)
            raise hms.NoSuchObjectException(message=f"{db_name}.{tbl_name} table not found")
        limit = partition_specs.java_short(max_parts)
        found = self.get_partitions_by_filter(db_name, tbl_name, filter, limit)
        return partition_specs.specs_of(ref.table, found.decode(), db_name, tbl_name)

    @thrift(rule=auth.read(auth.REQ))
    def get_partitions_by_expr(
        self, req: hms.PartitionsByExprRequest
    ) -> hms.PartitionsByExprResult:
        """Exact for filter text (Hive's display form, MSCK's form); for an expression only Hive
        can read (Kryo bytes), every partition with hasUnknownPartitions set, so Hive prunes."""
        parts, unknown = self.catalog.partition_reads.by_expr(
            self.database_in(catalog_field(req), req.dbName),
            object_name(req.tblName),
            req.expr,
            req.maxParts,
        )
        return hms.PartitionsByExprResult(
            partitions=partition_shapes.trimmed(parts.decode(), req), hasUnknownPartitions=unknown
        )

    @thrift(since="3", rule=auth.read(auth.REQ))
    def get_partition_names_req(self, req: hms.PartitionsByExprRequest) -> list[str]:
        """Hive 4: partition names for an expression (read as get_partitions_by_expr does)."""
        req = required(req, "PartitionsByExprRequest")
        return self.catalog.partition_reads.names_by_expr(
            self.database_in(catalog_field(req), req.dbName),
            object_name(req.tblName),
            req.expr,
            req.maxParts,
        )
