"""Remote signing of the Iceberg REST catalog against moto's S3 (signatures checked):
pyiceberg's RestCatalog with its fsspec FileIO, holding no AWS credentials of its own, creates,
writes and reads a table on S3 with every S3 request signed by the catalog."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
pytest.importorskip("moto.server", reason="the S3 tests need moto[server]")
from support.rest_vend import Vending, vending, without_own_credentials  # noqa: E402

from metastore_server.rest.vending import ACCESS_KEY  # noqa: E402

pytestmark = pytest.mark.any_store

SIGN = {"X-Iceberg-Access-Delegation": "remote-signing"}
FSSPEC = "pyiceberg.io.fsspec.FsspecFileIO"


@pytest.fixture(scope="module")
def signer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vending]:
    with vending(tmp_path_factory.mktemp("rest-sign"), vend=False, sign=True) as running:
        yield running


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No AWS credentials of the client's own; pyiceberg's reads in one worker thread:
    pyiceberg 0.12's FsspecFileIO registers its signer anew on the shared s3fs client for each
    thread (unregister, then register), and a read of another thread in between goes out
    unsigned (seen here as moto's 403)."""
    from concurrent.futures import ThreadPoolExecutor

    from pyiceberg.utils.concurrent import ExecutorFactory

    without_own_credentials(monkeypatch, tmp_path)
    single = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(ExecutorFactory, "_instance", single)
    monkeypatch.setattr(ExecutorFactory, "_instance_pid", os.getpid())
    yield
    single.shutdown(wait=True)


def _catalog(signer: Vending, delegation: str = "remote-signing") -> Any:
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog("sign", uri=signer.both.uri, **{
        "py-io-impl": FSSPEC, "header.X-Iceberg-Access-Delegation": delegation})


def test_config_advertises_the_signing_endpoint(signer: Vending) -> None:
    status, config = signer.both.http("GET", "/v1/config")
    assert status == 200
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign" in config["endpoints"]
    assert not any(e.endswith("/credentials") for e in config["endpoints"])


def test_pyiceberg_writes_and_reads_through_remote_signing(signer: Vending,
                                                           no_keys: None) -> None:  # fmt: skip
    import pyarrow as pa

    catalog = _catalog(signer)
    catalog.create_namespace("signed", {"location": f"s3://{signer.s3.bucket}/wh/signed.db"})
    schema = pa.schema([pa.field("id", pa.int64())])
    table = catalog.create_table("signed.events", schema=schema)
    assert table.io.properties["s3.signer.endpoint"] == (
        "v1/namespaces/signed/tables/events/sign")
    assert ACCESS_KEY not in table.io.properties
    table.append(pa.table({"id": [1, 2]}, schema=schema))
    _catalog(signer).load_table("signed.events").append(pa.table({"id": [3]}, schema=schema))
    again = _catalog(signer).load_table("signed.events")
    assert sorted(again.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    keys = signer.s3.keys("wh/signed.db/events/")
    assert any(k.startswith("wh/signed.db/events/data/") for k in keys), keys
    assert "rest_request_signed" in signer.log_text()


def test_without_signing_the_client_is_refused(signer: Vending, no_keys: None) -> None:
    """The control: the same client not asking for signing cannot read the table's files (it
    has no keys to sign with), so the reads above were signed by the catalog."""
    import pyarrow as pa

    catalog = _catalog(signer)
    catalog.create_namespace("control", {"location": f"s3://{signer.s3.bucket}/wh/control.db"})
    schema = pa.schema([pa.field("id", pa.int64())])
    catalog.create_table("control.t", schema=schema).append(pa.table({"id": [1]}, schema=schema))
    plain = _catalog(signer, "none").load_table("control.t")
    assert "s3.signer" not in plain.io.properties
    from botocore.exceptions import NoCredentialsError

    with pytest.raises((OSError, NoCredentialsError)):
        plain.scan().to_arrow()


def test_load_answers_name_the_tables_signer(signer: Vending) -> None:
    both = signer.both
    assert both.http("POST", "/v1/namespaces", {"namespace": ["raw"], "properties": {
        "location": f"s3://{signer.s3.bucket}/wh/raw.db"}})[0] == 200
    body = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": []}}
    status, headers, created = both.exchange("POST", "/v1/namespaces/raw/tables", body,
                                             headers=SIGN)  # fmt: skip
    assert status == 200 and headers["cache-control"] == "no-store"
    assert created["config"] == {
        "s3.remote-signing-enabled": "true", "s3.signer": "S3V4RestSigner",
        "s3.signer.uri": both.uri.rstrip("/"),
        "s3.signer.endpoint": "v1/namespaces/raw/tables/t/sign"}
    status, _, loaded = both.exchange("GET", "/v1/hive/namespaces/raw/tables/t",
                                      headers={"X-Iceberg-Access-Delegation":
                                               "vended-credentials,remote-signing"})
    assert status == 200 and "storage-credentials" not in loaded  # nothing vended: off
    assert loaded["config"]["s3.signer.endpoint"] == "v1/hive/namespaces/raw/tables/t/sign"
    status, _, plain = both.exchange("GET", "/v1/namespaces/raw/tables/t")
    assert status == 200 and plain["config"] == {}
    # The signing route under the prefix too; the spec's generic one is refused (no table).
    uri = f"{signer.s3.url}/{signer.s3.bucket}/wh/raw.db/t/metadata/x.json"
    for path in ("/v1/namespaces/raw/tables/t/sign", "/v1/hive/namespaces/raw/tables/t/sign"):
        status, headers, signed = both.exchange("POST", path, {
            "method": "GET", "uri": uri, "region": "us-east-1", "headers": {}})
        assert status == 200 and signed["uri"] == uri, signed
        assert headers["cache-control"] == "no-store"
        assert signed["headers"]["Authorization"][0].startswith("AWS4-HMAC-SHA256 ")
    status, _, answer = both.exchange("POST", "/v1/aws/s3/sign", {
        "method": "GET", "uri": uri, "region": "us-east-1", "headers": {}})
    assert status == 400 and "tables/{table}/sign" in answer["error"]["message"]


def test_signing_is_off_unless_configured(tmp_path: Path) -> None:
    with vending(tmp_path, vend=False) as plain:
        status, config = plain.both.http("GET", "/v1/config")
        assert status == 200 and not any(e.endswith("/sign") for e in config["endpoints"])
        assert plain.both.http("POST", "/v1/namespaces", {"namespace": ["off"], "properties": {
            "location": f"s3://{plain.s3.bucket}/wh/off.db"}})[0] == 200
        body = {"name": "t", "schema": {"type": "struct", "schema-id": 0, "fields": []}}
        status, _, created = plain.both.exchange("POST", "/v1/namespaces/off/tables", body,
                                                 headers=SIGN)  # fmt: skip
        assert status == 200 and created["config"] == {}
        for path in ("/v1/namespaces/off/tables/t/sign", "/v1/aws/s3/sign"):
            status, answer = plain.both.http("POST", path, {"method": "GET", "uri": "x"})
            assert status == 404, answer
