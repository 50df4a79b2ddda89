"""The rules of the metadata calls (databases, tables, partitions, statistics, constraints,
indexes, functions, types, views and our own table calls), after HMS's SQL-standard model:

- reading a table (its definition, fields, partitions, statistics, constraints) needs SELECT on
  the table (HMS's read-table event, operation QUERY); listing names is open to all (SHOWTABLES,
  SHOWDATABASES need nothing, and SQL-standard authorization filters no listing);
- creating a table needs the ownership of its database (CREATETABLE; everyone owns ``default``);
- altering, truncating, dropping a table, changing its statistics, constraints or indexes
  needs its ownership; adding partitions INSERT, dropping them DELETE, altering them ownership;
- dropping a database needs its ownership, altering one the admin privilege (ALTERDATABASE);
  creating one only a user name (the owner);
- functions (CREATEFUNCTION, DROPFUNCTION) and types are the admin's.
"""

from __future__ import annotations

from typing import Any

from metastore_server.api.authorization.rules import (
    ADMIN,
    DELETE,
    INSERT,
    NAMED,
    OPEN,
    OWNERSHIP,
    SELECT,
    Rule,
    admin_on_function,
    admin_operation,
    args,
    combined,
    each,
    field,
    named_fields,
    on_databases,
    on_tables,
    statistics,
    tables_of,
)

_OWN = (OWNERSHIP,)
_READ = (SELECT,)


def _read(locate: Any) -> Rule:
    return on_tables("QUERY", _READ, locate)


def _alter(locate: Any, operation: str = "ALTERTABLE_ADDCOLS") -> Rule:
    return on_tables(operation, _OWN, locate)


def _moved_into(db_arg: str, new_arg: str, *path: str) -> Any:
    """The database a table is moved into by an alter (renamed into another database): none
    when it stays where it is."""
    old = args(db_arg) if db_arg else field(new_arg)
    new = field(new_arg, *path)

    def locate(values: dict[str, Any]) -> list[tuple[str, str | None]]:
        before, after = old(values), new(values)
        if not after or not after[0][0] or (before and before[0][0] == after[0][0]):
            return []
        return [(after[0][0], None)]

    return locate


def _alter_table(locate: Any, db_arg: str, new_arg: str, *path: str) -> Rule:
    """The table's ownership, and the ownership of a database it is moved into (creating a
    table there)."""
    into = on_databases("", _OWN, _moved_into(db_arg, new_arg, *path))
    return combined("ALTERTABLE_ADDCOLS", _alter(locate), into)


def _create(locate: Any) -> Rule:
    return on_databases("CREATETABLE", _OWN, locate)


def _drop(locate: Any) -> Rule:
    return on_tables("DROPTABLE", _OWN, locate)


def _add_parts(locate: Any) -> Rule:
    return on_tables("ALTERTABLE_ADDPARTS", (INSERT,), locate)


def _drop_parts(locate: Any) -> Rule:
    return on_tables("ALTERTABLE_DROPPARTS", (DELETE,), locate)


def _alter_parts(locate: Any) -> Rule:
    return on_tables("ALTERPARTITION_FILEFORMAT", _OWN, locate)


def _stats(locate: Any) -> Rule:
    return on_tables("ALTERTABLE_UPDATETABLESTATS", _OWN, locate)


_DB_TABLE = args("dbname", "tbl_name")
_DB_NAME = args("dbname", "name")
_PARTS = args("db_name", "tbl_name")
_COLUMN_TABLE = args("db_name", "table_name")
_TABLE = field("tbl")
_REQUEST = field("req")
_REQUEST_2 = field("request")


def _exchange() -> Rule:
    source = on_tables("", (SELECT, DELETE), args("source_db", "source_table_name"))
    target = on_tables("", (INSERT,), args("dest_db", "dest_table_name"))
    return combined("ALTERTABLE_EXCHANGEPARTITION", source, target)


def _function_name(key: str) -> Any:
    def name(values: dict[str, Any]) -> str:
        value = values.get(key)
        text = getattr(value, "functionName", value)
        return str(text or "").strip().lower()

    return name


def _dependent(operation: str, own: Rule) -> Rule:
    base = on_tables("", _READ, named_fields("req", "baseDbName", "baseTblName"))
    return combined(operation, own, base)


DATABASES: dict[str, Rule] = {
    "create_database": NAMED,
    "create_database_req": NAMED,
    "get_database": OPEN,
    "get_database_req": OPEN,
    "drop_database": on_databases("DROPDATABASE", _OWN, args("name")),
    "drop_database_req": on_databases("DROPDATABASE", _OWN, named_fields("req", "name")),
    "get_databases": OPEN,
    "get_all_databases": OPEN,
    "alter_database": on_databases("ALTERDATABASE", (ADMIN,), args("dbname")),
    "alter_database_req": on_databases(
        "ALTERDATABASE", (ADMIN,), named_fields("alterDbReq", "oldDbName")
    ),
}

