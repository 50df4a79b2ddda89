"""The GSSAPI (Kerberos) mechanism (RFC 4752) on the server, as HMS's ``hive.metastore.sasl``:
a Kerberos security context accepted with the server's keytab, then the security-layer
exchange: the server offers the layers the ``--sasl-qop`` allows (wrapped, with its largest
buffer), the client answers with the one it chose (wrapped) and, optionally, the user it acts
as. The connection's user is the client principal's short name (its first component: the
``alice`` of ``alice@REALM`` and of ``alice/host@REALM``, as Hadoop's default mapping); a user
to act as other than that one (by short name) is reported as ``authorization_id``, for the
negotiation to check against the proxy-user rules.

Built on python-gssapi (MIT Kerberos); :func:`server_credentials` loads the keytab once.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

from metastore_server.server.sasl import AuthenticationFailed, SecurityLayer

#: The security layers of RFC 4752, by the QOP names HMS's settings use.
NO_LAYER, INTEGRITY, PRIVACY = 1, 2, 4
QOPS = {"auth": NO_LAYER, "auth-int": INTEGRITY, "auth-conf": PRIVACY}
#: The largest wrapped buffer the server takes (a 3-byte field).
_MAX_BUFFER = 0xFFFFFF
_OFFER = struct.Struct(">I")


def principal_for(principal: str, host: str | None = None) -> str:
    """``principal`` with ``_HOST`` replaced by this host's name (as HMS does)."""
    if "_HOST" not in principal:
        return principal
    return principal.replace("_HOST", (host or socket.getfqdn()).lower())


def server_credentials(principal: str, keytab: str) -> Any:
    """The acceptor credentials of ``principal`` (``service/host@REALM``) from ``keytab``, for
    Kerberos V5 only (SASL GSSAPI's one mechanism: no SPNEGO); ValueError when they cannot be
    had."""
    import gssapi

    try:
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
        return gssapi.Credentials(name=name, usage="accept", store={"keytab": keytab},
                                  mechs=[gssapi.MechType.kerberos])  # fmt: skip
    except gssapi.exceptions.GSSError as exc:
        raise ValueError(f"no Kerberos keys for {principal} in {keytab}: {exc}") from None


class _Layer:
    """Integrity (and privacy) protection of data frames by the security context."""

    def __init__(self, context: Any, encrypt: bool) -> None:
        self._context = context
        self._encrypt = encrypt

    def wrap(self, data: bytes) -> bytes:
        return bytes(self._context.wrap(data, self._encrypt).message)

    def unwrap(self, payload: bytes) -> bytes:
        return bytes(self._context.unwrap(payload).message)


class GssapiMechanism:
    """GSSAPI for one connection."""

    name = "GSSAPI"

    def __init__(self, credentials: Any, qop: str = "auth") -> None:
        import gssapi

        self._gssapi = gssapi
        self._context = gssapi.SecurityContext(creds=credentials, usage="accept")
        # A failed step raises at once (python-gssapi's default returns the Kerberos error
        # token as if the context went on, and raises only on the next use): the client is
        # answered BAD "GSS initiate failed", as HMS answers, and the log says why.
        self._context.__DEFER_STEP_ERRORS__ = False  # type: ignore[attr-defined]  # not in its stubs
        self._offered = QOPS.get(qop, NO_LAYER)
        self._stage = "context"
        self._chosen = NO_LAYER
        self._user: str | None = None
        self._acting: str | None = None

    def step(self, response: bytes) -> tuple[bytes, bool]:
        """The next challenge for the client's ``response``; raises AuthenticationFailed."""
        if self._stage == "context":
            return self._accept(response), False
        if self._stage == "token sent":  # the client acknowledged the context's last token
            self._stage = "offered"
            return self._offer(), False
        return self._chosen_layer(response)

    def _accept(self, token: bytes) -> bytes:
        if not token:
            raise AuthenticationFailed(
                "GSS initiate failed", "the client sent no Kerberos token (no ticket?)"
            )
        try:
            answer = self._context.step(token)
        except self._gssapi.exceptions.GSSError as exc:
            raise AuthenticationFailed(
                "GSS initiate failed", f"context not accepted: {exc}"
            ) from None
        if not self._context.complete:
            return bytes(answer or b"")
        if answer:
            self._stage = "token sent"
            return bytes(answer)
        self._stage = "offered"
        return self._offer()

    def _offer(self) -> bytes:
        offer = _OFFER.pack((self._offered << 24) | _MAX_BUFFER)
        return bytes(self._context.wrap(offer, False).message)

    def _chosen_layer(self, response: bytes) -> tuple[bytes, bool]:
        try:
            answer = bytes(self._context.unwrap(response).message)
        except self._gssapi.exceptions.GSSError as exc:
            raise AuthenticationFailed(
                "GSS initiate failed", f"security layer answer does not unwrap: {exc}"
            ) from None
        if len(answer) < 4:
            raise AuthenticationFailed(
                "GSSAPI: a malformed security layer answer",
                f"security layer answer of {len(answer)} bytes (at least 4)",
            )
        chosen = answer[0]
        if chosen not in (NO_LAYER, INTEGRITY, PRIVACY) or not chosen & self._offered:
            raise AuthenticationFailed(
                "GSSAPI: the client chose a security layer the server does not offer",
                f"layer {chosen} chosen, {self._offered} offered",
            )
        user = short_name(str(self._context.initiator_name))
        try:
            acting = short_name(answer[4:].decode("utf-8"))
        except UnicodeDecodeError:
            raise AuthenticationFailed(
                "GSSAPI: the authorization identity is not UTF-8 text"
            ) from None
        self._chosen, self._user = chosen, user
        self._acting = acting if acting and acting != user else None
        return b"", True

    @property
    def user(self) -> str:
        """The client principal's short name."""
        assert self._user is not None, "GSSAPI not complete"
        return self._user

    @property
    def authorization_id(self) -> str | None:
        """The user (short name) the client asked to act for (None: itself)."""
        return self._acting

    @property
    def real_user(self) -> str | None:
        """None: a Kerberos login is its own user."""
        return None

    def security_layer(self) -> SecurityLayer | None:
        """The chosen layer (None for QOP auth)."""
        if self._chosen == NO_LAYER:
            return None
        return _Layer(self._context, encrypt=self._chosen == PRIVACY)


def short_name(principal: str) -> str:
    """The user of a principal: its first component, realm dropped."""
    return principal.split("@", 1)[0].split("/", 1)[0]
