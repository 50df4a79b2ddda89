"""HMS's checks and answers over a real socket: tables it refuses to create or alter (unknown
column types, a column named twice, no storage descriptor, incompatible column type changes
unless the connection allows them), and the exception types and words of calls on missing
objects or with bad arguments. A refused change records no event and leaves nothing behind."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "hc"
DISALLOW = "hive.metastore.disallow.incompatible.col.type.changes"


@contextlib.contextmanager
def refused(kind: type[Exception], words: str) -> Iterator[None]:
    """The call raises ``kind`` with exactly ``words`` as its message."""
    with pytest.raises(kind) as caught:
        yield
    assert caught.value.message == words


@pytest.fixture(scope="module", autouse=True)
def checks_db(running) -> None:
    conn = running.client()
    create_db(conn, DB)
    conn.create_table(make_table(DB, "pt", keys=[("ds", "string"), ("hr", "int")]))
    conn.add_partitions([make_partition(DB, "pt", v) for v in (["a", "1"], ["b", "2"])])
    conn.close()


def _event_id(client) -> int:
    return client.get_current_notificationEventId().eventId


@pytest.mark.parametrize(
    ("name", "columns", "keys", "kind", "words"),
    [
        ("t_bad", [("v", "notatype<")], [], hms.InvalidObjectException,
         "Invalid column type: notatype<"),
        ("t_bad_key", [("v", "int")], [("p", "notatype")], hms.InvalidObjectException,
         "Invalid partition column type: notatype"),
        ("t_dup", [("v", "int"), ("V", "string")], [], hms.MetaException,
         "Table hc.t_dup names column v more than once"),
    ],
)  # fmt: skip
def test_create_table_refuses_what_hms_refuses(
    client, running, name: str, columns: list, keys: list, kind: type[Exception], words: str
) -> None:
    before = _event_id(client)
    with refused(kind, words):
        client.create_table(make_table(DB, name, keys=keys, columns=columns))
    with refused(kind, words):
        client.create_table_with_constraints(make_table(DB, name, keys=keys, columns=columns),
                                             [], [])  # fmt: skip
    assert _event_id(client) == before
    assert name not in client.get_all_tables(DB)
    assert not (running.warehouse / f"{DB}.db" / name).exists()


def test_create_table_without_storage_descriptor(client) -> None:
    table = make_table(DB, "t_no_sd")
    table.sd = None
    before = _event_id(client)
    with refused(hms.MetaException, "Table has no storage descriptor"):
        client.create_table(table)
    assert _event_id(client) == before
    assert "t_no_sd" not in client.get_all_tables(DB)


def test_type_changes_follow_the_connections_setting(client, running) -> None:
    client.create_table(make_table(DB, "chg", columns=[("s", "string"), ("n", "int")]))
    table = client.get_table(DB, "chg")
    table.sd.cols = [hms.FieldSchema(name="s", type="int"), hms.FieldSchema(name="n", type="int")]
    message = ("The following columns have types incompatible with the existing columns in "
               "their respective positions :\ns")  # fmt: skip
    with refused(hms.InvalidOperationException, message):
        client.alter_table(DB, "chg", table)
    with refused(hms.InvalidOperationException, "Invalid column type: notatype<"):
        bad = client.get_table(DB, "chg")
        bad.sd.cols[0].type = "notatype<"
        client.alter_table(DB, "chg", bad)
    widened = client.get_table(DB, "chg")
    widened.sd.cols[1].type = "bigint"
    client.alter_table(DB, "chg", widened)  # int -> bigint converts
    other = running.client()
    client.setMetaConf(DISALLOW, "false")
    client.alter_table(DB, "chg", table)
    assert [c.type for c in client.get_table(DB, "chg").sd.cols] == ["int", "int"]
    back = client.get_table(DB, "chg")
    back.sd.cols[0].type = "boolean"
    with refused(hms.InvalidOperationException, message):  # another connection: still on
        other.alter_table(DB, "chg", back)
    other.close()


def test_empty_database_names(client) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database("")
    with refused(hms.UnknownDBException, "DB name is null or empty"):
        client.get_table_objects_by_name("", ["pt"])


def test_missing_objects_answer_hms_exceptions(client) -> None:
    with refused(hms.UnknownTableException, "no_such_db.t table not found"):
        client.get_schema("no_such_db", "t")
    with refused(hms.UnknownTableException, "no_such_db.t table not found"):
        client.get_fields("no_such_db", "t")
    part = make_partition(DB, "nope", ["a", "1"])
    with refused(hms.InvalidOperationException,
                 "Unable to alter partition because table or database does not exist."):
        client.alter_partition(DB, "nope", part)  # fmt: skip
    gone = make_partition(DB, "pt", ["zz", "9"])
    with refused(hms.InvalidOperationException, "Alter partition operation failed: "
                 "NoSuchObjectException(message:partition values=[zz, 9])"):
        client.alter_partitions(DB, "pt", [make_partition(DB, "pt", ["a", "1"]), gone])
    with refused(hms.InvalidOperationException,
                 "Unable to rename partition because old partition does not exist"):
        client.rename_partition(DB, "pt", ["zz", "9"], make_partition(DB, "pt", ["c", "3"]))
    with refused(hms.MetaException, "function nosuch doesn't exist"):
        function = hms.Function(functionName="nosuch", dbName=DB, className="x.Y",
                                ownerName="o", ownerType=hms.PrincipalType.USER,
                                functionType=hms.FunctionType.JAVA, resourceUris=[])
        client.alter_function(DB, "nosuch", function)  # fmt: skip
    with refused(hms.MetaException, "Invalid partition key & values; keys [], values []"):
        client.get_partition_names_ps(DB, "pt", [], -1)
    table = client.get_table(DB, "pt")
    client.create_table(make_table(DB, "pt_other", keys=[("ds", "string"), ("hr", "int")]))
    table.tableName = "pt_other"
    with refused(hms.InvalidOperationException, f"new table {DB}.pt_other already exists"):
        client.alter_table(DB, "pt", table)


def test_keys_on_missing_tables_and_columns(client) -> None:
    def pk(table: str, column: str) -> hms.SQLPrimaryKey:
        return hms.SQLPrimaryKey(table_db=DB, table_name=table, column_name=column, key_seq=1,
                                 pk_name=f"{table}_pk")  # fmt: skip

    def fk(parent: str, child: str, column: str = "v") -> hms.SQLForeignKey:
        return hms.SQLForeignKey(pktable_db=DB, pktable_name=parent, pkcolumn_name="v",
                                 fktable_db=DB, fktable_name=child, fkcolumn_name=column,
                                 key_seq=1, fk_name=f"{child}_fk")  # fmt: skip

    before = _event_id(client)
    with refused(hms.InvalidObjectException, "Parent column not found: nope"):
        client.create_table_with_constraints(make_table(DB, "k1"), [pk("k1", "nope")], [])
    with refused(hms.InvalidObjectException, "Parent table not found: no_parent"):
        client.create_table_with_constraints(make_table(DB, "k2"), [], [fk("no_parent", "k2")])
    assert _event_id(client) == before
    assert [t for t in client.get_all_tables(DB) if t.startswith("k")] == []
    assert client.get_primary_keys(hms.PrimaryKeysRequest(db_name=DB, tbl_name="nope")) == (
        hms.PrimaryKeysResponse(primaryKeys=[]))  # fmt: skip
    client.create_table_with_constraints(make_table(DB, "parent"), [pk("parent", "v")], [])
    client.create_table_with_constraints(make_table(DB, "child"), [], [fk("parent", "child")])
    client.create_table_with_constraints(make_table(DB, "child2"), [], [fk("parent", "child2")])
    onto = client.get_foreign_keys(
        hms.ForeignKeysRequest(parent_db_name=DB, parent_tbl_name="parent")).foreignKeys
    assert sorted(k.fktable_name for k in onto) == ["child", "child2"]
    none = client.get_foreign_keys(
        hms.ForeignKeysRequest(foreign_db_name=DB, foreign_tbl_name="nope")).foreignKeys
    assert none == []


def test_show_compact_leaves_start_unset(client) -> None:
    client.compact(hms.CompactionRequest(dbname=DB, tablename="pt", partitionname="ds=a/hr=1",
                                         type=hms.CompactionType.MAJOR))  # fmt: skip
    shown = [c for c in client.show_compact(hms.ShowCompactRequest()).compacts if c.dbname == DB]
    assert [(c.state, c.start) for c in shown] == [("initiated", None)]


def test_config_values_hms_answers_itself(client) -> None:
    assert client.get_config_value("hive.exec.default.partition.name", "x") == (
        "__HIVE_DEFAULT_PARTITION__")  # fmt: skip
    assert re.fullmatch(r"\S+", client.get_config_value("hive.exec.max.dynamic.partitions", "x"))


def _function(name: str, class_name: str | None = "x.Y") -> hms.Function:
    return hms.Function(functionName=name, dbName=DB, className=class_name, ownerName="o",
                        ownerType=hms.PrincipalType.USER, functionType=hms.FunctionType.JAVA,
                        resourceUris=[])  # fmt: skip


def test_functions_answer_hms_words(client) -> None:
    with refused(hms.InvalidObjectException, "Function class name cannot be null"):
        client.create_function(_function("no_class", None))
    client.create_function(_function("fa"))
    client.create_function(_function("fb"))
    with refused(hms.MetaException, f"Function {DB}.fb already exists"):
        client.alter_function(DB, "fa", _function("fb"))
    with refused(hms.InvalidOperationException, "bad-name is not a valid object name"):
        client.alter_function(DB, "fa", _function("bad-name"))
    assert sorted(client.get_functions(DB, "f*")) == ["fa", "fb"]


def test_partition_changes_answer_hms_words(client) -> None:
    arity = "Invalid partition key & values; keys [ds, hr, ], values [a, ]"
    with refused(hms.MetaException, arity):
        client.alter_partition(DB, "pt", make_partition(DB, "pt", ["a"]))
    with refused(hms.MetaException, arity):
        client.rename_partition(DB, "pt", ["a"], make_partition(DB, "pt", ["c", "3"]))
    with refused(hms.InvalidOperationException,
                 "Unable to alter partition because table or database does not exist."):
        client.rename_partition(DB, "nope", ["a", "1"], make_partition(DB, "nope", ["c", "3"]))
    with refused(hms.InvalidOperationException, f"Partition already exists:{DB}.pt.[b, 2]"):
        client.rename_partition(DB, "pt", ["a", "1"], make_partition(DB, "pt", ["b", "2"]))
    with refused(hms.InvalidObjectException, f"{DB}.nope table not found"):
        client.append_partition_by_name(DB, "nope", "ds=a/hr=1")
    with pytest.raises(hms.AlreadyExistsException) as caught:
        client.append_partition(DB, "pt", ["a", "1"])
    assert caught.value.message.startswith("Partition already exists:Partition(values:[a, 1]")


def test_key_requests_need_their_names(client) -> None:
    with refused(hms.MetaException, "Required field 'db_name' is unset"):
        client.get_primary_keys(hms.PrimaryKeysRequest(tbl_name="pt"))