TABLES: dict[str, Rule] = {
    "create_table": _create(_TABLE),
    "create_table_with_environment_context": _create(_TABLE),
    "drop_table": _drop(_DB_NAME),
    "drop_table_with_environment_context": _drop(_DB_NAME),
    "alter_table": _alter_table(_DB_TABLE, "dbname", "new_tbl"),
    "alter_table_with_environment_context": _alter_table(_DB_TABLE, "dbname", "new_tbl"),
    "alter_table_req": _alter_table(_REQUEST, "", "req", "table"),
    "alter_table_with_cascade": _alter_table(_DB_TABLE, "dbname", "new_tbl"),
    "get_table": _read(_DB_TABLE),
    "get_table_req": _read(_REQUEST),
    "get_table_objects_by_name": OPEN,
    "get_table_objects_by_name_req": OPEN,
    "get_fields": _read(_COLUMN_TABLE),
    "get_fields_with_environment_context": _read(_COLUMN_TABLE),
    "get_schema": _read(_COLUMN_TABLE),
    "get_schema_with_environment_context": _read(_COLUMN_TABLE),
    "get_tables": OPEN,
    "get_all_tables": OPEN,
    "get_tables_by_type": OPEN,
    "get_table_meta": OPEN,
    "get_table_names_by_filter": OPEN,
    "update_creation_metadata": _alter(_DB_TABLE),
    "get_materialized_views_for_rewriting": OPEN,
    "get_all_materialized_view_objects_for_rewriting": OPEN,
    "get_materialization_invalidation_info": _read(field("creation_metadata")),
    "get_lock_materialization_rebuild": _alter(args("dbName", "tableName")),
    "heartbeat_lock_materialization_rebuild": _alter(args("dbName", "tableName")),
    "create_table_req": _create(field("request", "table")),
    "drop_table_req": _drop(field("dropTableReq")),
    "get_fields_req": _read(_REQUEST),
    "get_schema_req": _read(_REQUEST),
    "get_tables_ext": OPEN,
    "translate_table_dryrun": _create(field("request", "table")),
    "cm_recycle": admin_operation("CM_RECYCLE"),
    "truncate_table": on_tables("TRUNCATETABLE", _OWN, args("dbName", "tableName")),
    "truncate_table_req": on_tables("TRUNCATETABLE", _OWN, _REQUEST),
}

