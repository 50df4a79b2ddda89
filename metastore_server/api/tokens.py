"""The delegation-token calls, with HMS's rules and messages, over the token manager
(:mod:`metastore_server.catalog.security.delegation`), and HMS's token store calls (what other
metastores share through this one, as HMS's database token store). See ``docs/security.md``.

A token is issued only on a Kerberos (GSSAPI) connection, to its user or, when the proxy-user
rules (``--proxy-user``) let the caller act for the owner named from the client's address, to
that owner with the caller as the token's real user (as HMS); it is renewed only on a Kerberos
connection, by the token's renewer; the owner or the renewer may cancel it from any
authenticated connection (a token login too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.api.proxy_users import ImpersonationRefused
from metastore_server.caller import Session, current_session
from metastore_server.catalog import DelegationTokens, InvalidToken, TokenAccessDenied, short_name
from metastore_server.thrift_api import hms

#: The answer to delegation-token calls on a server that does not issue tokens.
NO_TOKENS = (
    "Delegation tokens need Kerberos authentication (--auth kerberos, as "
    "hive.metastore.sasl.enabled), which this server does not run with"
)
T = TypeVar("T")
#: Hadoop's names of how a connection authenticated, by SASL mechanism (None: not at all).
_METHODS = {None: "SIMPLE", "GSSAPI": "KERBEROS", "DIGEST-MD5": "TOKEN"}


def _kerberos_only(session: Session) -> None:
    """Refuse (HMS's MetaException) a connection that did not authenticate with Kerberos."""
    if session.mechanism != "GSSAPI":
        method = _METHODS.get(session.mechanism, session.mechanism)
        raise hms.MetaException(
            message="Delegation Token can be issued only with kerberos authentication. "
            f"Current AuthenticationMethod: {method}"
        )


class TokenCalls(Area):
    """Delegation tokens and master keys. Raises MetaException (a delegation-token call
    refused, or on a token that is unknown, expired or forged) and NoSuchObjectException (a
    master key to update that is not there)."""

    # -- delegation tokens -------------------------------------------------------------------

    @thrift(rule=auth.OPEN)
    def get_delegation_token(self, token_owner: str, renewer_kerberos_principal_name: str) -> str:
        """A new token of ``token_owner`` (by short name: the caller, or a user the caller
        may act for as a proxy user) that the renewer named may renew: its string form."""
        session = current_session()
        _kerberos_only(session)
        tokens = self._tokens()
        user = session.authenticated_user or ""
        owner = short_name(token_owner or "")
        real_user = session.real_user or ""
        if owner != user:
            try:
                if not owner:  # no one to act for
                    raise ImpersonationRefused(f"User: {user} is not allowed to impersonate ")
                self.settings.proxy_users.authorize(user, owner, session.address)
            except ImpersonationRefused as exc:
                raise hms.MetaException(message=str(exc)) from None
            real_user = user
        renewer = renewer_kerberos_principal_name or ""
        return _answered(lambda: tokens.issue(owner, renewer, real_user))

    @thrift(rule=auth.OPEN)
    def renew_delegation_token(self, token_str_form: str) -> int:
        """Renew a token (the caller must be its renewer): its new expiry, in ms."""
        session = current_session()
        _kerberos_only(session)
        tokens = self._tokens()
        return _answered(lambda: tokens.renew(token_str_form, session.authenticated_user or ""))

    @thrift(rule=auth.OPEN)
    def cancel_delegation_token(self, token_str_form: str) -> None:
        """Cancel a token (the caller must be its owner or renewer)."""
        session = current_session()
        if not session.authenticated:
            _kerberos_only(session)
        tokens = self._tokens()
        _answered(lambda: tokens.cancel(token_str_form, session.authenticated_user or ""))

    def _tokens(self) -> DelegationTokens:
        if self.settings.tokens is None:
            raise hms.MetaException(message=NO_TOKENS)
        return self.settings.tokens

    # -- the token store ---------------------------------------------------------------------

    @thrift(rule=auth.API)
    def add_token(self, token_identifier: str, delegation_token: str) -> bool:
        """Keep a token under its identifier; False when one is kept under it already."""
        return self.catalog.secrets.add_token(token_identifier, delegation_token)

    @thrift(rule=auth.API)
    def remove_token(self, token_identifier: str) -> bool:
        """Forget a token; whether there was one."""
        return self.catalog.secrets.remove_token(token_identifier)

    @thrift(rule=auth.API)
    def get_token(self, token_identifier: str) -> str:
        """A token kept under its identifier (empty when there is none)."""
        return self.catalog.secrets.get_token(token_identifier)

    @thrift(rule=auth.API)
    def get_all_token_identifiers(self) -> list[str]:
        """The identifiers of every token kept."""
        return self.catalog.secrets.token_identifiers()

    @thrift(rule=auth.API)
    def add_master_key(self, key: str) -> int:
        """Keep a master key; its sequence number."""
        return self.catalog.secrets.add_master_key(key)

    @thrift(rule=auth.API)
    def update_master_key(self, seq_number: int, key: str) -> None:
        """Replace a master key (NoSuchObjectException when there is none of that number)."""
        self.catalog.secrets.update_master_key(seq_number, key)

    @thrift(rule=auth.API)
    def remove_master_key(self, key_seq: int) -> bool:
        """Forget a master key; whether there was one."""
        return self.catalog.secrets.remove_master_key(key_seq)

    @thrift(rule=auth.API)
    def get_master_keys(self) -> list[str]:
        """Every master key kept, in sequence order."""
        return self.catalog.secrets.master_keys()


def _answered(call: Callable[[], T]) -> T:
    """``call``'s answer; its refusal as HMS's MetaException (the manager's message)."""
    try:
        return call()
    except (InvalidToken, TokenAccessDenied) as exc:
        raise hms.MetaException(message=str(exc)) from None
