"""The processor's handler: every Thrift method, by its IDL name, is the method of that name of
one area object. This module is the one place the areas are put together.

Each area of the IDL is one module of ``metastore_server/api/`` with one class (``AREAS``
below); the processor (``server/processor.py``) looks a call up on the handler by its IDL
name and passes the arguments in IDL order. Where a method lives and why:
``docs/design.md#where-a-thrift-method-lives``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore_server.api.area import Area, ServerSettings
from metastore_server.api.authorization import Authorizer
from metastore_server.api.catalogs import CatalogCalls
from metastore_server.api.compactions import CompactionCalls
from metastore_server.api.constraints import ConstraintCalls
from metastore_server.api.databases import DatabaseCalls
from metastore_server.api.dependencies import DependencyCalls
from metastore_server.api.events import EventCalls
from metastore_server.api.explain import ExplainCalls
from metastore_server.api.file_metadata import FileMetadataCalls
from metastore_server.api.functions import FunctionCalls
from metastore_server.api.indexes import IndexCalls
from metastore_server.api.listing_replies import ListingReplies
from metastore_server.api.materialized_views import MaterializedViewCalls
from metastore_server.api.partition_names import PartitionNameCalls
from metastore_server.api.partition_reads import PartitionReadCalls
from metastore_server.api.partition_requests import PartitionRequestCalls
from metastore_server.api.partition_writes import PartitionWriteCalls
from metastore_server.api.procedures import ProcedureCalls
from metastore_server.api.properties import PropertyCalls
from metastore_server.api.proxy_users import ProxyUsers
from metastore_server.api.replication_metrics import ReplicationMetricsCalls
from metastore_server.api.runtime_stats import RuntimeStatsCalls
from metastore_server.api.scheduled_queries import ScheduledQueryCalls
from metastore_server.api.schema_registry import SchemaRegistryCalls
from metastore_server.api.security import SecurityCalls
from metastore_server.api.service import ServiceCalls
from metastore_server.api.statistics import StatisticsCalls
from metastore_server.api.table_requests import TableRequestCalls
from metastore_server.api.tables import TableCalls
from metastore_server.api.timelines import TimelineCalls
from metastore_server.api.tokens import TokenCalls
from metastore_server.api.transactions import TransactionCalls
from metastore_server.api.types import TypeCalls
from metastore_server.api.values import ValuesCalls
from metastore_server.api.workload import WorkloadCalls
from metastore_server.api.write_ids import WriteIdCalls
from metastore_server.caller import current_session
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.reads.whole_listing import change_token
from metastore_server.catalog.security.delegation import DelegationTokens
from metastore_server.thrift_api import hms

#: The areas of the IDL, each serving the methods it defines (HMS's first, then ours).
AREAS: tuple[type[Area], ...] = (
    ServiceCalls,
    DatabaseCalls,
    TableCalls,
    MaterializedViewCalls,
    TableRequestCalls,
    ConstraintCalls,
    IndexCalls,
    TypeCalls,
    PartitionWriteCalls,
    PartitionReadCalls,
    PartitionRequestCalls,
    PartitionNameCalls,
    StatisticsCalls,
    FunctionCalls,
    SecurityCalls,
    TokenCalls,
    TransactionCalls,
    CompactionCalls,
    WriteIdCalls,
    EventCalls,
    FileMetadataCalls,
    ValuesCalls,
    ExplainCalls,
    TimelineCalls,
    DependencyCalls,
    CatalogCalls,
    PropertyCalls,
    ScheduledQueryCalls,
    ProcedureCalls,
    ReplicationMetricsCalls,
    RuntimeStatsCalls,
    WorkloadCalls,
    SchemaRegistryCalls,
)


def calls_of(area: type[Area]) -> list[str]:
    """The Thrift methods an area serves: the public methods its class defines."""
    return [
        name for name, value in vars(area).items() if callable(value) and not name.startswith("_")
    ]


class MetastoreHandler:
    """ThriftHiveMetastore (and fb303's FacebookService) over a Catalog: one object of each
    area, and for each IDL method a method of this class passing the call to its area."""

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


def _passing_to(area: type[Area], name: str) -> Callable[..., object]:
    """The handler method ``name``: the method of that name of the handler's ``area`` object
    (a method of the class, so a test may replace it on the class)."""

    def call(self: MetastoreHandler, *args: object) -> object:
        return getattr(self.areas[area], name)(*args)

    call.__name__ = name
    call.__qualname__ = f"{MetastoreHandler.__qualname__}.{name}"
    call.__doc__ = getattr(area, name).__doc__
    return call


def _expose(areas: tuple[type[Area], ...]) -> None:
    """Give MetastoreHandler each area's methods; TypeError (at import) for a method the IDL
    does not have or one two areas define."""
    in_idl = set(hms.ThriftHiveMetastore.thrift_services)
    for area in areas:
        for name in calls_of(area):
            if name not in in_idl:
                raise TypeError(f"{area.__name__}.{name} is no method of the IDL")
            if name in vars(MetastoreHandler):
                raise TypeError(f"{name} is defined by two areas (the second: {area.__name__})")
            setattr(MetastoreHandler, name, _passing_to(area, name))


_expose(AREAS)
