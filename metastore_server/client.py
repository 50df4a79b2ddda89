"""A small Python client for this metastore (and any Hive Metastore >= 2.3.6).

``MetastoreClient`` adds HiveMetaStoreClient-like helpers for ``get_partition_values``, our
``explain_partition_values`` extension, our partition timeline extensions
(``partition_timelines``, ``cover_time_range``, ``rebuild_partition_timelines``) and our
dependent table extensions (``resolve_dependencies``, ``dependents``,
``create_dependent_table``, ``repoint_dependency``); any other attribute is the underlying
thriftpy2 client's, so every metastore call is available::

    with MetastoreClient.from_uri("thrift://127.0.0.1:9083") as ms:
        ms.latest_partition_value("db", "events", "ds")
        ms.get_table("db", "events")

Errors are not wrapped: the server's ``hms.MetaException`` and ``hms.NoSuchObjectException``
(and transport errors) propagate unchanged.

A metastore that authenticates clients (``serve --auth password`` or ``--auth kerberos``; an
HMS with SASL) takes a login (:mod:`metastore_server.sasl_client`)::

    MetastoreClient("ms.internal", auth="plain", user="alice", password=secret, tls_ca="ca.pem")
    MetastoreClient("ms.internal", auth="kerberos")  # the ticket of `kinit`, for hive/ms.internal
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlparse

from metastore_server.sasl_client import SaslLogin, open_sasl_client
from metastore_server.thrift_api import hms, make_client

__all__ = ["MetastoreClient"]

DEFAULT_PORT = 9083


def _fields(names: Sequence[str]) -> list[Any]:
    if isinstance(names, str):
        raise TypeError("keys must be a sequence of key names, not a string")
    return [hms.FieldSchema(name=name, type="string") for name in names]


class MetastoreClient:
    """A connection to a metastore; close it with :meth:`close` or use it as a context manager."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        timeout_ms: int = 30000,
        tls_ca: str | None = None,
        auth: str = "none",
        user: str = "",
        password: str = "",
        kerberos_service: str = "hive",
        kerberos_host: str | None = None,
        sasl_qop: str | None = None,
    ) -> None:
        """Connect; ``tls_ca`` (a PEM CA file) makes it a TLS connection verified against it.

        ``auth``: ``none``; ``plain`` (SASL PLAIN as ``user`` with ``password``; use TLS with
        it); ``kerberos`` (SASL GSSAPI with the process's Kerberos ticket, ``KRB5CCNAME`` or
        the default cache, for ``kerberos_service/kerberos_host``, the host defaulting to
        ``host``; ``sasl_qop`` auth, auth-int or auth-conf, default the strongest the server
        offers). ValueError on settings that cannot log in; a refused login raises
        thriftpy2's TTransportException."""
        self.host = host
        self.port = port
        if auth == "none":
            self._client = make_client(host, port, timeout_ms=timeout_ms, tls_ca=tls_ca)
            return
        login = SaslLogin(auth, user, password, service=kerberos_service, host=kerberos_host,
                          qop=sasl_qop)  # fmt: skip
        self._client = open_sasl_client(host, port, login, tls_ca=tls_ca, timeout_ms=timeout_ms)

    @classmethod
    def from_uri(cls, uri: str, **options: Any) -> Self:
        """Connect to ``thrift://host[:port]`` (port 9083 by default); ``options`` as above."""
        target = urlparse(uri)
        if target.scheme != "thrift" or not target.hostname:
            raise ValueError(f"metastore URI must be thrift://host:port, not {uri!r}")
        return cls(target.hostname, target.port or DEFAULT_PORT, **options)

    def close(self) -> None:
        """Close the connection."""
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        """Any other metastore call, e.g. ``get_table(db, table)``."""
        if name == "_client":  # not yet set (failed __init__): no recursion
            raise AttributeError(name)
        return getattr(self._client, name)

    # ------------------------------------------------------------------ partition values

    @staticmethod
    def values_request(
        db: str,
        table: str,
        keys: Sequence[str],
        filter: str | None = None,
        order: Sequence[str] | None = None,
        ascending: bool = True,
        max_parts: int = -1,
        distinct: bool = True,
    ) -> Any:
        """The ``hms.PartitionValuesRequest`` the helpers below send."""
        return hms.PartitionValuesRequest(
            dbName=db,
            tblName=table,
            partitionKeys=_fields(keys),
            applyDistinct=distinct,
            filter=filter,
            partitionOrder=_fields(order) if order is not None else None,
            ascending=ascending,
            maxParts=max_parts,
        )

    def list_partition_values(
        self,
        db: str,
        table: str,
        keys: Sequence[str],
        filter: str | None = None,
        order: Sequence[str] | None = None,
        ascending: bool = True,
        max_parts: int = -1,
        distinct: bool = True,
    ) -> list[list[str]]:
        """Values of ``keys`` of the partitions matching ``filter``, one row per partition.

        Ordered by ``order`` (default: ``keys``) then the other keys, typed;
        ``max_parts`` <= 0 means all rows.
        """
        request = self.values_request(
            db, table, keys, filter, order, ascending, max_parts, distinct
        )
        response = self._client.get_partition_values(request)
        return [list(row.row) for row in response.partitionValues]

    def latest_partition_value(
        self, db: str, table: str, key: str, filter: str | None = None
    ) -> str | None:
        """The greatest value of ``key`` among matching partitions; None if none match."""
        return self._edge_value(db, table, key, filter, ascending=False)

    def earliest_partition_value(
        self, db: str, table: str, key: str, filter: str | None = None
    ) -> str | None:
        """The least value of ``key`` among matching partitions; None if none match."""
        return self._edge_value(db, table, key, filter, ascending=True)

    def _edge_value(
        self, db: str, table: str, key: str, filter: str | None, *, ascending: bool
    ) -> str | None:
        rows = self.list_partition_values(
            db, table, [key], filter, ascending=ascending, max_parts=1
        )
        return rows[0][0] if rows else None

    def explain_partition_values(
        self,
        db: str,
        table: str,
        keys: Sequence[str],
        filter: str | None = None,
        order: Sequence[str] | None = None,
        ascending: bool = True,
        max_parts: int = -1,
        distinct: bool = True,
        analyze: bool = False,
    ) -> Any:
        """How the server reads this values request (our extension): ``hms.ExplainValuesResult``.

        With ``analyze`` it is run and rows read and returned are counted.
        """
        request = self.values_request(
            db, table, keys, filter, order, ascending, max_parts, distinct
        )
        return self._client.explain_partition_values(
            hms.ExplainValuesRequest(request=request, analyze=analyze)
        )

    # ------------------------------------------------------------------ partition timelines

    def partition_timelines(
        self, db: str, table: str, period: str | None = None, column: str | None = None
    ) -> Any:
        """The table's partition timelines (our extension): ``hms.GetPartitionTimelinesResult``
        with ``timelines`` (``hms.PartitionTimelineInfo``: first, latest, count, ranges, Lens
        properties), only those of ``period`` (e.g. "HOURLY") and ``column`` when given, and
        ``timeColumns`` (empty when the table does not opt in)."""
        return self._client.get_partition_timelines(
            hms.GetPartitionTimelinesRequest(
                dbName=db, tblName=table, updatePeriod=period, column=column
            )
        )

    def cover_time_range(
        self,
        db: str,
        tables: Sequence[str],
        column: str,
        start: str | date | datetime,
        end: str | date | datetime,
        periods: Sequence[str] | None = None,
    ) -> Any:
        """The partitions of ``tables`` (one fact's storage tables, in preference order) that
        best cover [start, end) on ``column`` (our extension): ``hms.CoverTimeRangeResult`` with
        ``parts``, ``uncovered``, ``complete`` and ``lookups``.

        Times are ``yyyy-MM-dd[-HH[-mm[-ss]]]`` strings or dates/datetimes (naive: UTC);
        ``periods`` restricts the update periods used (e.g. ``["DAILY", "HOURLY"]``).
        """
        if isinstance(tables, str):
            raise TypeError("tables must be a sequence of table names, not a string")
        return self._client.cover_time_range(
            hms.CoverTimeRangeRequest(
                dbName=db,
                tables=list(tables),
                column=column,
                startTime=_time_text(start),
                endTime=_time_text(end),
                updatePeriods=None if periods is None else _names(periods),
            )
        )

    def rebuild_partition_timelines(self, db: str, table: str) -> Any:
        """Rebuild the table's timelines from its partitions (our extension); the new timelines
        as ``partition_timelines`` returns them."""
        return self._client.rebuild_partition_timelines(
            hms.RebuildTimelinesRequest(dbName=db, tblName=table)
        )

    # ------------------------------------------------------------------ dependent tables

    def resolve_dependencies(
        self, db: str, table: str, partition: str | None = None, *, max_parts: int = -1
    ) -> Any:
        """What the dependent table's partitions (only ``partition``, ``k=v/...``, when given)
        depend on now (our extension): ``hms.ResolveDependenciesResult`` with ``table`` (base,
        policies, completeness rule) and per partition the base partitions matching its spec
        (at most ``max_parts`` names each, -1: all; ``basePartCount`` counts them all) and its
        completeness."""
        return self._client.resolve_dependencies(
            hms.ResolveDependenciesRequest(
                dbName=db, tblName=table, partName=partition, maxParts=max_parts
            )
        )

    def dependents(self, db: str, table: str, partition: str | None = None) -> Any:
        """The tables depending on the base table ``db.table`` and their partitions depending
        on ``partition`` (``k=v/...``; on any partition when None): ``hms.GetDependentsResult``
        (our extension)."""
        return self._client.get_dependents(
            hms.GetDependentsRequest(dbName=db, tblName=table, partName=partition)
        )

    def create_dependent_table(
        self,
        db: str,
        table: str,
        base_db: str,
        base_table: str,
        *,
        key_count: int = 1,
        on_base_drop: str | None = None,
        on_base_schema_change: str | None = None,
        completeness_period: str | None = None,
        completeness_columns: Sequence[str] | None = None,
        location: str | None = None,
        external: bool = True,
        owner: str | None = None,
    ) -> Any:
        """Create ``db.table`` depending on ``base_db.base_table`` (our extension): the base's
        columns and storage format, partitioned by its first ``key_count`` keys; the policies
        (``refuse`` | ``allow`` | ``mark_incomplete`` on base drop, ``refuse`` | ``propagate``
        on base schema change; server defaults when None) and the completeness rule (a period
        such as "HOURLY" and the base's time keys, both or neither). The created ``hms.Table``.
        """
        columns = None
        if completeness_columns is not None:
            if isinstance(completeness_columns, str):
                raise TypeError(
                    "completeness_columns must be a sequence of key names, not a string"
                )
            columns = list(completeness_columns)
        return self._client.create_dependent_table(
            hms.CreateDependentTableRequest(
                dbName=db,
                tblName=table,
                baseDbName=base_db,
                baseTblName=base_table,
                keyCount=key_count,
                onBaseDrop=on_base_drop,
                onBaseSchemaChange=on_base_schema_change,
                completenessPeriod=completeness_period,
                completenessColumns=columns,
                location=location,
                external=external,
                owner=owner,
            )
        )

    def repoint_dependency(
        self,
        db: str,
        table: str,
        base_db: str,
        base_table: str,
        *,
        partition: str | None = None,
    ) -> Any:
        """Make the dependent table's new partitions depend on ``base_db.base_table`` or, with
        ``partition`` (``k=v/...``), that partition on the same spec of it (our extension
        ``alter_dependency``); what the table then depends on, as ``resolve_dependencies``
        returns it."""
        return self._client.alter_dependency(
            hms.AlterDependencyRequest(
                dbName=db,
                tblName=table,
                baseDbName=base_db,
                baseTblName=base_table,
                partName=partition,
            )
        )


def _names(periods: Sequence[str]) -> list[str]:
    if isinstance(periods, str):
        raise TypeError("periods must be a sequence of update period names, not a string")
    return list(periods)


def _time_text(value: str | date | datetime) -> str:
    """A time as the timeline calls take it: ``yyyy-MM-dd-HH-mm-ss`` in UTC (strings as given)."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return (
            f"{value.year:04d}-{value.month:02d}-{value.day:02d}-"
            f"{value.hour:02d}-{value.minute:02d}-{value.second:02d}"
        )
    if isinstance(value, date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    raise TypeError(f"expected a time string, date or datetime, got {type(value).__name__}")
