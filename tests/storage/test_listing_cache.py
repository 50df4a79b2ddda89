"""Whole-table listings served from memory stay exact: any commit to the store, from this
catalog or from another process's, makes the next listing read the store again."""

from __future__ import annotations

from pathlib import Path

from metastore_server.storage.embedded import SqliteStore

from metastore_server import audit
from metastore_server.catalog.basics.names import make_partition_name
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.reads.whole_listing import whole_listing
from metastore_server.thrift_api import hms


def _catalog(path: Path, warehouse: Path) -> Catalog:
    return Catalog(SqliteStore(str(path)), Warehouse(warehouse))


def _partition(ds: str) -> hms.Partition:
    return hms.Partition(values=[ds], parameters={})


def test_listings_follow_every_commit(tmp_path: Path) -> None:
    first = _catalog(tmp_path / "m.db", tmp_path / "wh")
    other = _catalog(tmp_path / "m.db", tmp_path / "wh")  # another server on the same file
    try:
        first.databases.create(hms.Database(name="c", parameters={}))
        key = hms.FieldSchema(name="ds", type="string")
        sd = hms.StorageDescriptor(cols=[], parameters={})
        first.tables.create(
            hms.Table(dbName="c", tableName="t", sd=sd, partitionKeys=[key], parameters={})
        )
        first.partitions.add("c", "t", [_partition("b"), _partition("a")])
        assert first.partition_reads.list_names("c", "t").decode() == ["ds=a", "ds=b"]
        with audit.collecting_extras() as extras:  # names alone build no listing
            assert len(first.partition_reads.list_all("c", "t")) == 2
        assert extras.get("listing_cache") is None
        with audit.collecting_extras() as extras:
            assert len(first.partition_reads.list_all("c", "t")) == 2
        assert extras.get("listing_cache") == "hit"
        with audit.collecting_extras() as extras:
            assert first.partition_reads.list_names("c", "t").decode() == ["ds=a", "ds=b"]
        assert extras.get("listing_cache") == "hit"

        other.partitions.add("c", "t", [_partition("c")])
        assert first.partition_reads.list_names("c", "t").decode() == ["ds=a", "ds=b", "ds=c"]
        first.partitions.drop("c", "t", ["a"], False)
        listed = first.partition_reads.list_all("c", "t").decode()
        assert [p.values for p in listed] == [["b"], ["c"]]
        assert other.partition_reads.list_names("c", "t", 1).decode() == ["ds=b"]
    finally:
        first.close()
        other.close()


def _two_key_table(catalog: Catalog, name: str = "t") -> None:
    catalog.databases.create(hms.Database(name="f", parameters={}))
    keys = [hms.FieldSchema(name=key, type="string") for key in ("ds", "region")]
    sd = hms.StorageDescriptor(cols=[], parameters={})
    catalog.tables.create(
        hms.Table(dbName="f", tableName=name, sd=sd, partitionKeys=keys, parameters={})
    )
    parts = [
        hms.Partition(values=[f"2024-01-{d:02d}", region], parameters={})
        for d in range(1, 11)
        for region in ("r10", "r2", "r1")
    ]
    catalog.partitions.add("f", name, parts)


def _region_filter(catalog: Catalog, text: str) -> tuple[list[list[str]], dict[str, object]]:
    with audit.collecting_extras() as extras:
        found = [p.values for p in catalog.partition_reads.by_filter("f", "t", text).decode()]
    return found, extras


def test_filters_over_the_whole_table_are_answered_from_the_listing(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path / "m.db", tmp_path / "wh")
    try:
        _two_key_table(catalog)
        text = '(region) in ("r1", "r10")'
        expected = [[f"2024-01-{d:02d}", r] for d in range(1, 11) for r in ("r1", "r10")]
        first, extras = _region_filter(catalog, text)  # the first look reads the store
        assert first == expected and extras.get("listing_cache") is None
        second, extras = _region_filter(catalog, text)  # unchanged since: built, kept
        assert second == expected and extras["listing_cache"] == "built"
        assert extras["rows_scanned"] == 30 and extras["rows_matched"] == 20
        for other, want in [
            ('region like "r1.*"', expected),
            ('region = "r2" or ds = "2024-01-03"', [
                [f"2024-01-{d:02d}", r] for d in range(1, 11) for r in ("r1", "r10", "r2")
                if r == "r2" or d == 3
            ]),
        ]:  # fmt: skip
            found, extras = _region_filter(catalog, other)
            assert found == want and extras["listing_cache"] == "hit"
        assert catalog.partition_reads.count_by_filter("f", "t", text) == 20
        assert len(catalog.partition_reads.by_filter("f", "t", text, 5)) == 5
        # A narrow plan reads the store, listing or not.
        found, extras = _region_filter(catalog, 'ds = "2024-01-02" and region = "r1"')
        assert found == [["2024-01-02", "r1"]] and extras.get("listing_cache") is None

        # A write: the next filter reads the store again, and sees the new partition.
        catalog.partitions.add("f", "t", [hms.Partition(values=["2024-02-01", "r1"])])
        found, extras = _region_filter(catalog, text)
        assert found == [*expected, ["2024-02-01", "r1"]]
        assert extras.get("listing_cache") is None
    finally:
        catalog.close()


def test_a_table_too_large_for_the_cache_is_never_built_for_a_filter(tmp_path: Path) -> None:
    catalog = Catalog(
        SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"), listing_cache_bytes=4096
    )
    try:
        _two_key_table(catalog)
        table_id = catalog.tables.get("f", "t").table_id
        for _ in range(3):
            found, extras = _region_filter(catalog, '(region) in ("r2")')
            assert len(found) == 10 and extras.get("listing_cache") is None
        assert not catalog.ctx.listing_cache.may_keep(table_id)
    finally:
        catalog.close()


def test_a_listing_too_large_to_keep_is_not_built(tmp_path: Path) -> None:
    """Found too large from its row count before it is built, a big table's listing is not
    made at all: its partitions are read from the store, sorted in bounded memory."""
    catalog = Catalog(
        SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"), listing_cache_bytes=4096
    )
    try:
        _two_key_table(catalog)
        ref = catalog.tables.get("f", "t")
        assert whole_listing(catalog.ctx, ref) is None
        assert not catalog.ctx.listing_cache.may_keep(ref.table_id)
        assert whole_listing(catalog.ctx, ref) is None
        listed = catalog.partition_reads.list_all("f", "t").decode()
        names = [make_partition_name(ref.key_names, p.values) for p in listed]
        assert len(names) == 30 and names == sorted(names)
    finally:
        catalog.close()
