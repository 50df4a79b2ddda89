"""The PLAIN mechanism (RFC 4616) on the server: ``authzid NUL authcid NUL password`` checked
by a :class:`CredentialChecker`: a password file (:mod:`metastore_server.server.passwords`,
``--auth password``) or an LDAP directory (:mod:`metastore_server.server.ldap_auth`,
``--auth ldap``).

A failed login tells the client only that it failed; the log says why. An authorization
identity other than the authenticated one (acting for another user) is reported as
``authorization_id`` once the password is checked: the negotiation lets it through only when
the proxy-user rules allow (:mod:`metastore_server.server.sasl`).
"""

from __future__ import annotations

from typing import Protocol

from metastore_server.server.sasl import AuthenticationFailed, SecurityLayer

#: What a refused client is told (not whether the user exists).
FAILED = "Error validating the login: unknown user or wrong password"


class CredentialChecker(Protocol):
    """What PLAIN checks a user and password against."""

    def verify(self, user: str, password: str) -> str | None:
        """None when ``password`` is ``user``'s; else why not (for the log, not the client).
        Never called with an empty user or password."""
        ...


class PlainMechanism:
    """PLAIN for one connection."""

    name = "PLAIN"

    def __init__(self, checker: CredentialChecker) -> None:
        self._checker = checker
        self._user: str | None = None
        self._acting: str | None = None
        self._asked = False

    def step(self, response: bytes) -> tuple[bytes, bool]:
        """Check the client's message; an empty first response gets an empty challenge."""
        if not response and not self._asked:
            self._asked = True  # RFC 4616: a client without an initial response is asked once
            return b"", False
        parts = response.split(b"\0")
        if len(parts) != 3:
            raise AuthenticationFailed(
                "PLAIN message must be authzid NUL authcid NUL password",
                f"malformed PLAIN message ({len(parts) - 1} NUL bytes)",
            )
        try:
            authzid, authcid, password = (part.decode("utf-8") for part in parts)
        except UnicodeDecodeError:
            raise AuthenticationFailed("PLAIN message is not UTF-8 text") from None
        if not authcid or not password:
            raise AuthenticationFailed(FAILED, "empty user or password")
        why = self._checker.verify(authcid, password)
        if why is not None:
            raise AuthenticationFailed(FAILED, f"user {authcid!r}: {why}")
        self._user = authcid
        self._acting = authzid if authzid and authzid != authcid else None
        return b"", True

    @property
    def user(self) -> str:
        """The authenticated user."""
        assert self._user is not None, "PLAIN not complete"
        return self._user

    @property
    def authorization_id(self) -> str | None:
        """The user the client asked to act for (None: itself)."""
        return self._acting

    @property
    def real_user(self) -> str | None:
        """None: a password login is its own user."""
        return None

    def security_layer(self) -> SecurityLayer | None:
        """PLAIN has no security layer (QOP auth)."""
        return None
