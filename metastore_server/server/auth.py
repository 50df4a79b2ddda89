"""The ``--auth`` modes: each names the SASL mechanisms a server offers and builds them from
the server's settings.

``password`` is PLAIN against a password file (:mod:`metastore_server.server.sasl_plain`);
``ldap`` is PLAIN against an LDAP directory (:mod:`metastore_server.server.ldap_auth`);
``kerberos`` is GSSAPI with the server's keytab and principal
(:mod:`metastore_server.server.sasl_gssapi`) and, as HMS offers both, DIGEST-MD5 for logins with
a delegation token (:mod:`metastore_server.server.sasl_digest`) when the server has a token
manager (``tokens`` in the settings).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore_server.server.passwords import PasswordFile
from metastore_server.server.sasl import MechanismFactory, SaslServer
from metastore_server.server.sasl_plain import PlainMechanism

#: What an ``--auth`` mode takes (the server's settings) to build its mechanisms by name.
AuthModeBuilder = Callable[[dict[str, Any]], dict[str, MechanismFactory]]


def _password_mode(settings: dict[str, Any]) -> dict[str, MechanismFactory]:
    if not settings.get("password_file"):
        raise ValueError("auth password needs a password file (password_file)")
    passwords = PasswordFile(settings["password_file"])
    return {PlainMechanism.name: lambda: PlainMechanism(passwords)}


def _ldap_mode(settings: dict[str, Any]) -> dict[str, MechanismFactory]:
    from metastore_server.server.ldap_auth import LdapDirectory, LdapSettings

    directory = LdapDirectory(LdapSettings.from_settings(settings))
    return {PlainMechanism.name: lambda: PlainMechanism(directory)}


def _kerberos_mode(settings: dict[str, Any]) -> dict[str, MechanismFactory]:
    from metastore_server.server.sasl_gssapi import (
        GssapiMechanism,
        principal_for,
        server_credentials,
    )

    principal = principal_for(settings.get("kerberos_principal") or "")
    credentials = server_credentials(principal, settings.get("kerberos_keytab") or "")
    qop = settings.get("sasl_qop") or "auth"
    mechanisms: dict[str, MechanismFactory] = {
        GssapiMechanism.name: lambda: GssapiMechanism(credentials, qop)
    }
    tokens = settings.get("tokens")
    if tokens is not None:
        from metastore_server.server.sasl_digest import DigestMd5Mechanism

        mechanisms[DigestMd5Mechanism.name] = lambda: DigestMd5Mechanism(tokens.login, qop)
    return mechanisms


AUTH_MODES: dict[str, AuthModeBuilder] = {
    "password": _password_mode,
    "ldap": _ldap_mode,
    "kerberos": _kerberos_mode,
}
#: Every ``--auth`` value.
AUTH_CHOICES = ("none", *AUTH_MODES)


def build_sasl_server(auth: str, **settings: Any) -> SaslServer | None:
    """The SASL server of an ``--auth`` mode (None for ``none``); ValueError on a mode that
    is not known or settings it cannot use (a password file that cannot be read, say).
    ``handshake_timeout`` and ``impersonation`` (the proxy-user rules logins acting for
    another user are checked against) in ``settings`` go to the SaslServer (the data
    frames' limits are the Thrift server's: see :meth:`SaslServer.negotiate`)."""
    if auth == "none":
        return None
    builder = AUTH_MODES.get(auth)
    if builder is None:
        raise ValueError(f"auth must be one of {', '.join(AUTH_CHOICES)}, not {auth!r}")
    limits = {k: v for k, v in settings.items() if k in ("handshake_timeout", "impersonation")}
    return SaslServer(builder(settings), **limits)
