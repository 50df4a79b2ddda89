"""Attacks on the REST catalog's vended credentials, against moto's S3 and STS (IAM enforced)
and our server started as users start it, under ``--auth none`` and ``--auth password`` with
``--authorization privileges``: a credential reaches exactly its table's location (never a
table whose name extends it), a reader gets read-only credentials and a caller who may not read
gets a 403 and none (on load and on refresh), and no secret is logged, put in an error, or kept
with an ``Idempotency-Key``'s answer; a load that vends is never answered 304.

moto does not enforce session policies: what a credential may reach is asserted on the policy
STS received (moto's record of each AssumeRole), evaluated by moto's own IAM evaluator."""

from __future__ import annotations

import base64
import json
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
pytest.importorskip("moto.server", reason="the S3 tests need moto[server]")
from support.rest_attacks import SCHEMA  # noqa: E402
from support.rest_attacks import token as _token  # noqa: E402
from support.rest_vend import ASK, Vending, grant_select, permits, vending  # noqa: E402

from metastore_server.rest.vending import ACCESS_KEY, SECRET_KEY, TOKEN  # noqa: E402

WRITES = ("s3:PutObject", "s3:DeleteObject")


@pytest.fixture(scope="module")
def open_vend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vending]:
    with vending(tmp_path_factory.mktemp("vend-open")) as running:
        yield running


@pytest.fixture(scope="module")
def secured_vend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vending]:
    with vending(tmp_path_factory.mktemp("vend-secured"), auth="password") as running:
        yield running


@pytest.fixture(params=["none", "password"])
def either(request: pytest.FixtureRequest) -> tuple[Vending, str]:
    """Each auth mode's server, with the token of its caller (alice; none under none)."""
    if request.param == "none":
        return request.getfixturevalue("open_vend"), ""
    vend = request.getfixturevalue("secured_vend")
    return vend, _token(vend.both, "alice")


def _namespace(vend: Vending, ns: str, token: str = "") -> None:
    """Namespace ``ns`` at ``s3://lake/wh/<ns>.db``."""
    status, answer = vend.both.http("POST", "/v1/namespaces", {"namespace": [ns], "properties": {
        "location": f"s3://{vend.s3.bucket}/wh/{ns}.db"}}, token=token)
    assert status in (200, 409), answer


def _create(vend: Vending, ns: str, name: str, token: str = "",
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:  # fmt: skip
    return _exchange(vend, "POST", f"/v1/namespaces/{ns}/tables",
                     {"name": name, "schema": SCHEMA}, token, {**ASK, **(headers or {})})


def _exchange(
    vend: Vending, method: str, path: str, body: Any = None, token: str = "",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], Any]:  # fmt: skip
    return vend.both.exchange(method, path, body, token=token, headers=dict(headers or {}))


def _secrets(answer: Any) -> list[str]:
    """Every key, secret and token in an answer (its credentials and config)."""
    found = []
    configs = [answer.get("config") or {}] + [c["config"] for c in
                                              answer.get("storage-credentials") or []]
    for config in configs:
        found += [config[k] for k in (ACCESS_KEY, SECRET_KEY, TOKEN) if k in config]
    return found


def test_a_credential_reaches_its_table_and_not_one_whose_name_extends_it(
    either: tuple[Vending, str],
) -> None:
    vend, token = either
    ns = f"prefix_{'open' if not token else 'secured'}"
    _namespace(vend, ns, token)
    for name in ("t", "t2"):
        assert _create(vend, ns, name, token)[0] == 200
    before = len(vend.assumed())
    status, _, loaded = _exchange(vend, "GET", f"/v1/namespaces/{ns}/tables/t", None, token, ASK)
    assert status == 200
    [credential] = loaded["storage-credentials"]
    assert credential["prefix"] == f"s3://{vend.s3.bucket}/wh/{ns}.db/t/"
    [(_, policy)] = vend.policies_since(before)
    bucket = f"arn:aws:s3:::{vend.s3.bucket}"
    for action in ("s3:GetObject", *WRITES):
        assert permits(policy, action, f"{bucket}/wh/{ns}.db/t/metadata/x.json")
        for elsewhere in (f"{bucket}/wh/{ns}.db/t2/metadata/x.json", f"{bucket}/wh/{ns}.db/t",
                          f"{bucket}/wh/{ns}.db/tx", f"{bucket}/wh/other.db/t/x",
                          f"arn:aws:s3:::other/wh/{ns}.db/t/x"):  # fmt: skip
            assert not permits(policy, action, elsewhere), (action, elsewhere)
    for statement in policy["Statement"]:
        for resource in statement["Resource"]:
            assert resource == bucket or resource.endswith(f"/wh/{ns}.db/t/*"), resource
        prefixes = statement.get("Condition", {}).get("StringLike", {}).get("s3:prefix", [])
        assert all(p.startswith(f"wh/{ns}.db/t/") for p in prefixes), prefixes
    # Listing: the bucket only, only under the table's prefix.
    listing = [s for s in policy["Statement"] if "s3:ListBucket" in s["Action"]]
    assert listing and all(s["Condition"] for s in listing)


