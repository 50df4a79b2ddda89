"""Tables over a real socket: create/get/list/alter/rename/drop, HMS defaults and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table


@pytest.fixture(scope="module", autouse=True)
def tables_db(running) -> None:
    connection = running.client()
    create_db(connection, "tdb")
    connection.close()


def test_create_sets_hms_defaults(client, running) -> None:
    client.create_table(
        make_table("TDB", "Events", keys=[("DS", "string")], columns=[("V", "int")])
    )
    table = client.get_table("tdb", "events")
    assert (table.dbName, table.tableName) == ("tdb", "events")
    assert [c.name for c in table.sd.cols] == ["v"]
    assert [k.name for k in table.partitionKeys] == ["ds"]
    assert int(table.parameters["transient_lastDdlTime"]) > 0
    assert table.createTime > 0
    expected = running.warehouse.absolute() / "tdb.db" / "events"
    assert table.sd.location == "file:" + str(expected)
    assert expected.is_dir()


def test_get_missing_table_message(client) -> None:
    with pytest.raises(hms.NoSuchObjectException) as info:
        client.get_table("tdb", "missing")
    assert info.value.message == "tdb.missing table not found"


def test_create_existing_table(client) -> None:
    client.create_table(make_table("tdb", "twice"))
    with pytest.raises(hms.AlreadyExistsException):
        client.create_table(make_table("tdb", "twice"))


def test_create_in_missing_database(client) -> None:
    with pytest.raises(hms.InvalidObjectException):
        client.create_table(make_table("no_such_db", "t"))


def test_partition_key_clashing_with_column(client) -> None:
    with pytest.raises(hms.InvalidObjectException):
        client.create_table(make_table("tdb", "clash", keys=[("v", "int")], columns=[("v", "int")]))


def test_listing_and_lookup_variants(client) -> None:
    client.create_table(make_table("tdb", "list_a"))
    client.create_table(
        make_table("tdb", "list_b", tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})
    )
    assert {"list_a", "list_b"} <= set(client.get_all_tables("tdb"))
    assert client.get_tables("tdb", "list_*") == ["list_a", "list_b"]
    assert client.get_tables_by_type("tdb", "list_*", "EXTERNAL_TABLE") == ["list_b"]
    tables = client.get_table_objects_by_name("tdb", ["list_b", "nope", "list_a"])
    assert [t.tableName for t in tables] == ["list_b", "list_a"]
    result = client.get_table_req(hms.GetTableRequest(dbName="tdb", tblName="list_a"))
    assert result.table.tableName == "list_a"
    assert client.get_table("@hive#tdb", "list_a").tableName == "list_a"


def test_rename_keeps_partitions(client) -> None:
    client.create_table(make_table("tdb", "before", keys=[("ds", "string")]))
    client.add_partition(make_partition("tdb", "before", ["2024-01-01"]))
    table = client.get_table("tdb", "before")
    table.tableName = "after"
    client.alter_table("tdb", "before", table)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table("tdb", "before")
    assert client.get_table("tdb", "after").tableName == "after"
    parts = client.get_partitions("tdb", "after", -1)
    assert [(p.values, p.tableName) for p in parts] == [(["2024-01-01"], "after")]


def test_rename_onto_existing_table_refused(client) -> None:
    client.create_table(make_table("tdb", "r1"))
    client.create_table(make_table("tdb", "r2"))
    table = client.get_table("tdb", "r1")
    table.tableName = "r2"
    with pytest.raises(hms.InvalidOperationException):
        client.alter_table("tdb", "r1", table)


def test_alter_cannot_change_partition_keys(client) -> None:
    client.create_table(make_table("tdb", "keys", keys=[("ds", "string")]))
    table = client.get_table("tdb", "keys")
    table.partitionKeys = [hms.FieldSchema(name="other", type="string")]
    with pytest.raises(hms.InvalidOperationException):
        client.alter_table("tdb", "keys", table)


def test_alter_with_cascade_updates_partition_columns(client) -> None:
    client.create_table(make_table("tdb", "casc", keys=[("ds", "string")]))
    client.add_partition(make_partition("tdb", "casc", ["a"]))
    table = client.get_table("tdb", "casc")
    table.sd.cols = table.sd.cols + [hms.FieldSchema(name="extra", type="string")]
    client.alter_table_with_cascade("tdb", "casc", table, True)
    part = client.get_partition("tdb", "casc", ["a"])
    assert [c.name for c in part.sd.cols] == ["v", "extra"]


def test_fields_and_schema(client) -> None:
    client.create_table(
        make_table(
            "tdb", "schema", keys=[("ds", "string")], columns=[("a", "int"), ("b", "string")]
        )
    )
    assert [f.name for f in client.get_fields("tdb", "schema")] == ["a", "b"]
    assert [f.name for f in client.get_schema("tdb", "schema")] == ["a", "b", "ds"]
    with pytest.raises(hms.UnknownTableException):
        client.get_fields("tdb", "nope")


def test_drop_table_deletes_managed_data_only(client, running) -> None:
    client.create_table(make_table("tdb", "managed", keys=[("ds", "string")]))
    client.add_partition(make_partition("tdb", "managed", ["x"]))
    location = Path(client.get_table("tdb", "managed").sd.location[len("file:") :])
    assert (location / "ds=x").is_dir()
    client.drop_table("tdb", "managed", True)
    assert not location.exists()
    external_dir = running.warehouse / "external_data"
    external_dir.mkdir()
    table = make_table("tdb", "ext", tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})
    table.sd.location = "file:" + str(external_dir)
    client.create_table(table)
    client.drop_table("tdb", "ext", True)
    assert external_dir.is_dir()
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_table("tdb", "ext", True)


def test_recreated_table_does_not_see_old_partitions(client) -> None:
    client.create_table(make_table("tdb", "again", keys=[("ds", "string")]))
    client.add_partition(make_partition("tdb", "again", ["old"]))
    client.drop_table("tdb", "again", False)
    client.create_table(make_table("tdb", "again", keys=[("ds", "string")]))
    assert client.get_partitions("tdb", "again", -1) == []


def test_alter_counts_files_of_an_unpartitioned_table(client) -> None:
    create_db(client, "stats_db")
    client.create_table(make_table("stats_db", "t"))
    table = client.get_table("stats_db", "t")
    directory = local_dir(table.sd.location)
    (directory / "part-0.parquet").write_bytes(b"x" * 10)
    (directory / "sub").mkdir()
    (directory / "sub" / "part-1.parquet").write_bytes(b"y" * 5)
    (directory / "_SUCCESS").write_bytes(b"")
    (directory / ".part-0.crc").write_bytes(b"zz")
    table.parameters["k"] = "v"
    client.alter_table("stats_db", "t", table)
    params = client.get_table("stats_db", "t").parameters
    assert (params["numFiles"], params["totalSize"], params["k"]) == ("2", "15", "v")

    table.parameters.update(numFiles="7", totalSize="70")
    context = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
    client.alter_table_with_environment_context("stats_db", "t", table, context)
    params = client.get_table("stats_db", "t").parameters
    assert (params["numFiles"], params["totalSize"]) == ("7", "70")


def test_alter_without_location_is_refused(client) -> None:
    create_db(client, "noloc_db")
    client.create_table(make_table("noloc_db", "t"))
    table = client.get_table("noloc_db", "t")
    table.sd.location = None
    with pytest.raises(hms.MetaException, match="no location"):
        client.alter_table("noloc_db", "t", table)
    assert client.get_table("noloc_db", "t").sd.location is not None


def test_alter_fills_storage_defaults(client) -> None:
    create_db(client, "fill_db")
    client.create_table(make_table("fill_db", "t"))
    table = client.get_table("fill_db", "t")
    table.sd.skewedInfo = None
    table.sd.storedAsSubDirectories = None
    table.rewriteEnabled = None
    client.alter_table("fill_db", "t", table)
    stored = client.get_table("fill_db", "t")
    assert stored.sd.skewedInfo == hms.SkewedInfo(
        skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}
    )
    assert stored.sd.storedAsSubDirectories is False
    assert stored.rewriteEnabled is False


def local_dir(location: str) -> Path:
    """The local directory of a ``file:`` location."""
    return Path(location.removeprefix("file:"))
