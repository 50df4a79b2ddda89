"""HMS 3/4's events of what hangs on a table: column statistics updated and deleted
(``UPDATE_TBL_COL_STAT_EVENT``, ``UPDATE_PART_COL_STAT_EVENT``, ``DELETE_TBL_COL_STAT_EVENT``,
``DELETE_PART_COL_STAT_EVENT``) and constraints added and dropped (``ADD_PRIMARYKEY``...
``DROP_CONSTRAINT``), with the fields of HMS's JSON message classes. Pure, as ``messages``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metastore_server.catalog.events.messages import Event, body, catalog_of
from metastore_server.thrift_api import hms
from metastore_server.wire.thrift_json import to_json

UPDATE_TABLE_STATS = "UPDATE_TBL_COL_STAT_EVENT"
UPDATE_PARTITION_STATS = "UPDATE_PART_COL_STAT_EVENT"
DELETE_TABLE_STATS = "DELETE_TBL_COL_STAT_EVENT"
DELETE_PARTITION_STATS = "DELETE_PART_COL_STAT_EVENT"
ADD_PRIMARYKEY = "ADD_PRIMARYKEY"
ADD_FOREIGNKEY = "ADD_FOREIGNKEY"
ADD_UNIQUECONSTRAINT = "ADD_UNIQUECONSTRAINT"
ADD_NOTNULLCONSTRAINT = "ADD_NOTNULLCONSTRAINT"
ADD_DEFAULTCONSTRAINT = "ADD_DEFAULTCONSTRAINT"
ADD_CHECKCONSTRAINT = "ADD_CHECKCONSTRAINT"
DROP_CONSTRAINT = "DROP_CONSTRAINT"

#: The message field listing the constraints of each ADD_* event.
CONSTRAINT_LISTS = {
    ADD_PRIMARYKEY: "primaryKeyListJson",
    ADD_FOREIGNKEY: "foreignKeyListJson",
    ADD_UNIQUECONSTRAINT: "uniqueConstraintListJson",
    ADD_NOTNULLCONSTRAINT: "notNullConstraintListJson",
    ADD_DEFAULTCONSTRAINT: "defaultConstraintListJson",
    ADD_CHECKCONSTRAINT: "checkConstraintListJson",
}


def update_table_stats(
    stats: hms.ColumnStatistics, table: hms.Table, write_id: int, now: int
) -> Event:
    """UPDATE_TBL_COL_STAT_EVENT: the statistics as stored and the table (``parameters``: the
    table's after the update)."""
    message = body(
        now, writeId=write_id, database=table.dbName, colStatsJson=to_json(stats),
        parameters=dict(table.parameters or {}), tableObjJson=to_json(table),
    )  # fmt: skip
    return Event(UPDATE_TABLE_STATS, table.dbName, table.tableName, message,
                 cat=catalog_of(table))  # fmt: skip


def update_partition_stats(
    stats: hms.ColumnStatistics,
    table: hms.Table,
    values: Sequence[str],
    parameters: Mapping[str, str] | None,
    write_id: int,
    now: int,
) -> Event:
    """UPDATE_PART_COL_STAT_EVENT of one partition (``partVals``; ``parameters``: the
    partition's after the update)."""
    message = body(
        now, writeId=write_id, database=table.dbName, colStatsJson=to_json(stats),
        parameters=dict(parameters or {}), partVals=list(values), tableObjJson=to_json(table),
    )  # fmt: skip
    return Event(UPDATE_PARTITION_STATS, table.dbName, table.tableName, message,
                 cat=catalog_of(table))  # fmt: skip


def delete_table_stats(table: hms.Table, column: str | None, now: int) -> Event:
    """DELETE_TBL_COL_STAT_EVENT (``colName`` null: every column's)."""
    message = body(now, database=table.dbName, colName=column)
    return Event(DELETE_TABLE_STATS, table.dbName, table.tableName, message,
                 cat=catalog_of(table))  # fmt: skip


def delete_partition_stats(
    table: hms.Table, part_name: str, values: Sequence[str], column: str | None, now: int
) -> Event:
    """DELETE_PART_COL_STAT_EVENT of one partition's column (null: every column's)."""
    message = body(now, catalog=catalog_of(table), database=table.dbName, colName=column,
                   partName=part_name, partValues=list(values))  # fmt: skip
    return Event(DELETE_PARTITION_STATS, table.dbName, table.tableName, message,
                 cat=catalog_of(table))  # fmt: skip


def add_constraints(event_type: str, stored: Sequence[Any], now: int) -> Event:
    """An ADD_* constraint event of the constraint entries one call added (as stored), recorded
    under the table of the first (a foreign key's: the parent's, as HMS)."""
    first = stored[0]
    if event_type == ADD_FOREIGNKEY:
        db, table = first.pktable_db, first.pktable_name
    else:
        db, table = first.table_db, first.table_name
    fields = {CONSTRAINT_LISTS[event_type]: [to_json(entry) for entry in stored]}
    return Event(event_type, db, table, body(now, **fields), cat=catalog_of(first))


def drop_constraint(cat: str, db: str, table: str, name: str, now: int) -> Event:
    message = body(now, catName=cat, dbName=db, tableName=table, constraintName=name)
    return Event(DROP_CONSTRAINT, db, table, message, cat=cat)
