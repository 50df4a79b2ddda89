"""Partition filters executed by the catalog on each storage backend: the planned key ranges and
residuals select exactly what brute-force evaluation selects, counts and names agree, and a
filter on leading keys reads no row it does not return (on a backend that runs the residual as a
server-side filter, it may read even fewer)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from metastore_server.planner.errors import FilterError
from metastore_server.planner.evaluate import compile_predicate
from metastore_server.planner.grammar import parse_filter
from support.filter_strategies import filters, tables

from metastore_server import audit
from metastore_server.catalog.basics.names import make_partition_name
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.thrift_api import hms

_NAMES = itertools.count()


@pytest.fixture
def catalog(store, tmp_path: Path) -> Catalog:
    # Data operations off: values such as "a\x00" sort first but name no directory.
    opened = Catalog(store, Warehouse(tmp_path / "warehouse"), data=DataOperations(enabled=False))
    opened.databases.create(hms.Database(name="props", parameters={}))
    return opened


def _make_table(catalog: Catalog, keys, rows) -> str:
    name = f"t{next(_NAMES)}"
    columns = [hms.FieldSchema(name=n, type=t) for n, t in keys]
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="v", type="int")], parameters={})
    catalog.tables.create(
        hms.Table(dbName="props", tableName=name, sd=sd, partitionKeys=columns, parameters={})
    )
    parts = [hms.Partition(values=list(row), parameters={}) for row in rows]
    catalog.partitions.add("props", name, parts)
    return name


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_filters_select_what_brute_force_selects(catalog: Catalog, data: st.DataObject) -> None:
    keys, rows = data.draw(tables())
    # The empty string is the default partition's stored spelling in names; keep values apart.
    rows = [row for row in rows if all(row)]
    name = _make_table(catalog, keys, rows)
    expr = data.draw(filters(tuple(n for n, _ in keys), "regex"))
    text = expr.to_filter_string()
    try:
        parse_filter(text)
    except FilterError:
        assume(False)  # e.g. an integer past 64 bits: a tree no filter text can hold
    predicate = compile_predicate(expr, keys)
    expected = sorted(
        (make_partition_name([n for n, _ in keys], row), list(row))
        for row in rows
        if predicate(row)
    )
    with audit.collecting_extras() as extras:
        found = catalog.partition_reads.by_filter("props", name, text).decode()
    assert [p.values for p in found] == [values for _, values in expected]
    assert extras["rows_matched"] == len(expected)
    assert extras["rows_scanned"] <= len(rows)
    assert catalog.partition_reads.count_by_filter("props", name, text) == len(expected)


def test_leading_key_ranges_read_only_returned_rows(backend, catalog: Catalog) -> None:
    keys = [("ds", "string"), ("hr", "int"), ("region", "string")]
    rows = [(f"2024-01-{d:02d}", str(h), r) for d in range(1, 8) for h in range(12) for r in "ab"]
    name = _make_table(catalog, keys, rows)
    catalog.ctx.listing_cache.max_bytes = 0  # store reads only (no listing answers a filter)
    # (filter, rows returned, rows read, rows the embedded store reads): the last one reads both
    # regions of its hr range, but SQLite's needle test (`region = "a"`) keeps one of them.
    for text, count, read, embedded_read in [
        ('ds = "2024-01-03" and hr >= 3 and hr < 7', 8, 8, 8),
        ('ds >= "2024-01-06"', 48, 48, 48),
        ('(ds) in ("2024-01-01", "2024-01-07") and hr = 11 and region = "b"', 2, 2, 2),
        # No bound on ds: a skip scan reads only the hr block under each ds value.
        ("hr = 11", 14, 14, 14),
        ('hr = 5 and region = "a"', 7, 7, 7),
        ('ds = "2024-01-02" and hr between 10 and 11 and region = "a"', 2, 4, 2),
        ('ds = "2024-01-02" and hr between 10 and 11 and region like "a"', 2, 4, 2),
        ('ds = "2024-01-02" and hr between 10 and 11 and region like ".*a"', 2, 4, 4),
    ]:
        with audit.collecting_extras() as extras:
            assert len(catalog.partition_reads.by_filter("props", name, text)) == count
        if backend.applies_filters:  # the residual ran on the server: fewer rows come back
            assert count <= extras["rows_scanned"] <= read, text
            assert extras["rows_matched"] == count, text
        else:
            assert (extras["rows_scanned"], extras["rows_matched"]) == (embedded_read, count), text
