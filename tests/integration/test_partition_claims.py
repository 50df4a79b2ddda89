"""Claims (stores without atomic batches: HBase, here its test double), as adds and the
dependency guard take them: one writer at a time holds a claim; a claim left by a dead writer is
taken over once it is older than the lease, and at once when it is this process's own leftover;
a waiting take gets a claim as soon as its holder lets go."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage import layout
from metastore_server.storage.hbase import HBaseStore
from support.hbase_double import running_double, storage_url

from metastore_server.catalog.core.claims import Claims, TooSlowToClaim
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.partitions import adding as partitions_module
from metastore_server.thrift_api import hms

KEY = b"\x00\x00\x00\x00\x00\x00\x00\x07partition"


@pytest.fixture()
def store() -> Iterator[HBaseStore]:
    with running_double() as address:
        opened = HBaseStore.from_url(storage_url(*address, prefix="claims_"))
        opened.ensure_tables(layout.TABLE_SPECS)
        yield opened
        opened.close()


def _process(store: HBaseStore, tmp_path: Path, writer: str, lease: float) -> Claims:
    """The claims of one server process (its own writer id and lease)."""
    ctx = CatalogContext(store, Warehouse(tmp_path), writer_lease_s=lease, writer=writer)
    return Claims(ctx)


def test_one_writer_holds_a_claim_until_it_releases_it(store, tmp_path) -> None:
    first = _process(store, tmp_path, "first", lease=60.0)
    second = _process(store, tmp_path, "second", lease=60.0)
    assert first.take([KEY, KEY + b"2"]) == [KEY, KEY + b"2"]
    assert second.take([KEY + b"3", KEY]) is None
    # A refused take gives back what it took on the way.
    assert store.get(layout.META, layout.claim_key(KEY + b"3")) is None
    first.release([KEY, KEY + b"2"])
    assert second.take([KEY]) == [KEY]


def test_a_dead_writers_claim_is_taken_over_after_the_lease(store, tmp_path) -> None:
    dead = _process(store, tmp_path, "dead", lease=0.2)
    alive = _process(store, tmp_path, "alive", lease=0.2)
    assert dead.take([KEY]) == [KEY]  # and the process dies holding it
    assert alive.take([KEY]) is None
    time.sleep(0.3)
    assert alive.take([KEY]) == [KEY]
    held = store.get(layout.META, layout.claim_key(KEY))[layout.CLAIM]
    assert held.startswith(b"alive ")


def test_a_processs_own_leftover_claim_is_taken_at_once(store, tmp_path) -> None:
    process = _process(store, tmp_path, "same", lease=3600.0)
    assert process.take([KEY]) == [KEY]  # left behind (its release failed)
    assert process.take([KEY]) == [KEY]
    assert _process(store, tmp_path, "other", lease=3600.0).take([KEY]) is None


def test_claims_are_taken_in_key_order(store, tmp_path) -> None:
    """Two writers claiming overlapping sets in any order never hold one each of the other's."""
    first = _process(store, tmp_path, "first", lease=60.0)
    second = _process(store, tmp_path, "second", lease=60.0)
    assert first.take([KEY + b"9", KEY + b"1"]) == [KEY + b"1", KEY + b"9"]
    assert second.take([KEY + b"9", KEY + b"1"]) is None
    # second tried the lowest key first and holds nothing.
    assert store.get(layout.META, layout.claim_key(KEY + b"9"))[layout.CLAIM].startswith(b"first ")


def test_claiming_slower_than_half_the_lease_is_refused(store, tmp_path) -> None:
    slow = _process(store, tmp_path, "slow", lease=1e-6)
    with pytest.raises(TooSlowToClaim, match="over half the writer lease"):
        slow.take([KEY, KEY + b"2"])
    assert store.get(layout.META, layout.claim_key(KEY)) is None  # given back


def test_a_waiting_take_gets_the_claim_once_its_holder_lets_go(store, tmp_path) -> None:
    holder = _process(store, tmp_path, "holder", lease=60.0)
    waiter = _process(store, tmp_path, "waiter", lease=60.0)
    adding = layout.adding_key(7)
    assert holder.take([adding]) == [adding]
    started = time.monotonic()
    assert waiter.take_waiting([adding], 0.2) is None  # held all along: given up in time
    assert 0.2 <= time.monotonic() - started < 5
    releaser = threading.Timer(0.2, holder.release, args=([adding],))
    releaser.start()
    assert waiter.take_waiting([adding], 10.0) == [adding]
    releaser.join()


def test_an_add_refused_while_another_process_keeps_the_tables_adding_claim(
    store, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = Catalog(store, Warehouse(tmp_path / "wh"), data=DataOperations(enabled=False))
    catalog.databases.create(hms.Database(name="c", parameters={}))
    sd = hms.StorageDescriptor(cols=[], parameters={})
    keys = [hms.FieldSchema(name="ds", type="string")]
    catalog.tables.create(
        hms.Table(dbName="c", tableName="t", sd=sd, partitionKeys=keys, parameters={})
    )
    other = _process(store, tmp_path, "other", lease=60.0)
    adding = layout.adding_key(catalog.tables.get("c", "t").table_id)
    assert other.take([adding]) == [adding]
    monkeypatch.setattr(partitions_module, "ADD_CLAIM_WAIT_S", 0.2)
    with pytest.raises(hms.MetaException) as refused:
        catalog.partitions.add("c", "t", [hms.Partition(values=["a"], parameters={})])
    assert refused.value.message == (
        "Adding partitions of c.t: other server processes kept adding partitions to the table "
        "for over 0.2 s; try again"
    )
    assert catalog.partition_reads.list_names("c", "t").decode() == []
    other.release([adding])
    catalog.partitions.add("c", "t", [hms.Partition(values=["a"], parameters={})])
    assert catalog.partition_reads.list_names("c", "t").decode() == ["ds=a"]
