"""HMS's checks and answers on bad calls, as a sequence of Thrift calls whose outcomes compare
across servers (the :class:`~support.hms_scenario.Step` of ``hms_scenario``, run by its
:func:`~support.hms_scenario.run_scenario`).

The groups: server settings clients read (``get_config_value``); tables HMS refuses to create or
alter (column types, duplicate columns, no storage descriptor) and the column type changes it
allows; empty and missing database and table names; the exception types and messages of calls
on missing objects and with bad arguments (tables, partitions, functions, keys).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .hms_scenario import Step, make_database, make_function, make_partition, make_table

DB = "sem_db"
OTHER_DB = "sem_other"

#: Settings clients read: HMS answers each from its own configuration (HiveConf's defaults).
CONFIG_KEYS = (
    "hive.exec.default.partition.name",
    "hive.default.partition.name",
    "hive.exec.dynamic.partition",
    "hive.exec.max.dynamic.partitions",
    "hive.exec.max.dynamic.partitions.pernode",
    "hive.exec.max.created.files",
    "hive.exec.compress.output",
    "hive.default.fileformat",
    "hive.default.fileformat.managed",
    "hive.metastore.batch.retrieve.max",
    "hive.metastore.batch.retrieve.table.partition.max",
    "hive.metastore.client.socket.timeout",
    "hive.metastore.disallow.incompatible.col.type.changes",
    "hive.metastore.partition.name.whitelist.pattern",
    "hive.metastore.integral.jdo.pushdown",
    "hive.metastore.try.direct.sql.ddl",
    "hive.metastore.execute.setugi",
    "hive.metastore.server.max.message.size",
    "hive.metastore.uris",
    "hive.stats.autogather",
    "hive.support.concurrency",
    "hive.txn.manager",
    "hive.txn.timeout",
    "hive.compactor.initiator.on",
    "hive.mapred.mode",
    "hive.exec.stagingdir",
    "hive.exec.scratchdir",
    "hive.metastore.event.db.listener.timetolive",
    "hive.metastore.limit.partition.request",
    "hive.metastore.event.clean.freq",
    "hive.metastore.event.expiry.duration",
    # what event followers check (Impala's catalogd); HMS 3+'s MetastoreConf names
    "hive.metastore.dml.events",
    "metastore.catalog.default",
    "metastore.warehouse.dir",
)

#: Types HMS may or may not know (one table each).
TYPE_PROBES = (
    "void", "datetime", "interval_year_month", "interval_day_time", "uniontype<int,string>",
    "timestamp with local time zone", "unknown", "INT", "Int", " int", "int ", "",
    "array<notatype>", "varchar", "decimal(10,2)", "map<string,array<int>>", "bool", "integer",
)  # fmt: skip

#: Every valid type used in the alteration matrix.
MATRIX_TYPES = (
    "tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "string",
    "varchar(10)", "char(5)", "boolean", "binary", "date", "timestamp", "array<int>",
    "map<string,int>", "struct<a:int>", "void",
)  # fmt: skip
#: Pairs beyond the matrix: parameters and element types changed.
EXTRA_PAIRS = (
    ("varchar(10)", "varchar(20)"), ("decimal(10,2)", "decimal(5,1)"), ("char(5)", "char(1)"),
    ("array<int>", "array<bigint>"), ("map<string,int>", "map<string,bigint>"),
    ("struct<a:int>", "struct<a:int,b:int>"), ("array<int>", "array<int>"),
    ("decimal", "decimal(10,0)"), ("varchar(10)", "char(5)"), ("char(5)", "varchar(10)"),
)  # fmt: skip


def matrix_pairs() -> list[tuple[str, str]]:
    """(old, new) type of each column of the alteration matrix table."""
    pairs = [(a, b) for a in MATRIX_TYPES for b in MATRIX_TYPES if a != b]
    return pairs + list(EXTRA_PAIRS)


def table(
    hms: ModuleType,
    name: str,
    cols: list[tuple[str, Any]] | None,
    *,
    db: str = DB,
    keys: tuple[tuple[str, str], ...] = (),
    location: str | None = None,
    **changes: Any,
) -> Any:
    """A Parquet table with these columns (None: no storage descriptor at all)."""
    tbl = make_table(hms, db, name, location=location, part_keys=keys)
    if cols is None:
        tbl.sd = None
    else:
        tbl.sd.cols = [hms.FieldSchema(name=n, type=t, comment=None) for n, t in cols]
    for attr, value in changes.items():
        setattr(tbl, attr, value)
    return tbl


def _pk(hms: ModuleType, tbl: str, col: str, name: str = "sem_pk") -> Any:
    return hms.SQLPrimaryKey(table_db=DB, table_name=tbl, column_name=col, key_seq=1,
                             pk_name=name, enable_cstr=False, validate_cstr=False,
                             rely_cstr=False)  # fmt: skip


def _fk(hms: ModuleType, parent: str, pcol: str, child: str, ccol: str,
        name: str = "sem_fk") -> Any:  # fmt: skip
    return hms.SQLForeignKey(pktable_db=DB, pktable_name=parent, pkcolumn_name=pcol,
                             fktable_db=DB, fktable_name=child, fkcolumn_name=ccol, key_seq=1,
                             update_rule=0, delete_rule=0, fk_name=name, pk_name=None,
                             enable_cstr=False, validate_cstr=False, rely_cstr=False)  # fmt: skip


def semantics_scenario(hms: ModuleType, wh: str) -> list[Step]:
    """The call sequence; ``wh`` is the server's warehouse directory."""
    steps: list[Step] = []

    def add(name: str, method: str, *args: Any, compare: str = "full",
            unordered: bool = False) -> None:  # fmt: skip
        steps.append(Step(name, method, args, unordered, compare))

    steps.append(Step("setup_db", "create_database",
                      (make_database(hms, DB, f"file:{wh}/{DB}.db"),)))  # fmt: skip
    steps.append(Step("setup_other_db", "create_database",
                      (make_database(hms, OTHER_DB, f"file:{wh}/{OTHER_DB}.db"),)))  # fmt: skip
    _config_steps(add)
    _create_steps(hms, add)
    _alter_steps(hms, add, wh)
    _empty_name_steps(hms, add)
    _missing_object_steps(hms, add, wh)
    _constraint_steps(hms, add)
    # Last: HMS takes it, we refuse it (deliberate), and no later step lists tables.
    add("create_part_key_is_col", "create_table",
        table(hms, "key_is_col", [("v", "int")], keys=(("v", "string"),)))  # fmt: skip
    add("cleanup_other_db", "drop_database", OTHER_DB, True, True)
    add("cleanup_db", "drop_database", DB, True, True)
    return steps


