"""get_partition_values: chosen key values of the partitions matching a filter.

Every request field is honoured (HMS ignores ordering and distinct when a filter is given; we
do not): key subset in the requested order, distinct, filter, order keys, direction, maxParts.
Values order by their key's type (numbers numerically, dates as dates) with values that do not
parse (the default partition) last.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.catalog import Catalog
from metastore_server.thrift_api import hms
from planner.types import KeyKind, parse_typed


def _key_indexes(key_names: list[str], requested: Sequence[hms.FieldSchema] | None) -> list[int]:
    indexes = []
    for field in requested or []:
        name = (field.name or "").lower()
        if name not in key_names:
            raise hms.MetaException(
                message=f"Specified key <{field.name}> is not a partitioning key for the table"
            )
        indexes.append(key_names.index(name))
    return indexes


def _sort_key(kind: KeyKind, raw: str, descending: bool) -> tuple[int, object]:
    """Typed order; values that do not parse go last in either direction."""
    typed = parse_typed(kind, raw)
    typed_rank, untyped_rank = (1, 0) if descending else (0, 1)
    return (untyped_rank, raw) if typed is None else (typed_rank, typed)


def partition_values(
    catalog: Catalog, db: str, table: str, request: hms.PartitionValuesRequest
) -> list[list[str]]:
    """Rows of values of ``request.partitionKeys`` for the matching partitions."""
    ref = catalog.tables.get(db, table)
    key_names = ref.key_names
    if not request.partitionKeys:
        raise hms.MetaException(message="partitionKeys must name at least one partition key")
    columns = _key_indexes(key_names, request.partitionKeys)
    order = _key_indexes(key_names, request.partitionOrder) or columns
    distinct = request.applyDistinct is None or request.applyDistinct
    matching = catalog.partitions.matching_values(db, table, request.filter)
    rows: list[tuple[list[str], list[str]]] = []
    seen: set[tuple[str, ...]] = set()
    for values in matching:
        row = [values[i] for i in columns]
        if distinct:
            marker = tuple(row)
            if marker in seen:
                continue
            seen.add(marker)
        rows.append((row, [values[i] for i in order]))
    kinds = ref.kinds
    descending = request.ascending is False
    rows.sort(
        key=lambda item: [
            _sort_key(kinds[i], v, descending) for i, v in zip(order, item[1], strict=True)
        ],
        reverse=descending,
    )
    limit = request.maxParts if request.maxParts is not None and request.maxParts >= 0 else None
    result = [row for row, _ in rows]
    return result if limit is None else result[:limit]