def test_a_reader_gets_read_only_credentials_and_a_stranger_none(secured_vend: Vending) -> None:
    vend = secured_vend
    alice, bob = _token(vend.both, "alice"), _token(vend.both, "bob")
    _namespace(vend, "owned", alice)
    for name in ("shared", "private"):
        assert _create(vend, "owned", name, alice)[0] == 200
    grant_select(vend, "owned", "shared", "bob")
    inside = f"arn:aws:s3:::{vend.s3.bucket}/wh/owned.db/shared/data/x.parquet"
    for path in ("/v1/namespaces/owned/tables/shared",
                 "/v1/namespaces/owned/tables/shared/credentials"):
        # alice owns the table: read-write.
        before = len(vend.assumed())
        assert _exchange(vend, "GET", path, None, alice, ASK)[0] == 200
        [(session, policy)] = vend.policies_since(before)
        assert session == "iceberg-alice"
        assert all(permits(policy, action, inside) for action in WRITES)
        # bob may read it (SELECT), not change it: read-only.
        before = len(vend.assumed())
        status, _, answer = _exchange(vend, "GET", path, None, bob, ASK)
        assert status == 200 and answer["storage-credentials"], answer
        [(session, policy)] = vend.policies_since(before)
        assert session == "iceberg-bob"
        assert permits(policy, "s3:GetObject", inside)
        assert not any(permits(policy, action, inside) for action in WRITES)
    # bob may not read alice's private table: 403, no credential minted, none in the answer.
    before = len(vend.assumed())
    for path in ("/v1/namespaces/owned/tables/private",
                 "/v1/namespaces/owned/tables/private/credentials"):
        status, _, answer = _exchange(vend, "GET", path, None, bob, ASK)
        assert status == 403 and set(answer) == {"error"}, answer
        status, _, answer = _exchange(vend, "GET", path, None, "", ASK)  # no credentials at all
        assert status == 401 and set(answer) == {"error"}, answer
    assert vend.policies_since(before) == []
    # Nor by creating his own table over hers (the authorizer's 403 before anything is minted).
    assert vend.both.http("POST", "/v1/namespaces", {"namespace": ["bobs"]}, token=bob)[0] == 200
    status, _, answer = _exchange(vend, "POST", "/v1/namespaces/bobs/tables", {
        "name": "over", "schema": SCHEMA,
        "location": f"s3://{vend.s3.bucket}/wh/owned.db/private"}, bob, ASK)
    assert status == 403 and "storage-credentials" not in answer, answer
    status, _, answer = _exchange(vend, "POST", "/v1/namespaces/owned/tables", {
        "name": "staged", "schema": SCHEMA, "stage-create": True}, bob, ASK)
    assert status == 403 and set(answer) == {"error"}, answer
    # Nor by moving a table of his own there, then loading it.
    assert vend.both.http("POST", "/v1/namespaces/bobs/tables", {"name": "mine", "schema": SCHEMA},
                          token=bob)[0] == 200  # fmt: skip
    status, answer = vend.both.http("POST", "/v1/namespaces/bobs/tables/mine", {
        "requirements": [], "updates": [{"action": "set-location",
                                         "location": f"s3://{vend.s3.bucket}/wh/owned.db/private"}]},
        token=bob)  # fmt: skip
    assert status in (400, 403), answer
    status, _, answer = _exchange(vend, "GET", "/v1/namespaces/bobs/tables/mine", None, bob, ASK)
    assert status == 200 and "storage-credentials" not in answer  # still local: nothing vended
    assert vend.policies_since(before) == []


def test_no_secret_is_logged_kept_or_put_in_an_error(either: tuple[Vending, str]) -> None:
    vend, token = either
    ns = f"kept_{'open' if not token else 'secured'}"
    _namespace(vend, ns, token)
    key = str(uuid.uuid4())
    status, _, first = _create(vend, ns, "t", token, {"Idempotency-Key": key})
    assert status == 200 and first["storage-credentials"], first
    status, _, replayed = _create(vend, ns, "t", token, {"Idempotency-Key": key})
    assert status == 200 and replayed["metadata-location"] == first["metadata-location"]
    # The replay is the kept answer with fresh credentials, authorized anew.
    assert replayed["storage-credentials"][0]["config"][ACCESS_KEY] != (
        first["storage-credentials"][0]["config"][ACCESS_KEY])
    secrets = _secrets(first) + _secrets(replayed)
    for path in (f"/v1/namespaces/{ns}/tables/t", f"/v1/namespaces/{ns}/tables/t/credentials"):
        status, _, answer = _exchange(vend, "GET", path, None, token, ASK)
        assert status == 200
        secrets += _secrets(answer) + _secrets({"storage-credentials":
                                                answer["storage-credentials"]})
    assert len(secrets) >= 12 and all(secrets)
    # Errors carry none: a failing create (it exists), a missing table.
    for status, _, error in (_create(vend, ns, "t", token),
                             _exchange(vend, "GET", f"/v1/namespaces/{ns}/tables/none", None,
                                       token, ASK)):  # fmt: skip
        assert status in (404, 409) and set(error) == {"error"}
    # The store's kept answers hold none; nor does the server's log (written at debug level).
    kept = json.dumps(_kept_bodies(vend))
    log = vend.log_text()
    assert "rest_credentials_vended" in log  # the log is the server's, and vending was logged
    for secret in secrets:
        assert secret not in kept and secret not in log
    assert "storage-credentials" not in kept and "s3.secret-access-key" not in kept


