"""Vended credentials of the Iceberg REST catalog against moto's S3 and STS (IAM enforced):
pyiceberg's RestCatalog, holding no AWS credentials of its own, creates, writes and reads a
table on S3 with only the credentials the catalog vends; loadCredentials refreshes them; each
credential's session policy (as STS received it) reaches the table's objects only."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
pytest.importorskip("moto.server", reason="the S3 tests need moto[server]")
from support.rest_vend import ASK, Vending, permits, vending, without_own_credentials  # noqa: E402

from metastore_server.rest.vending import ACCESS_KEY, EXPIRES, SECRET_KEY, TOKEN  # noqa: E402


@pytest.fixture(scope="module")
def vend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vending]:
    with vending(tmp_path_factory.mktemp("rest-vend")) as running:
        yield running


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_own_credentials(monkeypatch, tmp_path)


def _catalog(vend: Vending) -> Any:
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("vend", uri=vend.both.uri)


def test_config_advertises_the_credentials_endpoint(vend: Vending) -> None:
    status, config = vend.both.http("GET", "/v1/config")
    assert status == 200
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials" in (
        config["endpoints"])


def test_pyiceberg_writes_and_reads_with_only_vended_credentials(
    vend: Vending, no_keys: None
) -> None:
    import pyarrow as pa

    catalog = _catalog(vend)
    catalog.create_namespace("vended", {"location": f"s3://{vend.s3.bucket}/wh/vended.db"})
    schema = pa.schema([pa.field("id", pa.int64())])
    table = catalog.create_table("vended.events", schema=schema)
    table.append(pa.table({"id": [1, 2]}, schema=schema))
    again = _catalog(vend).load_table("vended.events")
    again.append(pa.table({"id": [3]}, schema=schema))
    assert sorted(_catalog(vend).load_table("vended.events").scan().to_arrow()["id"].to_pylist()) \
        == [1, 2, 3]
    keys = vend.s3.keys("wh/vended.db/events/")
    assert any(k.startswith("wh/vended.db/events/data/") for k in keys), keys
    # Each credential's session policy reaches this table's objects only.
    before = len(vend.assumed())
    _catalog(vend).load_credentials("vended.events", table.metadata_location)
    [(session, policy)] = vend.policies_since(before)
    assert session == "iceberg-anonymous"
    inside = f"arn:aws:s3:::{vend.s3.bucket}/wh/vended.db/events/data/x.parquet"
    assert permits(policy, "s3:GetObject", inside) and permits(policy, "s3:PutObject", inside)
    for outside in (f"arn:aws:s3:::{vend.s3.bucket}/wh/vended.db/events2/x",
                    f"arn:aws:s3:::{vend.s3.bucket}/wh/other.db/t/x",
                    f"arn:aws:s3:::{vend.s3.bucket}/wh/vended.db/events"):
        assert not permits(policy, "s3:GetObject", outside), outside
        assert not permits(policy, "s3:PutObject", outside), outside
    assert all(session == "iceberg-anonymous" for session, _ in vend.policies_since(0))


def test_without_credentials_of_its_own_the_client_is_refused(vend: Vending,
                                                              no_keys: None) -> None:  # fmt: skip
    """The control: the same client without the header (nothing vended) cannot read the
    table's files: moto refuses unsigned requests, so the writes above used the vended keys."""
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog

    catalog = _catalog(vend)
    catalog.create_namespace("control", {"location": f"s3://{vend.s3.bucket}/wh/control.db"})
    schema = pa.schema([pa.field("id", pa.int64())])
    catalog.create_table("control.t", schema=schema).append(pa.table({"id": [1]}, schema=schema))
    plain = RestCatalog("plain", uri=vend.both.uri,
                        **{"header.X-Iceberg-Access-Delegation": "none"})  # fmt: skip
    table = plain.load_table("control.t")
    assert ACCESS_KEY not in table.io.properties
    with pytest.raises(OSError):
        table.scan().to_arrow()


def test_load_answers_carry_the_specs_fields(vend: Vending) -> None:
    both = vend.both
    assert both.http("POST", "/v1/namespaces", {"namespace": ["raw"], "properties": {
        "location": f"s3://{vend.s3.bucket}/wh/raw.db"}})[0] == 200
    body = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False}]}}
    status, headers, created = both.exchange("POST", "/v1/namespaces/raw/tables", body,
                                             headers=ASK)  # fmt: skip
    assert status == 200, created
    assert headers["cache-control"] == "no-store"
    [credential] = created["storage-credentials"]
    assert credential["prefix"] == f"s3://{vend.s3.bucket}/wh/raw.db/t/"
    config = credential["config"]
    assert {ACCESS_KEY, SECRET_KEY, TOKEN, EXPIRES} <= set(config)
    assert config["s3.endpoint"] == vend.s3.url
    assert created["config"][ACCESS_KEY] == config[ACCESS_KEY]
    assert created["config"]["client.refresh-credentials-endpoint"] == (
        "v1/namespaces/raw/tables/t/credentials")
    status, headers, loaded = both.exchange("GET", "/v1/namespaces/raw/tables/t", headers=ASK)
    assert status == 200 and loaded["storage-credentials"][0]["config"][ACCESS_KEY] != (
        config[ACCESS_KEY])  # a fresh credential each load
    # Not asked: nothing vended, and the answer is as before.
    status, _, plain = both.exchange("GET", "/v1/namespaces/raw/tables/t")
    assert status == 200 and plain["config"] == {} and "storage-credentials" not in plain
    status, refreshed = both.http("GET", "/v1/namespaces/raw/tables/t/credentials")
    assert status == 200 and [c["prefix"] for c in refreshed["storage-credentials"]] == [
        credential["prefix"]]
    # The lifetime asked for (--rest-vend-duration 900) is the credential's.
    left_ms = int(loaded["storage-credentials"][0]["config"][EXPIRES]) - time.time() * 1000
    assert 0 < left_ms <= 900_000
    # Under a prefix (the catalog ``hive``): the same table, the refresh endpoint under it.
    status, _, prefixed = both.exchange("GET", "/v1/hive/namespaces/raw/tables/t", headers=ASK)
    assert status == 200 and prefixed["config"]["client.refresh-credentials-endpoint"] == (
        "v1/hive/namespaces/raw/tables/t/credentials")
    status, refreshed = both.http("GET", "/v1/hive/namespaces/raw/tables/t/credentials")
    assert status == 200 and [c["prefix"] for c in refreshed["storage-credentials"]] == [
        credential["prefix"]]


