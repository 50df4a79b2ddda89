"""Attacks on the REST catalog's remote signing, against moto's S3 (signatures checked) and
our server started as users start it (``--auth password --authorization privileges``, alice
an administrator, bob a user): a sign request is refused (403, nothing signed) for another
table's location, another bucket or host, a key with ``..`` (plain or percent-encoded), a
listing whose prefix escapes, a multi-object delete, a copy from elsewhere, a write by a
reader, a table the caller may not load; a stranger gets 401. The bucket is unchanged after
every refusal; a reader's read, signed, is one moto serves."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
pytest.importorskip("moto.server", reason="the S3 tests need moto[server]")
from support.rest_attacks import SCHEMA  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_vend import Vending, grant_select, vending  # noqa: E402

pytestmark = pytest.mark.any_store

SIGN = {"X-Iceberg-Access-Delegation": "remote-signing"}


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vending]:
    with vending(tmp_path_factory.mktemp("sign-secured"), auth="password", vend=False,
                 sign=True) as running:  # fmt: skip
        yield running


@pytest.fixture(scope="module")
def lake(secured: Vending) -> dict[str, str]:
    """alice's tables ``owned.shared`` (bob may read it) and ``owned.private`` (he may not),
    an object in each, and both callers' tokens."""
    both, s3 = secured.both, secured.s3
    alice, bob = _token(both, "alice"), _token(both, "bob")
    assert both.http("POST", "/v1/namespaces", {"namespace": ["owned"], "properties": {
        "location": f"s3://{s3.bucket}/wh/owned.db"}}, token=alice)[0] == 200
    for name in ("shared", "private"):
        status, _, answer = both.exchange("POST", "/v1/namespaces/owned/tables",
                                          {"name": name, "schema": SCHEMA}, token=alice,
                                          headers=SIGN)  # fmt: skip
        assert status == 200 and answer["config"]["s3.signer.endpoint"] == (
            f"v1/namespaces/owned/tables/{name}/sign"), answer
        s3.put(f"wh/owned.db/{name}/data/x.parquet", b"secret of " + name.encode())
    grant_select(secured, "owned", "shared", "bob")
    return {"alice": alice, "bob": bob}


def _sign(
    vend: Vending, token: str, method: str, uri: str, table: str = "shared",
    headers: dict[str, list[str]] | None = None,
) -> tuple[int, dict[str, str], Any]:  # fmt: skip
    body = {"method": method, "uri": uri, "region": "us-east-1", "headers": headers or {}}
    return vend.both.exchange("POST", f"/v1/namespaces/owned/tables/{table}/sign", body,
                              token=token)  # fmt: skip


def _everything(vend: Vending) -> dict[str, bytes]:
    """Every object of the bucket with its content (moto's, read by the admin)."""
    client, bucket = vend.s3.client, vend.s3.bucket
    return {key: client.get_object(Bucket=bucket, Key=key)["Body"].read()
            for key in vend.s3.keys("")}  # fmt: skip