def _kept_bodies(vend: Vending) -> list[Any]:
    """The bodies of the answers kept in the server's store for Idempotency-Keys."""
    from metastore_server.storage import layout
    from metastore_server.storage.open import open_store

    store = open_store(vend.server.storage)
    try:
        start, stop = layout.idempotency_range()
        entries = [json.loads(row[layout.OBJECT]) for _, row in store.scan(layout.META, start,
                                                                            stop)]  # fmt: skip
    finally:
        getattr(store, "close", lambda: None)()
    assert entries, "no answer was kept"
    return [json.loads(zlib.decompress(base64.b64decode(e["body"]))) for e in entries
            if e.get("body")]  # fmt: skip


def test_a_load_that_vends_is_never_answered_304(open_vend: Vending) -> None:
    vend = open_vend
    _namespace(vend, "fresh")
    status, headers, _ = _create(vend, "fresh", "t")
    assert status == 200
    path = "/v1/namespaces/fresh/tables/t"
    tag = {"If-None-Match": headers["etag"]}
    assert _exchange(vend, "GET", path, None, "", tag)[0] == 304  # nothing vended: 304
    status, answer_headers, answer = _exchange(vend, "GET", path, None, "", {**ASK, **tag})
    assert status == 200 and answer["storage-credentials"], answer
    assert answer_headers["cache-control"] == "no-store"


def test_only_a_request_asking_for_credentials_gets_them(open_vend: Vending) -> None:
    vend = open_vend
    _namespace(vend, "asked")
    assert _create(vend, "asked", "t")[0] == 200
    path = "/v1/namespaces/asked/tables/t"
    for header, vends in (("remote-signing", False), ("", False), ("vended-credentials", True),
                          ("remote-signing, Vended-Credentials", True),
                          ("x" * 5000 + ",vended-credentials", False)):  # fmt: skip
        status, _, answer = _exchange(vend, "GET", path, None, "",
                                      {"X-Iceberg-Access-Delegation": header})
        assert status == 200 and ("storage-credentials" in answer) == vends, header
        assert bool(_secrets(answer)) == vends


def test_without_a_role_nothing_is_vended(tmp_path: Path) -> None:
    with vending(tmp_path, vend=False) as vend:
        status, config = vend.both.http("GET", "/v1/config")
        assert status == 200 and not any("credentials" in e for e in config["endpoints"])
        _namespace(vend, "off")
        status, _, created = _create(vend, "off", "t")
        assert status == 200 and created["config"] == {}
        assert "storage-credentials" not in created
        status, _, answer = _exchange(vend, "GET", "/v1/namespaces/off/tables/t", None, "", ASK)
        assert status == 200 and answer["config"] == {} and "storage-credentials" not in answer
        status, answer = vend.both.http("GET", "/v1/namespaces/off/tables/t/credentials")
        assert status == 404 and answer["error"]["type"] == "NotFoundException"
        assert vend.assumed() == []


def test_sts_out_of_reach_is_a_503_that_tells_no_secret(tmp_path: Path) -> None:
    """STS down (nothing listens at its endpoint): a load asking for credentials is a 503 in the
    spec's error model naming no more than the failure's kind; one not asking is served."""
    from support.net import LOOPBACK, free_port

    with vending(tmp_path, sts=f"http://{LOOPBACK}:{free_port(LOOPBACK)}") as vend:
        _namespace(vend, "down")
        status, _, created = _exchange(vend, "POST", "/v1/namespaces/down/tables",
                                       {"name": "t", "schema": SCHEMA})  # fmt: skip
        assert status == 200, created
        path = "/v1/namespaces/down/tables/t"
        status, _, answer = _exchange(vend, "GET", path, None, "", ASK)
        assert status == 503 and answer["error"]["type"] == "ServiceUnavailableException"
        assert "could not be vended" in answer["error"]["message"]
        assert "Traceback" not in answer["error"]["message"]
        assert _exchange(vend, "GET", path)[0] == 200
        assert "rest_credentials_not_vended" in vend.log_text()
