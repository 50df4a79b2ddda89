"""Who a REST request is, under the server's ``--auth``: with ``none`` nobody is asked (an
``Authorization`` header is ignored: pyiceberg sends ``Bearer None`` when it has no
credential); with ``password`` or ``ldap`` every request needs the credentials the Thrift
side's SASL PLAIN checks, sent as HTTP Basic, or a bearer token the catalog's OAuth2
client-credentials endpoint (``POST /v1/oauth/tokens``) issued for them.

A token is ``<user>.<expiry>.<signature>`` (base64url): an HMAC-SHA256 of the user and the
expiry, under a key kept in the store (``Secrets.signing_key``), so that every process
serving the store accepts it and it outlives a restart, never past its expiry.

A token ends with its user: each use looks the user up again (:meth:`UserDirectory.lookup`:
the password file as now loaded; the LDAP directory, at most 30 s behind), and a user who may
no longer log in gets 401 as for a bad token. Where the directory cannot show the user without
the password when the token is asked for (LDAP without a search user whose entries anonymous
clients cannot read), the token is ``<user>.<expiry>.u.<signature>``: it is not looked up
and lives :data:`UNCHECKED_TOKEN_LIFETIME_S` only."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any, Protocol

import structlog

from metastore_server.rest.errors import RestError, unauthorized
from metastore_server.rest.jwt_auth import JwtSettings, JwtVerifier, looks_like_jwt
from metastore_server.server.sasl_plain import CredentialChecker

log = structlog.get_logger(__name__)

#: Seconds a token lives.
TOKEN_LIFETIME_S = 3600
#: Seconds a token lives whose user cannot be looked up without the password.
UNCHECKED_TOKEN_LIFETIME_S = 300
_UNCHECKED = "u"
SIGNING_PURPOSE = "rest-catalog-tokens"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


class OAuthError(Exception):
    """An error of the token endpoint, answered in OAuth2's form (``{"error": ...}``)."""

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status, self.error, self.description = status, error, description

    def body(self) -> dict[str, str]:
        """The JSON body of the answer."""
        return {"error": self.error, "error_description": self.description}


class UserDirectory(CredentialChecker, Protocol):
    """The users tokens are issued to: a password file or an LDAP directory."""

    def lookup(self, user: str) -> tuple[bool | None, str]:
        """Whether ``user`` may still log in, as far as can be told without the password:
        True; False and why not; None and why it cannot be told now."""
        ...


