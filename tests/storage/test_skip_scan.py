"""A filter on later keys only (``hr = 7``) seeks from first value to first value. Past
``MAX_SKIPS`` first values it goes on seeking when the store counted big blocks under the first
ones (a seek then always costs less than what it jumps over), and reads on plainly otherwise;
the partitions returned are the same either way."""

from __future__ import annotations

import pytest
from metastore_server.storage.embedded import SqliteStore

from metastore_server import audit
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.reads import scan as partition_scan
from metastore_server.thrift_api import hms

DAYS, HOURS = 30, 40


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    tmp = tmp_path_factory.mktemp("skip")
    # No listing cache: every filter reads the store (a cached listing would answer them).
    catalog = Catalog(SqliteStore(str(tmp / "m.db")), Warehouse(tmp / "wh"), listing_cache_bytes=0)
    catalog.databases.create(hms.Database(name="s", parameters={}))
    keys = [hms.FieldSchema(name="ds", type="string"), hms.FieldSchema(name="hr", type="int")]
    sd = hms.StorageDescriptor(cols=[], parameters={})
    catalog.tables.create(
        hms.Table(dbName="s", tableName="t", sd=sd, partitionKeys=keys, parameters={})
    )
    parts = [hms.Partition(values=[f"d{d:02d}", str(h)], parameters={})
             for d in range(DAYS) for h in range(HOURS)]  # fmt: skip
    catalog.partitions.add("s", "t", parts)
    yield catalog
    catalog.close()


def _hr_seven(catalog: Catalog) -> tuple[list[list[str]], dict[str, object]]:
    # A range, not `hr = 7`: SQLite would pass over the other hours itself (key needles) and
    # the rows read past the cap would not show.
    with audit.collecting_extras() as extras:
        found = catalog.partition_reads.by_filter("s", "t", "hr >= 7 and hr <= 7", -1).decode()
    return [p.values for p in found], extras


@pytest.mark.parametrize(
    ("pays_rows", "seeks", "scanned"),
    [
        (HOURS // 2, DAYS, DAYS),  # blocks of 40 rows: seeking pays, every day is a seek
        (HOURS * 2, 5, 5 + (DAYS - 5) * HOURS),  # blocks too small: 5 seeks, then read on
    ],
)
def test_seeking_goes_on_past_the_cap_only_where_it_pays(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, pays_rows: int, seeks: int, scanned: int
) -> None:
    monkeypatch.setattr(partition_scan, "MAX_SKIPS", 5)
    monkeypatch.setattr(partition_scan, "SKIP_PAYS_ROWS", pays_rows)
    values, extras = _hr_seven(catalog)
    assert values == [[f"d{d:02d}", "7"] for d in range(DAYS)]
    assert extras["seeks"] == seeks
    assert extras["rows_scanned"] == scanned
