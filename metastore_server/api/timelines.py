"""Partition timelines over Thrift (our extensions ``get_partition_timelines``,
``cover_time_range`` and ``rebuild_partition_timelines``): requests checked, answers built from
the keeper's timelines (``catalog.timelines``) and the pure cover (``timeline.cover``).

* A missing table: NoSuchObjectException ``db.t table not found`` (HMS's wording).
* A bad update period, a bad time, a cover over a table that does not opt in (or whose time
  columns do not include the cover's column): MetaException saying what is wrong.
* A table that does not opt in has no timelines: ``get`` and ``rebuild`` answer none, with
  ``timeColumns`` empty.
* Times are UTC, written ``yyyy-MM-dd[-HH[-mm[-ss]]]``. An answer writes both ends of a range in
  one form: the shortest that is exact for both, and for a partition at least as fine as its
  period (a day [2024-01-02, 2024-01-03); an hour [2024-01-02-23, 2024-01-03-00)).
* A cover reads no partition: each storage table's timelines come from memory once the table
  row's stamp says they are current (one table-row read per table), else they are loaded first.

See ``docs/timelines.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime

from metastore_server import audit
from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, object_name, required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.catalog import Catalog, TimelineKey, time_columns
from metastore_server.thrift_api import hms
from metastore_server.timeline import (
    TIME_PARTCOLS_KEY,
    PartitionTimeline,
    StorageTimelines,
    TimePartition,
    UpdatePeriod,
    cover_range,
    lens_class_name,
    timeline_to_table_properties,
)
from metastore_server.timeline.ranges import RangesTimeline

__all__ = [
    "TimelineCalls",
    "cover_time_range",
    "format_range",
    "parse_period",
    "parse_time",
    "partition_timelines",
    "rebuild_timelines",
    "timeline_info",
    "timeline_ranges",
]

_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:-(\d{2})(?:-(\d{2})(?:-(\d{2}))?)?)?")
TIME_FORMAT = "yyyy-MM-dd[-HH[-mm[-ss]]]"


# -- arguments ------------------------------------------------------------------------------------


def parse_period(name: str | None) -> UpdatePeriod:
    """The update period named ``name`` (enum name, case-insensitive); MetaException if none."""
    period = UpdatePeriod.__members__.get((name or "").strip().upper())
    if period is None:
        known = ", ".join(p.name for p in sorted(UpdatePeriod, reverse=True))
        raise hms.MetaException(message=f"Invalid update period {name!r}: expected one of {known}")
    return period


def parse_time(text: str | None, what: str = "time") -> datetime:
    """A naive UTC datetime from ``yyyy-MM-dd[-HH[-mm[-ss]]]``; MetaException otherwise."""
    match = _TIME.fullmatch((text or "").strip())
    if match is not None:
        try:
            named = [int(g) for g in match.groups() if g is not None]
            year, month, day, hour, minute, second = (*named, 0, 0, 0)[:6]
            return datetime(year, month, day, hour, minute, second)
        except ValueError:
            pass
    raise hms.MetaException(message=f"Invalid {what} {text!r}: expected {TIME_FORMAT} (UTC)")


def _precision(dt: datetime) -> UpdatePeriod:
    """The coarsest of DAILY, HOURLY, MINUTELY, SECONDLY whose format writes ``dt`` exactly."""
    if dt.second or dt.microsecond:
        return UpdatePeriod.SECONDLY
    if dt.minute:
        return UpdatePeriod.MINUTELY
    if dt.hour:
        return UpdatePeriod.HOURLY
    return UpdatePeriod.DAILY


def format_range(
    start: datetime, end: datetime, finest: UpdatePeriod = UpdatePeriod.DAILY
) -> tuple[str, str]:
    """Both ends of [start, end) in one form of ``yyyy-MM-dd[-HH[-mm[-ss]]]``: the shortest that
    writes both exactly, and at least as fine as ``finest`` (periods coarser than a day: a day).
    """
    period = min(_precision(start), _precision(end), finest)
    return period.format(start), period.format(end)


# -- showing timelines ----------------------------------------------------------------------------


def timeline_ranges(timeline: PartitionTimeline) -> Iterator[str]:
    """The timeline's partitions as maximal ranges, in Lens's ``[begin, end)`` form."""
    if isinstance(timeline, RangesTimeline):
        yield from (str(r) for r in timeline.ranges())
        return
    begin: TimePartition | None = None
    end: TimePartition | None = None
    for partition in timeline.partitions():
        if end is not None and partition.start == end.start:
            end = partition.next()
            continue
        if begin is not None and end is not None:
            yield f"[{begin.name}, {end.name})"
        begin, end = partition, partition.next()
    if begin is not None and end is not None:
        yield f"[{begin.name}, {end.name})"


def timeline_info(timeline: PartitionTimeline) -> hms.PartitionTimelineInfo:
    """What ``get_partition_timelines`` tells about one timeline."""
    first, latest = timeline.first(), timeline.latest()
    return hms.PartitionTimelineInfo(
        storageTable=timeline.storage_table,
        updatePeriod=timeline.period.name,
        column=timeline.column,
        implementation=lens_class_name(type(timeline)),
        first=first.name if first is not None else None,
        latest=latest.name if latest is not None else None,
        count=len(timeline),
        ranges=list(timeline_ranges(timeline)),
        properties=timeline_to_table_properties(timeline),
    )


def _result(
    timelines: Mapping[TimelineKey, PartitionTimeline], columns: Sequence[str]
) -> hms.GetPartitionTimelinesResult:
    ordered = sorted(timelines.items(), key=lambda item: (item[0][1], item[0][0].weight_ms))
    audit.note(timelines=len(ordered))
    return hms.GetPartitionTimelinesResult(
        timelines=[timeline_info(timeline) for _, timeline in ordered],
        timeColumns=list(columns),
    )


def _column_names(catalog: Catalog, db: str, table: str) -> list[str]:
    return [name for _, name in time_columns(catalog.tables.get(db, table).table)]


def partition_timelines(
    catalog: Catalog,
    db: str,
    table: str,
    period: str | None = None,
    column: str | None = None,
) -> hms.GetPartitionTimelinesResult:
    """The table's timelines, only those of ``period`` and ``column`` when given, ordered by
    column then period (finest first). A column the table does not name as a time column is a
    MetaException (when the table opts in)."""
    wanted_period = parse_period(period) if period is not None else None
    timelines = catalog.timelines.timelines(db, table)
    columns = _column_names(catalog, db, table)
    wanted_column = column.strip().lower() if column is not None else None
    if wanted_column is not None and columns and wanted_column not in columns:
        raise hms.MetaException(message=_not_a_time_column(db, table, wanted_column, columns))
    chosen = {
        key: timeline
        for key, timeline in timelines.items()
        if (wanted_period is None or key[0] is wanted_period)
        and (wanted_column is None or key[1] == wanted_column)
    }
    return _result(chosen, columns)


def rebuild_timelines(catalog: Catalog, db: str, table: str) -> hms.GetPartitionTimelinesResult:
    """Rebuild the table's timelines from its partitions, store them and return them."""
    timelines = catalog.timelines.rebuild(db, table)
    return _result(timelines, _column_names(catalog, db, table))