def _config_steps(add: Any) -> None:
    for key in CONFIG_KEYS:
        add(f"config[{key}]", "get_config_value", key, "caller-default")


def _create_steps(hms: ModuleType, add: Any) -> None:
    add("create_bad_col_type", "create_table", table(hms, "bad_type", [("v", "notatype<")]))
    add("create_bad_part_type", "create_table",
        table(hms, "bad_ptype", [("v", "int")], keys=(("p", "notatype"),)))  # fmt: skip
    add("create_bad_second_col", "create_table",
        table(hms, "bad_second", [("v", "int"), ("w", "nope"), ("x", "bad")]))  # fmt: skip
    for i, type_text in enumerate(TYPE_PROBES):
        add(f"create_type_{i:02d}[{type_text}]", "create_table",
            table(hms, f"type_probe_{i:02d}", [("v", type_text)]))  # fmt: skip
    add("create_null_type", "create_table", table(hms, "null_type", [("v", None)]))
    all_types = [(f"c{i}", t) for i, t in enumerate(MATRIX_TYPES)]
    add("create_all_types", "create_table", table(hms, "all_types", all_types))
    # HMS's store refuses a name given twice, in words of its database (compared: the type).
    add("create_dup_cols", "create_table", table(hms, "dup", [("v", "int"), ("v", "string")]),
        compare="type")  # fmt: skip
    add("create_dup_cols_case", "create_table",
        table(hms, "dup_case", [("v", "int"), ("V", "string")]), compare="type")  # fmt: skip
    add("create_dup_part_keys", "create_table",
        table(hms, "dup_keys", [("v", "int")], keys=(("p", "string"), ("p", "int"))),
        compare="type")  # fmt: skip
    add("create_no_sd", "create_table", table(hms, "no_sd", None))
    add("create_no_cols", "create_table", table(hms, "no_cols", []))
    add("create_with_constraints_bad_type", "create_table_with_constraints",
        table(hms, "bad_type_keys", [("v", "notatype<")]), [], [])  # fmt: skip
    add("create_with_constraints_dup_cols", "create_table_with_constraints",
        table(hms, "dup_keys2", [("v", "int"), ("v", "int")]), [], [], compare="type")
    add("create_with_constraints_no_sd", "create_table_with_constraints",
        table(hms, "no_sd_keys", None), [], [])  # fmt: skip
    add("tables_after_creates", "get_tables", DB, "*")


