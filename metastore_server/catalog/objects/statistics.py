"""Column statistics of tables and partitions: update, get, delete, aggregate, as HMS stores them.

Statistics live in ``meta`` rows keyed by the table's stable id and the partition's name
(``layout.stats_key``), one column per table column and engine holding its
``ColumnStatisticsObj`` (Thrift binary), so a table rename carries them and a table drop removes
them by key range. The partition code removes (or moves) a partition's row, every engine's
statistics in it, when the partition is dropped (or renamed).

Engines (HMS 4): each engine's statistics of a column are kept beside the others'; a call with
no engine (every 2.3 client, and 4.x calls that leave it out) means "hive", whose statistics keep
the columns used before engines were told apart (``layout.stats_column``).

Each update and delete is recorded in the notification log with its change, as HMS 3+ records
them (``events.table_messages``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Sequence

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import DROP, RENAME, TABLE, Change, PartitionChange
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.events import table_messages
from metastore_server.catalog.events.messages import Event
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.storage import layout
from metastore_server.storage.port import Delete, Put, StoragePort
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes

#: ColumnStatisticsData member of each statistics kind.
_KINDS = ("booleanStats", "longStats", "doubleStats", "stringStats", "binaryStats",
          "decimalStats", "dateStats")  # fmt: skip


def forget(store: StoragePort, table_id: int, part_names: Iterable[str]) -> None:
    """Remove the statistics of dropped partitions: those that have any (one read of them
    all; on HBase a delete of a missing row still writes a tombstone, and the change's intent
    would carry each one's image)."""
    keys = [layout.stats_key(table_id, name) for name in part_names]
    found = [key for key, _row in store.get_many(layout.META, keys)] if keys else []
    if found:
        store.mutate([Delete(layout.META, key) for key in found])


def forget_table(store: StoragePort, table_id: int) -> None:
    """Remove every statistic of a dropped table (its partitions' too, every engine's)."""
    start, stop = layout.stats_range(table_id)
    rows = store.scan(layout.META, start, stop)
    keys = [key for key, _row in rows]
    if keys:
        store.mutate([Delete(layout.META, key) for key in keys])


def move(store: StoragePort, table_id: int, old_name: str, new_name: str) -> None:
    """Carry a renamed partition's statistics to its new name."""
    row = store.get(layout.META, layout.stats_key(table_id, old_name))
    if row:
        store.mutate([Put(layout.META, layout.stats_key(table_id, new_name), row),
                      Delete(layout.META, layout.stats_key(table_id, old_name))])  # fmt: skip


class Statistics:
    """HMS's column statistics calls."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables

    # -- writing ---------------------------------------------------------------------------

    def update(
        self,
        stats: hms.ColumnStatistics,
        *,
        table_level: bool,
        merge: bool = False,
        engine: str | None = None,
        write_id: int = -1,
    ) -> bool:
        """Store the statistics of a table's (or one partition's) columns, for ``engine`` (the
        request's), else the statistics' own, else hive (``write_id``: the writer's, for the
        event)."""
        if stats is None or stats.statsDesc is None:
            raise hms.InvalidInputException(message="Column statistics need a statsDesc")
        engine = engine_of(engine or stats.engine)
        desc = stats.statsDesc
        ref = self._table(desc.dbName, desc.tableName, _no_such_table if table_level else
                          _table_not_found)  # fmt: skip
        part_name = ""
        if not table_level:
            if not desc.partName:
                raise hms.InvalidInputException(message="Partition statistics need a partName")
            part_name = self._existing_partition_name(ref, desc.partName) or ""
            if not part_name:
                raise hms.NoSuchObjectException(
                    message="Partition for which stats is gathered doesn't exist."
                )
        with self._ctx.write_lock:  # its event in the same change
            objects = self._write(ref, part_name, stats, merge, engine)
            if objects:
                analyzed = desc.lastAnalyzed or self._ctx.now()
                stored = hms.ColumnStatistics(
                    statsDesc=self._desc(ref, part_name, {}, engine), statsObj=objects,
                    engine=engine)  # fmt: skip
                stored.statsDesc.lastAnalyzed = int(analyzed)
                stored.statsDesc.catName = ref.table.catName or names.DEFAULT_CATALOG
                self._ctx.events.record(self._updated(ref, part_name, stored, write_id))
        return True

    def _write(
        self,
        ref: TableRef,
        part_name: str,
        stats: hms.ColumnStatistics,
        merge: bool,
        engine: str,
    ) -> list[hms.ColumnStatisticsObj]:
        """Store the statistics objects of ``stats`` (merged into the stored ones when
        ``merge``); the objects as stored."""
        columns = self._column_types(ref)
        puts: dict[bytes, bytes] = {}
        written: list[hms.ColumnStatisticsObj] = []
        key = layout.stats_key(ref.table_id, part_name)
        existing = self._ctx.store.get(layout.META, key) or {}
        for obj in stats.statsObj or []:
            name = (obj.colName or "").lower()
            if name not in columns:
                raise hms.MetaException(
                    message=f"Column {obj.colName} doesn't exist in table {ref.name} in "
                    f"database {ref.db}"
                )
            _kind_of(obj)
            stored = copy.deepcopy(obj)
            stored.colName = name
            previous = existing.get(layout.stats_column(name, engine))
            if merge and previous is not None:
                stored = merge_objects([from_bytes(hms.ColumnStatisticsObj, previous), stored])
            puts[layout.stats_column(name, engine)] = to_bytes(stored)
            written.append(stored)
        if not puts:
            return written
        analyzed = stats.statsDesc.lastAnalyzed or self._ctx.now()
        puts[layout.last_analyzed(engine)] = int(analyzed).to_bytes(8, "big", signed=True)
        self._ctx.store.mutate([Put(layout.META, key, puts)])
        return written

    def _updated(
        self, ref: TableRef, part_name: str, stats: hms.ColumnStatistics, write_id: int
    ) -> Iterator[Event]:
        """The UPDATE_*_COL_STAT_EVENT of statistics stored (built only when the log records)."""
        now = self._ctx.now()
        if not part_name:
            yield table_messages.update_table_stats(stats, ref.table, write_id, now)
            return
        values = [v for _k, v in names.parse_partition_name(part_name)]
        row = self._ctx.store.get(
            layout.PARTITIONS, layout.partition_key(ref.table_id, ref.kinds, values)
        )
        parameters = from_bytes(hms.Partition, row[layout.OBJECT]).parameters if row else None
        yield table_messages.update_partition_stats(stats, ref.table, values, parameters,
                                                    write_id, now)  # fmt: skip

    def _deleted(self, ref: TableRef, part_name: str, column: str | None) -> Iterator[Event]:
        """The DELETE_*_COL_STAT_EVENT of statistics deleted (built only when recorded)."""
        now = self._ctx.now()
        if not part_name:
            yield table_messages.delete_table_stats(ref.table, column, now)
            return
        values = [v for _k, v in names.parse_partition_name(part_name)]
        yield table_messages.delete_partition_stats(ref.table, part_name, values, column, now)

    def delete(
        self,
        db: str,
        table: str,
        part_name: str | None,
        column: str | None,
        engine: str | None = None,
    ) -> bool:
        """Remove one column's statistics of ``engine`` (hive's when None; all columns' when
        ``column`` is None); other engines' stay."""
        engine = engine_of(engine)
        ref = self._table(db, table, _table_not_found if part_name is not None else
                          _no_table_to_delete_from)  # fmt: skip
        name = ""
        if part_name is not None:
            name = self._existing_partition_name(ref, part_name) or ""
            if not name:
                raise hms.NoSuchObjectException(
                    message=f"Partition {part_name} for which stats deletion is requested "
                    "doesn't exist"
                )
        key = layout.stats_key(ref.table_id, name)
        row = self._ctx.store.get(layout.META, key) or {}
        prefix = layout.stats_prefix(engine)
        wanted = [layout.stats_column(column.lower(), engine)] if column else [
            c for c in row if c.startswith(prefix)]  # fmt: skip
        present = [c for c in wanted if c in row]
        if not present:
            where = f"db={ref.db} table={ref.name}" + (f" partition={name}" if name else "")
            raise hms.NoSuchObjectException(
                message=f"Column stats doesn't exist for {where} col={column}"
            )
        left = [c for c in row if layout.is_stats_column(c) and c not in present]
        if not any(c.startswith(prefix) for c in left) and layout.last_analyzed(engine) in row:
            present.append(layout.last_analyzed(engine))
        with self._ctx.write_lock:  # its event in the same change
            self._ctx.store.mutate(
                [Delete(layout.META, key, None if not left else present)]
            )
            self._ctx.events.record(self._deleted(ref, name, column.lower() if column else None))
        return True

    # -- reading ---------------------------------------------------------------------------

    def table_stats(
        self, db: str, table: str, columns: Sequence[str] | None, engine: str | None = None
    ) -> list[hms.ColumnStatisticsObj]:
        """The table-level statistics (of ``engine``, hive's when None) of the named columns
        that have some."""
        ref = self._table(db, table)
        return self._objects(ref, "", columns, engine_of(engine))

    def column(
        self, db: str, table: str, part_name: str | None, column: str, engine: str | None = None
    ) -> hms.ColumnStatistics:
        """One column's statistics (of ``engine``, hive's when None), as a ColumnStatistics;
        NoSuchObjectException when none."""
        engine = engine_of(engine)
        ref = self._table(db, table)
        name = self._partition_name(ref, part_name) if part_name is not None else ""
        found = self._statistics(ref, name, [column], engine)
        if found is None:
            where = f"{ref.db}.{ref.name}" + (f" partition {name}" if name else "")
            raise hms.NoSuchObjectException(
                message=f"Column stats doesn't exist for {where} column {column}"
            )
        return found

    def attached(
        self,
        db: str,
        table: str,
        part_values: Sequence[str] | None,
        columns: Sequence[str],
        engine: str | None,
    ) -> hms.ColumnStatistics | None:
        """The statistics (of ``engine``, hive's when None) of ``columns`` of a table
        (``part_values`` None) or of its partition of those values, as HMS 4 attaches them to
        a table or partition it answers (``colStats``); None when there are none."""
        engine = engine_of(engine)
        ref = self._table(db, table)
        part_name = "" if part_values is None else names.make_partition_name(
            ref.key_names, list(part_values))  # fmt: skip
        return self._statistics(ref, part_name, columns, engine)

    def _statistics(
        self, ref: TableRef, part_name: str, columns: Sequence[str], engine: str
    ) -> hms.ColumnStatistics | None:
        """The statistics of ``columns`` of a table or partition as a ColumnStatistics, or
        None when there are none."""
        found = self._objects(ref, part_name, columns, engine)
        if not found:
            return None
        row = self._ctx.store.get(layout.META, layout.stats_key(ref.table_id, part_name)) or {}
        return hms.ColumnStatistics(
            statsDesc=self._desc(ref, part_name, row, engine), statsObj=found, engine=engine
        )

    def partition_stats(
        self,
        db: str,
        table: str,
        part_names: Sequence[str] | None,
        columns: Sequence[str] | None,
        engine: str | None = None,
    ) -> dict[str, list[hms.ColumnStatisticsObj]]:
        """Per partition name, the statistics (of ``engine``, hive's when None) of the named
        columns that have some; names of partitions that do not exist are passed over (as HMS:
        the others are answered)."""
        engine = engine_of(engine)
        ref = self._table(db, table)
        found = {}
        for given in part_names or []:
            name = self._existing_partition_name(ref, given)
            objects = self._objects(ref, name, columns, engine) if name is not None else []
            if objects:
                found[given] = objects
        return found

    def aggregate(self, db: str, table: str, part_names: Sequence[str] | None,
                  columns: Sequence[str] | None, engine: str | None = None,
                  ) -> hms.AggrStats:  # fmt: skip
        """The statistics (of ``engine``, hive's when None) of each named column merged over
        the named partitions, and how many of those partitions have statistics for every named
        column."""
        per_partition = self.partition_stats(db, table, part_names, columns, engine)
        wanted = [c.lower() for c in columns or []]
        by_column: dict[str, list[hms.ColumnStatisticsObj]] = {}
        complete = 0
        for objects in per_partition.values():
            present = {obj.colName for obj in objects}
            if all(c in present for c in wanted):
                complete += 1
            for obj in objects:
                by_column.setdefault(obj.colName, []).append(obj)
        merged = [merge_objects(by_column[c]) for c in wanted if c in by_column]
        return hms.AggrStats(colStats=merged, partsFound=complete)

    # -- helpers ---------------------------------------------------------------------------

    def _table(
        self,
        db: str | None,
        table: str | None,
        missing: Callable[[str, str], Exception] | None = None,
    ) -> TableRef:
        """The table; ``missing`` (db, table) is raised when there is none (by default HMS's
        NoSuchObjectException of the statistics reads)."""
        db, table = names.normalize(db), names.normalize(table)
        ref = self._tables.find(db, table)
        if ref is None:
            raise (missing or _no_such_table)(db, table)
        return ref

    def _partition_name(self, ref: TableRef, given: str) -> str:
        """The canonical name of an existing partition; NoSuchObjectException otherwise."""
        name = self._existing_partition_name(ref, given)
        if name is None:
            raise hms.NoSuchObjectException(message=f"Partition {given} not found")
        return name

    def _existing_partition_name(self, ref: TableRef, given: str) -> str | None:
        """The canonical name of the partition ``given`` names; None when there is none."""
        values = [v for _k, v in names.parse_partition_name(given)]
        if len(values) != len(ref.key_names):
            return None
        key = layout.partition_key(ref.table_id, ref.kinds, values)
        if self._ctx.store.get(layout.PARTITIONS, key) is None:
            return None
        return names.make_partition_name(ref.key_names, values)

    @staticmethod
    def _column_types(ref: TableRef) -> dict[str, str]:
        columns = (ref.table.sd.cols if ref.table.sd else None) or []
        return {(c.name or "").lower(): c.type or "" for c in columns}

    def _objects(
        self, ref: TableRef, part_name: str, columns: Sequence[str] | None, engine: str
    ) -> list[hms.ColumnStatisticsObj]:
        row = self._ctx.store.get(layout.META, layout.stats_key(ref.table_id, part_name)) or {}
        found = []
        for column in columns or []:
            data = row.get(layout.stats_column((column or "").lower(), engine))
            if data is not None:
                found.append(from_bytes(hms.ColumnStatisticsObj, data))
        return found

    @staticmethod
    def _desc(
        ref: TableRef, part_name: str, row: dict[bytes, bytes], engine: str
    ) -> hms.ColumnStatisticsDesc:
        analyzed = row.get(layout.last_analyzed(engine))
        return hms.ColumnStatisticsDesc(
            isTblLevel=not part_name, dbName=ref.db, tableName=ref.name,
            partName=part_name or None,
            lastAnalyzed=int.from_bytes(analyzed, "big", signed=True) if analyzed else None,
        )  # fmt: skip


