"""The filter shapes of the partition-filter benchmark (docs/benchmarks.md): the calls timed
on a data set's table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from partition_dataset import DB, Dataset, hms


@dataclass(frozen=True)
class Shape:
    """One timed call: a name, the Thrift method and its arguments (a filter, maybe)."""

    name: str
    method: str
    args: tuple[Any, ...]
    filter: str | None = None
    returns_count: bool = False  # the result is a number, not partitions


def latest_ds_request(table: str) -> hms.PartitionValuesRequest:
    """The request for a table's latest ``ds`` (distinct, descending, one row)."""
    return hms.PartitionValuesRequest(
        dbName=DB,
        tblName=table,
        partitionKeys=[hms.FieldSchema(name="ds", type="string", comment=None)],
        applyDistinct=True,
        ascending=False,
        maxParts=1,
    )


def shapes(ds: Dataset) -> list[Shape]:
    """The filter shapes of docs/benchmarks.md on data set ``ds``."""
    mid = ds.days // 2
    span = max(1, round(ds.days / 100))
    regions = ds.regions
    point = f'ds = "{ds.day(mid)}" and hr = 7 and region = "{regions[len(regions) // 2]}"'
    range_1pct = f'ds >= "{ds.day(mid)}" and ds < "{ds.day(mid + span)}"'
    in_days = ", ".join(f'"{ds.day(i * (ds.days - 1) // 4)}"' for i in range(5))
    month = ds.day(mid)[:7]
    filters = [
        ("point", point),
        ("range_1pct", range_1pct),
        ("non_leading_eq", "hr = 7"),
        ("in_list", f"(ds) in ({in_days})"),
        ("region_in", '(region) in ("r1", "r2")'),
        ("or_keys", f'ds = "{ds.day(mid)}" or region = "r1"'),
        ("like_region", 'region like "r1.*"'),
        ("like_ds_month", f'ds like "{month}.*"'),
    ]
    out = [
        Shape(name, "get_partitions_by_filter", (DB, ds.table, text, -1), text)
        for name, text in filters
    ]
    latest = latest_ds_request(ds.table)
    out.append(
        Shape("latest_ds", "get_partition_values", (latest,), "distinct ds, descending, 1 row")
    )
    out.append(Shape("full_listing", "get_partitions", (DB, ds.table, -1)))
    out.append(
        Shape(
            "count_range_1pct",
            "get_num_partitions_by_filter",
            (DB, ds.table, range_1pct),
            range_1pct,
            returns_count=True,
        )
    )
    out.append(Shape("partition_names", "get_partition_names", (DB, ds.table, -1)))
    return out
