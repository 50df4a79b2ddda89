"""The areas of the IDL and what they declare: the one index of the Thrift methods.

Each area is one module of ``metastore_server/api/`` with one class (:data:`AREAS`); each of
its Thrift methods carries its declaration (:mod:`.declaration`). :data:`DECLARED` gathers them
(each IDL method once, checked at import), and :func:`dispatch_table` binds them to a handler's
area objects: the table the processor and the REST catalog call through. See
``docs/design.md#where-a-thrift-method-lives``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from metastore_server.api.area import Area
from metastore_server.api.catalogs import CatalogCalls
from metastore_server.api.compactions import CompactionCalls
from metastore_server.api.constraints import ConstraintCalls
from metastore_server.api.databases import DatabaseCalls
from metastore_server.api.declaration import Declared, declared_in
from metastore_server.api.dependencies import DependencyCalls
from metastore_server.api.events import EventCalls
from metastore_server.api.explain import ExplainCalls
from metastore_server.api.file_metadata import FileMetadataCalls
from metastore_server.api.functions import FunctionCalls
from metastore_server.api.indexes import IndexCalls
from metastore_server.api.materialized_views import MaterializedViewCalls
from metastore_server.api.partition_names import PartitionNameCalls
from metastore_server.api.partition_reads import PartitionReadCalls
from metastore_server.api.partition_requests import PartitionRequestCalls
from metastore_server.api.partition_writes import PartitionWriteCalls
from metastore_server.api.procedures import ProcedureCalls
from metastore_server.api.properties import PropertyCalls
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
from metastore_server.thrift_api import hms

#: The areas of the IDL, each serving the methods it declares (HMS's first, then ours).
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


def _index(areas: tuple[type[Area], ...]) -> dict[str, tuple[type[Area], Declared]]:
    """Method name -> the area declaring it and its declaration; TypeError for a method the
    IDL does not have or one two areas declare."""
    in_idl = set(hms.ThriftHiveMetastore.thrift_services)
    found: dict[str, tuple[type[Area], Declared]] = {}
    for area in areas:
        for name, declared in declared_in(area).items():
            if name not in in_idl:
                raise TypeError(f"{area.__name__}.{name} is no method of the IDL")
            if name in found:
                raise TypeError(f"{name} is declared by two areas (the second: {area.__name__})")
            found[name] = (area, declared)
    return found


_INDEX = _index(AREAS)
#: Every Thrift method served -> its declaration.
DECLARED: Mapping[str, Declared] = {name: declared for name, (_, declared) in _INDEX.items()}
#: Every Thrift method served -> the area serving it.
AREA_OF: Mapping[str, type[Area]] = {name: area for name, (area, _) in _INDEX.items()}


def named(facts: Callable[[Declared], bool]) -> frozenset[str]:
    """The methods whose declaration has ``facts``: what a mechanism treats apart."""
    return frozenset(name for name, declared in DECLARED.items() if facts(declared))


def dispatch_table(areas: Mapping[type[Area], Area]) -> dict[str, Callable[..., object]]:
    """Method name -> the bound method of the area object serving it (arguments in IDL
    order), for the area objects of one handler."""
    return {name: getattr(areas[area], name) for name, area in AREA_OF.items()}
