"""The delegation-token store and master keys HMS keeps for Kerberos-secured metastores that
share tokens through it (its database token store), kept in ``meta`` rows."""

from __future__ import annotations

import secrets

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.thrift_api import hms


class Secrets:
    """Tokens by identifier, master keys by sequence number."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx

    def add_token(self, identifier: str | None, token: str | None) -> bool:
        """Store a token; False when one with that identifier is there already."""
        key = layout.token_key(identifier or "")
        return self._ctx.store.mutate(
            [Put(layout.META, key, {layout.OBJECT: (token or "").encode("utf-8")})],
            Condition(layout.META, key, layout.OBJECT, None),
        )

    def replace_token(self, identifier: str, old: str, new: str) -> bool:
        """Replace a token's record ``old`` by ``new`` (compare-and-set); False when it no longer
        holds ``old`` (removed or changed meanwhile)."""
        key = layout.token_key(identifier)
        return self._ctx.store.mutate(
            [Put(layout.META, key, {layout.OBJECT: new.encode("utf-8")})],
            Condition(layout.META, key, layout.OBJECT, old.encode("utf-8")),
        )

    def next_token_sequence(self) -> int:
        """A new delegation-token sequence number (unique across the processes sharing the
        store)."""
        return self._ctx.store.increment(layout.META, layout.COUNTERS_ROW,
                                         layout.NEXT_TOKEN_SEQUENCE)  # fmt: skip

    def remove_token(self, identifier: str | None) -> bool:
        """Remove a token; whether there was one."""
        key = layout.token_key(identifier or "")
        if self._ctx.store.get(layout.META, key) is None:
            return False
        self._ctx.store.mutate([Delete(layout.META, key)])
        return True

    def signing_key(self, purpose: str) -> bytes:
        """The store's secret key of ``purpose`` (32 random bytes), made by the first process
        that asks and the same for every process sharing the store; never listed or
        answered by any call."""
        key = layout.signing_key_row(purpose)
        made = secrets.token_bytes(32)
        self._ctx.store.mutate([Put(layout.META, key, {layout.OBJECT: made})],
                               Condition(layout.META, key, layout.OBJECT, None))  # fmt: skip
        row = self._ctx.store.get(layout.META, key)
        assert row is not None
        return bytes(row[layout.OBJECT])

    def get_token(self, identifier: str | None) -> str:
        """A token ('' when there is none)."""
        row = self._ctx.store.get(layout.META, layout.token_key(identifier or ""))
        return row[layout.OBJECT].decode("utf-8") if row else ""

    def token_identifiers(self) -> list[str]:
        """Every token's identifier."""
        start, stop = layout.token_range()
        return [layout.token_identifier(key) for key, _ in self._ctx.store.scan(
            layout.META, start, stop, columns=[layout.OBJECT])]  # fmt: skip

    def add_master_key(self, key: str | None) -> int:
        """Store a master key; its new sequence number."""
        number = self._ctx.store.increment(layout.META, layout.COUNTERS_ROW,
                                           layout.NEXT_MASTER_KEY)  # fmt: skip
        self._put_key(number, key)
        return number

    def master_key(self, number: int) -> str | None:
        """A master key by sequence number (None when there is none)."""
        row = self._ctx.store.get(layout.META, layout.master_key_key(number))
        return row[layout.OBJECT].decode("utf-8") if row else None

    def update_master_key(self, number: int, key: str | None) -> None:
        """Replace a master key; NoSuchObjectException (HMS's words) when there is none."""
        if self._ctx.store.get(layout.META, layout.master_key_key(number)) is None:
            raise hms.NoSuchObjectException(message=f"No key found with keyId: {number}")
        self._put_key(number, key)

    def remove_master_key(self, number: int) -> bool:
        """Remove a master key; whether there was one."""
        key = layout.master_key_key(number)
        if self._ctx.store.get(layout.META, key) is None:
            return False
        self._ctx.store.mutate([Delete(layout.META, key)])
        return True

    def master_keys(self) -> list[str]:
        """Every master key, in sequence order."""
        start, stop = layout.master_key_range()
        return [row[layout.OBJECT].decode("utf-8")
                for _, row in self._ctx.store.scan(layout.META, start, stop)]  # fmt: skip

    def _put_key(self, number: int, key: str | None) -> None:
        self._ctx.store.mutate([Put(layout.META, layout.master_key_key(number),
                                    {layout.OBJECT: (key or "").encode("utf-8")})])  # fmt: skip
