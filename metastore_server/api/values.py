"""get_partition_values: chosen key values of the partitions matching a filter.

Semantics (HMS defines less: it ignores ordering and distinct when a filter is given, returns
path-escaped values without one, and ignores the order fields; we honour every field):

* Matching partitions: those ``get_partitions_by_filter`` returns for ``request.filter`` (no
  filter or "": all of them; a blank or bad filter: MetaException, as there).
* ``partitionKeys``: required and non-empty (else MetaException). Names are case-insensitive; a
  name that is no partition key of the table is a MetaException naming it. A key may be asked
  for twice. ``partitionOrder``: the keys to order by (default: ``partitionKeys``), same rules,
  a repeated key counting once.
* Order: by the order keys, then by the table's other partition keys in table order. At each
  key, values compare by the key's type (integers as numbers, dates as dates, strings by code
  point); a value that does not parse as its key's type (``__HIVE_DEFAULT_PARTITION__``) comes
  after every value that does, in both directions, and such values compare by text. Partitions
  whose values are equal at every key (spellings of one number or date: "7", "007") come
  canonical spelling first, then by text, key by key in table order. ``ascending=False``
  reverses every comparison except "unparseable last".
* Rows: the ``partitionKeys`` values (unescaped strings, in the requested key order) of each
  partition, in that order. With ``applyDistinct`` (default true) a row is kept only where it
  first occurs.
* ``maxParts`` (i64): > 0 keeps the first maxParts rows; 0 or negative keeps all (HMS's rule).
* A missing database or table: NoSuchObjectException.

See ``docs/values.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from metastore_server import audit
from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, object_name, required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.catalog import Catalog, TableRef, read_rows
from metastore_server.planner.types import KeyKind
from metastore_server.planner.values import ValuesPlan, plan_values
from metastore_server.thrift_api import hms


def partition_values(
    catalog: Catalog, db: str, table: str, request: hms.PartitionValuesRequest
) -> list[list[str]]:
    """Rows of values of ``request.partitionKeys`` for the matching partitions."""
    ref = catalog.tables.get(db, table)
    plan = values_plan(ref, request)
    ranges = catalog.partition_reads.filter_ranges(ref, request.filter)
    audit.note(strategy=plan.strategy)
    return read_rows(catalog.ctx.store, ref, ranges, plan)


def explain_values(
    catalog: Catalog, db: str, table: str, request: hms.PartitionValuesRequest, analyze: bool
) -> hms.ExplainValuesResult:
    """The strategy of a request and the filter's scans; with ``analyze`` it is run and the
    rows it read and returned are counted."""
    ref = catalog.tables.get(db, table)
    plan = values_plan(ref, request)
    filter_plan = catalog.partition_reads.explain(db, table, request.filter)
    lines = [
        f"get_partition_values on {ref.db}.{ref.name}",
        f"strategy: {plan.describe(ref.key_names)}",
        "filter plan:",
        *("  " + line for line in filter_plan.text.splitlines()),
    ]
    result = hms.ExplainValuesResult(strategy=plan.strategy, filterPlan=filter_plan)
    if analyze:
        ranges = catalog.partition_reads.filter_ranges(ref, request.filter)
        with audit.collecting_extras() as counts:
            rows = read_rows(catalog.ctx.store, ref, ranges, plan)
        result.rowsScanned = _counted(counts, "rows_scanned")
        result.seeks = _counted(counts, "seeks")
        result.rowsReturned = len(rows)
        lines.append(
            f"analyze: {result.rowsScanned} row(s) read, {result.seeks} seek(s), "
            f"{result.rowsReturned} row(s) returned"
        )
    result.text = "\n".join(lines)
    return result


def values_plan(ref: TableRef, request: hms.PartitionValuesRequest) -> ValuesPlan:
    """The strategy of a request on a table (MetaException for keys it does not have)."""
    if not request.partitionKeys:
        raise hms.MetaException(message="partitionKeys must name at least one partition key")
    key_names = ref.key_names
    columns = _key_indexes(key_names, request.partitionKeys)
    order = _key_indexes(key_names, request.partitionOrder)
    exact = [not ref.has_spellings or all(k is KeyKind.STRING for k in ref.kinds[: p + 1])
             for p in range(len(ref.kinds))]
    return plan_values(
        len(key_names),
        columns,
        order,
        distinct=request.applyDistinct is None or bool(request.applyDistinct),
        descending=request.ascending is False,
        max_parts=request.maxParts,
        exact_prefixes=exact,
    )


def _values_response(rows: list[list[str]]) -> hms.PartitionValuesResponse:
    return hms.PartitionValuesResponse(
        partitionValues=[hms.PartitionValuesRow(row=row) for row in rows]
    )


def _counted(counts: Mapping[str, object], name: str) -> int:
    """A counter of the audit extras (0 when nothing was counted)."""
    value = counts.get(name, 0)
    return int(value) if isinstance(value, int | float | str) else 0


def _key_indexes(key_names: list[str], requested: Sequence[hms.FieldSchema] | None) -> list[int]:
    indexes = []
    for field in requested or []:
        name = (field.name or "").lower() if field is not None else ""
        if name not in key_names:
            shown = field.name if field is not None else None
            raise hms.MetaException(
                message=f"Specified key <{shown}> is not a partitioning key for the table"
            )
        indexes.append(key_names.index(name))
    return indexes


class ValuesCalls(Area):
    """``get_partition_values``. Raises NoSuchObjectException (a missing table or database,
    another catalog) and MetaException (a bad filter, a key the table does not have)."""

    @thrift(rule=auth.read(auth.REQUEST))
    def get_partition_values(
        self, request: hms.PartitionValuesRequest
    ) -> hms.PartitionValuesResponse:
        """Rows of chosen key values of the partitions matching a filter (the rules above)."""
        request = required(request, "PartitionValuesRequest")
        db = self.database_in(catalog_field(request), request.dbName)
        table = object_name(request.tblName)
        return _values_response(partition_values(self.catalog, db, table, request))
