"""Every call naming a catalog honours it (request ``catName``/``catalogName`` or an
``@cat#db`` prefix): a second catalog ``spark`` with a database ``sales`` is served through
the table, partition, function, statistics, constraint and lock calls; naming ``hive`` (or
no catalog) for it, or a catalog that does not exist, is answered as for a missing
database; answers carry the catalog."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

SPARK = "@spark#sales"


@pytest.fixture()
def sales(client) -> object:
    """The ``spark`` catalog with ``sales`` holding ``orders`` (partitioned by ``d``)."""
    if "spark" not in client.get_catalogs().names:
        client.create_catalog(
            hms.CreateCatalogRequest(
                catalog=hms.Catalog(name="spark", description="d", locationUri="file:/tmp/sp")
            )
        )
        client.create_database(hms.Database(name="sales", catalogName="spark", parameters={}))
        table = make_table("sales", "orders", keys=[("d", "string")], catName="spark")
        client.create_table(table)
        part = make_partition("sales", "orders", ["1"])
        part.catName = "spark"
        client.add_partition(part)
    return client


def _missing(call, *args) -> str:
    """The message of the NoSuchObjectException (or, where undeclared, MetaException) a
    call answers."""
    with pytest.raises((hms.NoSuchObjectException, hms.MetaException)) as info:
        call(*args)
    return info.value.message


def test_tables_by_request_catalog_and_prefix(sales) -> None:
    client = sales
    table = client.get_table(SPARK, "orders")
    assert (table.dbName, table.tableName, table.catName) == ("sales", "orders", "spark")
    got = client.get_table_req(
        hms.GetTableRequest(dbName="sales", tblName="orders", catName="spark")
    )
    assert got.table.catName == "spark"
    objects = client.get_table_objects_by_name_req(
        hms.GetTablesRequest(dbName="sales", tblNames=["orders"], catName="spark")
    )
    assert [t.catName for t in objects.tables] == ["spark"]
    assert [t.catName for t in client.get_table_objects_by_name(SPARK, ["orders"])] == ["spark"]
    assert client.get_all_tables(SPARK) == ["orders"]
    assert client.get_tables(SPARK, "ord*") == ["orders"]
    metas = client.get_table_meta("@spark#sal*", "*", [])
    assert [(m.dbName, m.tableName, m.catName) for m in metas] == [("sales", "orders", "spark")]
    assert [f.name for f in client.get_fields(SPARK, "orders")] == ["v"]
    fields = client.get_fields_req(
        hms.GetFieldsRequest(dbName="sales", tblName="orders", catName="spark")
    )
    assert [f.name for f in fields.fields] == ["v"]
    db = client.get_database(SPARK)
    assert db.catalogName == "spark"
    assert client.get_database("default").catalogName == "hive"


def test_hive_or_a_missing_catalog_does_not_find_the_database(sales) -> None:
    client = sales
    for name in ("sales", "@hive#sales"):
        assert _missing(client.get_table, name, "orders") == "Database hive.sales does not exist"
        assert client.get_all_tables(name) == []  # a listing lists nothing, as for none
        assert client.get_functions(name, "*") == []
    request = hms.GetTableRequest(dbName="sales", tblName="orders", catName="hive")
    assert _missing(client.get_table_req, request) == "Database hive.sales does not exist"
    request.catName = "nocat"
    assert _missing(client.get_table_req, request) == "Database nocat.sales does not exist"
    assert _missing(client.get_table, "@nocat#sales", "orders") == (
        "Database nocat.sales does not exist"
    )
    assert all(m.dbName != "sales" for m in client.get_table_meta("*", "orders", []))
    # a database of hive is not found in spark either
    create_db(client, "hive_only")
    assert client.get_all_tables("@spark#hive_only") == []
    assert _missing(client.get_table, "@spark#hive_only", "t") == (
        "Database spark.hive_only does not exist"
    )
    # creating a table in the wrong catalog fails; nothing is made
    with pytest.raises((hms.NoSuchObjectException, hms.MetaException)):
        client.create_table(make_table("sales", "wrong"))
    with pytest.raises((hms.NoSuchObjectException, hms.MetaException)):
        client.create_table(make_table("sales", "wrong", catName="hive"))
    assert client.get_all_tables(SPARK) == ["orders"]


def test_partitions(sales) -> None:
    client = sales
    part = client.get_partition(SPARK, "orders", ["1"])
    assert (part.values, part.catName) == (["1"], "spark")
    got = client.get_partition_req(
        hms.GetPartitionRequest(dbName="sales", tblName="orders", partVals=["1"], catName="spark")
    )
    assert (got.partition.values, got.partition.catName) == (["1"], "spark")
    assert client.get_partition_by_name(SPARK, "orders", "d=1").catName == "spark"
    assert client.get_partition_names(SPARK, "orders", -1) == ["d=1"]
    names = client.fetch_partition_names_req(
        hms.PartitionsRequest(dbName="sales", tblName="orders", catName="spark")
    )
    assert names == ["d=1"]
    specs = client.get_partitions_pspec(SPARK, "orders", -1)
    assert [s.dbName for s in specs] == ["sales"]
    added = make_partition("sales", "orders", ["2"])
    added.catName = "spark"
    client.add_partition(added)
    assert client.get_partition_names(SPARK, "orders", -1) == ["d=1", "d=2"]
    client.drop_partition_req(
        hms.DropPartitionRequest(
            dbName="sales", tblName="orders", partVals=["2"], catName="spark", deleteData=False
        )
    )
    for call, args in (
        (client.get_partition, ("sales", "orders", ["1"])),
        (client.get_partition_names, ("@hive#sales", "orders", -1)),
        (client.get_partitions_pspec, ("@nocat#sales", "orders", -1)),
    ):
        assert "sales does not exist" in _missing(call, *args)
    request = hms.GetPartitionRequest(
        dbName="sales", tblName="orders", partVals=["1"], catName="hive"
    )
    assert _missing(client.get_partition_req, request) == "Database hive.sales does not exist"


def test_functions(sales) -> None:
    client = sales
    function = hms.Function(
        functionName="f", dbName="sales", className="x.F", ownerName="o",
        ownerType=hms.PrincipalType.USER, createTime=0, functionType=hms.FunctionType.JAVA,
        resourceUris=[], catName="spark",
    )  # fmt: skip
    client.create_function(function)
    assert client.get_functions(SPARK, "*") == ["f"]
    found = client.get_function(SPARK, "f")
    assert (found.className, found.catName) == ("x.F", "spark")
    assert "sales does not exist" in _missing(client.get_function, "sales", "f")
    client.drop_function(SPARK, "f")
    assert client.get_functions(SPARK, "*") == []
    function.catName = None
    with pytest.raises((hms.NoSuchObjectException, hms.MetaException)):
        client.create_function(function)  # no catalog: hive, where sales is not


def test_statistics(sales) -> None:
    client = sales
    desc = hms.ColumnStatisticsDesc(
        isTblLevel=True, dbName="sales", tableName="orders", catName="spark"
    )
    stats = hms.ColumnStatisticsData(
        longStats=hms.LongColumnStatsData(lowValue=1, highValue=5, numNulls=0, numDVs=3)
    )
    obj = hms.ColumnStatisticsObj(colName="v", colType="int", statsData=stats)
    engine = {"engine": "hive"} if hasattr(hms.ColumnStatistics(), "engine") else {}
    assert client.update_table_column_statistics(
        hms.ColumnStatistics(statsDesc=desc, statsObj=[obj], **engine)
    )
    got = client.get_table_column_statistics(SPARK, "orders", "v")
    assert got.statsObj[0].statsData.longStats.highValue == 5
    result = client.get_table_statistics_req(
        hms.TableStatsRequest(dbName="sales", tblName="orders", colNames=["v"], catName="spark")
    )
    assert [o.colName for o in result.tableStats] == ["v"]
    request = hms.TableStatsRequest(
        dbName="sales", tblName="orders", colNames=["v"], catName="hive"
    )
    assert "sales does not exist" in _missing(client.get_table_statistics_req, request)
    desc.catName = "hive"
    with pytest.raises((hms.NoSuchObjectException, hms.MetaException)):
        client.update_table_column_statistics(
            hms.ColumnStatistics(statsDesc=desc, statsObj=[obj], **engine)
        )
    assert client.delete_table_column_statistics(SPARK, "orders", "v", "hive")


def test_constraints(sales) -> None:
    client = sales
    if "keyed" not in client.get_all_tables(SPARK):
        client.create_table(make_table("sales", "keyed", catName="spark"))
        key = hms.SQLPrimaryKey(
            table_db="sales", table_name="keyed", column_name="v", key_seq=1,
            pk_name="pk_keyed", enable_cstr=True, validate_cstr=False, rely_cstr=False,
            catName="spark",
        )  # fmt: skip
        client.add_primary_key(hms.AddPrimaryKeyRequest(primaryKeyCols=[key]))
    keys = client.get_primary_keys(
        hms.PrimaryKeysRequest(db_name="sales", tbl_name="keyed", catName="spark")
    ).primaryKeys
    assert [(k.column_name, k.catName) for k in keys] == [("v", "spark")]
    every = client.get_all_table_constraints(
        hms.AllTableConstraintsRequest(dbName="sales", tblName="keyed", catName="spark")
    ).allTableConstraints
    assert [k.catName for k in every.primaryKeys] == ["spark"]
    unique = client.get_unique_constraints(
        hms.UniqueConstraintsRequest(catName="spark", db_name="sales", tbl_name="keyed")
    )
    assert unique.uniqueConstraints == []
    for catalog in ("hive", "nocat"):
        request = hms.PrimaryKeysRequest(db_name="sales", tbl_name="keyed", catName=catalog)
        assert _missing(client.get_primary_keys, request) == (
            f"Database {catalog}.sales does not exist"
        )
        request = hms.AllTableConstraintsRequest(dbName="sales", tblName="keyed", catName=catalog)
        assert "sales does not exist" in _missing(client.get_all_table_constraints, request)


def test_locks(sales) -> None:
    client = sales
    component = hms.LockComponent(
        type=hms.LockType.SHARED_READ, level=hms.LockLevel.TABLE, dbname="sales",
        tablename="orders", operationType=hms.DataOperationType.SELECT,
    )  # fmt: skip
    lock = client.lock(hms.LockRequest(component=[component], user="u", hostname="h"))
    assert lock.state == hms.LockState.ACQUIRED
    client.unlock(hms.UnlockRequest(lockid=lock.lockid))
