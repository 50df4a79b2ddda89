"""A fixed sequence of Hive Metastore Thrift calls whose outcomes can be compared across servers.

Each :class:`Step` is one call. :func:`run_scenario` sends every step to a server and returns,
per step, a JSON-able *outcome*: ``{"ok": <normalized result>}`` or
``{"error": <exception type>, "message": <message>}``. Volatile fields (create times,
``transient_lastDdlTime``) and the server's warehouse directory are normalized so outcomes of
two servers (or of a server and a recorded golden file) compare with ``==``.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from . import typed_filters

WH = "<WH>"
TIME = "<time>"
VOLATILE_TIME_FIELDS = frozenset({"createTime"})
VOLATILE_PARAMS = frozenset({"transient_lastDdlTime"})
#: HMS 2.3.10's structs and their field ids (facts): answers are compared as a 2.3 client
#: reads them, without the fields only newer generations declare (and we fill for them).
SCHEMA_2_3 = Path(__file__).parents[1] / "compat" / "golden" / "hms-2.3.10-thrift-schema.json"


@functools.cache
def fields_2_3() -> dict[str, frozenset[int]]:
    """Struct name -> the field ids HMS 2.3.10 declares."""
    structs = json.loads(SCHEMA_2_3.read_text())["structs"]
    return {name: frozenset(f["id"] for f in s["fields"]) for name, s in structs.items()}

DB = "compat_db"
OTHER_DB = "compat_other"
TBL = "pt"
OWNER = "compat_owner"

# Partitions of compat_db.pt (ds string, hr int); hr=10 sorts between hr=1 and hr=2 by name.
PARTS = [
    ["2024-01-01", "1"],
    ["2024-01-01", "2"],
    ["2024-01-01", "10"],
    ["2024-01-02", "1"],
    ["2024-01-03", "5"],
    ["2024-02-01", "0"],
]

FILTERS = [
    'ds = "2024-01-01"',
    "ds = '2024-01-01'",
    'ds = "2024-01-01" and hr = 1',
    "hr = 2",
    "hr = 1",
    "hr > 1",
    "hr >= 2 and hr < 10",
    "hr < 10",
    "hr = -1",
    "hr > 1 and hr < 2",
    'ds > "2024-01-01" and ds <= "2024-01-03"',
    'ds >= "2024-01-02"',
    '(ds) in ("2024-01-02", "2024-01-03")',
    "(hr) in (1, 5)",
    '(ds) not in ("2024-01-01")',
    "(hr) not in (1, 2)",
    "hr between 1 and 2",
    "hr not between 1 and 2",
    'ds between "2024-01-02" and "2024-01-03"',
    'ds like "2024-01.*"',
    'ds like ".*-02"',
    'ds like ".*01-0.*"',
    'ds like "2024-01%"',
    'ds like "2024-01-0."',
    'ds like "2024-01-0_"',
    'hr like "1.*"',
    '(ds = "2024-01-02" or hr = 10)',
    'ds = "2024-01-02" or hr = 10',
    'ds = "2024-01-03" or hr = 2 and ds = "2024-01-01"',
    '(ds = "2024-01-03" or hr = 2) and ds = "2024-01-01"',
    'ds != "2024-01-01"',
    'ds <> "2024-01-01"',
    "hr != 1",
    "hr <> 1",
    '"2024-01-02" = ds',
    "1 = hr",
    '"2024-01-02" < ds',
    'DS = "2024-01-01"',
    'ds = "2024-01-01" AND HR = 1',
    'ds = "2024-01-01" AnD hr = 1',
    'ds = "2024-01-01" && hr = 1',
    'hr = "1"',
    'hr > "1"',
    "ds = 1",
    "ds > 1",
    "ds = 2024-01-01",
    "ds = date 2024-01-01",
    "hr = 1.5",
    "",
    "   ",
    'foo = "x"',
    "v = 1",
    "ds =",
    'ds = "x" and',
    'ds == "x"',
    'ds = "x" or or hr = 1',
    'not ds = "x"',
    "ds is null",
    '(ds = "2024-01-01"',
    'ds = "2024-01-01")',
    'ds in ("2024-01-01")',
    '(struct(ds, hr)) in (const struct("2024-01-01", 1), const struct("2024-01-03", 5))',
    "_ds = 1",
    "`ds` = 1",
    'ds = "unterminated',
    "ds = 'a\\'b'",
    "hr = 99999999999999999999",
]
# Filters both servers refuse with a MetaException, HMS in words that are Java internals
# (a NumberFormatException; an ANTLR lexer error for a key Hive 4 accepts).
FILTER_COMPARE = {
    "hr = 99999999999999999999": "type",
    "_ds = 1": "type",
}
DUP_PART = ["2024-09-09", "9"]  # only ever sent twice in one (failing) batch

# Partitions of compat_db.typed (d date, b bigint, s string).
TYPED_PARTS = [
    ["2024-01-01", "1", "a"],
    ["2024-01-02", "20", "b"],
    ["2024-02-01", "3", "B"],
    ["2024-02-01", "-4", "a b"],
]

TYPED_FILTERS = [
    'd = "2024-01-01"',
    "d = 2024-01-01",
    'd > "2024-01-01"',
    "d >= 2024-01-02",
    'd like "2024-01.*"',
    "d = 1",
    'd = "not a date"',
    "b = 20",
    "b > 2",
    "b < 0",
    'b = "20"',
    "(b) in (1, 3)",
    's = "a"',
    's = "B"',
    's like "a.*"',
    's like "(?i)b"',
    's > "B"',
    's = "a b"',
    'd = "2024-02-01" and b = 3',
    'd = "2024-02-01" or s = "a"',
]


@dataclass(frozen=True)
class Step:
    """One Thrift call: outcome key ``name``, method and positional arguments.

    ``compare`` says how much of the outcome must match across servers: ``full``; ``prefix``
    (error type and the message up to its first ``(`` — for messages embedding a Java
    ``toString()`` of a Thrift struct); ``type`` (error type only — for messages that are
    Java internals such as NullPointerException texts); ``parse_error`` (like ``full``, but
    a filter syntax error only has to be a MetaException starting "Error parsing partition
    filter": HMS's details are ANTLR internals); ``values`` (a partition list compared by the
    sorted partition values only); ``none`` (recorded, not compared).
    ``unordered`` sorts a list result before comparing (order unspecified by HMS).
    """

    name: str
    method: str
    args: tuple[Any, ...] = ()
    unordered: bool = field(default=False, compare=False)
    compare: str = field(default="full", compare=False)


def _sd(hms: ModuleType, location: str | None, cols: list[tuple[str, str]]) -> Any:
    return hms.StorageDescriptor(
        cols=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in cols],
        location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(
            name=None,
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={"serialization.format": "1"},
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def make_table(
    hms: ModuleType,
    db: str,
    name: str,
    *,
    location: str | None = None,
    part_keys: tuple[tuple[str, str], ...] = (("ds", "string"), ("hr", "int")),
    table_type: str = "MANAGED_TABLE",
    params: dict[str, str] | None = None,
) -> Any:
    """A Parquet table like the ones Spark creates."""
    return hms.Table(
        tableName=name,
        dbName=db,
        owner=OWNER,
        createTime=1700000000,
        lastAccessTime=0,
        retention=0,
        sd=_sd(hms, location, [("v", "int")]),
        partitionKeys=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in part_keys],
        parameters=dict(params or {}),
        viewOriginalText=None,
        viewExpandedText=None,
        tableType=table_type,
    )


def make_partition(
    hms: ModuleType, db: str, tbl: str, values: list[str], location: str | None = None
) -> Any:
    """A partition of a (v int) Parquet table; location None lets the server choose."""
    return hms.Partition(
        values=list(values),
        dbName=db,
        tableName=tbl,
        createTime=1700000000,
        lastAccessTime=0,
        sd=_sd(hms, location, [("v", "int")]),
        parameters={},
    )


def make_database(hms: ModuleType, name: str, location: str | None = None, **extra: Any) -> Any:
    """A database as Spark sends it (description '', parameters {}, owner set)."""
    return hms.Database(
        name=name,
        description=extra.pop("description", ""),
        locationUri=location,
        parameters=extra.pop("parameters", {}),
        ownerName=extra.pop("ownerName", OWNER),
        ownerType=extra.pop("ownerType", hms.PrincipalType.USER),
        **extra,
    )


def make_function(hms: ModuleType, db: str, name: str) -> Any:
    """A Java UDF with one jar resource."""
    return hms.Function(
        functionName=name,
        dbName=db,
        className="com.example.MyUpper",
        ownerName=OWNER,
        ownerType=hms.PrincipalType.USER,
        createTime=1700000000,
        functionType=hms.FunctionType.JAVA,
        resourceUris=[hms.ResourceUri(resourceType=hms.ResourceType.JAR, uri="file:/tmp/f.jar")],
    )


def _long_stats(hms: ModuleType, column: str) -> Any:
    data = hms.ColumnStatisticsData(longStats=hms.LongColumnStatsData(numNulls=0, numDVs=1))
    return [hms.ColumnStatisticsObj(colName=column, colType="int", statsData=data)]


def statistics_steps(hms: ModuleType) -> list[Step]:
    """Column statistics calls naming a missing table, partition or column, and a request
    naming partitions of which only some exist. (No statistics are stored: HMS would then set
    ``COLUMN_STATS_ACCURATE`` on the partition, which the later steps read.)"""
    part, gone = "ds=2024-01-01/hr=1", "ds=1999-01-01/hr=1"

    def stats(table: str, partition: str | None, column: str = "v") -> Any:
        desc = hms.ColumnStatisticsDesc(isTblLevel=partition is None, dbName=DB,
                                        tableName=table, partName=partition)  # fmt: skip
        return hms.ColumnStatistics(statsDesc=desc, statsObj=_long_stats(hms, column))

    def parts(table: str, names: list[str]) -> Any:
        return hms.PartitionsStatsRequest(dbName=DB, tblName=table, colNames=["v"],
                                          partNames=names)  # fmt: skip

    return [
        Step("stats_some_partitions_missing", "get_partitions_statistics_req",
             (parts(TBL, [part, gone]),)),
        Step("stats_aggr_some_partitions_missing", "get_aggr_stats_for",
             (parts(TBL, [part, gone]),)),
        Step("stats_table_missing_req", "get_table_statistics_req",
             (hms.TableStatsRequest(dbName=DB, tblName="nosuch", colNames=["v"]),)),
        Step("stats_partitions_missing_table", "get_partitions_statistics_req",
             (parts("nosuch", [part]),)),
        Step("stats_aggr_missing_table", "get_aggr_stats_for", (parts("nosuch", [part]),)),
        Step("stats_table_column_missing_table", "get_table_column_statistics",
             (DB, "nosuch", "v")),
        Step("stats_partition_column_missing_table", "get_partition_column_statistics",
             (DB, "nosuch", part, "v")),
        Step("stats_update_table_missing_table", "update_table_column_statistics",
             (stats("nosuch", None),)),
        Step("stats_update_table_missing_column", "update_table_column_statistics",
             (stats(TBL, None, "nosuchcol"),)),
        Step("stats_update_partition_missing_table", "update_partition_column_statistics",
             (stats("nosuch", part),)),
        Step("stats_update_partition_missing", "update_partition_column_statistics",
             (stats(TBL, gone),)),
        Step("stats_delete_table_missing_table", "delete_table_column_statistics",
             (DB, "nosuch", "v")),
        Step("stats_delete_partition_missing_table", "delete_partition_column_statistics",
             (DB, "nosuch", part, "v")),
        Step("stats_delete_partition_missing", "delete_partition_column_statistics",
             (DB, TBL, gone, "v")),
    ]  # fmt: skip


def scenario(hms: ModuleType, wh: str) -> list[Step]:
    """The call sequence; ``wh`` is the server's warehouse directory (for explicit locations)."""
    steps: list[Step] = []

    def add(
        name: str, method: str, *args: Any, unordered: bool = False, compare: str = "full"
    ) -> None:
        steps.append(Step(name, method, args, unordered, compare))

    t = make_table
    p = make_partition
    # --- session / config
    add("set_ugi", "set_ugi", "alice", ["g1", "g2"])
    # HMS 2.3 drops the connection on an empty group list; not something to imitate.
    add("set_ugi_no_groups", "set_ugi", "bob", [], compare="none")
    add("set_ugi_user_in_groups", "set_ugi", "root", ["root"])
    add("get_config_value_dynpart", "get_config_value", "hive.exec.dynamic.partition.mode", "x")
    add("get_config_value_missing", "get_config_value", "hive.no.such.key", "fallback")
    add("get_config_value_not_hive", "get_config_value", "fs.defaultFS", "fallback")
    add("get_config_value_metastore", "get_config_value", "hive.metastore.try.direct.sql", "x")
    add("get_config_value_password", "get_config_value", "javax.jdo.option.ConnectionPassword", "x")
    # --- databases
    add("get_database_default", "get_database", "default")
    add("get_database_missing", "get_database", "no_such_db")
    add("get_database_upper", "get_database", "DEFAULT")
    add("create_database", "create_database", make_database(hms, DB, f"file:{wh}/{DB}.db"))
    add("create_database_exists", "create_database", make_database(hms, DB))
    add("create_database_exists_upper", "create_database", make_database(hms, DB.upper()))
    add(
        "create_database_no_location",
        "create_database",
        make_database(
            hms,
            OTHER_DB,
            description="other",
            parameters={"k": "v"},
            ownerType=None,
            ownerName=None,
        ),
    )
    add("create_database_bad_name", "create_database", make_database(hms, "bad-name"))
    add("create_database_empty_name", "create_database", make_database(hms, ""))
    add("create_database_mixed_case", "create_database", make_database(hms, "Compat_Mixed"))
    add("get_database_created", "get_database", DB)
    add("get_database_no_location", "get_database", OTHER_DB)
    add("get_database_mixed_case", "get_database", "compat_mixed")
    add("get_databases_star", "get_databases", "*")
    add("get_databases_prefix", "get_databases", "compat*")
    add("get_databases_alternation", "get_databases", "default|compat_db")
    add("get_databases_upper", "get_databases", "COMPAT*")
    add("get_databases_dot", "get_databases", "compat.db")
    add("get_databases_empty", "get_databases", "")
    add("get_all_databases", "get_all_databases")
    # --- tables
    add("get_table_missing", "get_table", DB, "no_such_table")
    add("get_table_missing_db", "get_table", "no_such_db", "t")
    add("create_table", "create_table", t(hms, DB, TBL))
    add("get_table", "get_table", DB, TBL)
    add("get_table_upper", "get_table", DB.upper(), TBL.upper())
    add("create_table_exists", "create_table", t(hms, DB, TBL))
    add("create_table_missing_db", "create_table", t(hms, "no_such_db", "t"))
    add("create_table_bad_name", "create_table", t(hms, DB, "bad-name"))
    add(
        "create_table_external",
        "create_table",
        t(
            hms,
            DB,
            "ext",
            location=f"file:{wh}/external/ext",
            table_type="EXTERNAL_TABLE",
            params={"EXTERNAL": "TRUE"},
        ),
    )
    add("get_table_external", "get_table", DB, "ext")
    add("create_table_unpartitioned", "create_table", t(hms, DB, "plain", part_keys=()))
    add(
        "create_table_with_env",
        "create_table_with_environment_context",
        t(hms, DB, "tenv", params={"a": "b"}),
        hms.EnvironmentContext(properties={}),
    )
    add("get_table_with_env", "get_table", DB, "tenv")
    add("create_table_upper_name", "create_table", t(hms, DB, "UpperT"))
    add("get_table_upper_name", "get_table", DB, "uppert")
    add("get_table_unpartitioned", "get_table", DB, "plain")
    add("get_tables_star", "get_tables", DB, "*")
    add("get_tables_prefix", "get_tables", DB, "p*")
    add("get_tables_alternation", "get_tables", DB, "pt|ext")
    add("get_tables_upper", "get_tables", DB, "PT")
    add("get_tables_empty", "get_tables", DB, "")
    add("get_tables_missing_db", "get_tables", "no_such_db", "*")
    add("get_all_tables", "get_all_tables", DB)
    add("get_all_tables_missing_db", "get_all_tables", "no_such_db")
    add("get_tables_by_type_managed", "get_tables_by_type", DB, "*", "MANAGED_TABLE")
    add("get_tables_by_type_external", "get_tables_by_type", DB, "*", "EXTERNAL_TABLE")
    add("get_tables_by_type_view", "get_tables_by_type", DB, "*", "VIRTUAL_VIEW")
    add("get_tables_by_type_bogus", "get_tables_by_type", DB, "*", "BOGUS")
    add(
        "get_table_objects_by_name",
        "get_table_objects_by_name",
        DB,
        [TBL, "nope", "ext"],
        unordered=True,
    )
    add("get_table_objects_by_name_empty", "get_table_objects_by_name", DB, [])
    add("get_table_objects_by_name_missing_db", "get_table_objects_by_name", "no_such_db", [TBL])
    add("get_table_req", "get_table_req", hms.GetTableRequest(dbName=DB, tblName=TBL))
    add("get_table_req_missing", "get_table_req", hms.GetTableRequest(dbName=DB, tblName="nope"))
    # --- partitions: add
    add("add_partition", "add_partition", p(hms, DB, TBL, PARTS[0]))
    add("add_partition_exists", "add_partition", p(hms, DB, TBL, PARTS[0]), compare="prefix")
    add("add_partition_too_few_values", "add_partition", p(hms, DB, TBL, ["2024-09-09"]))
    add("add_partition_too_many_values", "add_partition", p(hms, DB, TBL, ["a", "1", "x"]))
    add("add_partition_missing_table", "add_partition", p(hms, DB, "nope", PARTS[0]))
    add("add_partition_unpartitioned", "add_partition", p(hms, DB, "plain", ["x"]))
    add("add_partition_empty_value", "add_partition", p(hms, DB, TBL, ["", "1"]))
    add("add_partitions", "add_partitions", [p(hms, DB, TBL, PARTS[1]), p(hms, DB, TBL, PARTS[2])])
    add("add_partitions_empty", "add_partitions", [])
    # Failing batches list the offending partition first and use throw-away values for
    # duplicates: HMS 2.3 creates partition directories in a thread pool while it validates
    # the batch, and a later add_partition on a pre-existing directory gains numFiles/totalSize.
    add(
        "add_partitions_one_exists",
        "add_partitions",
        [p(hms, DB, TBL, PARTS[0]), p(hms, DB, TBL, PARTS[3])],
        compare="prefix",
    )
    add(
        "add_partitions_duplicates",
        "add_partitions",
        [p(hms, DB, TBL, DUP_PART), p(hms, DB, TBL, DUP_PART)],
        compare="prefix",
    )
    add(
        "add_partitions_req_if_not_exists",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=[p(hms, DB, TBL, PARTS[3]), p(hms, DB, TBL, PARTS[0])],
            ifNotExists=True,
            needResult=True,
        ),
    )
    add(
        "add_partitions_req_exists",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=[p(hms, DB, TBL, PARTS[0]), p(hms, DB, TBL, PARTS[4])],
            ifNotExists=False,
            needResult=True,
        ),
        compare="prefix",
    )
    add(
        "add_partitions_req_duplicates",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=[p(hms, DB, TBL, DUP_PART), p(hms, DB, TBL, DUP_PART)],
            ifNotExists=True,
            needResult=True,
        ),
        compare="prefix",
    )
    add(
        "add_partitions_req_no_result",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=[p(hms, DB, TBL, PARTS[4])],
            ifNotExists=False,
            needResult=False,
        ),
    )
    add(
        "add_partitions_req_explicit_location",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=[p(hms, DB, TBL, PARTS[5], location=f"file:{wh}/elsewhere/p5")],
            ifNotExists=False,
            needResult=True,
        ),
    )
    add(
        "add_partitions_req_wrong_table",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=[p(hms, DB, "ext", ["2030-01-01", "1"])],
            ifNotExists=False,
            needResult=True,
        ),
        compare="prefix",
    )
    add(
        "add_partitions_req_missing_table",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB,
            tblName="nope",
            parts=[p(hms, DB, "nope", PARTS[0])],
            ifNotExists=True,
            needResult=True,
        ),
    )
    add(
        "add_partitions_req_empty",
        "add_partitions_req",
        hms.AddPartitionsRequest(
            dbName=DB, tblName=TBL, parts=[], ifNotExists=True, needResult=True
        ),
    )
    # --- partitions: read
    add("get_partition", "get_partition", DB, TBL, PARTS[0])
    add("get_partition_missing", "get_partition", DB, TBL, ["2099-01-01", "1"])
    add("get_partition_too_few_values", "get_partition", DB, TBL, ["2024-01-01"])
    add("get_partition_missing_table", "get_partition", DB, "nope", PARTS[0])
    add("get_partition_with_auth", "get_partition_with_auth", DB, TBL, PARTS[0], "root", ["root"])
    add("get_partition_by_name", "get_partition_by_name", DB, TBL, "ds=2024-01-01/hr=1")
    add("get_partition_by_name_reordered", "get_partition_by_name", DB, TBL, "hr=1/ds=2024-01-01")
    add("get_partition_by_name_missing", "get_partition_by_name", DB, TBL, "ds=2099-01-01/hr=1")
    add("get_partition_by_name_bad", "get_partition_by_name", DB, TBL, "garbage")
    add("get_partition_by_name_partial", "get_partition_by_name", DB, TBL, "ds=2024-01-01")
    add(
        "get_partitions_by_names",
        "get_partitions_by_names",
        DB,
        TBL,
        ["ds=2024-01-03/hr=5", "ds=2099-01-01/hr=1", "ds=2024-01-01/hr=1"],
    )
    add("get_partitions_by_names_empty", "get_partitions_by_names", DB, TBL, [])
    add("get_partitions_by_names_bad", "get_partitions_by_names", DB, TBL, ["garbage"])
    add(
        "get_partitions_by_names_missing_table",
        "get_partitions_by_names",
        DB,
        "nope",
        ["ds=2024-01-01/hr=1"],
    )
    add("get_partitions", "get_partitions", DB, TBL, -1)
    add("get_partitions_max2", "get_partitions", DB, TBL, 2)
    add("get_partitions_max0", "get_partitions", DB, TBL, 0)
    add("get_partitions_missing_table", "get_partitions", DB, "nope", -1)
    add("get_partitions_with_auth", "get_partitions_with_auth", DB, TBL, -1, "root", ["root"])
    add("get_partitions_ps", "get_partitions_ps", DB, TBL, ["2024-01-01"], -1)
    add(
        "get_partitions_ps_blank_first", "get_partitions_ps", DB, TBL, ["", "1"], -1, unordered=True
    )
    add("get_partitions_ps_full", "get_partitions_ps", DB, TBL, ["2024-01-01", "10"], -1)
    add("get_partitions_ps_empty", "get_partitions_ps", DB, TBL, [], -1)
    add("get_partitions_ps_too_many", "get_partitions_ps", DB, TBL, ["a", "1", "x"], -1)
    add("get_partitions_ps_max1", "get_partitions_ps", DB, TBL, ["2024-01-01"], 1)
    add(
        "get_partitions_ps_with_auth",
        "get_partitions_ps_with_auth",
        DB,
        TBL,
        ["", ""],
        -1,
        "root",
        ["root"],
    )
    add(
        "get_partitions_ps_with_auth_missing_table",
        "get_partitions_ps_with_auth",
        DB,
        "nope",
        ["", ""],
        -1,
        "root",
        ["root"],
    )
    add("get_partition_names", "get_partition_names", DB, TBL, -1)
    add("get_partition_names_max3", "get_partition_names", DB, TBL, 3)
    add("get_partition_names_missing_table", "get_partition_names", DB, "nope", -1)
    # HMS returns get_partition_names_ps in storage (insertion) order, not by name.
    add(
        "get_partition_names_ps",
        "get_partition_names_ps",
        DB,
        TBL,
        ["2024-01-01", ""],
        -1,
        unordered=True,
    )
    add(
        "get_partition_names_ps_hr",
        "get_partition_names_ps",
        DB,
        TBL,
        ["", "1"],
        -1,
        unordered=True,
    )
    add(
        "get_partition_names_ps_short",
        "get_partition_names_ps",
        DB,
        TBL,
        ["2024-01-01"],
        -1,
        unordered=True,
    )
    add("get_partition_names_ps_missing_table", "get_partition_names_ps", DB, "nope", [""], -1)
    # --- filters
    for i, flt in enumerate(FILTERS):
        how = FILTER_COMPARE.get(flt, "parse_error")
        add(f"filter_{i:02d}[{flt}]", "get_partitions_by_filter", DB, TBL, flt, -1, compare=how)
        add(f"num_filter_{i:02d}[{flt}]", "get_num_partitions_by_filter", DB, TBL, flt, compare=how)
    add("filter_max2", "get_partitions_by_filter", DB, TBL, 'ds = "2024-01-01"', 2)
    add("filter_missing_table", "get_partitions_by_filter", DB, "nope", 'ds = "x"', -1)
    add("filter_missing_db", "get_partitions_by_filter", "no_such_db", TBL, 'ds = "x"', -1)
    add("num_filter_missing_table", "get_num_partitions_by_filter", DB, "nope", 'ds = "x"')
    add("filter_unpartitioned", "get_partitions_by_filter", DB, "plain", 'ds = "x"', -1)
    # --- a table with date / bigint / string partition keys
    typed_keys = (("d", "date"), ("b", "bigint"), ("s", "string"))
    add("create_table_typed", "create_table", t(hms, DB, "typed", part_keys=typed_keys))
    add(
        "add_partitions_typed",
        "add_partitions",
        [p(hms, DB, "typed", vals) for vals in TYPED_PARTS],
    )
    for i, flt in enumerate(TYPED_FILTERS):
        add(
            f"typed_filter_{i:02d}[{flt}]",
            "get_partitions_by_filter",
            DB,
            "typed",
            flt,
            -1,
            compare="parse_error",
        )
    add("get_partition_names_typed", "get_partition_names", DB, "typed", -1)
    add("drop_table_typed", "drop_table", DB, "typed", True)
    # --- generated filters on (date, bigint, string) keys; see support.typed_filters
    add("create_table_gen", "create_table", t(hms, DB, "gen", part_keys=typed_filters.KEYS))
    add("add_partitions_gen", "add_partitions", [p(hms, DB, "gen", v) for v in typed_filters.PARTS])
    for i, (flt, _tree) in enumerate(typed_filters.generated_filters()):
        add(
            f"{GENERATED_PREFIX}{i:02d}[{flt}]",
            "get_partitions_by_filter",
            DB,
            "gen",
            flt,
            -1,
            compare="values",
        )
    add("drop_table_gen", "drop_table", DB, "gen", True)
    # --- name helpers
    add("partition_name_to_vals", "partition_name_to_vals", "ds=2024-01-01/hr=1")
    add("partition_name_to_spec", "partition_name_to_spec", "ds=2024-01-01/hr=1")
    add("partition_name_to_vals_escaped", "partition_name_to_vals", "ds=a%2Fb%3Ac/hr=1")
    add("partition_name_to_spec_escaped", "partition_name_to_spec", "ds=a%2Fb%3Ac/hr=1")
    add("partition_name_to_vals_upper_key", "partition_name_to_vals", "DS=x/HR=1")
    add("partition_name_to_spec_upper_key", "partition_name_to_spec", "DS=x/HR=1")
    add("partition_name_to_vals_bad", "partition_name_to_vals", "garbage")
    add("partition_name_to_spec_bad", "partition_name_to_spec", "garbage")
    add("partition_name_to_vals_empty", "partition_name_to_vals", "")
    add("partition_name_to_spec_empty", "partition_name_to_spec", "")
    add("partition_name_to_vals_eq_in_value", "partition_name_to_vals", "ds=a=b/hr=1")
    add("partition_name_to_vals_trailing_slash", "partition_name_to_vals", "ds=a/")
    # --- escaping: a partition value with special characters
    add("add_partition_special_chars", "add_partition", p(hms, DB, TBL, ["a/b:c", "3"]))
    add("get_partition_special_chars", "get_partition", DB, TBL, ["a/b:c", "3"])
    add("get_partition_names_special_chars", "get_partition_names", DB, TBL, -1)
    add(
        "get_partition_by_name_special_chars", "get_partition_by_name", DB, TBL, "ds=a%2Fb%3Ac/hr=3"
    )
    add("filter_special_chars", "get_partitions_by_filter", DB, TBL, 'ds = "a/b:c"', -1)
    add("drop_partition_special_chars", "drop_partition", DB, TBL, ["a/b:c", "3"], True)
    # --- partitions: drop
    add("drop_partition", "drop_partition", DB, TBL, PARTS[5], True)
    add("drop_partition_missing", "drop_partition", DB, TBL, PARTS[5], True)
    add("drop_partition_too_few_values", "drop_partition", DB, TBL, ["2024-01-01"], True)
    add("drop_partition_missing_table", "drop_partition", DB, "nope", PARTS[0], True)
    add("drop_partition_by_name", "drop_partition_by_name", DB, TBL, "ds=2024-01-03/hr=5", False)
    add(
        "drop_partition_by_name_missing",
        "drop_partition_by_name",
        DB,
        TBL,
        "ds=2024-01-03/hr=5",
        False,
    )
    add("drop_partition_by_name_bad", "drop_partition_by_name", DB, TBL, "garbage", False)
    add(
        "drop_partitions_req",
        "drop_partitions_req",
        hms.DropPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=hms.RequestPartsSpec(names=["ds=2024-01-02/hr=1"]),
            deleteData=True,
            needResult=True,
        ),
    )
    add(
        "drop_partitions_req_missing",
        "drop_partitions_req",
        hms.DropPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=hms.RequestPartsSpec(names=["ds=2099-01-01/hr=1"]),
            deleteData=True,
            ifExists=True,
            needResult=True,
        ),
    )
    add(
        "drop_partitions_req_missing_not_if_exists",
        "drop_partitions_req",
        hms.DropPartitionsRequest(
            dbName=DB,
            tblName=TBL,
            parts=hms.RequestPartsSpec(names=["ds=2099-01-01/hr=1"]),
            deleteData=True,
            ifExists=False,
            needResult=True,
        ),
    )
    add("get_partition_names_after_drops", "get_partition_names", DB, TBL, -1)
    # --- functions
    add("create_function", "create_function", make_function(hms, DB, "my_upper"))
    add("create_function_exists", "create_function", make_function(hms, DB, "my_upper"))
    add("create_function_missing_db", "create_function", make_function(hms, "no_such_db", "f"))
    add("get_function", "get_function", DB, "my_upper")
    add("get_function_upper", "get_function", DB, "MY_UPPER")
    add("get_function_missing", "get_function", DB, "nope")
    add("get_functions", "get_functions", DB, "*")
    add("get_functions_prefix", "get_functions", DB, "my_u*")
    add("get_all_functions", "get_all_functions")
    add("drop_function", "drop_function", DB, "my_upper")
    add("drop_function_missing", "drop_function", DB, "my_upper")
    add("get_all_functions_after_drop", "get_all_functions")
    # --- column statistics on missing tables, partitions and columns (HMS's types and words)
    for step in statistics_steps(hms):
        steps.append(step)
    # --- alter / rename
    # Clients send the whole table as read back (location set) with the changes applied.
    pt_loc = f"file:{wh}/{DB}.db/{TBL}"
    renamed = t(hms, DB, "pt_renamed", location=pt_loc)
    add(
        "alter_table_rename_missing",
        "alter_table",
        DB,
        "nope",
        t(hms, DB, "nope2", location=f"file:{wh}/{DB}.db/nope"),
    )
    add(
        "alter_table_rename_to_existing", "alter_table", DB, TBL, t(hms, DB, "ext", location=pt_loc)
    )
    add(
        "alter_table_null_location",
        "alter_table",
        DB,
        "plain",
        t(hms, DB, "plain", part_keys=()),
        compare="type",
    )
    add(
        "alter_table_params",
        "alter_table",
        DB,
        "plain",
        t(hms, DB, "plain", part_keys=(), params={"k": "v"}, location=f"file:{wh}/{DB}.db/plain"),
    )
    add("get_table_after_alter_params", "get_table", DB, "plain")
    add(
        "alter_table_with_env",
        "alter_table_with_environment_context",
        DB,
        "plain",
        t(
            hms,
            DB,
            "plain",
            part_keys=(),
            params={"k": "v2", "numFiles": "1"},
            location=f"file:{wh}/{DB}.db/plain",
        ),
        hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"}),
    )
    add("get_table_after_alter_with_env", "get_table", DB, "plain")
    add(
        "alter_table_change_part_keys",
        "alter_table",
        DB,
        "plain",
        t(hms, DB, "plain", location=f"file:{wh}/{DB}.db/plain"),
    )
    add("alter_table_rename", "alter_table", DB, TBL, renamed)
    add("get_table_old_name", "get_table", DB, TBL)
    add("get_table_new_name", "get_table", DB, "pt_renamed")
    add("get_partitions_after_rename", "get_partitions", DB, "pt_renamed", -1)
    # --- drops
    add("drop_database_not_empty", "drop_database", DB, True, False)
    # HMS 2.3 answers a NullPointerException text here (clients check existence first).
    add("drop_database_missing", "drop_database", "no_such_db", True, False, compare="type")
    add("drop_database_default", "drop_database", "default", True, False)
    add("drop_table", "drop_table", DB, "pt_renamed", True)
    add("drop_table_missing", "drop_table", DB, "pt_renamed", True)
    add("drop_table_missing_db", "drop_table", "no_such_db", "t", True)
    add(
        "drop_table_with_env",
        "drop_table_with_environment_context",
        DB,
        "tenv",
        True,
        hms.EnvironmentContext(properties={}),
    )
    add("drop_database_cascade", "drop_database", DB, True, True)
    add("get_database_after_drop", "get_database", DB)
    add("drop_database_empty", "drop_database", OTHER_DB, True, False)
    add("drop_database_mixed_case", "drop_database", "COMPAT_MIXED", True, False)
    add("get_all_databases_end", "get_all_databases")
    return steps


