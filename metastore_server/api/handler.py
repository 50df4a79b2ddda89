"""The processor's handler: one object of each area over one catalog, and the dispatch table
of their Thrift methods. This module is the one place the area objects are put together.

Each area of the IDL is one module of ``metastore_server/api/`` with one class (``AREAS`` in
``api/areas.py``), each Thrift method declared on its area method (``api/declaration.py``);
the processor (``server/processor.py``) looks a call up in ``MetastoreHandler.calls`` by its
IDL name and passes the arguments in IDL order. Where a method lives and why:
``docs/design.md#where-a-thrift-method-lives``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore_server.api.area import Area, ServerSettings
from metastore_server.api.areas import AREAS, dispatch_table
from metastore_server.api.authorization import Authorizer
from metastore_server.api.listing_replies import ListingReplies
from metastore_server.api.proxy_users import ProxyUsers
from metastore_server.caller import current_session
from metastore_server.catalog import Catalog, DelegationTokens, change_token


class MetastoreHandler:
    """ThriftHiveMetastore (and fb303's FacebookService) over a Catalog: one object of each
    area, and the dispatch table ``calls`` (IDL method name -> the bound area method)."""

    def __init__(
        self,
        catalog: Catalog,
        config_values: dict[str, str] | None = None,
        authorizer: Authorizer | None = None,
        tokens: DelegationTokens | None = None,
        proxy_users: ProxyUsers | None = None,
    ) -> None:
        self.catalog = catalog
        self.authorizer = authorizer
        #: The delegation-token manager (None: no tokens), which token logins check too.
        self.tokens = tokens
        #: Who may act for whom (``--proxy-user``), which SASL logins check too.
        self.proxy_users = proxy_users if proxy_users is not None else ProxyUsers()
        #: What the areas read besides the catalog (the server fills in ``hms_api``).
        self.settings = ServerSettings(config_values=dict(config_values or {}), tokens=tokens,
                                       proxy_users=self.proxy_users)  # fmt: skip
        self.areas: dict[type[Area], Area] = {area: area(catalog, self.settings) for area in AREAS}
        #: IDL method name -> the area method serving it: what the processor calls.
        self.calls: dict[str, Callable[..., Any]] = dispatch_table(self.areas)
        #: Names listings answered again while the store is unchanged (used by the server's
        #: processor for Thrift calls; calls made on this object directly are not kept).
        self.listing_replies = ListingReplies(self.change_token)

    def change_token(self) -> int | None:
        """The store's change token (None: it has none, or cannot say now); the server keeps
        replies under it. Not a Thrift method."""
        return change_token(self.catalog.ctx)

    def authorize(self, api: str, values: dict[str, Any]) -> None:
        """Refuse (raise the HMS exception) a call the current caller may not make under
        ``--authorization``; nothing to check when it is off. Not a Thrift method."""
        if self.authorizer is not None:
            self.authorizer.check(api, values, current_session())

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """A Thrift method by its IDL name (``handler.get_table(db, t)``), as in the dispatch
        table; for calls made on the handler directly (tools, tests)."""
        calls = self.__dict__.get("calls")
        if calls is None or name not in calls:
            raise AttributeError(f"{type(self).__name__} has no method {name!r}")
        method: Callable[..., Any] = calls[name]
        return method