def _alter_steps(hms: ModuleType, add: Any, wh: str) -> None:
    loc = f"file:{wh}/{DB}.db/chg"
    cols = [("s", "string"), ("n", "int"), ("d", "date")]

    def chg(new_cols: list[tuple[str, Any]] | None, name: str = "chg", **kw: Any) -> Any:
        return table(hms, name, new_cols, location=loc, **kw)

    add("create_chg", "create_table", table(hms, "chg", cols))
    add("alter_bad_type", "alter_table", DB, "chg", chg([("s", "notatype<"), ("n", "int")]))
    add("alter_no_sd", "alter_table", DB, "chg", chg(None))
    add("alter_dup_cols", "alter_table", DB, "chg", chg([("s", "string"), ("s", "int")]),
        compare="type")  # fmt: skip
    add("alter_string_to_int", "alter_table", DB, "chg", chg([("s", "int"), ("n", "int")]))
    add("alter_two_incompatible", "alter_table", DB, "chg",
        chg([("s", "int"), ("n", "boolean"), ("d", "date")]))  # fmt: skip
    add("alter_cascade_string_to_int", "alter_table_with_cascade", DB, "chg",
        chg([("s", "int")]), True)  # fmt: skip
    add("alter_env_string_to_int", "alter_table_with_environment_context", DB, "chg",
        chg([("s", "int")]), hms.EnvironmentContext(properties={}))  # fmt: skip
    add("alter_widen_and_drop", "alter_table", DB, "chg", chg([("s", "string"), ("n", "bigint")]))
    add("alter_add_cols", "alter_table", DB, "chg",
        chg([("s", "string"), ("n", "bigint"), ("e", "int")]))  # fmt: skip
    add("alter_narrow", "alter_table", DB, "chg", chg([("s", "string"), ("n", "int")]))
    add("alter_rename_type_change", "alter_table", DB, "chg",
        chg([("s", "int")], name="chg2"))  # fmt: skip
    pairs = [(f"c{i}", old, new) for i, (old, new) in enumerate(matrix_pairs())]
    mloc = f"file:{wh}/{DB}.db/matrix"
    add("create_matrix", "create_table", table(hms, "matrix", [(n, o) for n, o, _ in pairs]))
    add("alter_matrix", "alter_table", DB, "matrix",
        table(hms, "matrix", [(n, t) for n, _, t in pairs], location=mloc))  # fmt: skip
    add("get_meta_conf", "getMetaConf", "hive.metastore.disallow.incompatible.col.type.changes")
    add("allow_incompatible", "setMetaConf",
        "hive.metastore.disallow.incompatible.col.type.changes", "false")  # fmt: skip
    add("alter_string_to_int_allowed", "alter_table", DB, "chg", chg([("s", "int"), ("n", "int")]))
    add("get_chg_allowed", "get_fields", DB, "chg")
    add("disallow_incompatible", "setMetaConf",
        "hive.metastore.disallow.incompatible.col.type.changes", "true")  # fmt: skip
    add("alter_int_to_string_again", "alter_table", DB, "chg", chg([("s", "string")]))
    view = dict(tableType="VIRTUAL_VIEW", viewOriginalText="select 1", viewExpandedText="select 1")
    add("create_view", "create_table", table(hms, "vw", [("s", "string")], **view))
    add("alter_view_string_to_int", "alter_table", DB, "vw",
        table(hms, "vw", [("s", "int")], **view))  # fmt: skip
    add("get_view_fields", "get_fields", DB, "vw")
    add("alter_bad_new_name", "alter_table", DB, "chg", chg([("s", "string")], name="bad-name"))
    add("alter_missing_table", "alter_table", DB, "nope", chg([("s", "string")], name="nope"))
    add("alter_missing_db", "alter_table", "no_such_db", "chg", chg([("s", "string")]))
    add("alter_to_missing_db", "alter_table", DB, "chg",
        chg([("s", "string")], db="no_such_db"))  # fmt: skip
    add("create_other_t", "create_table", table(hms, "t2", [("s", "string")], db=OTHER_DB))
    add("create_t2", "create_table", table(hms, "t2", [("s", "string")]))
    add("alter_rename_onto_existing", "alter_table", DB, "chg",
        chg([("s", "string")], name="t2"))  # fmt: skip
    add("alter_rename_onto_existing_upper", "alter_table", DB, "chg",
        chg([("s", "string")], name="T2"))  # fmt: skip
    add("alter_rename_onto_existing_other_db", "alter_table", DB, "chg",
        chg([("s", "string")], name="t2", db=OTHER_DB))  # fmt: skip
    add("alter_rename_onto_itself_upper", "alter_table", DB, "chg",
        chg([("s", "string")], name="CHG"))  # fmt: skip
    add("alter_change_part_keys", "alter_table", DB, "chg",
        chg([("s", "string")], keys=(("p", "string"),)))  # fmt: skip
    add("get_chg_end", "get_fields", DB, "chg")


