"""HMS 4's request forms of existing calls, and the smaller HMS 4 calls around tables: each
does what the call it stands for does (the same checks, events and data operations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "rf"
USER = hms.PrincipalType.USER


@pytest.fixture()
def client(start_server):  # noqa: ANN201 - thriftpy2 client
    connection = start_server().client()
    create_db(connection, DB)
    return connection


def _dir(location: str) -> Path:
    return Path(location.removeprefix("file:"))


def _events(client: object, start: int) -> list[str]:
    request = hms.NotificationEventRequest(lastEvent=start, maxEvents=100)
    return [e.eventType for e in client.get_next_notification(request).events]  # type: ignore[attr-defined]


def test_table_forms(client) -> None:
    start = client.get_current_notificationEventId().eventId
    client.create_table_req(hms.CreateTableRequest(
        table=make_table(DB, "T", keys=[("ds", "string")], columns=[("id", "bigint")]),
        primaryKeys=[hms.SQLPrimaryKey(table_db=DB, table_name="t", column_name="id",
                                       key_seq=1, pk_name="pk_t")],
        notNullConstraints=[hms.SQLNotNullConstraint(table_db=DB, table_name="t",
                                                     column_name="id", nn_name="nn_id")],
    ))  # fmt: skip
    assert client.get_table(DB, "t").tableName == "t"
    keys = client.get_primary_keys(hms.PrimaryKeysRequest(db_name=DB, tbl_name="t"))
    assert [k.pk_name for k in keys.primaryKeys] == ["pk_t"]
    fields = client.get_fields_req(hms.GetFieldsRequest(dbName=DB, tblName="t")).fields
    assert [f.name for f in fields] == ["id"]
    schema = client.get_schema_req(hms.GetSchemaRequest(dbName=DB, tblName="t")).fields
    assert [f.name for f in schema] == ["id", "ds"]
    with pytest.raises(hms.UnknownTableException):
        client.get_fields_req(hms.GetFieldsRequest(dbName=DB, tblName="none"))
    location = Path(client.get_table(DB, "t").sd.location.removeprefix("file:"))
    assert location.is_dir()
    client.drop_table_req(hms.DropTableRequest(dbName=DB, tableName="t"))
    assert location.exists()  # deleteData unset: the data stays
    assert client.get_all_tables(DB) == []
    client.create_table(make_table(DB, "t2"))
    other = Path(client.get_table(DB, "t2").sd.location.removeprefix("file:"))
    client.drop_table_req(hms.DropTableRequest(dbName=DB, tableName="t2", deleteData=True))
    assert not other.exists()
    assert _events(client, start) == [
        "CREATE_TABLE", "ADD_PRIMARYKEY", "ADD_NOTNULLCONSTRAINT", "DROP_TABLE",  # HMS's order
        "CREATE_TABLE", "DROP_TABLE"]  # fmt: skip
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_table_req(hms.DropTableRequest(dbName=DB, tableName="t"))


def test_partition_forms(client) -> None:
    client.create_table(make_table(DB, "p", keys=[("ds", "string")]))
    appended = client.append_partition_req(
        hms.AppendPartitionsRequest(dbName=DB, tableName="p", partVals=["1"])
    )
    assert appended.values == ["1"]
    client.append_partition_req(hms.AppendPartitionsRequest(dbName=DB, tableName="p", name="ds=2"))
    with pytest.raises(hms.AlreadyExistsException):
        client.append_partition_req(
            hms.AppendPartitionsRequest(dbName=DB, tableName="p", partVals=["1"])
        )
    got = client.get_partition_req(hms.GetPartitionRequest(dbName=DB, tblName="p", partVals=["2"]))
    assert got.partition.values == ["2"]
    names = client.fetch_partition_names_req(hms.PartitionsRequest(dbName=DB, tblName="p"))
    assert names == ["ds=1", "ds=2"]
    limited = hms.PartitionsRequest(dbName=DB, tblName="p", maxParts=1)
    assert client.fetch_partition_names_req(limited) == ["ds=1"]
    changed = client.get_partition(DB, "p", ["1"])
    changed.parameters = {**changed.parameters, "mark": "x"}
    answer = client.alter_partitions_req(
        hms.AlterPartitionsRequest(dbName=DB, tableName="p", partitions=[changed])
    )
    assert answer == hms.AlterPartitionsResponse()
    assert client.get_partition(DB, "p", ["1"]).parameters["mark"] == "x"
    renamed = make_partition(DB, "p", ["3"])
    answer = client.rename_partition_req(hms.RenamePartitionRequest(
        dbName=DB, tableName="p", partVals=["2"], newPart=renamed))  # fmt: skip
    assert answer == hms.RenamePartitionResponse()
    assert client.get_partition_names(DB, "p", -1) == ["ds=1", "ds=3"]
    dirs = {v: _dir(client.get_partition(DB, "p", [v]).sd.location) for v in ("1", "3")}
    assert all(d.is_dir() for d in dirs.values())
    assert client.drop_partition_req(hms.DropPartitionRequest(
        dbName=DB, tblName="p", partName="ds=3", deleteData=True))  # fmt: skip
    assert not dirs["3"].exists()
    assert client.drop_partition_req(hms.DropPartitionRequest(
        dbName=DB, tblName="p", partVals=["1"]))  # fmt: skip
    assert dirs["1"].is_dir()  # deleteData unset: the data stays
    assert client.get_partition_names(DB, "p", -1) == []
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partition_req(hms.GetPartitionRequest(dbName=DB, tblName="p", partVals=["1"]))


def test_partition_specs_by_expr(client) -> None:
    client.create_table(make_table(DB, "e", keys=[("ds", "string")]))
    for day in ("1", "2", "3"):
        client.add_partition(make_partition(DB, "e", [day]))
    request = hms.PartitionsByExprRequest(dbName=DB, tblName="e", expr=b"ds >= '2'")
    answer = client.get_partitions_spec_by_expr(request)
    assert answer.hasUnknownPartitions is False
    values = [
        p.values
        for spec in answer.partitionsSpec
        for p in (spec.sharedSDPartitionSpec.partitions if spec.sharedSDPartitionSpec else [])
        + ((spec.partitionList.partitions or []) if spec.partitionList else [])
    ]
    assert sorted(values) == [["2"], ["3"]]


def _stats(table: str, part: str | None, column: str = "v") -> hms.ColumnStatistics:
    data = hms.ColumnStatisticsData(
        longStats=hms.LongColumnStatsData(lowValue=1, highValue=9, numNulls=0, numDVs=3)
    )
    desc = hms.ColumnStatisticsDesc(
        isTblLevel=part is None, dbName=DB, tableName=table, partName=part, lastAnalyzed=1
    )
    return hms.ColumnStatistics(
        statsDesc=desc, statsObj=[hms.ColumnStatisticsObj(column, "int", data)]
    )


def test_statistics_forms(client) -> None:
    client.create_table(make_table(DB, "s"))
    client.create_table(make_table(DB, "sp", keys=[("ds", "string")]))
    client.add_partition(make_partition(DB, "sp", ["1"]))
    cr = hms.CompactionInfoStruct(id=1, dbname=DB, tablename="s", type=1)
    assert client.find_columns_with_stats(cr) == []
    answer = client.update_table_column_statistics_req(
        hms.SetPartitionsStatsRequest(colStats=[_stats("s", None)])
    )
    assert answer.result is True
    assert client.get_table_column_statistics(DB, "s", "v").statsObj[0].colName == "v"
    assert client.find_columns_with_stats(cr) == ["v"]
    client.update_partition_column_statistics_req(
        hms.SetPartitionsStatsRequest(colStats=[_stats("sp", "ds=1")])
    )
    assert client.get_partition_column_statistics(DB, "sp", "ds=1", "v").statsObj
    on_part = hms.CompactionInfoStruct(id=2, dbname=DB, tablename="sp", partitionname="ds=1",
                                       type=1)  # fmt: skip
    assert client.find_columns_with_stats(on_part) == ["v"]
    with pytest.raises(hms.MetaException, match="Merge is not supported"):
        client.update_table_column_statistics_req(
            hms.SetPartitionsStatsRequest(colStats=[_stats("s", None)], needMerge=True)
        )


def test_tables_ext_and_dryrun(client) -> None:
    client.create_table(make_table(DB, "a1"))
    client.create_table(make_table(DB, "a2"))
    client.create_table(make_table(DB, "b1"))
    request = hms.GetTablesExtRequest(catalog="hive", database=DB, tableNamePattern="a*",
                                      requestedFields=2147483647)  # fmt: skip
    found = client.get_tables_ext(request)
    assert [(t.tblName, t.accessType) for t in found] == [("a1", 8), ("a2", 8)]
    request.limit = 1
    assert [t.tblName for t in client.get_tables_ext(request)] == ["a1"]
    dry = client.translate_table_dryrun(hms.CreateTableRequest(table=make_table(DB, "New")))
    assert dry.tableType == "EXTERNAL_TABLE" and dry.tableName == "new"
    assert dry.parameters["EXTERNAL"] == "TRUE"
    assert dry.parameters["external.table.purge"] == "TRUE"
    assert dry.sd.location.endswith("/new")
    assert "new" not in client.get_all_tables(DB)  # not created
    acid = make_table(DB, "acid", parameters={"transactional": "true"})
    assert client.translate_table_dryrun(hms.CreateTableRequest(table=acid)).tableType == (
        "MANAGED_TABLE"
    )
    with pytest.raises(hms.AlreadyExistsException):
        client.translate_table_dryrun(hms.CreateTableRequest(table=make_table(DB, "a1")))
    answer = client.cm_recycle(hms.CmRecycleRequest(dataPath="file:/nowhere/x", purge=False))
    assert answer == hms.CmRecycleResponse()


def test_refresh_privileges_replaces_the_object_grants(client) -> None:
    client.create_table(make_table(DB, "g"))
    on = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName=DB, objectName="g")

    def grant(who: str, privilege: str) -> hms.HiveObjectPrivilege:
        info = hms.PrivilegeGrantInfo(privilege=privilege, createTime=0, grantor="bob",
                                      grantorType=USER, grantOption=False)  # fmt: skip
        return hms.HiveObjectPrivilege(hiveObject=on, principalName=who, principalType=USER,
                                       grantInfo=info)  # fmt: skip

    def held() -> list[tuple[str, str]]:
        found = client.list_privileges(None, None, on)
        return sorted((p.principalName, p.grantInfo.privilege) for p in found)

    client.grant_privileges(hms.PrivilegeBag(privileges=[grant("ann", "SELECT")]))
    before = held()
    new = hms.GrantRevokePrivilegeRequest(
        requestType=hms.GrantRevokeType.GRANT,
        privileges=hms.PrivilegeBag(privileges=[grant("ann", "SELECT"), grant("cy", "INSERT")]),
    )
    assert client.refresh_privileges(on, "sql-std", new).success is True
    assert held() == [("ann", "SELECT"), ("cy", "INSERT")]
    only = hms.GrantRevokePrivilegeRequest(
        requestType=hms.GrantRevokeType.GRANT,
        privileges=hms.PrivilegeBag(privileges=[grant("cy", "UPDATE")]),
    )
    client.refresh_privileges(on, "sql-std", only)
    assert held() == [("cy", "UPDATE")]
    assert ("ann", "SELECT") in before


def _spec_values(specs: list[hms.PartitionSpec]) -> list[list[str]]:
    found = []
    for spec in specs:
        if spec.sharedSDPartitionSpec is not None:
            found.extend(p.values for p in spec.sharedSDPartitionSpec.partitions or [])
        if spec.partitionList is not None:
            found.extend(p.values for p in spec.partitionList.partitions or [])
    return sorted(found)


def test_partitions_with_specs(client) -> None:
    client.create_table(make_table(DB, "w", keys=[("ds", "string"), ("hr", "int")]))
    for ds, hr in (("a", 1), ("a", 2), ("b", 1)):
        part = make_partition(DB, "w", [ds, str(hr)])
        part.parameters = {"owner.tag": ds, "keep": "1"}
        client.add_partition(part)

    def ask(mode: int | None, filters: list[str] | None, **projection: str) -> list[list[str]]:
        spec = None if mode is None else hms.GetPartitionsFilterSpec(filterMode=mode,
                                                                     filters=filters)  # fmt: skip
        request = hms.GetPartitionsRequest(
            dbName=DB, tblName="w", filterSpec=spec,
            projectionSpec=hms.GetProjectionsSpec(fieldList=[], **projection),
        )  # fmt: skip
        return _spec_values(client.get_partitions_with_specs(request).partitionSpec)

    everything = [["a", "1"], ["a", "2"], ["b", "1"]]
    assert ask(None, None) == everything
    assert ask(hms.PartitionFilterMode.BY_NAMES, ["ds=b/hr=1", "ds=z/hr=1"]) == [["b", "1"]]
    assert ask(hms.PartitionFilterMode.BY_VALUES, ["a"]) == [["a", "1"], ["a", "2"]]
    assert ask(hms.PartitionFilterMode.BY_EXPR, ["ds = 'a'", "hr > 1"]) == [["a", "2"]]
    request = hms.GetPartitionsRequest(
        dbName=DB, tblName="w",
        projectionSpec=hms.GetProjectionsSpec(fieldList=[], includeParamKeyPattern="owner%"),
    )  # fmt: skip
    specs = client.get_partitions_with_specs(request).partitionSpec
    params = [
        p.parameters
        for s in specs
        for p in (s.sharedSDPartitionSpec.partitions if s.sharedSDPartitionSpec else [])
        + ((s.partitionList.partitions or []) if s.partitionList else [])
    ]
    assert params and all(set(p) == {"owner.tag"} for p in params)
    with pytest.raises(hms.MetaException, match="table not found"):  # the one it declares
        client.get_partitions_with_specs(hms.GetPartitionsRequest(dbName=DB, tblName="none"))