def normalize(value: Any, warehouse: str) -> Any:
    """Thrift result → JSON-able data with volatile fields and the warehouse dir replaced."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value.replace(warehouse, WH) if warehouse else value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = normalize(k, warehouse)
            out[key] = TIME if key in VOLATILE_PARAMS else normalize(v, warehouse)
        return out
    if isinstance(value, list | tuple):
        return [normalize(v, warehouse) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((normalize(v, warehouse) for v in value), key=repr)
    spec = getattr(value, "thrift_spec", None)
    if spec is not None:
        out = {}
        known = fields_2_3().get(type(value).__name__)
        for fid in sorted(spec):
            if known is not None and fid not in known:
                continue
            name = spec[fid][1]
            v = getattr(value, name, None)
            if name in VOLATILE_TIME_FIELDS and isinstance(v, int) and v > 0:
                out[name] = TIME
            else:
                out[name] = normalize(v, warehouse)
        return out
    return repr(value)


def error_outcome(exc: BaseException, warehouse: str = "") -> dict[str, Any]:
    """Outcome of a call that raised: exception type name and message."""
    message = getattr(exc, "message", None)
    if message is None:
        message = str(exc)
    out: dict[str, Any] = {"error": type(exc).__name__, "message": normalize(message, warehouse)}
    kind = getattr(exc, "type", None)
    if isinstance(kind, int):
        out["type"] = kind
    return out


@contextlib.contextmanager
def _connected(make_client: Callable[[], Any]) -> Iterator[list[Any]]:
    holder = [make_client()]
    try:
        yield holder
    finally:
        with contextlib.suppress(Exception):
            holder[0].close()


def run_scenario(
    hms: ModuleType,
    make_client: Callable[[], Any],
    warehouse: str,
    steps: list[Step] | None = None,
) -> dict[str, dict[str, Any]]:
    """Send every step to a server; outcome per step name (reconnects after transport errors)."""
    from thriftpy2.thrift import TApplicationException, TException
    from thriftpy2.transport import TTransportException

    outcomes: dict[str, dict[str, Any]] = {}
    with _connected(make_client) as holder:
        for step in steps if steps is not None else scenario(hms, warehouse):
            try:
                result = getattr(holder[0], step.method)(*step.args)
            except (TTransportException, EOFError, ConnectionError, TimeoutError) as exc:
                outcomes[step.name] = {"error": "transport", "message": f"{exc!r}"}
                with contextlib.suppress(Exception):
                    holder[0].close()
                holder[0] = make_client()
                continue
            except (TApplicationException, TException) as exc:
                outcomes[step.name] = error_outcome(exc, warehouse)
                continue
            value = normalize(result, warehouse)
            if step.unordered and isinstance(value, list):
                value = sorted(value, key=repr)
            outcomes[step.name] = {"ok": value}
    return outcomes


PARSE_ERROR = "Error parsing partition filter"
GENERATED_PREFIX = "gen_filter_"


def comparable(step: Step, outcome: dict[str, Any] | None) -> Any:
    """The part of an outcome that must be equal across servers (see :class:`Step`)."""
    if outcome is None or step.compare == "none":
        return None
    if step.compare == "values" and isinstance(outcome.get("ok"), list):
        return {"ok": sorted(part["values"] for part in outcome["ok"])}
    if "error" in outcome and step.compare == "parse_error":
        message = str(outcome.get("message", ""))
        if outcome["error"] == "MetaException" and message.startswith(PARSE_ERROR):
            return {"error": outcome["error"], "message": PARSE_ERROR}
        return outcome
    if "error" in outcome and step.compare in ("type", "prefix"):
        reduced: dict[str, Any] = {"error": outcome["error"]}
        if step.compare == "prefix":
            reduced["message"] = str(outcome.get("message", "")).split("(", 1)[0]
        return reduced
    return outcome


def differences(expected: Any, actual: Any, path: str = "", limit: int = 8) -> list[str]:
    """Human-readable paths where two normalized outcomes differ (at most ``limit``)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in list(a) + [k for k in b if k not in a]:
                walk(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{where}.{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            out.append(f"{where or '.'}: expected {_short(a)}, got {_short(b)}")

    walk(expected, actual, path)
    return out


def _short(value: Any, width: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width] + "..."
