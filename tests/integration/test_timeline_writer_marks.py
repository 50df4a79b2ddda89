"""Timeline writer marks on HBase (its test double), with in-process catalogs standing in for
server processes on one store: a mark never brings back a dropped table, and a writer that dies
mid-change leaves neither its partition nor its mark once its lease has run out, while another
writer's change made meanwhile is kept, its timelines whole."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage import layout
from metastore_server.storage.hbase import HBaseStore
from support import stress
from support.hbase_double import running_double, storage_url

from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.timelines.keeper import TimelineKeeper
from metastore_server.thrift_api import hms

from .conftest import RunningServer

LEASE_S = 0.5


@pytest.fixture()
def url(tmp_path: Path) -> Iterator[str]:
    """An HBase double holding the stress table (opted in to timelines on ``dt``)."""
    with running_double() as address:
        url = storage_url(*address, prefix="marks_")
        server = RunningServer(tmp_path / "setup", storage=url)
        try:
            client = server.client()
            stress.prepare(client)
            client.close()
        finally:
            server.stop()
        yield url


def _process(url: str, tmp_path: Path, lease: float = LEASE_S) -> Catalog:
    """A catalog of its own (its own writer id), as a server process has."""
    store = HBaseStore.from_url(url, writer_lease_s=lease)
    return Catalog(store, Warehouse(tmp_path / "w"), writer_lease_s=lease)


def _ranges(catalog: Catalog, *, rebuild: bool = False) -> list[tuple[str, str]]:
    keeper = catalog.timelines
    found = keeper.rebuild(stress.DB, stress.TABLE) if rebuild else keeper.timelines(
        stress.DB, stress.TABLE
    )
    return sorted(
        (str(key), str([p.name for p in timeline.partitions()])) for key, timeline in found.items()
    )


def test_a_mark_never_brings_back_a_dropped_table(url: str, tmp_path: Path) -> None:
    catalog = _process(url, tmp_path)
    ref = catalog.tables.get(stress.DB, stress.TABLE)
    catalog.drop_table(stress.DB, stress.TABLE, True)
    with pytest.raises(hms.InvalidObjectException, match="table not found"):
        catalog.timelines._mark_writer(ref)  # a writer that read the table before the drop
    key = layout.table_key(stress.DB, stress.TABLE)
    assert catalog.ctx.store.get(layout.TABLES, key) is None
    assert catalog.tables.names(stress.DB, table_type="MANAGED_TABLE") == []
    catalog.close()


def test_a_writer_dying_during_another_change_leaves_only_the_other_change(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead, writer = _process(url, tmp_path), _process(url, tmp_path)
    writer.partitions.add(stress.DB, stress.TABLE, [stress._partition("2024-01-01-00", "x")])

    def dies(self: TimelineKeeper, pending: object) -> None:
        raise RuntimeError("the process died here")

    intents = dead.ctx.store.intents  # type: ignore[attr-defined]
    with monkeypatch.context() as patch:  # its partition and mark are written, its timelines not
        patch.setattr(dead.timelines, "_finish", dies.__get__(dead.timelines))
        patch.setattr(intents, "_rollback", lambda current: None)  # dead: nothing undone...
        intents.close()  # ...and no more beats
        with pytest.raises(RuntimeError):
            dead.partitions.add(stress.DB, stress.TABLE, [stress._partition("2024-01-01-05", "x")])

    # Another writer's change begins while the dead one's intent is young, and stores its
    # timelines once that intent is past the lease (and rolled back).
    persist = TimelineKeeper._persist

    def slow_persist(self: TimelineKeeper, *args: object) -> bool:
        time.sleep(LEASE_S * 1.5)
        return persist(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(writer.timelines, "_persist", slow_persist.__get__(writer.timelines))
        writer.partitions.add(stress.DB, stress.TABLE, [stress._partition("2024-01-01-09", "x")])

    time.sleep(LEASE_S * 1.5)
    fresh = _process(url, tmp_path)
    kept = _ranges(fresh)
    assert kept == _ranges(fresh, rebuild=True)
    assert "2024-01-01-05" not in str(kept)
    assert "2024-01-01-00" in str(kept) and "2024-01-01-09" in str(kept)
    names = fresh.partition_reads.list_names(stress.DB, stress.TABLE).decode()
    assert not any("2024-01-01-05" in name for name in names)
    for catalog in (dead, writer, fresh):
        catalog.close()
