"""Whole-table listings served from memory stay exact: any commit to the store, from this
catalog or from another process's, makes the next listing read the store again."""

from __future__ import annotations

from pathlib import Path

from metastore_server import audit
from metastore_server.catalog.catalog import Catalog
from metastore_server.catalog.warehouse import Warehouse
from metastore_server.thrift_api import hms
from storage.embedded import SqliteStore


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
        assert first.partitions.list_names("c", "t") == ["ds=a", "ds=b"]
        with audit.collecting_extras() as extras:  # names alone build no listing
            assert len(first.partitions.list_all("c", "t")) == 2
        assert extras.get("listing_cache") is None
        with audit.collecting_extras() as extras:
            assert len(first.partitions.list_all("c", "t")) == 2
        assert extras.get("listing_cache") == "hit"
        with audit.collecting_extras() as extras:
            assert first.partitions.list_names("c", "t") == ["ds=a", "ds=b"]
        assert extras.get("listing_cache") == "hit"

        other.partitions.add("c", "t", [_partition("c")])
        assert first.partitions.list_names("c", "t") == ["ds=a", "ds=b", "ds=c"]
        first.partitions.drop("c", "t", ["a"], False)
        listed = first.partitions.list_all("c", "t").decode()
        assert [p.values for p in listed] == [["b"], ["c"]]
        assert other.partitions.list_names("c", "t", 1) == ["ds=b"]
    finally:
        first.close()
        other.close()
