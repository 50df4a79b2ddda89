"""What every area of the Thrift face is built over: the catalog and the server's settings.

Each module of ``metastore_server/api/`` holds one area of the IDL as a class deriving
:class:`Area`; ``api/handler.py`` builds one object of each and exposes their methods to the
processor under the IDL names. See ``docs/design.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from metastore_server.api import arguments
from metastore_server.api.meta_conf import MetaConf
from metastore_server.api.proxy_users import ProxyUsers
from metastore_server.catalog import Catalog, DelegationTokens
from metastore_server.thrift_api import hms


@dataclass
class ServerSettings:
    """What calls read besides the catalog: the settings clients may read
    (``get_config_value``, the event-mark expiry), each connection's settable ones
    (``setMetaConf``), the delegation-token manager (None: the server issues no tokens), the
    proxy-user rules (``--proxy-user``), the client generation served (``--hms-api``) and
    whether the store answers a cheap read (None: it does, else why not; fb303's status)."""

    config_values: dict[str, str] = field(default_factory=dict)
    meta_conf: MetaConf = field(default_factory=MetaConf)
    tokens: DelegationTokens | None = None
    proxy_users: ProxyUsers = field(default_factory=ProxyUsers)
    hms_api: str = "auto"
    store_health: Callable[[], str | None] | None = None


class Area:
    """One area of the IDL: its public methods are Thrift methods, with the IDL's names and
    argument order; everything else is private (a leading underscore)."""

    def __init__(self, catalog: Catalog, settings: ServerSettings) -> None:
        self.catalog = catalog
        self.settings = settings

    def database_in(self, catalog: str | None, name: str | None) -> str:
        """The database a call names, checked against the catalog it names (the catalog
        field, else an ``@cat#`` prefix, else ``hive``): ``arguments.database_in``."""
        return arguments.database_in(self.catalog.databases, catalog, name)

    def listed_database(self, catalog: str | None, name: str | None) -> str | None:
        """``database_in`` for the listing calls: None (list nothing, as for a database that
        exists nowhere) when the database is not in the catalog named."""
        try:
            return self.database_in(catalog, name)
        except hms.NoSuchObjectException:
            return None