def _empty_name_steps(hms: ModuleType, add: Any) -> None:
    part = make_partition(hms, "", "t", ["a"])
    for tag, name in (("empty", ""), ("null", None)):
        add(f"get_database_{tag}", "get_database", name)
        add(f"drop_database_{tag}", "drop_database", name, True, False)
        add(f"alter_database_{tag}", "alter_database", name, make_database(hms, "x"))
        add(f"create_database_{tag}", "create_database", make_database(hms, name))
        add(f"get_tables_{tag}_db", "get_tables", name, "*")
        add(f"get_all_tables_{tag}_db", "get_all_tables", name)
        add(f"get_table_{tag}_db", "get_table", name, "t")
        add(f"get_table_{tag}_name", "get_table", DB, name)
        add(f"get_table_objects_{tag}_db", "get_table_objects_by_name", name, ["t"])
        add(f"get_table_req_{tag}_db", "get_table_req", hms.GetTableRequest(dbName=name,
                                                                          tblName="t"))
        add(f"get_fields_{tag}_db", "get_fields", name, "t")
        add(f"get_schema_{tag}_name", "get_schema", DB, name)
        add(f"create_table_{tag}_db", "create_table", table(hms, "t", [("v", "int")], db=name))
        add(f"create_table_{tag}_name", "create_table", table(hms, name, [("v", "int")]))
        add(f"drop_table_{tag}_db", "drop_table", name, "t", True)
        add(f"drop_table_{tag}_name", "drop_table", DB, name, True)
        add(f"alter_table_{tag}_db", "alter_table", name, "t", table(hms, "t", [("v", "int")]))
        add(f"alter_table_{tag}_name", "alter_table", DB, name, table(hms, "t", [("v", "int")]))
        add(f"get_partitions_{tag}_db", "get_partitions", name, "t", -1)
        add(f"get_partition_names_{tag}_name", "get_partition_names", DB, name, -1)
        add(f"get_partition_{tag}_db", "get_partition", name, "t", ["a"])
        add(f"get_partition_by_name_{tag}_db", "get_partition_by_name", name, "t", "p=a")
        add(f"get_partitions_ps_{tag}_db", "get_partitions_ps", name, "t", ["a"], -1)
        add(f"get_partitions_by_filter_{tag}_db", "get_partitions_by_filter", name, "t",
            'p = "a"', -1)  # fmt: skip
        add(f"get_partitions_by_names_{tag}_db", "get_partitions_by_names", name, "t", ["p=a"])
        part.dbName = name
        add(f"add_partition_{tag}_db", "add_partition", part)
        add(f"append_partition_{tag}_db", "append_partition", name, "t", ["a"])
        add(f"drop_partition_{tag}_name", "drop_partition", DB, name, ["a"], True)
        add(f"alter_partition_{tag}_db", "alter_partition", name, "t", part)
        add(f"rename_partition_{tag}_db", "rename_partition", name, "t", ["a"], part)
        add(f"get_function_{tag}_db", "get_function", name, "f")
        add(f"get_function_{tag}_name", "get_function", DB, name)
        add(f"get_functions_{tag}_db", "get_functions", name, "*")
        add(f"drop_function_{tag}_name", "drop_function", DB, name)
        add(f"create_function_{tag}_db", "create_function", make_function(hms, name, "f"))
        add(f"alter_function_{tag}_name", "alter_function", DB, name,
            make_function(hms, DB, "f"))  # fmt: skip
        add(f"get_primary_keys_{tag}", "get_primary_keys",
            hms.PrimaryKeysRequest(db_name=name, tbl_name=name))  # fmt: skip
        add(f"get_foreign_keys_{tag}", "get_foreign_keys",
            hms.ForeignKeysRequest(foreign_db_name=name, foreign_tbl_name=name))  # fmt: skip
        part = make_partition(hms, "", "t", ["a"])


