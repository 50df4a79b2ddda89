"""The smaller HMS calls: table metadata, request forms, partition-name checks, the token store,
and the calls HMS answers without a store behind them."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_table


def test_table_meta_and_request_forms(client) -> None:
    create_db(client, "xc")
    client.create_table(make_table("xc", "events", keys=[("ds", "string")],
                                   parameters={"comment": "raw events"}))  # fmt: skip
    client.create_table(make_table("xc", "ext", tableType="EXTERNAL_TABLE",
                                   parameters={"EXTERNAL": "TRUE"}))  # fmt: skip
    metas = client.get_table_meta("xc", "*", [])
    assert [(m.dbName, m.tableName, m.tableType, m.comments) for m in metas] == [
        ("xc", "events", "MANAGED_TABLE", "raw events"),
        ("xc", "ext", "EXTERNAL_TABLE", None),
    ]
    assert [m.tableName for m in client.get_table_meta("x*", "e*", ["EXTERNAL_TABLE"])] == ["ext"]
    request = hms.GetTablesRequest(dbName="xc", tblNames=["EXT", "none"])
    got = client.get_table_objects_by_name_req(request)
    assert [t.tableName for t in got.tables] == ["ext"]
    with pytest.raises(hms.UnknownDBException):
        client.get_table_objects_by_name_req(hms.GetTablesRequest(dbName="nodb"))
    added = client.append_partition_with_environment_context(
        "xc", "events", ["2024-01-01"], hms.EnvironmentContext(properties={}))
    assert added.values == ["2024-01-01"]
    added = client.append_partition_by_name_with_environment_context(
        "xc", "events", "ds=2024-01-02", hms.EnvironmentContext(properties={}))
    assert added.values == ["2024-01-02"]


def test_partition_names_against_the_connections_whitelist(client) -> None:
    assert client.partition_name_has_valid_characters(["a b", "é"], True)
    client.setMetaConf("hive.metastore.partition.name.whitelist.pattern", "[a-z0-9_-]*")
    assert client.partition_name_has_valid_characters(["2024-01-01", "eu"], True)
    assert not client.partition_name_has_valid_characters(["a b"], False)
    with pytest.raises(hms.MetaException) as refused:
        client.partition_name_has_valid_characters(["ok", "a b"], True)
    assert refused.value.message.startswith(
        "Partition value 'a b' contains a character not matched by whitelist pattern")


def test_token_store_and_master_keys(client) -> None:
    assert client.add_token("id-1", "token-1")
    assert not client.add_token("id-1", "other")  # taken
    assert client.get_token("id-1") == "token-1"
    assert "id-1" in client.get_all_token_identifiers()
    assert client.remove_token("id-1") and not client.remove_token("id-1")
    assert client.get_token("id-1") == ""
    first = client.add_master_key("key-a")
    second = client.add_master_key("key-b")
    assert second > first
    client.update_master_key(first, "key-a2")
    assert {"key-a2", "key-b"} <= set(client.get_master_keys())
    with pytest.raises(hms.NoSuchObjectException, match="No key found with keyId: 999999"):
        client.update_master_key(999999, "x")
    assert client.remove_master_key(second) and not client.remove_master_key(second)


def test_calls_without_a_store_behind_them(client) -> None:
    with pytest.raises(hms.MetaException, match="only with kerberos authentication"):
        client.get_delegation_token("me", "hive/_HOST@REALM")
    with pytest.raises(hms.MetaException, match="only with kerberos authentication"):
        client.renew_delegation_token("t")
    result = client.get_file_metadata(hms.GetFileMetadataRequest(fileIds=[1, 2]))
    assert (result.metadata, result.isSupported) == ({}, False)
    assert not client.cache_file_metadata(
        hms.CacheFileMetadataRequest(dbName="d", tblName="t")).isSupported
    client.put_file_metadata(hms.PutFileMetadataRequest(fileIds=[1], metadata=[b"x"]))
    client.clear_file_metadata(hms.ClearFileMetadataRequest(fileIds=[1]))
    client.flushCache()
    assert client.getCpuProfile(1) == ""
