"""The pure parts of credential vending: which requests ask, which locations get credentials,
the session policy (judged by moto's IAM evaluator), the session name, the settings' bounds,
and a credential that never prints its secrets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from metastore_server.rest.vending import (
    Vended,
    asks_for_credentials,
    s3_place,
    session_name,
    session_policy,
)
from metastore_server.server.config import ServerConfig


def _permits(policy: dict[str, Any], action: str, resource: str) -> bool:
    access = pytest.importorskip("moto.iam.access_control", reason="moto is not installed")
    result = access.IAMPolicy(json.dumps(policy)).is_action_permitted(action, resource)
    return bool(result == access.PermissionResult.PERMITTED)


@pytest.mark.parametrize(("header", "asks"), [
    (None, False), ("", False), ("remote-signing", False), ("vended-credentials", True),
    (" Vended-Credentials ", True), ("remote-signing,vended-credentials", True),
    ("vended-credentials-please", False), ("x" * 2000 + ",vended-credentials", False),
])  # fmt: skip
def test_which_requests_ask(header: str | None, asks: bool) -> None:
    assert asks_for_credentials(header) is asks


@pytest.mark.parametrize(("location", "place"), [
    ("s3://b/t", ("b", "t")), ("s3a://b/w/t/", ("b", "w/t")), ("S3N://b/t", ("b", "t")),
    ("file:/tmp/t", None), ("/tmp/t", None), ("hdfs://nn/t", None), ("s3://b", None),
    ("s3://b/", None), ("s3:///t", None), ("gs://b/t", None),
])  # fmt: skip
def test_which_locations_get_credentials(location: str, place: tuple[str, str] | None) -> None:
    assert s3_place(location) == place


def test_the_policy_reaches_the_tables_objects_only() -> None:
    policy = session_policy("b", "wh/t", write=False)
    assert _permits(policy, "s3:GetObject", "arn:aws:s3:::b/wh/t/data/x.parquet")
    assert not _permits(policy, "s3:PutObject", "arn:aws:s3:::b/wh/t/data/x.parquet")
    for other in ("arn:aws:s3:::b/wh/t2/x", "arn:aws:s3:::b/wh/t", "arn:aws:s3:::b/wh/x",
                  "arn:aws:s3:::c/wh/t/x"):
        assert not _permits(policy, "s3:GetObject", other), other
    written = session_policy("b", "wh/t", write=True)
    for action in ("s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"):
        assert _permits(written, action, "arn:aws:s3:::b/wh/t/metadata/v.json")
        assert not _permits(written, action, "arn:aws:s3:::b/wh/t2/metadata/v.json")
    listing = [s for s in written["Statement"] if s["Action"] == ["s3:ListBucket"]]
    assert listing[0]["Condition"] == {"StringLike": {"s3:prefix": ["wh/t/", "wh/t/*"]}}


def test_session_names_are_what_sts_takes() -> None:
    assert session_name(None) == "iceberg-anonymous"
    assert session_name("alice") == "iceberg-alice"
    name = session_name("CN=a b/c:d" + "x" * 100)
    assert len(name) == 64 and all(c.isalnum() or c in "_+=,.@-" for c in name)


def test_a_credential_never_prints_its_secrets() -> None:
    vended = Vended("s3://b/t/", "AKIDEXAMPLE", "SECRETEXAMPLE", "TOKENEXAMPLE", 1, True)
    for text in (repr(vended), str(vended), f"{vended}"):
        assert "SECRETEXAMPLE" not in text and "TOKENEXAMPLE" not in text
        assert "AKIDEXAMPLE" not in text


@pytest.mark.parametrize("duration", [899, 43201, 0])
def test_the_duration_is_within_stss_bounds(duration: int) -> None:
    with pytest.raises(ValueError, match="rest_vend_duration"):
        ServerConfig(rest_vend_duration=duration).validate()


def test_reuse_is_on_or_off() -> None:
    assert ServerConfig().rest_vend_reuse == "on"
    with pytest.raises(ValueError, match="rest_vend_reuse must be on or off"):
        ServerConfig(rest_vend_reuse="sometimes").validate()