def _missing_object_steps(hms: ModuleType, add: Any, wh: str) -> None:
    keys = (("ds", "string"), ("hr", "int"))
    add("create_pt", "create_table", table(hms, "pt", [("v", "int")], keys=keys))
    add("add_pt_parts", "add_partitions", [make_partition(hms, DB, "pt", v)
                                          for v in (["a", "1"], ["b", "2"])])  # fmt: skip
    add("get_schema_missing_db", "get_schema", "no_such_db", "t")
    add("get_fields_missing_db", "get_fields", "no_such_db", "t")
    add("get_schema_missing_table", "get_schema", DB, "nope")
    add("get_fields_missing_table", "get_fields", DB, "nope")
    add("get_schema_dotted", "get_schema", DB, "pt.v")
    moved = make_partition(hms, DB, "pt", ["a", "1"], f"file:{wh}/{DB}.db/pt/ds=a/hr=1")
    add("alter_partition_missing_table", "alter_partition", DB, "nope", moved)
    add("alter_partition_missing_db", "alter_partition", "no_such_db", "pt", moved)
    add("alter_partitions_missing_table", "alter_partitions", DB, "nope", [moved])
    gone = make_partition(hms, DB, "pt", ["zz", "9"], f"file:{wh}/{DB}.db/pt/ds=zz/hr=9")
    add("alter_partition_missing_part", "alter_partition", DB, "pt", gone)
    add("alter_partitions_one_missing", "alter_partitions", DB, "pt", [moved, gone])
    add("alter_partition_wrong_count", "alter_partition", DB, "pt",
        make_partition(hms, DB, "pt", ["a"]))  # fmt: skip
    add("rename_partition_missing_old", "rename_partition", DB, "pt", ["zz", "9"],
        make_partition(hms, DB, "pt", ["c", "3"]))  # fmt: skip
    add("rename_partition_onto_existing", "rename_partition", DB, "pt", ["a", "1"],
        make_partition(hms, DB, "pt", ["b", "2"]))  # fmt: skip
    add("rename_partition_missing_table", "rename_partition", DB, "nope", ["a", "1"],
        make_partition(hms, DB, "nope", ["c", "3"]))  # fmt: skip
    add("rename_partition_wrong_count", "rename_partition", DB, "pt", ["a"],
        make_partition(hms, DB, "pt", ["c", "3"]))  # fmt: skip
    add("get_partition_names_ps_empty", "get_partition_names_ps", DB, "pt", [], -1)
    add("get_partition_names_ps_too_many", "get_partition_names_ps", DB, "pt", ["a", "1", "x"],
        -1)  # fmt: skip
    add("get_partitions_ps_empty", "get_partitions_ps", DB, "pt", [], -1)
    add("append_partition_missing_table", "append_partition", DB, "nope", ["a", "1"])
    add("append_partition_exists", "append_partition", DB, "pt", ["a", "1"], compare="prefix")
    add("append_partition_wrong_count", "append_partition", DB, "pt", ["a"])
    add("add_partition_missing_db", "add_partition", make_partition(hms, "no_such_db", "t",
                                                                    ["a", "1"]))  # fmt: skip
    add("get_partition_by_name_missing_table", "get_partition_by_name", DB, "nope", "ds=a/hr=1")
    add("get_partitions_by_names_missing_db", "get_partitions_by_names", "no_such_db", "pt",
        ["ds=a/hr=1"])  # fmt: skip
    add("drop_partition_by_name_missing_table", "drop_partition_by_name", DB, "nope",
        "ds=a/hr=1", False)  # fmt: skip
    add("get_partition_names_missing_db", "get_partition_names", "no_such_db", "pt", -1)
    add("alter_database_missing", "alter_database", "no_such_db", make_database(hms, "x"))
    add("create_function", "create_function", make_function(hms, DB, "fn"))
    add("create_function2", "create_function", make_function(hms, DB, "fn2"))
    add("alter_function_missing", "alter_function", DB, "nosuch", make_function(hms, DB, "nosuch"))
    add("alter_function_missing_upper", "alter_function", DB, "NoSuch",
        make_function(hms, DB, "NoSuch"))  # fmt: skip
    add("alter_function_missing_db", "alter_function", "no_such_db", "fn",
        make_function(hms, "no_such_db", "fn"))  # fmt: skip
    add("alter_function_onto_existing", "alter_function", DB, "fn",
        make_function(hms, DB, "fn2"), compare="type")  # fmt: skip
    add("alter_function_bad_name", "alter_function", DB, "fn", make_function(hms, DB, "bad-name"))
    add("get_functions_after_alter", "get_functions", DB, "*")
    add("drop_function_missing_db", "drop_function", "no_such_db", "fn")
    bad_class = make_function(hms, DB, "no_class")
    bad_class.className = None
    add("create_function_no_class", "create_function", bad_class)
    add("create_function_bad_name", "create_function", make_function(hms, DB, "bad-name"))
    _sweep_steps(hms, add)
    add("get_table_objects_null_list", "get_table_objects_by_name", DB, None)
    add("drop_table_pt", "drop_table", DB, "pt", True)


