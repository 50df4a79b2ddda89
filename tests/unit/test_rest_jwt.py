"""Bearer JWTs of the users' identity provider (``rest.jwt_auth``) against a local issuer (its
JWKS served by the test over loopback HTTP, tokens signed by the test's keys), and the attacks
on them: each refused token is a 401 (an expired one 419), a JWKS that cannot be had a 503
without a hang, and an unknown ``kid`` never makes the server fetch the JWKS again and again."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

jwt = pytest.importorskip("jwt", reason="the 'rest' extra is not installed")
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

from metastore_server.rest import jwt_auth  # noqa: E402
from metastore_server.rest.auth import RestAuth  # noqa: E402
from metastore_server.rest.errors import RestError  # noqa: E402
from metastore_server.rest.jwt_auth import JwtSettings, JwtVerifier  # noqa: E402


@pytest.fixture()
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture()
def verifier(issuer: Issuer) -> Iterator[JwtVerifier]:
    with serving(issuer) as url:
        yield JwtVerifier(JwtSettings(ISSUER, url, AUDIENCE, groups_claim="groups"))


def refused(verifier: JwtVerifier, token: str, code: int = 401) -> RestError:
    with pytest.raises(RestError) as caught:
        verifier.identity(token)
    assert caught.value.code == code, caught.value.message
    return caught.value


def test_a_valid_token_names_its_user_and_groups(verifier: JwtVerifier, issuer: Issuer) -> None:
    token = issuer.token("alice", groups=["analysts", 7, "", "x" * 300, "ops"])
    assert verifier.identity(token) == ("alice", ("analysts", "ops"))
    assert verifier.identity(issuer.token("bob", groups="solo")) == ("bob", ("solo",))
    assert issuer.fetches == 1  # the JWKS is kept


def test_forged_tokens_are_refused(verifier: JwtVerifier, issuer: Issuer) -> None:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused(verifier, issuer.token(key=stranger))  # wrong signature
    good = issuer.token()
    head, body, sig = good.split(".")
    refused(verifier, f"{head}.{issuer.token('root').split('.')[1]}.{sig}")  # swapped body
    refused(verifier, unsigned({"iss": ISSUER, "aud": AUDIENCE, "sub": "root",
                                "exp": int(time.time()) + 600}))  # alg none
    # HS256 with the issuer's public key as the HMAC secret (signed by hand, as an attacker).
    refused(verifier, hs256_with_public_key(issuer, {"iss": ISSUER, "aud": AUDIENCE,
                                                     "sub": "root",
                                                     "exp": int(time.time()) + 600}))


@pytest.mark.parametrize("claims", [
    {"iss": "https://evil.example.test/"}, {"aud": "another-app"}, {"aud": None},
    {"iss": None}, {"exp": None}, {"sub": None}, {"sub": ""}, {"sub": 42},
])  # fmt: skip
def test_wrong_or_missing_claims_are_refused(verifier: JwtVerifier, issuer: Issuer,
                                             claims: dict[str, object]) -> None:  # fmt: skip
    refused(verifier, issuer.token(**claims))


def test_a_token_not_valid_yet_is_refused(verifier: JwtVerifier, issuer: Issuer) -> None:
    # "not before" an hour from the test's own run (never from collection: a long run would
    # have passed it).
    refused(verifier, issuer.token(nbf=int(time.time()) + 3600))


def test_expiry_with_the_clock_skew(verifier: JwtVerifier, issuer: Issuer) -> None:
    refused(verifier, issuer.token(lifetime=-3600), 419)
    assert verifier.identity(issuer.token(lifetime=-5))[0] == "alice"  # within 30 s of skew
    assert verifier.identity(issuer.token(nbf=int(time.time()) + 5))[0] == "alice"


def test_an_unknown_kid_is_refused_without_fetching_again_and_again(
    verifier: JwtVerifier, issuer: Issuer
) -> None:
    assert verifier.identity(issuer.token())[0] == "alice"
    issuer.keys["k2"] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = issuer.token(kid="k2")
    del issuer.keys["k2"]
    for _ in range(20):
        refused(verifier, token)
    assert issuer.fetches == 1  # fetched again at most every REFETCH_EVERY_S


def test_a_rotated_key_is_fetched(issuer: Issuer) -> None:
    clock = [0.0]
    with serving(issuer) as url:
        verifier = JwtVerifier(JwtSettings(ISSUER, url, AUDIENCE), clock=lambda: clock[0])
        assert verifier.identity(issuer.token())[0] == "alice"
        issuer.keys["k2"] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        clock[0] += jwt_auth.REFETCH_EVERY_S + 1
        assert verifier.identity(issuer.token("bob", kid="k2"))[0] == "bob"


def test_a_jwks_that_cannot_be_had_is_a_503_at_once(issuer: Issuer) -> None:
    url = f"http://{LOOPBACK}:{free_port(LOOPBACK)}/jwks.json"  # nothing listens
    verifier = JwtVerifier(JwtSettings(ISSUER, url, AUDIENCE))
    started = time.monotonic()
    refused(verifier, issuer.token(), 503)
    # a bound (10x the fetch timeout, for a loaded machine), not a race
    assert time.monotonic() - started < jwt_auth.FETCH_TIMEOUT_S * 10

    def garbage(_url: str) -> bytes:
        return b"<html>not json</html>"

    refused(JwtVerifier(JwtSettings(ISSUER, url, AUDIENCE), fetch=garbage), issuer.token(), 503)


def test_rest_auth_takes_jwts_beside_its_own_credentials(verifier: JwtVerifier,
                                                         issuer: Issuer) -> None:  # fmt: skip
    only_jwt = RestAuth(None, jwt=verifier)
    assert only_jwt.required
    assert only_jwt.identity(f"Bearer {issuer.token('carol')}") == ("carol", ())
    for header in (None, "", "Basic YWxpY2U6eA==", "Bearer abc.def", "Bearer None"):
        with pytest.raises(RestError) as caught:
            only_jwt.identity(header)
        assert caught.value.code == 401
    assert "Bearer" in only_jwt.challenge() and "Basic" not in only_jwt.challenge()
    with pytest.raises(Exception):  # noqa: B017 - the endpoint issues nothing without --auth
        only_jwt.issue({"grant_type": "client_credentials", "client_id": "a",
                        "client_secret": "b"})  # fmt: skip


@pytest.mark.parametrize(("settings", "wrong"), [
    ({"rest_jwt_issuer": ISSUER}, "rest_jwt_jwks_url"),
    ({"rest_jwt_issuer": ISSUER, "rest_jwt_jwks_url": "https://idp/jwks"}, "rest_jwt_audience"),
    ({"rest_jwt_issuer": ISSUER, "rest_jwt_jwks_url": "http://idp.example.test/jwks",
      "rest_jwt_audience": AUDIENCE}, "https"),
    ({"rest_oauth_tokens": "maybe"}, "rest_oauth_tokens"),
    ({"rest_jwt_leeway": 3600.0}, "rest_jwt_leeway"),
])  # fmt: skip
def test_settings_that_would_take_tokens_unsafely_are_refused(
    settings: dict[str, object], wrong: str
) -> None:
    from metastore_server.server.config import ServerConfig

    config = ServerConfig(**settings)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=wrong):
        config.validate()
    fine = ServerConfig(rest_jwt_issuer=ISSUER, rest_jwt_audience=AUDIENCE,
                        rest_jwt_jwks_url=f"http://{LOOPBACK}:1/jwks.json")  # fmt: skip
    fine.validate()