CONSTRAINTS: dict[str, Rule] = {
    "create_table_with_constraints": _create(_TABLE),
    "drop_constraint": _alter(_REQUEST, "ALTERTABLE_DROPCONSTRAINT"),
    "add_primary_key": _alter(each("req", "primaryKeyCols"), "ALTERTABLE_ADDCONSTRAINT"),
    "add_foreign_key": _alter(
        named_fields("req", "fktable_db", "fktable_name", listed=True, path=("foreignKeyCols",)),
        "ALTERTABLE_ADDCONSTRAINT",
    ),
    "add_unique_constraint": _alter(
        each("req", "uniqueConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"
    ),
    "add_not_null_constraint": _alter(
        each("req", "notNullConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"
    ),
    "add_default_constraint": _alter(
        each("req", "defaultConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"
    ),
    "add_check_constraint": _alter(each("req", "checkConstraintCols"), "ALTERTABLE_ADDCONSTRAINT"),
    "get_unique_constraints": _read(_REQUEST_2),
    "get_not_null_constraints": _read(_REQUEST_2),
    "get_default_constraints": _read(_REQUEST_2),
    "get_check_constraints": _read(_REQUEST_2),
    "get_all_table_constraints": _read(_REQUEST_2),
    "get_primary_keys": _read(_REQUEST_2),
    "get_foreign_keys": combined(
        "QUERY",
        on_tables(
            "", _READ, named_fields("request", "parent_db_name", "parent_tbl_name"), optional=True
        ),
        on_tables(
            "", _READ, named_fields("request", "foreign_db_name", "foreign_tbl_name"), optional=True
        ),
    ),  # fmt: skip
}

INDEXES_AND_TYPES: dict[str, Rule] = {
    "add_index": on_tables(
        "CREATEINDEX", _OWN, named_fields("new_index", "dbName", "origTableName")
    ),
    "alter_index": on_tables("ALTERINDEX_PROPS", _OWN, args("dbname", "base_tbl_name")),
    "drop_index_by_name": on_tables("DROPINDEX", _OWN, args("db_name", "tbl_name")),
    "get_index_by_name": OPEN,
    "get_indexes": OPEN,
    "get_index_names": OPEN,
    "create_type": admin_operation("CREATETYPE"),
    "get_type": OPEN,
    "drop_type": admin_operation("DROPTYPE"),
    "get_type_all": OPEN,
}

PARTITION_WRITES: dict[str, Rule] = {
    "add_partition": _add_parts(field("new_part")),
    "add_partition_with_environment_context": _add_parts(field("new_part")),
    "add_partitions": _add_parts(each("new_parts")),
    "add_partitions_req": _add_parts(field("request")),
    "add_partitions_pspec": _add_parts(each("new_parts")),
    "append_partition": _add_parts(_PARTS),
    "append_partition_with_environment_context": _add_parts(_PARTS),
    "append_partition_by_name": _add_parts(_PARTS),
    "append_partition_by_name_with_environment_context": _add_parts(_PARTS),
    "append_partition_req": _add_parts(field("appendPartitionsReq")),
    "drop_partition": _drop_parts(_PARTS),
    "drop_partition_with_environment_context": _drop_parts(_PARTS),
    "drop_partition_by_name": _drop_parts(_PARTS),
    "drop_partition_by_name_with_environment_context": _drop_parts(_PARTS),
    "drop_partitions_req": _drop_parts(_REQUEST),
    "drop_partition_req": _drop_parts(field("dropPartitionReq")),
    "alter_partition": _alter_parts(_PARTS),
    "alter_partitions": _alter_parts(_PARTS),
    "alter_partition_with_environment_context": _alter_parts(_PARTS),
    "alter_partitions_with_environment_context": _alter_parts(_PARTS),
    "alter_partitions_req": _alter_parts(_REQUEST),
    "rename_partition": on_tables("ALTERTABLE_RENAMEPART", _OWN, _PARTS),
    "rename_partition_req": on_tables("ALTERTABLE_RENAMEPART", _OWN, _REQUEST),
    "exchange_partition": _exchange(),
    "exchange_partitions": _exchange(),
}

PARTITION_READS: dict[str, Rule] = {
    **{
        name: _read(_PARTS)
        for name in (
            "get_partition",
            "get_partition_with_auth",
            "get_partition_by_name",
            "get_partitions_by_names",
            "get_partitions",
            "get_partitions_with_auth",
            "get_partition_names",
            "get_partitions_pspec",
            "get_partitions_ps",
            "get_partitions_ps_with_auth",
            "get_partition_names_ps",
            "get_partitions_by_filter",
            "get_num_partitions_by_filter",
            "get_part_specs_by_filter",
            "isPartitionMarkedForEvent",
        )
    },
    **{
        name: _read(_REQUEST)
        for name in (
            "get_partitions_by_names_req",
            "get_partitions_req",
            "get_partitions_ps_with_auth_req",
            "get_partition_names_ps_req",
            "get_partitions_by_filter_req",
            "get_partitions_by_expr",
            "get_partition_names_req",
            "get_partition_req",
            "get_partitions_spec_by_expr",
        )
    },
    "fetch_partition_names_req": _read(field("partitionReq")),
    "get_partitions_with_specs": _read(_REQUEST_2),
    "partition_name_has_valid_characters": OPEN,
    "partition_name_to_vals": OPEN,
    "partition_name_to_spec": OPEN,
    "markPartitionForEvent": on_tables("LOAD", (INSERT,), _PARTS),
}

STATISTICS: dict[str, Rule] = {
    "update_table_column_statistics": _stats(statistics("stats_obj")),
    "update_partition_column_statistics": _stats(statistics("stats_obj")),
    "get_table_column_statistics": _read(_PARTS),
    "get_partition_column_statistics": _read(_PARTS),
    "get_table_statistics_req": _read(_REQUEST_2),
    "get_partitions_statistics_req": _read(_REQUEST_2),
    "delete_partition_column_statistics": _stats(_PARTS),
    "delete_table_column_statistics": _stats(_PARTS),
    "get_aggr_stats_for": _read(_REQUEST_2),
    "set_aggr_stats_for": _stats(statistics("request", listed=True)),
    "update_table_column_statistics_req": _stats(statistics("req", listed=True)),
    "update_partition_column_statistics_req": _stats(statistics("req", listed=True)),
    "find_columns_with_stats": admin_operation("COMPACTION"),
}

FUNCTIONS: dict[str, Rule] = {
    "create_function": admin_on_function(
        "CREATEFUNCTION", named_fields("func", "dbName"), _function_name("func")
    ),
    "drop_function": admin_on_function("DROPFUNCTION", args("dbName"), _function_name("funcName")),
    "alter_function": admin_on_function(
        "CREATEFUNCTION", args("dbName"), _function_name("funcName")
    ),
    "get_functions": OPEN,
    "get_function": OPEN,
    "get_all_functions": OPEN,
}

OUR_TABLE_CALLS: dict[str, Rule] = {
    "get_partition_values": _read(_REQUEST_2),
    "explain_partition_filter": _read(_REQUEST),
    "explain_partition_values": _read(field("req", "request")),
    "get_partition_timelines": _read(_REQUEST),
    "cover_time_range": _read(tables_of("req", "dbName", "tables")),
    "rebuild_partition_timelines": _alter(_REQUEST),
    "resolve_dependencies": _read(_REQUEST),
    "get_dependents": _read(_REQUEST),
    "create_dependent_table": _dependent("CREATETABLE", _create(_REQUEST)),
    "alter_dependency": _dependent("ALTERTABLE_ADDCOLS", _alter(_REQUEST)),
}

#: Every metadata call's rule.
METADATA_RULES: dict[str, Rule] = {
    **DATABASES,
    **TABLES,
    **CONSTRAINTS,
    **INDEXES_AND_TYPES,
    **PARTITION_WRITES,
    **PARTITION_READS,
    **STATISTICS,
    **FUNCTIONS,
    **OUR_TABLE_CALLS,
}
