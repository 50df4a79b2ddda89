"""The delegation-token calls and HMS's token store: tokens themselves need SASL (Kerberos),
which this server does not offer, but the token store keeps what other (Kerberos) metastores
share through this one, as HMS's database token store does. See ``docs/security.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.thrift_api import hms

#: The answer to delegation-token calls: they need SASL (Kerberos) authentication.
NO_TOKENS = (
    "Delegation tokens need SASL (Kerberos) authentication (hive.metastore.sasl.enabled), "
    "which this server does not offer"
)


class TokenCalls(Area):
    """Delegation tokens and master keys. Raises MetaException (every delegation-token call)
    and NoSuchObjectException (a master key to update that is not there)."""

    # -- delegation tokens -------------------------------------------------------------------

    def get_delegation_token(self, token_owner: str, renewer_kerberos_principal_name: str) -> str:
        """Refused (MetaException): no SASL."""
        raise hms.MetaException(message=NO_TOKENS)

    def renew_delegation_token(self, token_str_form: str) -> int:
        """Refused (MetaException): no SASL."""
        raise hms.MetaException(message=NO_TOKENS)

    def cancel_delegation_token(self, token_str_form: str) -> None:
        """Refused (MetaException): no SASL."""
        raise hms.MetaException(message=NO_TOKENS)

    # -- the token store ---------------------------------------------------------------------

    def add_token(self, token_identifier: str, delegation_token: str) -> bool:
        """Keep a token under its identifier; False when one is kept under it already."""
        return self.catalog.secrets.add_token(token_identifier, delegation_token)

    def remove_token(self, token_identifier: str) -> bool:
        """Forget a token; whether there was one."""
        return self.catalog.secrets.remove_token(token_identifier)

    def get_token(self, token_identifier: str) -> str:
        """A token kept under its identifier (empty when there is none)."""
        return self.catalog.secrets.get_token(token_identifier)

    def get_all_token_identifiers(self) -> list[str]:
        """The identifiers of every token kept."""
        return self.catalog.secrets.token_identifiers()

    def add_master_key(self, key: str) -> int:
        """Keep a master key; its sequence number."""
        return self.catalog.secrets.add_master_key(key)

    def update_master_key(self, seq_number: int, key: str) -> None:
        """Replace a master key (NoSuchObjectException when there is none of that number)."""
        self.catalog.secrets.update_master_key(seq_number, key)

    def remove_master_key(self, key_seq: int) -> bool:
        """Forget a master key; whether there was one."""
        return self.catalog.secrets.remove_master_key(key_seq)

    def get_master_keys(self) -> list[str]:
        """Every master key kept, in sequence order."""
        return self.catalog.secrets.master_keys()