def engine_of(engine: str | None) -> str:
    """The engine a call's statistics are of: hive when it names none (HMS 4's default);
    InvalidInputException for a name the stored layout cannot hold."""
    if not engine:
        return layout.HIVE_ENGINE
    if "\x00" in engine:
        raise hms.InvalidInputException(message=f"Invalid engine name {engine!r}")
    return engine


def _no_such_table(db: str, table: str) -> Exception:
    """HMS's answer to a statistics read or table update on a missing table."""
    return hms.NoSuchObjectException(
        message=f"Specified database/table does not exist : {db}.{table}"
    )


def _table_not_found(db: str, table: str) -> Exception:
    """HMS's answer to a partition statistics update or deletion on a missing table."""
    return hms.InvalidObjectException(message=f"{db}.{table} table not found")


def _no_table_to_delete_from(db: str, table: str) -> Exception:
    """HMS's answer to a table statistics deletion on a missing table (its words, two spaces
    included)."""
    return hms.NoSuchObjectException(
        message=f"Table {table}  for which stats deletion is requested doesn't exist"
    )


def _kind_of(obj: hms.ColumnStatisticsObj) -> str:
    """The one statistics kind an object holds; InvalidInputException otherwise."""
    data = obj.statsData
    set_kinds = [k for k in _KINDS if data is not None and getattr(data, k, None) is not None]
    if len(set_kinds) != 1:
        raise hms.InvalidInputException(
            message=f"Column {obj.colName}: statsData must hold exactly one kind of statistics"
        )
    return set_kinds[0]


