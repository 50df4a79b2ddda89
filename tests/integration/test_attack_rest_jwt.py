"""Bearer JWTs of the users' identity provider on the REST catalog, against the server started
as users start it with a local issuer (the test's keys, their JWKS served over loopback HTTP),
in both authentication modes (``--auth none`` with JWTs only; ``--auth password`` with Basic
and JWTs, the deprecated token endpoint on or off), and the attacks: every forged or wrong
token is a 401 and changes nothing (the store checked through Thrift afterwards), a JWKS that
cannot be fetched is a 503 at once, and the groups a token vouches for are the authorizer's."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
pytest.importorskip("jwt", reason="the 'rest' extra is not installed")
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from support.jwt_issuer import (  # noqa: E402
    AUDIENCE,
    ISSUER,
    Issuer,
    hs256_with_public_key,
    serving,
    unsigned,
)
from support.net import LOOPBACK, free_port  # noqa: E402
from support.rest_attacks import PASSWORDS, Setting, start  # noqa: E402
from support.rest_attacks import create as _create  # noqa: E402
from support.rest_attacks import namespace as _namespace  # noqa: E402

from metastore_server.rest import jwt_auth  # noqa: E402

pytestmark = pytest.mark.any_store

ISSUER_KEYS = Issuer()


def jwt_flags(url: str) -> list[str]:
    return ["--rest-jwt-issuer", ISSUER, "--rest-jwt-jwks-url", url, "--rest-jwt-audience",
            AUDIENCE, "--rest-jwt-groups-claim", "groups"]  # fmt: skip


@pytest.fixture(scope="module")
def jwks_url() -> Iterator[str]:
    with serving(ISSUER_KEYS) as url:
        yield url


@pytest.fixture(scope="module")
def open_jwt(tmp_path_factory: pytest.TempPathFactory, jwks_url: str) -> Iterator[Setting]:
    """``--auth none`` and JWTs: every request needs a token of the issuer."""
    yield from start(tmp_path_factory.mktemp("rest-jwt-open"), jwt_flags(jwks_url))


@pytest.fixture(scope="module")
def password_jwt(tmp_path_factory: pytest.TempPathFactory, jwks_url: str) -> Iterator[Setting]:
    """``--auth password``, ``--authorization privileges``, JWTs too, and no token endpoint (the
    default)."""
    from metastore_server.server.passwords import hash_password

    work = tmp_path_factory.mktemp("rest-jwt-password")
    passwords = work / "passwords"
    passwords.write_text("".join(f"{u}:{hash_password(p)}\n" for u, p in PASSWORDS.items()))
    yield from start(work, ["--auth", "password", "--password-file", str(passwords),
                            "--authorization", "privileges", *jwt_flags(jwks_url)])  # fmt: skip


def forged_tokens() -> dict[str, str]:
    """Tokens an attacker makes, each for the user ``root``."""
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    good = ISSUER_KEYS.token("root")
    return {
        "wrong signature": ISSUER_KEYS.token("root", key=stranger),
        "alg none": unsigned({"iss": ISSUER, "aud": AUDIENCE, "sub": "root", "exp": now + 600}),
        "HS256 with the public key": hs256_with_public_key(ISSUER_KEYS, {
            "iss": ISSUER, "aud": AUDIENCE, "sub": "root", "exp": now + 600}),
        "wrong issuer": ISSUER_KEYS.token("root", iss="https://evil.example.test/"),
        "wrong audience": ISSUER_KEYS.token("root", aud="another-app"),
        "not yet valid": ISSUER_KEYS.token("root", nbf=now + 3600),
        "no user claim": ISSUER_KEYS.token("root", sub=None),
        "no expiry": ISSUER_KEYS.token("root", exp=None),
        "body swapped": ".".join([good.split(".")[0],
                                  ISSUER_KEYS.token("admin").split(".")[1],
                                  good.split(".")[2]]),
    }


def _unknown_kid() -> str:
    other = Issuer()
    other.keys["zz"] = other.keys.pop("k1")
    return other.token("root", kid="zz")


@pytest.mark.parametrize("setting_name", ["open_jwt", "password_jwt"])
def test_a_token_of_the_issuer_is_its_user(setting_name: str,
                                           request: pytest.FixtureRequest) -> None:  # fmt: skip
    setting: Setting = request.getfixturevalue(setting_name)
    both = setting.both
    token = ISSUER_KEYS.token("alice")
    _namespace(both, f"jwt_{setting_name}", token)
    assert _create(both, f"jwt_{setting_name}", "t", token)[0] == 200
    with setting.thrift("alice" if setting_name == "password_jwt" else "") as client:
        assert client.get_table(f"jwt_{setting_name}", "t").owner == "alice"
    status, _, answer = both.exchange("GET", "/v1/config")
    assert status == 401 and "Bearer" in _.get("www-authenticate", ""), answer
    setting.untouched()


@pytest.mark.parametrize("setting_name", ["open_jwt", "password_jwt"])
def test_forged_and_wrong_tokens_are_refused_and_change_nothing(
    setting_name: str, request: pytest.FixtureRequest
) -> None:
    setting: Setting = request.getfixturevalue(setting_name)
    both = setting.both
    forged = forged_tokens()
    forged["unknown kid"] = _unknown_kid()
    forged["expired"] = ISSUER_KEYS.token("root", lifetime=-3600)
    for what, token in forged.items():
        status, answer = both.http("POST", "/v1/namespaces", {"namespace": ["pwned"]},
                                   token=token)  # fmt: skip
        expected = 419 if what == "expired" else 401
        assert status == expected, (what, answer)
        assert "root" not in answer["error"]["message"], (what, answer)
    with setting.thrift("alice" if setting_name == "password_jwt" else "") as client:
        assert "pwned" not in client.get_all_databases()
    setting.untouched()


def test_basic_still_works_and_the_token_endpoint_is_off(password_jwt: Setting) -> None:
    both = password_jwt.both
    basic = base64.b64encode(b"bob:builder").decode()
    status, _, _ = both.exchange("GET", "/v1/namespaces",
                                 headers={"Authorization": f"Basic {basic}"})  # fmt: skip
    assert status == 200
    status, issued = both.token("client_credentials", "bob", "builder")
    assert status == 400 and "access_token" not in issued, issued
    assert "--rest-oauth-tokens on" in issued["error_description"]  # says how to turn it on


def test_groups_the_token_vouches_for_are_the_authorizers(password_jwt: Setting) -> None:
    """alice grants SELECT on her table to the group ``readers``; bob may read it with a token
    saying he is in ``readers``, not with one that does not (the group is the issuer's word,
    signed; the same claim in a forged token is a 401)."""
    from metastore_server.thrift_api import hms

    both = password_jwt.both
    alice = ISSUER_KEYS.token("alice")
    _namespace(both, "jwt_groups", alice)
    assert _create(both, "jwt_groups", "t", alice)[0] == 200
    with password_jwt.thrift("alice") as client:
        ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName="jwt_groups",
                                objectName="t")  # fmt: skip
        info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="alice",
                                      grantorType=hms.PrincipalType.USER, grantOption=False)
        assert client.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
            hiveObject=ref, principalName="readers", principalType=hms.PrincipalType.GROUP,
            grantInfo=info)]))  # fmt: skip
    path = "/v1/namespaces/jwt_groups/tables/t"
    assert both.http("GET", path, token=ISSUER_KEYS.token("bob"))[0] == 403
    assert both.http("GET", path, token=ISSUER_KEYS.token("bob", groups=["other"]))[0] == 403
    assert both.http("GET", path, token=ISSUER_KEYS.token("bob", groups=["readers"]))[0] == 200
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = ISSUER_KEYS.token("bob", key=stranger, groups=["readers"])
    assert both.http("GET", path, token=forged)[0] == 401


def test_a_jwks_that_cannot_be_fetched_is_a_503_at_once(tmp_path: Path) -> None:
    down = f"http://{LOOPBACK}:{free_port(LOOPBACK)}/jwks.json"  # nothing listens there
    for setting in start(tmp_path, jwt_flags(down)):
        started = time.monotonic()
        status, answer = setting.both.http("GET", "/v1/namespaces",
                                           token=ISSUER_KEYS.token("alice"))  # fmt: skip
        assert status == 503 and answer["error"]["type"] == "ServiceUnavailableException"
        # the fetch's timeout bounds it (10x, for a loaded machine): no hang
        assert time.monotonic() - started < jwt_auth.FETCH_TIMEOUT_S * 10