class RestAuth:
    """Checks requests' credentials (``checker`` None: ``--auth none``, no password checked;
    ``jwt``: bearer JWTs of the users' identity provider taken too; ``own_tokens``: the
    tokens of ``POST /v1/oauth/tokens`` issued and taken)."""

    def __init__(self, checker: UserDirectory | None, key: bytes | None = None,
                 jwt: JwtVerifier | None = None, own_tokens: bool = True) -> None:  # fmt: skip
        self._checker = checker
        self._key = key
        self._jwt = jwt
        self.own_tokens = own_tokens and checker is not None
        self._warned_unchecked = False

    @property
    def required(self) -> bool:
        """Whether requests must carry credentials."""
        return self._checker is not None or self._jwt is not None

    def caller(self, authorization: str | None) -> str | None:
        """The authenticated user of a request's ``Authorization`` header (None without
        authentication); 401 when credentials are needed and missing or wrong."""
        return self.identity(authorization)[0]

    def identity(self, authorization: str | None) -> tuple[str | None, tuple[str, ...]]:
        """The authenticated user of a request's ``Authorization`` header and the groups its
        identity provider vouches for (None and none without authentication); 401 when
        credentials are needed and missing or wrong, 503 when the provider's keys cannot be
        had."""
        if not self.required:
            return None, ()
        scheme, _, value = (authorization or "").strip().partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer" and value:
            if self._jwt is not None and looks_like_jwt(value):
                return self._jwt.identity(value)
            if self.own_tokens:
                return self._token_user(value), ()
            raise unauthorized("The bearer token is not valid here")
        if scheme.lower() == "basic" and value and self._checker is not None:
            user, password = _basic(value)
            self._verify(user, password)
            return user, ()
        raise unauthorized(f"Credentials are required: {self.accepted()}")

    def accepted(self) -> str:
        """The credentials taken, as a 401 names them."""
        kinds = []
        if self._checker is not None:
            kinds.append("HTTP Basic")
        if self.own_tokens:
            kinds.append("a bearer token from POST /v1/oauth/tokens")
        if self._jwt is not None:
            kinds.append(f"a bearer JWT of {self._jwt.settings.issuer}")
        return ", or ".join(kinds)

    def challenge(self) -> str:
        """The ``WWW-Authenticate`` of a 401."""
        return ", ".join((['Basic realm="iceberg"'] if self._checker is not None else [])
                         + (['Bearer realm="iceberg"'] if self.own_tokens or self._jwt else []))

    def issue(self, form: Mapping[str, str]) -> dict[str, Any]:
        """A token for the client credentials of an OAuth2 token request (``client_id`` the
        user, ``client_secret`` the password); OAuthError when refused."""
        if self._checker is None or self._key is None or not self.own_tokens:
            raise OAuthError(400, "invalid_request", "This server issues no tokens: the "
                             "token endpoint is deprecated and off unless the server runs with "
                             "--rest-oauth-tokens on (under --auth password or ldap); send "
                             "HTTP Basic or a JWT of the identity provider")  # fmt: skip
        if form.get("grant_type") != "client_credentials":
            raise OAuthError(400, "unsupported_grant_type",
                             "Only grant_type=client_credentials is supported")  # fmt: skip
        user, password = form.get("client_id") or "", form.get("client_secret") or ""
        try:
            self._verify(user, password)
        except RestError:
            raise OAuthError(401, "invalid_client", "Unknown client or wrong secret") from None
        found, why = self._checker.lookup(user)
        lifetime, kind = TOKEN_LIFETIME_S, ""
        if found is not True:  # the directory does not show the user: no look-up at each use
            lifetime, kind = UNCHECKED_TOKEN_LIFETIME_S, _UNCHECKED
            self._unchecked_issued(user, why)
        expiry = int(time.time()) + lifetime
        return {"access_token": self._sign(user, expiry, kind), "token_type": "bearer",
                "expires_in": lifetime, "issued_token_type": ACCESS_TOKEN_TYPE}  # fmt: skip

    def _unchecked_issued(self, user: str, why: str) -> None:
        """Log a token issued without a look-up at each use (a warning the first time)."""
        fields = {"user": user, "reason": why, "lifetime_s": UNCHECKED_TOKEN_LIFETIME_S}
        if self._warned_unchecked:
            log.info("rest_token_unchecked", **fields)
            return
        self._warned_unchecked = True
        log.warning("rest_token_unchecked", **fields,
                    detail="the user cannot be looked up without the password, so a token "
                    "cannot end when its user is removed: it lives "
                    f"{UNCHECKED_TOKEN_LIFETIME_S} s instead of {TOKEN_LIFETIME_S} s",
                    hint="give --auth ldap a search user (--ldap-bind-dn, "
                    "--ldap-bind-password-file), or let anonymous clients read users' entries "
                    "and groups")  # fmt: skip

    def _verify(self, user: str, password: str) -> None:
        assert self._checker is not None
        why = "empty user or password" if not user or not password else (
            self._checker.verify(user, password))  # fmt: skip
        if why is not None:
            log.warning("rest_login_refused", user=user, reason=why)
            raise unauthorized("Unknown user or wrong password")

    def _sign(self, user: str, expiry: int, kind: str = "") -> str:
        assert self._key is not None
        payload = f"{_b64(user.encode())}.{expiry}" + (f".{kind}" if kind else "")
        mac = hmac.new(self._key, payload.encode(), hashlib.sha256).digest()
        return f"{payload}.{_b64(mac)}"

    def _token_user(self, token: str) -> str:
        parts = token.split(".")
        if len(parts) not in (3, 4) or self._key is None:
            raise unauthorized("Not a token of this catalog")
        payload = ".".join(parts[:-1])
        mac = hmac.new(self._key, payload.encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(_b64(mac), parts[-1]):
            raise unauthorized("Not a token of this catalog")
        if not parts[1].isdigit() or int(parts[1]) < time.time():
            raise RestError(419, "AuthenticationTimeoutException", "The token has expired")
        user = _unb64(parts[0]).decode("utf-8", "replace")
        if len(parts) == 3:
            self._still_a_user(user)
        elif parts[2] != _UNCHECKED:
            raise unauthorized("Not a token of this catalog")
        return user

    def _still_a_user(self, user: str) -> None:
        """401 unless the token's ``user`` may still log in."""
        assert self._checker is not None
        found, why = self._checker.lookup(user)
        if found is not True:
            log.warning("rest_token_refused", user=user, reason=why)
            raise unauthorized("The token's user may no longer log in")


def _basic(value: str) -> tuple[str, str]:
    try:
        user, _, password = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise unauthorized("Malformed Basic credentials") from None
    return user, password


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise unauthorized("Not a token of this catalog") from None


def build_rest_auth(config: Any, handler: Any) -> RestAuth:
    """The REST catalog's authentication for the server's ``--auth`` and its JWT settings
    (``kerberos``: not served over HTTP yet; ValueError, so that the catalog does not start
    open)."""
    verifier = None
    if config.rest_jwt_issuer:
        verifier = JwtVerifier(JwtSettings(
            issuer=config.rest_jwt_issuer, jwks_url=config.rest_jwt_jwks_url,
            audience=config.rest_jwt_audience, user_claim=config.rest_jwt_user_claim,
            groups_claim=config.rest_jwt_groups_claim,
            leeway_s=config.rest_jwt_leeway))  # fmt: skip
    own_tokens = config.rest_oauth_tokens == "on"
    if config.auth == "none":
        return RestAuth(None, jwt=verifier)
    if config.auth == "password":
        from metastore_server.server.passwords import PasswordFile

        checker: UserDirectory = PasswordFile(config.password_file)
    elif config.auth == "ldap":
        from metastore_server.server.ldap_auth import LdapDirectory, LdapSettings

        checker = LdapDirectory(LdapSettings.from_settings(config.ldap_settings()))
    else:
        raise ValueError(f"--auth {config.auth} is not offered by the REST catalog (use "
                         "password or ldap with --rest-port)")  # fmt: skip
    return RestAuth(checker, handler.catalog.secrets.signing_key(SIGNING_PURPOSE), verifier,
                    own_tokens)  # fmt: skip