def _constraint_steps(hms: ModuleType, add: Any) -> None:
    cols = [("id", "int"), ("ref", "int")]
    keys = (("ds", "string"),)
    add("keys_pk_missing_col", "create_table_with_constraints",
        table(hms, "k1", cols), [_pk(hms, "k1", "nope")], [])  # fmt: skip
    add("keys_fk_missing_parent", "create_table_with_constraints",
        table(hms, "k2", cols), [], [_fk(hms, "no_parent", "id", "k2", "ref")])  # fmt: skip
    add("keys_after_refusals", "get_tables", DB, "k*")
    add("keys_parent", "create_table_with_constraints",
        table(hms, "parent", cols, keys=keys), [_pk(hms, "parent", "id", "parent_pk")], [])
    add("keys_fk_missing_child_col", "create_table_with_constraints",
        table(hms, "k3", cols), [], [_fk(hms, "parent", "id", "k3", "nope")])  # fmt: skip
    add("keys_fk_missing_parent_col", "create_table_with_constraints",
        table(hms, "k4", cols), [], [_fk(hms, "parent", "nope", "k4", "ref")])  # fmt: skip
    add("keys_fk_not_pk", "create_table_with_constraints",
        table(hms, "k5", cols), [], [_fk(hms, "parent", "ref", "k5", "ref", "k5_fk")])
    add("keys_pk_partition_key", "create_table_with_constraints",
        table(hms, "k6", cols, keys=keys), [_pk(hms, "k6", "ds", "k6_pk")], [])  # fmt: skip
    add("keys_child", "create_table_with_constraints",
        table(hms, "child", cols), [], [_fk(hms, "parent", "id", "child", "ref", "child_fk")])
    add("keys_tables", "get_tables", DB, "k1|k2|k3|k4|k6|parent|child")
    add("primary_keys", "get_primary_keys", hms.PrimaryKeysRequest(db_name=DB, tbl_name="parent"))
    add("primary_keys_upper", "get_primary_keys",
        hms.PrimaryKeysRequest(db_name=DB.upper(), tbl_name="PARENT"))  # fmt: skip
    add("primary_keys_missing_table", "get_primary_keys",
        hms.PrimaryKeysRequest(db_name=DB, tbl_name="nope"))  # fmt: skip
    add("primary_keys_missing_db", "get_primary_keys",
        hms.PrimaryKeysRequest(db_name="no_such_db", tbl_name="nope"))  # fmt: skip
    add("foreign_keys_child", "get_foreign_keys",
        hms.ForeignKeysRequest(foreign_db_name=DB, foreign_tbl_name="child"))  # fmt: skip
    add("foreign_keys_only_parent", "get_foreign_keys",
        hms.ForeignKeysRequest(parent_db_name=DB, parent_tbl_name="parent"), unordered=True)
    add("foreign_keys_both", "get_foreign_keys",
        hms.ForeignKeysRequest(parent_db_name=DB, parent_tbl_name="parent",
                               foreign_db_name=DB, foreign_tbl_name="child"))  # fmt: skip
    add("foreign_keys_other_parent", "get_foreign_keys",
        hms.ForeignKeysRequest(parent_db_name=DB, parent_tbl_name="child",
                               foreign_db_name=DB, foreign_tbl_name="child"))  # fmt: skip
    add("foreign_keys_missing_child", "get_foreign_keys",
        hms.ForeignKeysRequest(foreign_db_name=DB, foreign_tbl_name="nope"))  # fmt: skip
    add("foreign_keys_missing_parent", "get_foreign_keys",
        hms.ForeignKeysRequest(parent_db_name=DB, parent_tbl_name="nope"))  # fmt: skip
    add("foreign_keys_none", "get_foreign_keys", hms.ForeignKeysRequest(), unordered=True)
    add("add_pk_missing_table", "add_primary_key",
        hms.AddPrimaryKeyRequest(primaryKeyCols=[_pk(hms, "nope", "id", "x_pk")]))  # fmt: skip
    add("add_pk_missing_col", "add_primary_key",
        hms.AddPrimaryKeyRequest(primaryKeyCols=[_pk(hms, "child", "nope", "x_pk")]))  # fmt: skip
    add("add_fk_missing_col", "add_foreign_key", hms.AddForeignKeyRequest(
        foreignKeyCols=[_fk(hms, "parent", "id", "child", "nope", "x_fk")]))  # fmt: skip
    add("add_fk_missing_parent", "add_foreign_key", hms.AddForeignKeyRequest(
        foreignKeyCols=[_fk(hms, "nope", "id", "child", "ref", "x_fk")]))  # fmt: skip
    add("add_fk_missing_child", "add_foreign_key", hms.AddForeignKeyRequest(
        foreignKeyCols=[_fk(hms, "parent", "id", "nope", "ref", "x_fk")]))  # fmt: skip
    add("drop_child", "drop_table", DB, "child", True)
    add("drop_parent", "drop_table", DB, "parent", True)


