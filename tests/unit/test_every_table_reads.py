"""``Tables.every_table`` (what a database drop reads to keep other tables' data) reads each
table row once, in one scan: no lookup per table, and the same tables ``find`` reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from metastore_server.storage import layout
from metastore_server.storage.open import open_store

from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.objects.table_outlines import KeptOutlines, every_outline
from metastore_server.catalog.objects.tables import table_owns_data
from metastore_server.thrift_api import hms


class CountingStore:
    """The store, counting the rows its reads return, by call and table."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.rows: Counter[tuple[str, str]] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def get(self, table: str, key: bytes) -> Any:
        self.rows["get", table] += 1
        return self._store.get(table, key)

    def get_many(self, table: str, keys: Any) -> Any:
        found = self._store.get_many(table, keys)
        self.rows["get_many", table] += len(found)
        return found

    def scan(self, table: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for item in self._store.scan(table, *args, **kwargs):
            self.rows["scan", table] += 1
            yield item


@pytest.fixture()
def catalog(tmp_path: Path) -> Iterator[tuple[Catalog, CountingStore]]:
    store = CountingStore(open_store(f"sqlite:///{tmp_path / 'm.db'}"))
    made = Catalog(store, Warehouse(tmp_path / "wh"), data=DataOperations(enabled=False))
    yield made, store
    made.close()


def _table(db: str, name: str) -> hms.Table:
    cols = [hms.FieldSchema(name="a", type="int", comment=None)]
    sd = hms.StorageDescriptor(cols=cols, location=None, inputFormat="in", outputFormat="out",
                               serdeInfo=hms.SerDeInfo(name=None, serializationLib="s",
                                                       parameters={}),
                               parameters={})  # fmt: skip
    return hms.Table(tableName=name, dbName=db, owner="me", sd=sd, partitionKeys=[],
                     parameters={}, tableType="MANAGED_TABLE")  # fmt: skip


def test_every_table_reads_each_row_once(catalog: tuple[Catalog, CountingStore]) -> None:
    cat, store = catalog
    for db in ("a", "b"):
        cat.databases.create(hms.Database(name=db, parameters={}))
        for i in range(12):
            cat.tables.create(_table(db, f"t{i}"))
    store.rows.clear()
    found = list(cat.tables.every_table())
    assert store.rows == Counter({("scan", layout.TABLES): 24})
    assert [(r.db, r.name) for r in found] == sorted(
        (db, f"t{i}") for db in ("a", "b") for i in range(12)
    )
    for ref in found:
        again = cat.tables.find(ref.db, ref.name)
        assert again is not None
        assert (ref.table_id, ref.table, ref.object_bytes, ref.stamp) == (
            again.table_id,
            again.table,
            again.object_bytes,
            again.stamp,
        )


def test_every_outline_says_what_the_definitions_say(
    catalog: tuple[Catalog, CountingStore],
) -> None:
    """The outlines a database drop reads (location, whether the table owns its data, whether
    it has partition keys) are those of the whole definitions, for every table, in key order;
    a view, an external table and a partitioned one included."""
    cat, _store = catalog
    cat.databases.create(hms.Database(name="a", parameters={}))
    cat.tables.create(_table("a", "managed"))
    external = _table("a", "ext")
    external.tableType, external.parameters = "EXTERNAL_TABLE", {"EXTERNAL": "TRUE"}
    cat.tables.create(external)
    purged = _table("a", "purged")
    purged.tableType = "EXTERNAL_TABLE"
    purged.parameters = {"EXTERNAL": "TRUE", "external.table.purge": "true"}
    cat.tables.create(purged)
    parted = _table("a", "parted")
    parted.partitionKeys = [hms.FieldSchema(name="ds", type="string", comment=None)]
    cat.tables.create(parted)
    view = _table("a", "v")
    view.tableType, view.viewOriginalText, view.viewExpandedText = "VIRTUAL_VIEW", "x", "x"
    view.sd.location = None
    cat.tables.create(view)
    refs = list(cat.tables.every_table())
    outlines = list(every_outline(cat.ctx))
    assert [(o.db, o.name, o.location, o.owns_data, o.partitioned) for o in outlines] == [
        (r.db, r.name, r.location, table_owns_data(r.table), bool(r.table.partitionKeys))
        for r in refs
    ]
    assert {o.name: o.owns_data for o in outlines} == {
        "ext": False, "managed": True, "parted": True, "purged": True, "v": False
    }  # fmt: skip
    assert [o.name for o in outlines if o.partitioned] == ["parted"]


def test_kept_outlines_read_only_the_rows_changed_since(
    catalog: tuple[Catalog, CountingStore],
) -> None:
    """Outlines kept between drops are those ``every_outline`` reads now, after creates,
    alters, renames and drops, and after a transaction that rolled back; each call reads again
    only the rows changed since the last (every row the first time)."""
    cat, store = catalog
    kept = KeptOutlines(cat.ctx)

    def same() -> None:
        got, wanted = kept.outlines(), list(every_outline(cat.ctx))
        assert got.every == wanted
        assert got.locations == tuple(o.location for o in wanted)
        assert got.partitioned == [o for o in wanted if o.partitioned]

    cat.databases.create(hms.Database(name="a", parameters={}))
    for i in range(6):
        cat.tables.create(_table("a", f"t{i}"))
    store.rows.clear()
    same()
    assert store.rows[("get_many", layout.TABLES)] == 0  # the first call reads every row
    store.rows.clear()
    assert kept.outlines().every == list(every_outline(cat.ctx))
    assert store.rows[("get_many", layout.TABLES)] == 0  # nothing changed: nothing read
    moved = cat.tables.get("a", "t1").table
    moved.sd.location = "file:/elsewhere/t1"
    cat.alter_table("a", "t1", moved, False)
    renamed = cat.tables.get("a", "t2").table
    renamed.tableName = "t9"
    cat.alter_table("a", "t2", renamed, False)
    cat.drop_table("a", "t3", False)
    parted = _table("a", "new")
    parted.partitionKeys = [hms.FieldSchema(name="ds", type="string", comment=None)]
    cat.tables.create(parted)
    store.rows.clear()
    same()
    assert [o.name for o in kept.outlines().partitioned] == ["new"]
    assert store.rows[("get_many", layout.TABLES)] == 3  # t1, t9, new (t2, t3: gone)
    with pytest.raises(RuntimeError), cat.ctx.write_lock:
        cat.tables.create(_table("a", "rolled_back"))
        assert "rolled_back" in [o.name for o in kept.outlines().every]
        raise RuntimeError
    same()
    assert "rolled_back" not in [o.name for o in kept.outlines().every]