def _send(signed: dict[str, Any], method: str) -> tuple[int, bytes]:
    """Send the request as signed to moto: its status and body."""
    headers = {name: ", ".join(values) for name, values in signed["headers"].items()}
    request = urllib.request.Request(signed["uri"], method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_requests_outside_the_table_or_of_other_kinds_are_refused(
    secured: Vending, lake: dict[str, str]
) -> None:
    s3 = secured.s3
    root = f"{s3.url}/{s3.bucket}"
    host = s3.url.split("://")[1]
    before = _everything(secured)
    attacks = [
        ("GET", f"{root}/wh/owned.db/private/data/x.parquet", None),  # another table's
        ("PUT", f"{root}/wh/owned.db/private/data/y.parquet", None),
        ("GET", f"{s3.url}/other/wh/owned.db/shared/data/x.parquet", None),  # another bucket
        ("GET", f"{root}/wh/owned.db/shared/../private/data/x.parquet", None),
        ("GET", f"{root}/wh/owned.db/shared/%2e%2e/private/data/x.parquet", None),
        ("DELETE", f"{root}/wh/owned.db/shared/%2E%2E%2Fprivate/data/x.parquet", None),
        ("GET", f"{root}?list-type=2&prefix=wh/owned.db/", None),  # the listing escapes
        ("GET", f"{root}?list-type=2&prefix=wh/owned.db/shared", None),  # reaches shared2...
        ("GET", f"{root}?list-type=2", None),
        ("POST", f"{root}?delete", None),  # a multi-object delete: its keys are not seen
        ("GET", f"http://evil.example/{s3.bucket}/wh/owned.db/shared/data/x.parquet", None),
        ("GET", f"http://{s3.bucket}.evil.example/wh/owned.db/shared/data/x.parquet", None),
        ("GET", f"http://attacker@{host}/{s3.bucket}/wh/owned.db/shared/data/x.parquet", None),
        ("PUT", f"{root}/wh/owned.db/shared/data/copy.parquet",  # a copy from elsewhere
         {"x-amz-copy-source": [f"{s3.bucket}/wh/owned.db/private/data/x.parquet"]}),
        ("PUT", f"{root}/wh/owned.db/shared/data/x.parquet?acl", None),
        ("PUT", f"{root}/wh/owned.db/shared/data/x.parquet", {"x-amz-acl": ["public-read"]}),
    ]
    for method, uri, headers in attacks:
        status, answer_headers, answer = _sign(secured, lake["alice"], method, uri,
                                               headers=headers)  # fmt: skip
        assert status == 403, (method, uri, answer)
        assert set(answer) == {"error"} and answer["error"]["type"] == "ForbiddenException"
        assert "Authorization" not in str(answer)
    assert _everything(secured) == before


def test_a_reader_reads_and_may_not_write(secured: Vending, lake: dict[str, str]) -> None:
    s3 = secured.s3
    inside = f"{s3.url}/{s3.bucket}/wh/owned.db/shared/data/x.parquet"
    before = _everything(secured)
    for method in ("PUT", "DELETE", "POST"):
        uri = inside + ("?uploads" if method == "POST" else "")
        status, _, answer = _sign(secured, lake["bob"], method, uri)
        assert status == 403 and set(answer) == {"error"}, (method, answer)
        assert "may not change owned.shared" in answer["error"]["message"]
    assert _everything(secured) == before
    # his read is signed, with the server's credentials: moto serves it
    status, headers, signed = _sign(secured, lake["bob"], "GET", inside)
    assert status == 200 and headers["cache-control"] == "no-store"
    assert _send(signed, "GET") == (200, b"secret of shared")
    status, _, listing = _sign(secured, lake["bob"], "GET", f"{s3.url}/{s3.bucket}"
                               "?list-type=2&prefix=wh%2Fowned.db%2Fshared%2F")  # fmt: skip
    assert status == 200
    code, text = _send(listing, "GET")
    assert code == 200 and b"wh/owned.db/shared/data/x.parquet" in text
    assert b"private" not in text
    # alice (the owner) may write: her signed PUT is one moto takes
    status, _, put = _sign(secured, lake["alice"], "PUT", f"{s3.url}/{s3.bucket}"
                           "/wh/owned.db/shared/data/alice.parquet")  # fmt: skip
    assert status == 200 and _send(put, "PUT")[0] == 200
    assert "wh/owned.db/shared/data/alice.parquet" in s3.keys("wh/owned.db/shared/")


def test_a_caller_who_may_not_load_the_table_gets_nothing(
    secured: Vending, lake: dict[str, str]
) -> None:
    s3 = secured.s3
    inside = f"{s3.url}/{s3.bucket}/wh/owned.db/private/data/x.parquet"
    before = _everything(secured)
    for method in ("GET", "PUT", "DELETE"):
        status, _, answer = _sign(secured, lake["bob"], method, inside, table="private")
        assert status == 403 and set(answer) == {"error"}, answer
        status, headers, answer = _sign(secured, "", method, inside, table="private")
        assert status == 401 and set(answer) == {"error"}, answer
        assert "www-authenticate" in headers
        status, _, answer = _sign(secured, "not-a-token", method, inside, table="shared")
        assert status == 401 and set(answer) == {"error"}, answer
    # Nor may he ask for the table's signer on load.
    status, _, answer = secured.both.exchange("GET", "/v1/namespaces/owned/tables/private",
                                              token=lake["bob"], headers=SIGN)  # fmt: skip
    assert status == 403 and set(answer) == {"error"}
    assert _everything(secured) == before


def test_no_secret_of_the_server_is_answered_or_logged(secured: Vending,
                                                       lake: dict[str, str]) -> None:  # fmt: skip
    s3 = secured.s3
    status, _, signed = _sign(secured, lake["alice"], "GET",
                              f"{s3.url}/{s3.bucket}/wh/owned.db/shared/data/x.parquet")
    assert status == 200
    signature = signed["headers"]["Authorization"][0].split("Signature=")[1]
    log = secured.log_text()
    assert "rest_request_signed" in log and signature not in log
    assert s3.admin.secret not in str(signed) and s3.admin.secret not in log


def test_pyiceberg_with_basic_auth_reads_as_a_reader_and_may_not_write(
    secured: Vending, lake: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """pyiceberg (FsspecFileIO, no AWS keys, HTTP Basic): alice writes a table through the
    signer; bob, who may read it, reads it, and his append is refused by the signer (nothing
    written)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.utils.concurrent import ExecutorFactory
    from support.rest_attacks import PASSWORDS
    from support.rest_vend import without_own_credentials

    without_own_credentials(monkeypatch, tmp_path)
    single = ThreadPoolExecutor(max_workers=1)  # one reading thread: see test_rest_sign.py
    monkeypatch.setattr(ExecutorFactory, "_instance", single)
    monkeypatch.setattr(ExecutorFactory, "_instance_pid", os.getpid())

    def catalog(user: str) -> Any:
        return RestCatalog(user, uri=secured.both.uri, **{
            "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
            "header.X-Iceberg-Access-Delegation": "remote-signing",
            "auth": {"type": "basic", "basic": {"username": user,
                                                "password": PASSWORDS[user]}}})  # fmt: skip

    schema = pa.schema([pa.field("id", pa.int64())])
    table = catalog("alice").create_table("owned.written", schema=schema)
    table.append(pa.table({"id": [1, 2]}, schema=schema))
    grant_select(secured, "owned", "written", "bob")
    theirs = catalog("bob").load_table("owned.written")
    before = _everything(secured)
    with pytest.raises(Exception, match="Failed to sign request 403"):
        theirs.append(pa.table({"id": [9]}, schema=schema))
    assert _everything(secured) == before
    rows = catalog("bob").load_table("owned.written").scan().to_arrow()["id"].to_pylist()
    single.shutdown(wait=True)
    assert sorted(rows) == [1, 2]


def test_the_signer_takes_jwts_as_every_route_does(tmp_path: Any) -> None:
    """``--auth none`` with JWTs of an issuer: the issuer's token gets a request signed; none,
    an unsigned one or one signed by another key gets a 401 and nothing."""
    pytest.importorskip("jwt", reason="the 'rest' extra is not installed")
    from cryptography.hazmat.primitives.asymmetric import rsa
    from support.jwt_issuer import AUDIENCE, ISSUER, Issuer, serving, unsigned

    issuer = Issuer()
    with serving(issuer) as url:
        flags = ["--rest-jwt-issuer", ISSUER, "--rest-jwt-jwks-url", url,
                 "--rest-jwt-audience", AUDIENCE]  # fmt: skip
        with vending(tmp_path, vend=False, sign=True, extra=flags) as vend:
            token = issuer.token("alice")
            assert vend.both.http("POST", "/v1/namespaces", {"namespace": ["owned"], "properties": {
                "location": f"s3://{vend.s3.bucket}/wh/owned.db"}}, token=token)[0] == 200
            assert vend.both.http("POST", "/v1/namespaces/owned/tables",
                                  {"name": "shared", "schema": SCHEMA}, token=token)[0] == 200
            uri = f"{vend.s3.url}/{vend.s3.bucket}/wh/owned.db/shared/data/x.parquet"
            status, _, signed = _sign(vend, token, "GET", uri)
            assert status == 200 and signed["uri"] == uri
            stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": 4102444800}
            for forged in ("", unsigned(claims), issuer.token("alice", key=stranger)):
                status, _, answer = _sign(vend, forged, "PUT", uri)
                assert status == 401 and set(answer) == {"error"}, answer
