"""An add prepares its partitions before it takes the write lock; when the table changed in
between (another call altered it), what was prepared is dropped and made again under the lock,
so the partitions follow the table as it is when they are written."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage.embedded import SqliteStore

from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.partitions.adding import Adding
from metastore_server.thrift_api import hms


@pytest.fixture()
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    catalog = Catalog(SqliteStore(str(tmp_path / "m.db")), Warehouse(tmp_path / "wh"))
    catalog.databases.create(hms.Database(name="e", parameters={}))
    sd = hms.StorageDescriptor(cols=[], parameters={}, location=str(tmp_path / "old"))
    keys = [hms.FieldSchema(name="ds", type="string")]
    catalog.tables.create(
        hms.Table(dbName="e", tableName="t", sd=sd, partitionKeys=keys, parameters={})
    )
    yield catalog
    catalog.close()


def test_a_table_altered_between_preparing_and_writing_is_followed(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    early = Adding._early

    def altered_meanwhile(self: Adding, *args: object) -> object:
        prepared = early(self, *args)
        table = copy.deepcopy(catalog.tables.get("e", "t").table)
        table.sd.location = str(tmp_path / "new")
        catalog.tables.alter("e", "t", table)
        return prepared

    monkeypatch.setattr(Adding, "_early", altered_meanwhile)
    catalog.partitions.add("e", "t", [hms.Partition(values=["a"], parameters={})])
    stored = catalog.partition_reads.get("e", "t", ["a"])
    assert stored.sd.location.endswith("/new/ds=a")


def test_an_unchanged_table_uses_what_was_prepared(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[object] = []
    early = Adding._early

    def recording(self: Adding, *args: object) -> object:
        prepared = early(self, *args)
        made.append(prepared)
        return prepared

    monkeypatch.setattr(Adding, "_early", recording)
    part = hms.Partition(values=["b"], parameters={"k": "v"})
    (answer,) = catalog.partitions.add("e", "t", [part])
    (prepared,) = made
    assert prepared.ready[0][0] is answer  # the answer made before the lock was the one used
    assert catalog.partition_reads.get("e", "t", ["b"]).parameters["k"] == "v"