# -- the cover ------------------------------------------------------------------------------------


def _periods(names: Iterable[str] | None) -> set[UpdatePeriod] | None:
    if names is None:
        return None
    periods = {parse_period(name) for name in names}
    if not periods:
        raise hms.MetaException(message="updatePeriods must name at least one update period")
    return periods


def _storage(
    catalog: Catalog, db: str, table: str, column: str, periods: set[UpdatePeriod] | None
) -> StorageTimelines:
    """The table's timelines of ``column`` (and ``periods``) for the cover; MetaException when
    the table does not keep timelines of that column."""
    timelines = catalog.timelines.timelines(db, table)
    if not any(key[1] == column for key in timelines):
        # No timeline of the column yet: it must still be one of the table's time columns.
        columns = _column_names(catalog, db, table)
        if not columns:
            raise hms.MetaException(
                message=f"{db}.{table} keeps no partition timelines: it does not opt in with the "
                f"table parameter {TIME_PARTCOLS_KEY}"
            )
        if column not in columns:
            raise hms.MetaException(message=_not_a_time_column(db, table, column, columns))
    return StorageTimelines(
        table,
        {
            period: timeline
            for (period, name), timeline in timelines.items()
            if name == column and (periods is None or period in periods)
        },
    )


def cover_time_range(
    catalog: Catalog,
    db: str,
    tables: Sequence[str],
    column: str | None,
    start: str | None,
    end: str | None,
    periods: Iterable[str] | None = None,
) -> hms.CoverTimeRangeResult:
    """The best cover of [start, end) by the partitions of ``tables`` (one fact's storage
    tables, in preference order; a table named twice counts once)."""
    names = list(dict.fromkeys(tables or []))
    if not names:
        raise hms.MetaException(message="cover_time_range needs at least one storage table")
    wanted = (column or "").strip().lower()
    if not wanted:
        raise hms.MetaException(message="cover_time_range needs the time partition column")
    begin, finish = parse_time(start, "start time"), parse_time(end, "end time")
    if finish < begin:
        raise hms.MetaException(
            message=f"Invalid time range: the end {end!r} is before the start {start!r}"
        )
    allowed = _periods(periods)
    audit.count(rows_scanned=0)  # stays 0 unless a table's timelines had to be loaded
    storages = [_storage(catalog, db, name, wanted, allowed) for name in names]
    cover = cover_range(storages, begin, finish)
    audit.note(
        tables=",".join(names),
        lookups=cover.lookups,
        parts=len(cover.parts),
        uncovered=len(cover.uncovered),
    )
    return hms.CoverTimeRangeResult(
        parts=[
            hms.CoveredPartition(
                storageTable=part.storage_table,
                updatePeriod=part.period.name,
                partition=part.partition.name,
                startTime=span[0],
                endTime=span[1],
            )
            for part in cover.parts
            for span in (format_range(part.start, part.end, part.period),)
        ],
        uncovered=[
            hms.UncoveredRange(startTime=a, endTime=b)
            for a, b in (format_range(*gap) for gap in cover.uncovered)
        ],
        complete=cover.complete,
        lookups=cover.lookups,
    )