def _sweep_steps(hms: ModuleType, add: Any) -> None:
    """More calls on missing objects and with bad arguments (pt: ds string, hr int)."""
    spec = {"ds": "a"}
    add("exchange_missing_source", "exchange_partition", spec, DB, "nope", DB, "pt")
    add("exchange_missing_dest", "exchange_partition", spec, DB, "pt", DB, "nope")
    add("drop_partitions_req_missing_table", "drop_partitions_req", hms.DropPartitionsRequest(
        dbName=DB, tblName="nope", parts=hms.RequestPartsSpec(names=["ds=a/hr=1"]),
        deleteData=False, ifExists=True, needResult=True))  # fmt: skip
    add("add_partitions_req_missing_db", "add_partitions_req", hms.AddPartitionsRequest(
        dbName="no_such_db", tblName="pt", parts=[make_partition(hms, "no_such_db", "pt",
                                                                 ["c", "3"])],
        ifNotExists=False, needResult=True))  # fmt: skip
    add("append_by_name_missing_table", "append_partition_by_name", DB, "nope", "ds=a/hr=1")
    add("append_by_name_bad_name", "append_partition_by_name", DB, "pt", "garbage")
    add("get_partition_with_auth_missing_table", "get_partition_with_auth", DB, "nope",
        ["a", "1"], "u", ["g"])  # fmt: skip
    add("get_partitions_ps_with_auth_missing_db", "get_partitions_ps_with_auth", "no_such_db",
        "pt", ["a"], -1, "u", ["g"])  # fmt: skip
    add("get_partition_missing_db", "get_partition", "no_such_db", "pt", ["a", "1"])
    add("get_partition_wrong_count", "get_partition", DB, "pt", ["a", "1", "x"])
    add("drop_partition_wrong_count", "drop_partition", DB, "pt", ["a"], False)
    add("drop_partition_by_name_bad", "drop_partition_by_name", DB, "pt", "ds=a", False)
    add("get_partitions_by_filter_missing_db", "get_partitions_by_filter", "no_such_db", "pt",
        'ds = "a"', -1)  # fmt: skip
    add("get_num_by_filter_missing_db", "get_num_partitions_by_filter", "no_such_db", "pt",
        'ds = "a"')  # fmt: skip
    add("get_partition_names_ps_missing_db", "get_partition_names_ps", "no_such_db", "pt",
        ["a"], -1)  # fmt: skip
    add("create_database_bad_location", "create_database",
        make_database(hms, "sem_badloc", "file:/dev/null/x"), compare="type")  # fmt: skip
    add("get_function_missing_db", "get_function", "no_such_db", "fn")
    add("get_functions_missing_db", "get_functions", "no_such_db", "*")
    add("drop_table_missing_table", "drop_table", DB, "nope", False)
    add("alter_table_null_table", "alter_table", DB, "pt", None)
    add("create_table_null", "create_table", None)
    add("add_partition_null", "add_partition", None)
    add("create_function_null", "create_function", None)
    add("create_database_null_object", "create_database", None)
