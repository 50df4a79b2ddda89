"""HMS 2.3's smaller objects: indexes (and their index tables), types, partition specs,
partition event marks, a transaction's dynamic partitions, and table names by filter; with the
answers and messages the reference HMS 2.3.10 gives."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from thriftpy2.thrift import TApplicationException

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

GROUPING = "hive.hcatalog.partition.spec.grouping.enabled"
LOAD_DONE = hms.PartitionEventType.LOAD_DONE


def index(db: str, base: str, name: str, index_table: str, **params: str) -> hms.Index:
    sd = make_table(db, index_table).sd
    return hms.Index(indexName=name, indexHandlerClass="compact", dbName=db, origTableName=base,
                     createTime=0, lastAccessTime=0, indexTableName=index_table, sd=sd,
                     parameters=dict(params), deferredRebuild=True)  # fmt: skip


def index_table(db: str, name: str) -> hms.Table:
    return make_table(db, name, keys=[("ds", "string")], tableType="INDEX_TABLE",
                      columns=[("v", "int"), ("_bucketname", "string")])  # fmt: skip


@contextlib.contextmanager
def refused(kind: type[Exception], match: str) -> Iterator[None]:
    """Like pytest.raises, with ``match`` searched in the exception's own message (so that
    ``^`` and ``$`` anchor to it)."""
    with pytest.raises(kind) as caught:
        yield
    message = getattr(caught.value, "message", None) or str(caught.value)
    assert re.search(match, message), message


def local(uri: str) -> Path:
    return Path(uri.removeprefix("file:"))


# -- indexes ---------------------------------------------------------------------------------


def test_index_cycle(client) -> None:
    create_db(client, "ix")
    client.create_table(make_table("ix", "base", keys=[("ds", "string")]))
    added = client.add_index(index("ix", "base", "ByV", "ix__base_byv__", p="1"),
                             index_table("ix", "ix__base_byv__"))  # fmt: skip
    assert added.indexName == "ByV" and added.createTime > 0
    assert added.parameters["transient_lastDdlTime"] == str(added.createTime)
    assert client.get_table("ix", "ix__base_byv__").tableType == "INDEX_TABLE"
    found = client.get_index_by_name("IX", "BASE", "BYV")
    assert (found.indexName, found.dbName, found.origTableName, found.indexTableName) == (
        "byv", "ix", "base", "ix__base_byv__")  # fmt: skip
    assert found.sd.skewedInfo is not None and found.sd.storedAsSubDirectories is False
    assert client.get_index_names("ix", "base", 1) == ["byv"]  # HMS ignores the maximum
    assert [i.indexName for i in client.get_indexes("ix", "base", -1)] == ["byv"]
    assert client.get_index_names("ix", "nosuch", -1) == []
    assert client.get_indexes("nodb", "nosuch", -1) == []

    changed = index("ix", "base", "byv", "ix__base_byv__", q="2")
    changed.indexHandlerClass = "other"
    client.alter_index("ix", "base", "byv", changed)
    altered = client.get_index_by_name("ix", "base", "byv")
    assert altered.parameters["q"] == "2" and "p" not in altered.parameters
    assert altered.indexHandlerClass == "compact"  # only the parameters change (HMS 2.3)

    assert client.drop_index_by_name("ix", "base", "byv", True) is True
    with refused(hms.NoSuchObjectException, match="ix.ix__base_byv__ table not found"):
        client.get_table("ix", "ix__base_byv__")
    with refused(hms.NoSuchObjectException, match=r"^ix.base index=byv not found$"):
        client.drop_index_by_name("ix", "base", "byv", True)
    assert client.get_index_names("ix", "base", -1) == []


def test_index_errors(client) -> None:
    create_db(client, "ixe")
    client.create_table(make_table("ixe", "base"))
    first = index("ixe", "base", "i1", "ixe_i1")
    client.add_index(first, index_table("ixe", "ixe_i1"))
    with refused(hms.AlreadyExistsException, match=r"^Index already exists:Index\(indexN"):
        client.add_index(first, index_table("ixe", "ixe_i1"))
    with refused(hms.InvalidObjectException,
                       match="^Unable to add index because database or the orginal table do "
                       "not exist$"):  # fmt: skip
        client.add_index(index("ixe", "nobase", "i2", "t2"), index_table("ixe", "t2"))
    with refused(hms.InvalidObjectException,
                       match="^Unable to add index because index table already exists$"):
        client.add_index(index("ixe", "base", "i2", "ixe_i1"), index_table("ixe", "ixe_i1"))
    no_sd = index("ixe", "base", "i3", "ixe_i3")
    no_sd.sd = None
    with refused(hms.InvalidObjectException,
                       match="^Storage descriptor is not defined for index.$"):
        client.add_index(no_sd, index_table("ixe", "ixe_i3"))
    with pytest.raises(hms.NoSuchObjectException):  # its index table went again
        client.get_table("ixe", "ixe_i3")
    with refused(TApplicationException, match="Internal error processing add_index"):
        client.add_index(index("ixe", "base", "i4", "ixe_i1"), None)  # as HMS 2.3
    with refused(hms.NoSuchObjectException, match=r"^ixe.base index=zz not found$"):
        client.get_index_by_name("ixe", "base", "zz")
    with refused(hms.MetaException,
                       match=r"^NoSuchObjectException\(message:ixe.base index=zz not found\)$"):
        client.alter_index("ixe", "base", "zz", first)
    with refused(hms.InvalidOperationException,
                       match="^Underlying index table does not exist for the given index.$"):
        client.alter_index("ixe", "base", "i1", index("ixe", "base", "i1", "elsewhere"))
    with refused(hms.InvalidOperationException,
                       match="^Original table does not exist for the given index.$"):
        client.alter_index("ixe", "base", "i1", index("ixe", "nobase", "i1", "ixe_i1"))
    with refused(hms.MetaException,
                       match=r"^java.lang.RuntimeException: The table ixe_i1 is an index table. "
                       "Please do drop index instead.$"):  # fmt: skip
        client.drop_table("ixe", "ixe_i1", True)


def test_indexes_go_with_their_table(client) -> None:
    create_db(client, "ixd")
    client.create_table(make_table("ixd", "base"))
    client.add_index(index("ixd", "base", "a", "ixd_a"), index_table("ixd", "ixd_a"))
    client.add_index(index("ixd", "base", "b", "ixd_b"), index_table("ixd", "ixd_b"))
    client.add_partition(make_partition("ixd", "ixd_a", ["1"]))
    directory = local(client.get_table("ixd", "ixd_a").sd.location)
    assert (directory / "ds=1").is_dir()
    renamed = client.get_table("ixd", "base")
    renamed.tableName = "base2"
    client.alter_table("ixd", "base", renamed)  # a rename carries its indexes
    assert client.get_index_names("ixd", "base2", -1) == ["a", "b"]
    assert client.get_index_by_name("ixd", "base2", "a").origTableName == "base2"
    client.drop_table("ixd", "base2", False)  # index tables and their data go anyway (HMS)
    assert client.get_all_tables("ixd") == []
    assert not directory.exists()
    client.create_table(make_table("ixd", "base2"))
    assert client.get_index_names("ixd", "base2", -1) == []
    # A database drop takes index tables with the rest.
    client.add_index(index("ixd", "base2", "c", "ixd_c"), index_table("ixd", "ixd_c"))
    client.drop_database("ixd", True, True)
    assert "ixd" not in client.get_all_databases()


def test_index_drop_keeps_data_when_asked(client) -> None:
    create_db(client, "ixk")
    client.create_table(make_table("ixk", "base"))
    client.add_index(index("ixk", "base", "a", "ixk_a"), index_table("ixk", "ixk_a"))
    directory = local(client.get_table("ixk", "ixk_a").sd.location)
    assert client.drop_index_by_name("ixk", "base", "a", False)
    assert directory.is_dir() and client.get_all_tables("ixk") == ["base"]


# -- types -----------------------------------------------------------------------------------


def test_type_cycle(client) -> None:
    fields = [hms.FieldSchema(name="a", type="int", comment="c")]
    assert client.create_type(hms.Type(name="Point", type1="struct", fields=fields)) is True
    with refused(hms.AlreadyExistsException, match="^Type Point already exists$"):
        client.create_type(hms.Type(name="Point"))
    got = client.get_type(" Point ")  # HMS trims the name it looks up
    assert (got.name, got.type1, got.type2, got.fields) == ("Point", "struct", None, fields)
    with refused(hms.NoSuchObjectException, match='^Type "point" not found.$'):
        client.get_type("point")  # names are kept as written
    assert client.create_type(hms.Type(name="bare")) is True
    assert client.get_type("bare").fields == []
    for bad in ("a.b", "", "é", "with space"):
        with refused(hms.InvalidObjectException, match="^Invalid type name$"):
            client.create_type(hms.Type(name=bad))
    with refused(hms.MetaException, match="NullPointerException"):
        client.create_type(hms.Type(name=None))
    with refused(hms.MetaException, match="^Not yet implemented$"):
        client.get_type_all("bare")
    assert client.drop_type("Point") is True
    assert client.drop_type("Point") is True  # HMS 2.3 answers true for a missing type too
    with pytest.raises(hms.NoSuchObjectException):
        client.get_type("Point")
    client.drop_type("bare")


# -- partition specs -------------------------------------------------------------------------


def shared_spec(db: str, table: str, root: str, *parts: tuple[list[str], str]) -> hms.PartitionSpec:
    sd = make_partition(db, table, ["x"], root).sd
    bare = [hms.PartitionWithoutSD(values=values, createTime=0, lastAccessTime=0,
                                   relativePath=relative, parameters={"k": "v"})
            for values, relative in parts]  # fmt: skip
    return hms.PartitionSpec(dbName=db, tableName=table, rootPath=root,
                             sharedSDPartitionSpec=hms.PartitionSpecWithSharedSD(
                                 partitions=bare, sd=sd))  # fmt: skip


def list_spec(db: str, table: str, *parts: hms.Partition) -> hms.PartitionSpec:
    return hms.PartitionSpec(dbName=db, tableName=table,
                             partitionList=hms.PartitionListComposingSpec(partitions=list(parts)))


def test_pspec_round_trip(client, tmp_path: Path) -> None:
    create_db(client, "ps")
    client.create_table(make_table("ps", "t", keys=[("ds", "string"), ("hr", "string")]))
    root = client.get_table("ps", "t").sd.location
    shared = shared_spec("ps", "t", root, (["1", "a"], "/ds=1/hr=a"), (["2", "a"], "/custom"))
    assert client.add_partitions_pspec([shared]) == 2
    assert local(root + "/custom").is_dir()  # made by the add-partitions path
    outside = make_partition("ps", "t", ["3", "b"], f"file:{tmp_path}/elsewhere")
    other_serde = make_partition("ps", "t", ["4", "b"])
    other_serde.sd.serdeInfo.serializationLib = "other.Serde"
    assert client.add_partitions_pspec([list_spec("ps", "t", outside, other_serde)]) == 2
    assert client.add_partitions_pspec([]) == 0
    by_values = {tuple(p.values): p for p in client.get_partitions("ps", "t", -1)}
    assert by_values[("2", "a")].sd.location == root + "/custom"
    assert by_values[("2", "a")].parameters["k"] == "v"

    # Without the table property: one list of every partition, rooted at the table.
    (single,) = client.get_partitions_pspec("PS", "T", -1)
    assert (single.dbName, single.tableName, single.rootPath) == ("ps", "t", root)
    assert single.sharedSDPartitionSpec is None
    assert [p.values for p in single.partitionList.partitions] == [
        ["1", "a"], ["2", "a"], ["3", "b"], ["4", "b"]]  # fmt: skip
    (limited,) = client.get_partitions_pspec("ps", "t", 1)
    assert len(limited.partitionList.partitions) == 1

    # With it: shared descriptors for the partitions under the table, a list for the others.
    table = client.get_table("ps", "t")
    table.parameters[GROUPING] = "true"
    client.alter_table("ps", "t", table)
    specs = client.get_partitions_pspec("ps", "t", -1)
    grouped = [s.sharedSDPartitionSpec for s in specs if s.sharedSDPartitionSpec is not None]
    assert [[(p.values, p.relativePath) for p in g.partitions] for g in grouped] == [
        [(["1", "a"], "/ds=1/hr=a"), (["2", "a"], "/custom")], [(["4", "b"], "/ds=4/hr=b")]]
    assert {g.sd.location for g in grouped} == {root}
    assert grouped[1].sd.serdeInfo.serializationLib == "other.Serde"
    (rest,) = [s for s in specs if s.partitionList is not None]
    assert rest.rootPath is None and [p.values for p in rest.partitionList.partitions] == [
        ["3", "b"]]  # fmt: skip
    # What get_partitions_pspec answers is what add_partitions_pspec takes.
    client.create_table(make_table("ps", "copy", keys=[("ds", "string"), ("hr", "string")]))
    copy_root = client.get_table("ps", "copy").sd.location
    for spec in specs:
        spec.tableName = "copy"
        if spec.sharedSDPartitionSpec is not None:
            spec.sharedSDPartitionSpec.sd.location = copy_root
        else:
            for part in spec.partitionList.partitions:
                part.tableName = "copy"
    assert client.add_partitions_pspec(specs) == 4
    assert client.get_partition("ps", "copy", ["2", "a"]).sd.location == copy_root + "/custom"

    filtered = client.get_part_specs_by_filter("ps", "t", 'hr = "b"', -1)
    assert sorted(tuple(p.values) for s in filtered for p in
                  (s.sharedSDPartitionSpec or s.partitionList).partitions) == [
        ("3", "b"), ("4", "b")]  # fmt: skip
    table.parameters.pop(GROUPING)
    client.alter_table("ps", "t", table)
    (plain,) = client.get_part_specs_by_filter("PS", "T", 'ds = "zz"', -1)
    assert (plain.dbName, plain.tableName, plain.partitionList.partitions) == ("PS", "T", [])


def test_pspec_errors(client) -> None:
    create_db(client, "pse")
    client.create_table(make_table("pse", "t", keys=[("ds", "string")]))
    part = make_partition("pse", "t", ["1"])
    with refused(hms.InvalidObjectException,
                       match="^Unable to add partitions because database or table pse.nope "
                       "does not exist$"):  # fmt: skip
        client.add_partitions_pspec([list_spec("pse", "nope", part)])
    with refused(hms.MetaException,
                       match=r"^Partition does not belong to target table pse.t: Partition\("):
        client.add_partitions_pspec([list_spec("pse", "t", make_partition("pse", "u", ["1"]))])
    client.add_partitions_pspec([list_spec("pse", "t", part)])
    with refused(hms.AlreadyExistsException, match="^Partition already exists"):
        client.add_partitions_pspec([list_spec("pse", "t", part)])
    with refused(TApplicationException, match="add_partitions_pspec"):
        client.add_partitions_pspec([hms.PartitionSpec(dbName="pse", tableName="t")])
    with refused(hms.NoSuchObjectException, match="^pse.nope table not found$"):
        client.get_partitions_pspec("pse", "nope", -1)
    with refused(hms.NoSuchObjectException, match="^pse.nope table not found$"):
        client.get_part_specs_by_filter("pse", "nope", 'ds = "1"', -1)
    with refused(hms.MetaException, match="is not a partitioning key"):
        client.get_part_specs_by_filter("pse", "t", 'zz = "1"', -1)


# -- partition event marks -------------------------------------------------------------------


def test_partition_event_marks(client) -> None:
    create_db(client, "pe")
    client.create_table(make_table("pe", "t", keys=[("ds", "string"), ("hr", "string")]))
    spec = {"ds": "1", "hr": "a"}
    assert client.isPartitionMarkedForEvent("pe", "t", spec, LOAD_DONE) is False
    client.markPartitionForEvent("pe", "t", spec, LOAD_DONE)  # the partition need not exist
    assert client.isPartitionMarkedForEvent("pe", "t", spec, LOAD_DONE) is True
    assert client.isPartitionMarkedForEvent("pe", "t", {"ds": "2", "hr": "a"}, LOAD_DONE) is False
    assert client.isPartitionMarkedForEvent("PE", "T", spec, LOAD_DONE) is False  # names as sent
    with refused(hms.UnknownTableException, match="^Table: nope is not found.$"):
        client.markPartitionForEvent("pe", "nope", spec, LOAD_DONE)
    with refused(hms.UnknownTableException, match="^Table: nope is not found.$"):
        client.isPartitionMarkedForEvent("nodb", "nope", spec, LOAD_DONE)
    with refused(hms.InvalidPartitionException,
                       match="^Number of partition columns in table: 2 doesn't match with "
                       "number of supplied partition values: 1$"):  # fmt: skip
        client.markPartitionForEvent("pe", "t", {"ds": "1"}, LOAD_DONE)
    with refused(hms.InvalidPartitionException,
                       match="^No value found for partition column: hr$"):
        client.markPartitionForEvent("pe", "t", {"ds": "1", "HR": "a"}, LOAD_DONE)
    client.drop_table("pe", "t", True)
    client.create_table(make_table("pe", "t", keys=[("ds", "string"), ("hr", "string")]))
    assert client.isPartitionMarkedForEvent("pe", "t", spec, LOAD_DONE) is True  # kept by name


def test_partition_event_marks_expire_when_cleaned(start_server) -> None:
    server = start_server(extra_config={"hive.metastore.event.clean.freq": "1s",
                                        "hive.metastore.event.expiry.duration": "1s"})
    conn = server.client()
    create_db(conn, "pex")
    conn.create_table(make_table("pex", "t", keys=[("ds", "string")]))
    conn.markPartitionForEvent("pex", "t", {"ds": "1"}, LOAD_DONE)
    assert conn.isPartitionMarkedForEvent("pex", "t", {"ds": "1"}, LOAD_DONE) is True
    time.sleep(1.2)
    assert conn.isPartitionMarkedForEvent("pex", "t", {"ds": "1"}, LOAD_DONE) is False
    conn.markPartitionForEvent("pex", "t", {"ds": "1"}, LOAD_DONE)
    assert conn.isPartitionMarkedForEvent("pex", "t", {"ds": "1"}, LOAD_DONE) is True
    conn.close()


# -- dynamic partitions of a transaction -----------------------------------------------------


def test_add_dynamic_partitions(client) -> None:
    def dynamic(txnid: int, operation: int | None = hms.DataOperationType.INSERT):
        return hms.AddDynamicPartitions(txnid=txnid, dbname="db", tablename="t",
                                        partitionnames=["ds=1", "ds=2"],
                                        operationType=operation)  # fmt: skip

    with refused(hms.NoSuchTxnException, match="^No such transaction txnid:987654$"):
        client.add_dynamic_partitions(dynamic(987654))
    first, second = client.open_txns(hms.OpenTxnRequest(num_txns=2, user="u",
                                                        hostname="h")).txn_ids  # fmt: skip
    client.add_dynamic_partitions(dynamic(first))
    client.add_dynamic_partitions(dynamic(first, hms.DataOperationType.UPDATE))
    with refused(TApplicationException, match="add_dynamic_partitions"):
        client.add_dynamic_partitions(dynamic(first, hms.DataOperationType.UNSET))
    client.commit_txn(hms.CommitTxnRequest(txnid=first))
    with pytest.raises(hms.NoSuchTxnException):
        client.add_dynamic_partitions(dynamic(first))
    client.abort_txn(hms.AbortTxnRequest(txnid=second))
    with refused(hms.TxnAbortedException, match=f"^Transaction txnid:{second} already "):
        client.add_dynamic_partitions(dynamic(second))


# -- table names by filter -------------------------------------------------------------------


@pytest.fixture(scope="module")
def filtered_db(running) -> str:
    conn = running.client()
    create_db(conn, "tf")
    for name, owner, params in [("t1", "alice", {"a": "1", "b": "x", "Cap": "Y"}),
                                ("t2", "bob", {"a": "2"}), ("t3", "alice", {}),
                                ("t4", None, {"a": "1"}), ("t5", "Alice", {"a": ""})]:  # fmt: skip
        table = make_table("tf", name, parameters=params)
        table.owner = owner
        conn.create_table(table)
    later = make_table("tf", "t6")
    later.owner, later.lastAccessTime = "carol", 5
    conn.create_table(later)
    conn.close()
    return "tf"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('hive_filter_field_params__a = "1"', ["t1", "t4"]),
        ("hive_filter_field_params__a = 1", ["t1", "t4"]),
        ('hive_filter_field_params__a <> "1"', ["t2", "t5"]),
        ('"1" != hive_filter_field_params__a', ["t2", "t5"]),
        ('hive_filter_field_params__a = ""', ["t5"]),
        ('hive_filter_field_params__Cap = "Y"', ["t1"]),
        ('hive_filter_field_params__cap = "Y"', []),
        ('hive_filter_field_params__a like "."', ["t1", "t2", "t4"]),
        ('hive_filter_field_owner__ = "alice"', ["t1", "t3"]),
        ('hive_filter_field_owner__ <> "alice"', ["t2", "t5", "t6"]),
        ('hive_filter_field_owner__ like "al.*"', ["t1", "t3"]),
        ('hive_filter_field_owner__ like "(?i)al.*"', ["t1", "t3", "t5"]),
        ('hive_filter_field_owner__ like "al"', []),
        ('hive_filter_field_owner__ > "b"', ["t2", "t6"]),
        ("hive_filter_field_owner__ = 5", []),
        ("hive_filter_field_last_access__ > 0", ["t6"]),
        ("hive_filter_field_last_access__ <> 5", ["t1", "t2", "t3", "t4", "t5"]),
        ('hive_filter_field_last_access__ = "0"', []),
        ('hive_filter_field_owner__ = "alice" and hive_filter_field_params__a = "1"', ["t1"]),
        # a parameter the filter names is joined in: tables without it are never selected
        ('hive_filter_field_owner__ = "bob" or hive_filter_field_params__b = "x"', ["t1"]),
        ('hive_filter_field_owner__ = "bob" or hive_filter_field_params__a = "1"',
         ["t1", "t2", "t4"]),
        ('(hive_filter_field_owner__) in ("bob", "carol")', ["t2", "t6"]),
        ("", ["t1", "t2", "t3", "t4", "t5", "t6"]),
    ],
)
def test_table_names_by_filter(client, filtered_db: str, text: str, expected: list[str]) -> None:
    assert client.get_table_names_by_filter(filtered_db, text, -1) == expected


def test_table_names_by_filter_errors(client, filtered_db: str) -> None:
    assert client.get_table_names_by_filter(filtered_db, 'hive_filter_field_owner__ = "alice"',
                                            1) == ["t1"]  # fmt: skip
    assert client.get_table_names_by_filter("TF", 'hive_filter_field_owner__ = "bob"', -1) == [
        "t2"]  # fmt: skip
    assert client.get_table_names_by_filter("nodb", "", -1) == []  # no error, as HMS
    with refused(hms.UnknownDBException, match="^DB name is null or empty$"):
        client.get_table_names_by_filter("", "", -1)
    with refused(hms.InvalidOperationException, match="^null cannot apply null filter$"):
        client.get_table_names_by_filter(filtered_db, None, -1)
    refusals = {
        'hive_filter_field_params__a > "1"':
            "Only [<>, !=, =, LIKE] are supported operators for HIVE_FILTER_FIELD_PARAMS",
        "hive_filter_field_last_access__ like 0":
            "Like is not supported for HIVE_FILTER_FIELD_LAST_ACCESS",
        'owner = "x"':
            "Invalid key name in filter.  Use constants from org.apache.hadoop.hive.metastore.api",
        'HIVE_FILTER_FIELD_OWNER__ = "x"':
            "Invalid key name in filter.  Use constants from org.apache.hadoop.hive.metastore.api",
        "hive_filter_field_owner__ = ": "Error parsing partition filter",
    }  # fmt: skip
    for text, message in refusals.items():
        with pytest.raises(hms.MetaException) as caught:
            client.get_table_names_by_filter(filtered_db, text, -1)
        assert caught.value.message.startswith(message), text


# -- restarts and several server processes ---------------------------------------------------


def test_objects_survive_a_restart_and_are_shared(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    a, b = first.client(), second.client()
    create_db(a, "rs")
    a.create_table(make_table("rs", "base", keys=[("ds", "string")]))
    a.add_index(index("rs", "base", "i", "rs_i"), index_table("rs", "rs_i"))
    a.create_type(hms.Type(name="kept"))
    a.markPartitionForEvent("rs", "base", {"ds": "1"}, LOAD_DONE)
    # The other process sees them, and refuses what the first already did.
    assert b.get_index_names("rs", "base", -1) == ["i"]
    with pytest.raises(hms.AlreadyExistsException):
        b.create_type(hms.Type(name="kept"))
    assert b.isPartitionMarkedForEvent("rs", "base", {"ds": "1"}, LOAD_DONE) is True
    a.close()
    b.close()
    storage = first.config.storage
    first.stop()
    second.stop()
    again = start_server(storage=storage).client()
    assert again.get_index_by_name("rs", "base", "i").indexTableName == "rs_i"
    assert again.get_type("kept").name == "kept"
    assert again.isPartitionMarkedForEvent("rs", "base", {"ds": "1"}, LOAD_DONE) is True
    again.close()