def test_a_local_table_gets_no_credentials(vend: Vending, tmp_path: Path) -> None:
    both = vend.both
    assert both.http("POST", "/v1/namespaces", {"namespace": ["localns"], "properties": {
        "location": f"file:{tmp_path}/localns.db"}})[0] == 200
    body = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": []}}
    status, _, created = both.exchange("POST", "/v1/namespaces/localns/tables", body,
                                       headers=ASK)  # fmt: skip
    assert status == 200 and created["config"] == {} and "storage-credentials" not in created
    status, refreshed = both.http("GET", "/v1/namespaces/localns/tables/t/credentials")
    assert (status, refreshed) == (200, {"storage-credentials": []})


def _duckdb(vend: Vending) -> Any:
    """DuckDB with its iceberg extension (loaded offline from the PyPI package's extension
    directory), the catalog attached with vended credentials and no S3 secret of its own."""
    duckdb = pytest.importorskip("duckdb", reason="DuckDB is not installed")
    extensions = pytest.importorskip("duckdb_ext", reason="duckdb-ext-iceberg is not installed")
    folder = f"{list(extensions.__path__)[0]}/extensions"
    con = duckdb.connect(config={"extension_directory": folder,
                                 "autoinstall_known_extensions": False})  # fmt: skip
    for extension in ("httpfs", "avro", "iceberg"):
        con.execute(f"LOAD {extension}")
    # the warehouse is the catalog ``hive`` (its prefix then in every path, the refresh
    # endpoint's too): a name of no catalog is a 404 from /v1/config
    con.execute(f"ATTACH 'hive' AS lake (TYPE iceberg, ENDPOINT '{vend.both.uri}', "
                "AUTHORIZATION_TYPE 'none', ACCESS_DELEGATION_MODE 'vended_credentials')")
    return con


def test_duckdb_writes_and_reads_with_only_vended_credentials(vend: Vending,
                                                              no_keys: None) -> None:  # fmt: skip
    import pyarrow as pa

    catalog = _catalog(vend)
    catalog.create_namespace("duck", {"location": f"s3://{vend.s3.bucket}/wh/duck.db"})
    schema = pa.schema([pa.field("id", pa.int64())])
    catalog.create_table("duck.t", schema=schema).append(pa.table({"id": [1, 2]}, schema=schema))
    con = _duckdb(vend)
    assert con.execute("SELECT sum(id) FROM lake.duck.t").fetchone() == (3,)
    con.execute("CREATE TABLE lake.duck.made (id BIGINT)")
    con.execute("INSERT INTO lake.duck.made VALUES (7), (8)")
    assert con.execute("SELECT sum(id) FROM lake.duck.made").fetchone() == (15,)
    assert sorted(catalog.load_table("duck.made").scan().to_arrow()["id"].to_pylist()) == [7, 8]
    assert any(k.startswith("wh/duck.db/made/data/") for k in vend.s3.keys("wh/duck.db/made/"))


def test_a_busy_table_asks_sts_once_with_reuse_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Users' default (``--rest-vend-reuse on``): pyiceberg's whole cycle on one table takes
    one credential, handed again at each load and refresh; another table gets its own."""
    import pyarrow as pa

    without_own_credentials(monkeypatch, tmp_path / "home")
    (tmp_path / "work").mkdir()
    with vending(tmp_path / "work", reuse=True) as vend:
        catalog = _catalog(vend)
        catalog.create_namespace("busy", {"location": f"s3://{vend.s3.bucket}/wh/busy.db"})
        schema = pa.schema([pa.field("id", pa.int64())])
        table = catalog.create_table("busy.t", schema=schema)
        for batch in range(3):
            _catalog(vend).load_table("busy.t").append(pa.table({"id": [batch]}, schema=schema))
        assert sorted(catalog.load_table("busy.t").scan().to_arrow()["id"].to_pylist()) == [
            0, 1, 2]  # fmt: skip
        assert len(vend.assumed()) == 1
        handed = {_catalog(vend).load_credentials("busy.t", table.metadata_location)[ACCESS_KEY]
                  for _ in range(2)}  # fmt: skip
        assert len(handed) == 1 and len(vend.assumed()) == 1
        catalog.create_table("busy.t2", schema=schema)
        [(session, policy)] = vend.policies_since(1)
        inside = f"arn:aws:s3:::{vend.s3.bucket}/wh/busy.db/t2/data/x.parquet"
        assert permits(policy, "s3:PutObject", inside)
        assert not permits(policy, "s3:GetObject", inside.replace("/t2/", "/t/"))
