"""The column statistics calls: stored per table or partition column and engine (HMS 4's
``engine``; none means "hive"), read back one by one, per table or partition, or merged over
partitions, and deleted. See
``docs/hms-api.md#column-statistics``."""

from __future__ import annotations

from typing import overload

from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, object_name, required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class StatisticsCalls(Area):
    """Column statistics. Raises NoSuchObjectException (a missing table, partition, column or
    statistics), InvalidInputException (statistics HMS would not store), InvalidObjectException
    and MetaException."""

    @overload
    def _db(self, catalog: str | None, name: str) -> str: ...
    @overload
    def _db(self, catalog: str | None, name: str | None) -> str | None: ...
    def _db(self, catalog: str | None, name: str | None) -> str | None:
        """The database a call names, checked against its catalog (None stays None: the
        statistics have their own answer for no name)."""
        return None if name is None else self.database_in(catalog, name)

    @overload
    def _resolved(self, stats: hms.ColumnStatistics) -> hms.ColumnStatistics: ...
    @overload
    def _resolved(self, stats: hms.ColumnStatistics | None) -> hms.ColumnStatistics | None: ...
    def _resolved(self, stats: hms.ColumnStatistics | None) -> hms.ColumnStatistics | None:
        """Statistics to store, their database checked against their catalog (kept
        without one: the catalog is the database's)."""
        desc = stats.statsDesc if stats is not None else None
        if desc is not None and desc.dbName is not None:
            desc.dbName = self.database_in(desc.catName, desc.dbName)
            desc.catName = None
        return stats

    @thrift(rule=auth.stats(auth.statistics("stats_obj")))
    def update_table_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        """Store a table's column statistics."""
        return self.catalog.statistics.update(self._resolved(stats_obj), table_level=True)

    @thrift(rule=auth.stats(auth.statistics("stats_obj")))
    def update_partition_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        """Store a partition's column statistics."""
        return self.catalog.statistics.update(self._resolved(stats_obj), table_level=False)

    @thrift(rule=auth.read(auth.PARTS))
    def get_table_column_statistics(
        self, db_name: str, tbl_name: str, col_name: str
    ) -> hms.ColumnStatistics:
        """One table column's statistics; NoSuchObjectException when there are none."""
        return self.catalog.statistics.column(self._db(None, db_name), tbl_name, None, col_name)

    @thrift(rule=auth.read(auth.PARTS))
    def get_partition_column_statistics(
        self, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> hms.ColumnStatistics:
        """One partition column's statistics; NoSuchObjectException when there are none."""
        return self.catalog.statistics.column(
            self._db(None, db_name), tbl_name, part_name or "", col_name
        )

    @thrift(rule=auth.read(auth.REQUEST))
    def get_table_statistics_req(self, request: hms.TableStatsRequest) -> hms.TableStatsResult:
        """The table-level statistics of the named columns that have some."""
        request = required(request, "TableStatsRequest")
        found = self.catalog.statistics.table_stats(
            self._db(request.catName, request.dbName),
            request.tblName,
            request.colNames,
            request.engine,
        )
        return hms.TableStatsResult(tableStats=found)

    @thrift(rule=auth.read(auth.REQUEST))
    def get_partitions_statistics_req(
        self, request: hms.PartitionsStatsRequest
    ) -> hms.PartitionsStatsResult:
        """Per partition name, the statistics of the named columns that have some."""
        request = required(request, "PartitionsStatsRequest")
        found = self.catalog.statistics.partition_stats(
            self._db(request.catName, request.dbName),
            request.tblName,
            request.partNames,
            request.colNames,
            request.engine,
        )
        return hms.PartitionsStatsResult(partStats=found)

    @thrift(rule=auth.stats(auth.PARTS))
    def delete_partition_column_statistics(
        self, db_name: str, tbl_name: str, part_name: str, col_name: str, engine: str | None = None
    ) -> bool:
        """Remove a partition column's statistics of ``engine`` (hive's when none; every
        column's when none is named)."""
        return self.catalog.statistics.delete(
            self._db(None, db_name), tbl_name, part_name or "", col_name, engine
        )

    @thrift(rule=auth.stats(auth.PARTS))
    def delete_table_column_statistics(
        self, db_name: str, tbl_name: str, col_name: str, engine: str | None = None
    ) -> bool:
        """Remove a table column's statistics of ``engine`` (hive's when none; every column's
        when none is named)."""
        return self.catalog.statistics.delete(
            self._db(None, db_name), tbl_name, None, col_name, engine
        )

    @thrift(rule=auth.read(auth.REQUEST))
    def get_aggr_stats_for(self, request: hms.PartitionsStatsRequest) -> hms.AggrStats:
        """The named columns' statistics merged over the named partitions."""
        request = required(request, "PartitionsStatsRequest")
        return self.catalog.statistics.aggregate(
            self._db(request.catName, request.dbName),
            request.tblName,
            request.partNames,
            request.colNames,
            request.engine,
        )

    @thrift(rule=auth.stats(auth.statistics("request", listed=True)))
    def set_aggr_stats_for(self, request: hms.SetPartitionsStatsRequest) -> bool:
        """Store several statistics objects (merged into what is stored with ``needMerge``);
        InvalidInputException without a request."""
        if request is None:
            raise hms.InvalidInputException(message="SetPartitionsStatsRequest cannot be null")
        for stats in request.colStats or []:
            table_level = bool(stats.statsDesc and stats.statsDesc.isTblLevel)
            self.catalog.statistics.update(
                self._resolved(stats),
                table_level=table_level,
                merge=bool(request.needMerge),
                engine=request.engine,
                write_id=_write_id(request),
            )
        return True

    @thrift(since="3", rule=auth.stats(auth.statistics("req", listed=True)))
    def update_table_column_statistics_req(
        self, req: hms.SetPartitionsStatsRequest
    ) -> hms.SetPartitionsStatsResponse:
        """``update_table_column_statistics`` of each statistics object of the request."""
        return self._update_req(req, table_level=True)

    @thrift(since="3", rule=auth.stats(auth.statistics("req", listed=True)))
    def update_partition_column_statistics_req(
        self, req: hms.SetPartitionsStatsRequest
    ) -> hms.SetPartitionsStatsResponse:
        """``update_partition_column_statistics`` of each statistics object of the request."""
        return self._update_req(req, table_level=False)

    def _update_req(
        self, req: hms.SetPartitionsStatsRequest | None, *, table_level: bool
    ) -> hms.SetPartitionsStatsResponse:
        """The request forms of the update calls: no merge (MetaException when asked, as HMS
        refuses merging statistics that are not aggregated)."""
        req = required(req, "SetPartitionsStatsRequest")
        if req.needMerge:
            raise hms.MetaException(message="Merge is not supported for non-aggregate stats")
        for stats in req.colStats or []:
            self.catalog.statistics.update(
                self._resolved(stats), table_level=table_level, engine=req.engine,
                write_id=_write_id(req),
            )  # fmt: skip
        return hms.SetPartitionsStatsResponse(result=True)

    @thrift(since="3", rule=auth.admin_operation("COMPACTION"))
    def find_columns_with_stats(self, cr: hms.CompactionInfoStruct) -> list[str]:
        """The columns of a table (or of the partition the struct names) that have column
        statistics; none for a missing table."""
        cr = required(cr, "CompactionInfoStruct")
        db, name = self.database_in(catalog_field(cr), cr.dbname), object_name(cr.tablename)
        ref = self.catalog.tables.find(db, name)
        if ref is None:
            return []
        columns = [c.name for c in (ref.table.sd.cols if ref.table.sd else None) or []]
        stats = self.catalog.statistics
        if cr.partitionname:
            found = stats.partition_stats(db, name, [cr.partitionname], columns)
            return [o.colName for o in found.get(cr.partitionname, [])]
        return [o.colName for o in stats.table_stats(db, name, columns)]


def _write_id(request: hms.SetPartitionsStatsRequest) -> int:
    """The writer's write id a statistics request names (-1: none, as HMS)."""
    return request.writeId if request.writeId is not None else -1
