"""Unregister (``POST .../tables/{table}/unregister``) and its attacks, against the server
started as users start it: the catalog entry goes, every file stays (the file system is
compared before and after), the answer names the metadata to register again; authorized as
a drop; a retried ``Idempotency-Key`` replays the answer instead of a 404."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
from support.rest_attacks import Setting, files_under, local, start  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402
from support.rest_attacks import secured as secured_setting  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_attacks import view as _view  # noqa: E402

from metastore_server.thrift_api import hms  # noqa: E402


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from start(tmp_path_factory.mktemp("rest-unregister"))


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    yield from secured_setting(tmp_path_factory.mktemp("rest-unregister-secured"))


def _key() -> str:
    return str(getattr(uuid, "uuid7", uuid.uuid4)())


def test_unregister_drops_the_entry_and_keeps_every_file(setting: Setting) -> None:
    import pyarrow as pa

    both = setting.both
    rest = both.rest_catalog()
    rest.create_namespace("unreg")
    schema = pa.schema([pa.field("id", pa.int64())])
    table = rest.create_table("unreg.t", schema=schema)
    table.append(pa.table({"id": [1, 2]}, schema=schema))
    rest.load_table("unreg.t").append(pa.table({"id": [3]}, schema=schema))
    loaded = both.http("GET", "/v1/namespaces/unreg/tables/t")[1]
    table_dir = local(loaded["metadata"]["location"])
    before = files_under(table_dir)
    assert any(name.startswith("data/") for name in before), before
    status, answer = both.http("POST", "/v1/namespaces/unreg/tables/t/unregister")
    assert status == 200, answer
    assert answer["metadata-location"] == loaded["metadata-location"]
    assert answer["metadata"]["table-uuid"] == loaded["metadata"]["table-uuid"]
    assert answer["metadata"]["current-snapshot-id"] == loaded["metadata"]["current-snapshot-id"]
    assert files_under(table_dir) == before  # nothing deleted, nothing written
    with setting.thrift() as client, pytest.raises(hms.NoSuchObjectException):
        client.get_table("unreg", "t")
    assert both.http("GET", "/v1/namespaces/unreg/tables/t")[0] == 404
    status, again = both.http("POST", "/v1/namespaces/unreg/tables/t/unregister")
    assert status == 404 and again["error"]["type"] == "NoSuchTableException", again
    # registered again from the answer: the same table, its data all there
    status, body = both.http("POST", "/v1/namespaces/unreg/register", {
        "name": "t", "metadata-location": answer["metadata-location"]})
    assert status == 200, body
    assert sorted(rest.load_table("unreg.t").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert files_under(table_dir) == before
    setting.untouched()


def test_only_an_iceberg_table_is_unregistered(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "unreg_other")
    assert _view(both, "unreg_other", "v")[0] == 200
    with setting.thrift() as client:
        client.create_table(hms.Table(
            dbName="unreg_other", tableName="hive_t", tableType="EXTERNAL_TABLE",
            parameters={"EXTERNAL": "TRUE"},
            sd=hms.StorageDescriptor(cols=[hms.FieldSchema("a", "int")],
                                     location=f"file:{setting.root}/unreg_other.db/hive_t",
                                     serdeInfo=hms.SerDeInfo(parameters={}))))  # fmt: skip
    before = files_under(setting.root)
    for name, kind in (("v", "NoSuchTableException"), ("hive_t", "NoSuchTableException"),
                       ("none", "NoSuchTableException")):  # fmt: skip
        status, answer = both.http("POST", f"/v1/namespaces/unreg_other/tables/{name}/unregister")
        assert status == 404 and answer["error"]["type"] == kind, (name, answer)
    status, answer = both.http("POST", "/v1/namespaces/nowhere/tables/t/unregister")
    assert status == 404, answer
    assert both.http("GET", "/v1/namespaces/unreg_other/tables/t/unregister")[0] == 405
    with setting.thrift() as client:
        assert client.get_table("unreg_other", "hive_t").tableName == "hive_t"
        assert client.get_table("unreg_other", "v").tableType == "VIRTUAL_VIEW"
    assert files_under(setting.root) == before
    setting.untouched()


def test_a_retried_key_replays_the_unregister(setting: Setting) -> None:
    both = setting.both
    _namespace(both, "unreg_keys")
    status, created = _create(both, "unreg_keys", "t")
    assert status == 200, created
    table_dir = local(created["metadata"]["location"])
    before = files_under(table_dir)
    key = _key()
    path = "/v1/namespaces/unreg_keys/tables/t/unregister"
    first = both.exchange("POST", path, headers={"Idempotency-Key": key})
    assert first[0] == 200, first
    again = both.exchange("POST", path, headers={"Idempotency-Key": key})
    assert (again[0], again[2]) == (200, first[2])  # replayed, not run again (a 404)
    assert both.exchange("POST", path, headers={"Idempotency-Key": _key()})[0] == 404
    other = both.exchange("POST", "/v1/namespaces/unreg_keys/tables/u/unregister",
                          headers={"Idempotency-Key": key})  # fmt: skip
    assert other[0] == 422, other  # the same key for another request
    assert files_under(table_dir) == before
    setting.untouched()


def test_unregister_is_authorized_as_a_drop(secured: Setting) -> None:
    """bob may not unregister alice's table (403: it stays, its files too); nobody without
    credentials may (401); alice may."""
    both = secured.both
    alice, bob = _token(both, "alice"), _token(both, "bob")
    _namespace(both, "unreg_alice", alice)
    status, created = _create(both, "unreg_alice", "t", alice)
    assert status == 200, created
    table_dir = Path(local(created["metadata"]["location"]))
    before = files_under(table_dir)
    path = "/v1/namespaces/unreg_alice/tables/t/unregister"
    assert both.http("POST", path)[0] == 401
    status, answer = both.http("POST", path, token=bob)
    assert status == 403, answer
    with secured.thrift("alice") as client:
        assert client.get_table("unreg_alice", "t").owner == "alice"
    assert files_under(table_dir) == before
    assert both.http("POST", path, token=alice)[0] == 200
    assert files_under(table_dir) == before
    with secured.thrift("alice") as client, pytest.raises(hms.NoSuchObjectException):
        client.get_table("unreg_alice", "t")
    secured.untouched()
