"""The remote signer's parsing and checking of an S3 request (``rest.signing``): only the
server's endpoint, a key decoded once and free of dot segments, inside the table's location,
of a kind signed; and its SigV4 signature, made for the server's endpoint and region."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.rest.errors import RestError
from metastore_server.rest.signing import (
    Endpoint,
    Signing,
    access,
    asks_for_signing,
    parse_target,
    signed_headers,
)

ENDPOINT = Endpoint.of("http://127.0.0.1:9000", "eu-west-1")
LOCATION = "s3://lake/wh/db.db/t"
BASE = "http://127.0.0.1:9000/lake/wh/db.db/t"


def _access(method: str, uri: str, location: str = LOCATION) -> str:
    return access(parse_target(method, uri, ENDPOINT), location)


def _refused(method: str, uri: str, location: str = LOCATION) -> str:
    with pytest.raises(RestError) as raised:
        _access(method, uri, location)
    assert raised.value.code == 403 and raised.value.kind == "ForbiddenException"
    return raised.value.message


@pytest.mark.parametrize("method,uri,needs", [
    ("GET", f"{BASE}/metadata/v1.metadata.json", "read"),
    ("HEAD", f"{BASE}/data/x.parquet", "read"),
    ("GET", f"{BASE}/data/x.parquet?versionId=3&x-id=GetObject", "read"),
    ("GET", f"{BASE}/data/a%20b%3Dc.parquet", "read"),
    ("PUT", f"{BASE}/data/x.parquet", "write"),
    ("PUT", f"{BASE}/data/x.parquet?partNumber=1&uploadId=abc", "write"),
    ("POST", f"{BASE}/data/x.parquet?uploads", "write"),
    ("POST", f"{BASE}/data/x.parquet?uploadId=abc", "write"),
    ("DELETE", f"{BASE}/data/x.parquet", "write"),
    ("DELETE", f"{BASE}/data/x.parquet?uploadId=abc", "write"),
    ("GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=wh%2Fdb.db%2Ft%2Fmetadata%2F", "read"),
    ("GET", "http://127.0.0.1:9000/lake/?list-type=2&prefix=wh/db.db/t/&delimiter=%2F", "read"),
    ("GET", "http://lake.127.0.0.1:9000/wh/db.db/t/data/x.parquet", "read"),
])  # fmt: skip
def test_requests_inside_the_location_are_signed(method: str, uri: str, needs: str) -> None:
    assert _access(method, uri) == needs


@pytest.mark.parametrize("method,uri", [
    ("GET", "http://127.0.0.1:9000/lake/wh/db.db/t2/data/x.parquet"),  # a name extending it
    ("GET", "http://127.0.0.1:9000/lake/wh/db.db/t"),  # the prefix itself
    ("GET", "http://127.0.0.1:9000/other/wh/db.db/t/data/x.parquet"),  # another bucket
    ("GET", f"{BASE}/../t2/data/x.parquet"),
    ("GET", f"{BASE}/%2e%2e/t2/x"),
    ("GET", f"{BASE}/%2E%2E%2Ft2%2Fx"),
    ("GET", f"{BASE}/./x"),
    ("GET", f"{BASE}//x"),
    ("GET", f"{BASE}/x%zz"),
    ("GET", f"{BASE}/x%00"),
    ("GET", f"{BASE}/x%ff"),
    ("GET", "http://evil.example:9000/lake/wh/db.db/t/x"),  # another host
    ("GET", "http://127.0.0.1:9001/lake/wh/db.db/t/x"),  # another port
    ("GET", "https://127.0.0.1:9000/lake/wh/db.db/t/x"),  # another scheme
    ("GET", "http://user@127.0.0.1:9000/lake/wh/db.db/t/x"),
    ("GET", "http://other.127.0.0.1:9000/wh/db.db/t/x"),  # virtual-hosted, another bucket
    ("GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=wh/db.db/t"),  # reaches t2
    ("GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=wh/"),
    ("GET", "http://127.0.0.1:9000/lake?list-type=2"),  # no prefix: the whole bucket
    ("GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=wh/db.db/t/&prefix=wh/"),
    ("GET", "http://127.0.0.1:9000/lake?versions&prefix=wh/db.db/t/"),
    ("GET", "http://127.0.0.1:9000/lake?acl"),
    ("POST", "http://127.0.0.1:9000/lake?delete"),  # a multi-object delete: keys unseen
    ("POST", "http://127.0.0.1:9000/lake/wh/db.db/t/x?delete"),
    ("PUT", f"{BASE}/data/x.parquet?acl"),
    ("PUT", f"{BASE}/data/x.parquet?tagging"),
    ("DELETE", f"{BASE}/data/x.parquet?versionId=1"),
    ("GET", f"{BASE}/data/x.parquet?torrent"),
    ("PATCH", f"{BASE}/data/x.parquet"),
    ("GET", "http://127.0.0.1:9000/"),
])  # fmt: skip
def test_requests_elsewhere_or_of_other_kinds_are_refused(method: str, uri: str) -> None:
    assert _refused(method, uri).startswith("Request not signed")


def test_a_table_not_on_s3_gets_nothing_signed() -> None:
    _refused("GET", f"{BASE}/x", location="file:/tmp/wh/db.db/t")


def test_aws_endpoint_forms() -> None:
    aws = Endpoint.of("", "eu-west-1")
    for uri in ("https://s3.eu-west-1.amazonaws.com/lake/wh/db.db/t/x",
                "https://lake.s3.eu-west-1.amazonaws.com/wh/db.db/t/x"):
        assert access(parse_target("GET", uri, aws), LOCATION) == "read"
    for uri in ("https://s3.us-east-1.amazonaws.com/lake/wh/db.db/t/x",
                "http://s3.eu-west-1.amazonaws.com/lake/wh/db.db/t/x",
                "https://lake.s3.eu-west-1.amazonaws.com.evil.example/wh/db.db/t/x"):
        with pytest.raises(RestError):
            parse_target("GET", uri, aws)


@pytest.mark.parametrize("header", ["x-amz-copy-source", "X-Amz-Acl", "x-amz-grant-read",
                                    "x-amz-website-redirect-location",
                                    "x-amz-object-lock-mode", "x-amz-tagging"])
def test_headers_that_reach_elsewhere_or_change_access_are_refused(header: str) -> None:
    with pytest.raises(RestError) as raised:
        signed_headers({header: ["lake/other/key"]})
    assert raised.value.code == 403


def test_headers_signed() -> None:
    kept = signed_headers({"Host": ["evil"], "Authorization": ["x"], "Content-MD5": ["m"],
                           "x-amz-meta-a": ["1", "2"], "User-Agent": ["u"],
                           "X-Amz-Date": ["d"], "x-amz-checksum-crc32": ["c"]})  # fmt: skip
    assert kept == {"content-md5": "m", "x-amz-meta-a": "1,2", "x-amz-checksum-crc32": "c"}
    with pytest.raises(RestError) as raised:
        signed_headers({"a": "not a list"})
    assert raised.value.code == 400


def test_delegation_header() -> None:
    assert asks_for_signing("vended-credentials, Remote-Signing")
    assert not asks_for_signing("vended-credentials")
    assert not asks_for_signing(None)
    assert not asks_for_signing("x" * 2000 + ",remote-signing")


def test_signature_is_for_the_servers_endpoint_and_region() -> None:
    from botocore.credentials import Credentials  # type: ignore[import-untyped]

    signing = Signing(True, ENDPOINT, _credentials=Credentials("AKIDSERVER", "SECRETKEY", "TOK"))
    target = parse_target("GET", f"{BASE}/data/a%20b.parquet?x-id=GetObject&versionId=3",
                          ENDPOINT)  # fmt: skip
    answer = signing.sign(target, {"content-md5": "m"})
    assert answer["uri"] == f"{BASE}/data/a%20b.parquet?x-id=GetObject&versionId=3"
    headers = {k: v for k, [v] in answer["headers"].items()}
    assert set(headers) == {"Authorization", "X-Amz-Date", "X-Amz-Content-SHA256",
                            "X-Amz-Security-Token"}  # fmt: skip
    assert headers["X-Amz-Content-SHA256"] == "UNSIGNED-PAYLOAD"
    authorization = headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDSERVER/")
    assert "/eu-west-1/s3/aws4_request" in authorization
    assert "SignedHeaders=content-md5;host;" in authorization
    assert "SECRETKEY" not in str(answer)
    # virtual-hosted: the bucket's host under the endpoint's
    virtual = parse_target("PUT", "http://lake.127.0.0.1:9000/wh/db.db/t/x", ENDPOINT)
    assert signing.sign(virtual, {})["uri"] == "http://lake.127.0.0.1:9000/wh/db.db/t/x"
    uploads = parse_target("POST", f"{BASE}/x?uploads", ENDPOINT)
    assert signing.sign(uploads, {})["uri"] == f"{BASE}/x?uploads"


def test_the_setting_flag_environment_and_file(tmp_path: Path) -> None:
    from metastore_server.cli import main as cli
    from metastore_server.server.config import ServerConfig

    assert ServerConfig().rest_remote_signing == "off"
    assert ServerConfig.from_env({"METASTORE_REST_REMOTE_SIGNING": "on"}).rest_remote_signing \
        == "on"  # fmt: skip
    path = tmp_path / "server.toml"
    path.write_text('rest_remote_signing = "on"\n')
    assert ServerConfig.from_file(path).rest_remote_signing == "on"
    argv = ["serve", "--rest-remote-signing", "on"]
    defaults = cli._file_defaults(argv)
    config = cli._config_from_args(cli.build_parser(defaults).parse_args(argv), defaults)
    assert config.rest_remote_signing == "on"
    with pytest.raises(ValueError, match="rest_remote_signing"):
        ServerConfig(rest_remote_signing="maybe").validate()


def test_no_signature_reaches_the_logs_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from botocore.credentials import Credentials  # type: ignore[import-untyped]

    signing = Signing(True, ENDPOINT, _credentials=Credentials("AKIDSERVER", "SECRETKEY"))
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("botocore.auth").setLevel(logging.NOTSET)
        answer = signing.sign(parse_target("GET", f"{BASE}/x", ENDPOINT), {})
    signature = answer["headers"]["Authorization"][0].split("Signature=")[1]
    assert signature not in caplog.text and "SECRETKEY" not in caplog.text