def merge_objects(objects: Sequence[hms.ColumnStatisticsObj]) -> hms.ColumnStatisticsObj:
    """One column's statistics merged (as HMS merges them without bit vectors): lowest low,
    highest high, nulls and counts added, the largest distinct count and lengths."""
    kind = _kind_of(objects[0])
    parts = [getattr(o.statsData, kind) for o in objects if _kind_of(o) == kind]
    first = copy.deepcopy(parts[0])
    first.bitVectors = None
    total = sum(p.numNulls or 0 for p in parts)
    if kind == "booleanStats":
        first.numTrues = sum(p.numTrues or 0 for p in parts)
        first.numFalses = sum(p.numFalses or 0 for p in parts)
    elif kind in ("stringStats", "binaryStats"):
        first.maxColLen = max(p.maxColLen or 0 for p in parts)
        first.avgColLen = max(p.avgColLen or 0.0 for p in parts)
        if kind == "stringStats":
            first.numDVs = max(p.numDVs or 0 for p in parts)
    else:
        key = _decimal_value if kind == "decimalStats" else (
            (lambda d: d.daysSinceEpoch) if kind == "dateStats" else (lambda v: v))  # fmt: skip
        lows = [p.lowValue for p in parts if p.lowValue is not None]
        highs = [p.highValue for p in parts if p.highValue is not None]
        first.lowValue = min(lows, key=key) if lows else None
        first.highValue = max(highs, key=key) if highs else None
        first.numDVs = max(p.numDVs or 0 for p in parts)
    first.numNulls = total
    data = hms.ColumnStatisticsData(**{kind: first})
    return hms.ColumnStatisticsObj(colName=objects[0].colName, colType=objects[0].colType,
                                   statsData=data)  # fmt: skip


def _decimal_value(decimal: hms.Decimal) -> float:
    unscaled = int.from_bytes(decimal.unscaled or b"\x00", "big", signed=True)
    scale: int = 10 ** (decimal.scale or 0)
    return unscaled / scale


class StatisticsListener:
    """Keeps statistics with their objects (``basics.changes``): those of dropped partitions
    and tables go, a renamed partition's follow its new name."""

    def __init__(self, store: StoragePort) -> None:
        self._store = store

    def changed(self, change: Change) -> None:
        """Forget or move the statistics ``change`` concerns."""
        if change.kind == TABLE and change.action == DROP and change.table_id is not None:
            forget_table(self._store, change.table_id)
        elif isinstance(change, PartitionChange):
            table_id = change.table.table_id
            if change.action == DROP:
                forget(self._store, table_id, change.names(change.removed))
            elif change.action == RENAME:
                (old,), (new,) = change.names(change.removed), change.names(change.added)
                if old != new:
                    move(self._store, table_id, old, new)
