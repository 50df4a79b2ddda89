"""HMS's rules over the store, in sub-rooms that import one way (lowest first):

``basics`` < ``data``, ``events`` < ``core`` < ``objects``, ``txn``, ``registry`` < ``reads`` <
``security``, ``timelines``, ``dependencies`` < ``partitions`` < ``facade``.

This module is the catalog's public face: ``Catalog`` (``facade.py``, composing the sub-rooms'
services, each a typed attribute) and the types, values and pure helpers the API layer
(``metastore_server.api``) uses. The API imports the catalog only from here;
``tests/unit/test_layering.py`` checks that and the order. Imports only, eager (no cycles: no
sub-room imports this module).
"""

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.bounded_cache import BoundedCache
from metastore_server.catalog.basics.java_text import java_text, thrift_struct_text
from metastore_server.catalog.basics.names import DEFAULT_CATALOG
from metastore_server.catalog.data import permissions
from metastore_server.catalog.data.deletions import Guard
from metastore_server.catalog.data.fast_stats import Context
from metastore_server.catalog.data.filesystems import FileSystemUnavailable, Place, split_location
from metastore_server.catalog.data.guard_index import GuardIndex
from metastore_server.catalog.data.permissions import StoragePermissions
from metastore_server.catalog.dependencies.model import (
    BASE_KEY,
    COMPLETENESS_COLUMNS_KEY,
    COMPLETENESS_PERIOD_KEY,
    DEPENDS_ON_KEY,
    INCOMPLETE_KEY,
    ON_BASE_DROP_KEY,
    ON_SCHEMA_CHANGE_KEY,
    CompletenessRule,
    Dependency,
    DependentSpec,
    TableName,
    completeness,
    matches,
    time_partition_of,
)
from metastore_server.catalog.dependencies.store import DependentPartition
from metastore_server.catalog.dependencies.table_rules import dependent_spec
from metastore_server.catalog.events import messages as event_messages
from metastore_server.catalog.events.log import EventNames
from metastore_server.catalog.events.messages import Event
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.objects import table_index
from metastore_server.catalog.objects.catalogs import catalog_of
from metastore_server.catalog.objects.constraints import CHECK, DEFAULT, NOT_NULL, UNIQUE
from metastore_server.catalog.objects.databases import DEFAULT_DATABASE, Databases
from metastore_server.catalog.objects.partition_marks import expiry_seconds
from metastore_server.catalog.objects.table_filter import table_names_by_filter
from metastore_server.catalog.objects.tables import (
    EXPECTED_KEY,
    EXPECTED_VALUE,
    EXTERNAL_PURGE,
    EXTERNAL_TABLE,
    MANAGED_TABLE,
    MATERIALIZED_VIEW,
    TABLE_TYPES,
    VIRTUAL_VIEW,
    TableRef,
)
from metastore_server.catalog.partitions import exchange
from metastore_server.catalog.partitions import specs as partition_specs
from metastore_server.catalog.reads.partition_rows import partition_name, values_from_name
from metastore_server.catalog.reads.values_reader import read_rows
from metastore_server.catalog.reads.whole_listing import change_token
from metastore_server.catalog.security.delegation import (
    DelegationTokens,
    InvalidToken,
    TokenAccessDenied,
    short_name,
)
from metastore_server.catalog.security.roles import ADMIN, PUBLIC, Roles
from metastore_server.catalog.timelines.parameters import TimelineKey
from metastore_server.catalog.timelines.time_columns import time_columns
from metastore_server.wire.encoded import (
    EncodedNames,
    EncodedPartitions,
    EncodedStructs,
    string_field,
)

__all__ = [
    # the catalog and its services
    "Catalog",
    "Databases",
    "DelegationTokens",
    "Roles",
    "GuardIndex",
    "EventNames",
    "BoundedCache",
    # types and values of its contract
    "TableRef",
    "Context",
    "Event",
    "EncodedNames",
    "EncodedPartitions",
    "EncodedStructs",
    "DependentPartition",
    "Dependency",
    "DependentSpec",
    "CompletenessRule",
    "TableName",
    "BASE_KEY",
    "COMPLETENESS_COLUMNS_KEY",
    "COMPLETENESS_PERIOD_KEY",
    "DEPENDS_ON_KEY",
    "INCOMPLETE_KEY",
    "ON_BASE_DROP_KEY",
    "ON_SCHEMA_CHANGE_KEY",
    "TimelineKey",
    "Guard",
    "Place",
    "FileSystemUnavailable",
    "StoragePermissions",
    "InvalidToken",
    "TokenAccessDenied",
    "DEFAULT_CATALOG",
    "DEFAULT_DATABASE",
    "EXPECTED_KEY",
    "EXPECTED_VALUE",
    "EXTERNAL_PURGE",
    "EXTERNAL_TABLE",
    "MANAGED_TABLE",
    "MATERIALIZED_VIEW",
    "VIRTUAL_VIEW",
    "TABLE_TYPES",
    "CHECK",
    "DEFAULT",
    "NOT_NULL",
    "UNIQUE",
    "ADMIN",
    "PUBLIC",
    # pure helpers (functions and modules of them)
    "names",
    "partition_specs",
    "exchange",
    "permissions",
    "event_messages",
    "table_index",
    "string_field",
    "java_text",
    "thrift_struct_text",
    "split_location",
    "dependent_spec",
    "completeness",
    "matches",
    "time_partition_of",
    "catalog_of",
    "expiry_seconds",
    "table_names_by_filter",
    "partition_name",
    "values_from_name",
    "read_rows",
    "change_token",
    "short_name",
    "time_columns",
]