def _not_a_time_column(db: str, table: str, column: str, columns: Sequence[str]) -> str:
    return (
        f"{column} is not a time partition column of {db}.{table} "
        f"({TIME_PARTCOLS_KEY} = {','.join(columns)})"
    )


# -- the calls ------------------------------------------------------------------------------------


class TimelineCalls(Area):
    """Partition timelines. Raises NoSuchObjectException (a missing table or database, another
    catalog) and MetaException (no request, a bad period or time, a table or column that keeps
    no timelines)."""

    @thrift(rule=auth.read(auth.REQ))
    def get_partition_timelines(
        self, req: hms.GetPartitionTimelinesRequest
    ) -> hms.GetPartitionTimelinesResult:
        """A table's partition timelines (``metastore-server timeline show``)."""
        req = required(req, "GetPartitionTimelinesRequest")
        db, table = self.database_in(catalog_field(req), req.dbName), object_name(req.tblName)
        return partition_timelines(self.catalog, db, table, req.updatePeriod, req.column)

    @thrift(rule=auth.read(auth.tables_of("req", "dbName", "tables")))
    def cover_time_range(self, req: hms.CoverTimeRangeRequest) -> hms.CoverTimeRangeResult:
        """The partitions that best cover a time range (``metastore-server timeline
        cover``)."""
        req = required(req, "CoverTimeRangeRequest")
        return cover_time_range(
            self.catalog,
            self.database_in(catalog_field(req), req.dbName),
            [object_name(name) for name in req.tables or []],
            req.column,
            req.startTime,
            req.endTime,
            req.updatePeriods,
        )

    @thrift(rule=auth.alter(auth.REQ))
    def rebuild_partition_timelines(
        self, req: hms.RebuildTimelinesRequest
    ) -> hms.GetPartitionTimelinesResult:
        """Rebuild a table's timelines from its partitions (``metastore-server timeline
        rebuild``)."""
        req = required(req, "RebuildTimelinesRequest")
        db, table = self.database_in(catalog_field(req), req.dbName), object_name(req.tblName)
        return rebuild_timelines(self.catalog, db, table)
