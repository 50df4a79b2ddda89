"""Bearer JWTs from the users' identity provider (as HMS 4.1's REST catalog and Polaris take
them): a token is taken when its signature checks against a key of the issuer's JWKS (an
asymmetric algorithm only: ``none`` and HMAC are refused, so a public key can never serve as
an HMAC secret), its ``iss`` is the issuer, its ``aud`` holds the audience, and ``exp`` and
``nbf`` hold within the clock skew allowed. The user is a configured claim (``sub`` by
default), the groups another (none by default).

The JWKS is fetched over HTTP(S) with a timeout and a size limit, kept for
``JWKS_LIFETIME_S``, fetched again for an unknown ``kid`` at most every ``REFETCH_EVERY_S``
(a stream of forged ``kid``\\s cannot make the server hammer the issuer); when it cannot be
fetched and no key is kept, a request is 503, never a hang."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt
import structlog

from metastore_server.rest.errors import RestError, unauthorized

log = structlog.get_logger(__name__)

#: The algorithms taken (asymmetric only).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
              "EdDSA")  # fmt: skip
#: Seconds a fetched JWKS is kept.
JWKS_LIFETIME_S = 300.0
#: Seconds between fetches for a ``kid`` not in the kept JWKS.
REFETCH_EVERY_S = 30.0
#: Seconds a JWKS fetch may take.
FETCH_TIMEOUT_S = 5.0
#: The largest JWKS read.
MAX_JWKS_BYTES = 1024 * 1024
#: The longest token looked at.
MAX_TOKEN_CHARS = 16 * 1024


@dataclass(frozen=True)
class JwtSettings:
    """Where tokens come from and what of them names the caller."""

    issuer: str
    jwks_url: str
    audience: str
    user_claim: str = "sub"
    groups_claim: str = ""
    leeway_s: float = 30.0


def unavailable(message: str) -> RestError:
    """503: the identity provider's keys cannot be had now."""
    return RestError(503, "ServiceUnavailableException", message)


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` is a JWT (three parts, the first a JSON header naming an ``alg``),
    not one of this catalog's own tokens."""
    if token.count(".") != 2 or len(token) > MAX_TOKEN_CHARS:
        return False
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return False
    return isinstance(header, dict) and "alg" in header


def fetch_url(url: str) -> bytes:
    """The document at ``url`` (at most ``MAX_JWKS_BYTES``); OSError when it cannot be had."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as answer:  # noqa: S310
        data: bytes = answer.read(MAX_JWKS_BYTES + 1)
    if len(data) > MAX_JWKS_BYTES:
        raise OSError(f"the JWKS is over {MAX_JWKS_BYTES} bytes")
    return data


class JwtVerifier:
    """Checks bearer JWTs against the issuer's keys."""

    def __init__(self, settings: JwtSettings, fetch: Callable[[str], bytes] = fetch_url,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.settings = settings
        self._fetch, self._clock = fetch, clock
        self._keys: dict[str, Any] = {}
        self._fetched = float("-inf")
        self._lock = threading.Lock()

    def identity(self, token: str) -> tuple[str, tuple[str, ...]]:
        """The user and groups of a valid token; 401 (the reason logged, not answered in
        detail), 503 when the issuer's keys cannot be had."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise unauthorized("Malformed bearer token") from None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            self._refuse(f"algorithm {str(alg)[:20]!r} not taken")
        key = self._key(header.get("kid"))
        try:
            claims = jwt.decode(
                token, key=key, algorithms=[str(alg)], audience=self.settings.audience,
                issuer=self.settings.issuer, leeway=self.settings.leeway_s,
                options={"require": ["exp", "iss", "aud"], "verify_signature": True},
            )  # fmt: skip
        except jwt.ExpiredSignatureError:
            raise RestError(419, "AuthenticationTimeoutException",
                            "The token has expired") from None  # fmt: skip
        except jwt.PyJWTError as exc:
            self._refuse(type(exc).__name__)
        return self._user(claims), self._groups(claims)

    def _refuse(self, why: str) -> None:
        log.warning("rest_jwt_refused", reason=why)
        raise unauthorized("The bearer token is not valid here")

    def _user(self, claims: dict[str, Any]) -> str:
        user = claims.get(self.settings.user_claim)
        if not isinstance(user, str) or not user.strip() or len(user) > 256:
            self._refuse(f"no {self.settings.user_claim} claim")
        return str(user).strip()

    def _groups(self, claims: dict[str, Any]) -> tuple[str, ...]:
        if not self.settings.groups_claim:
            return ()
        value = claims.get(self.settings.groups_claim, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return ()
        return tuple(g for g in value[:256] if isinstance(g, str) and g and len(g) <= 256)

    def _key(self, kid: Any) -> Any:
        """The verifying key of ``kid`` (the only key when the set has one and the token names
        none), fetching the JWKS when it is old or lacks ``kid``."""
        with self._lock:
            now = self._clock()
            stale = now - self._fetched > JWKS_LIFETIME_S
            missing = _pick(self._keys, kid) is None
            if stale or (missing and now - self._fetched > REFETCH_EVERY_S):
                self._refresh(now)
            key = _pick(self._keys, kid)
        if key is None:
            self._refuse("unknown kid")
        return key

    def _refresh(self, now: float) -> None:
        """Fetch the JWKS; 503 when it cannot be had and no key is kept."""
        try:
            document = json.loads(self._fetch(self.settings.jwks_url))
            keys = jwt.PyJWKSet.from_dict(document).keys
        except (OSError, ValueError, urllib.error.URLError, jwt.PyJWTError) as exc:
            log.warning("rest_jwks_unavailable", url=self.settings.jwks_url,
                        error=type(exc).__name__)  # fmt: skip
            self._fetched = now - REFETCH_EVERY_S + 5.0  # try again in a few seconds
            if not self._keys:
                raise unavailable("The identity provider's keys cannot be fetched now") from None
            return
        # Asymmetric keys only: an "oct" (HMAC) key in the set is never taken.
        self._keys = {str(k.key_id or ""): k for k in keys if k.algorithm_name in ALGORITHMS}
        self._fetched = now


def _pick(keys: dict[str, Any], kid: Any) -> Any:
    if isinstance(kid, str):
        return keys.get(kid)
    return next(iter(keys.values())) if len(keys) == 1 else None
