"""Dropped partitions' grants (``catalog.security.grants.forget_partition_grants``): a few
partitions' looked up each, many found in one scan of the table's partition grants; either
way exactly the dropped partitions' grants (and their columns') go, others stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from metastore_server.storage import layout
from metastore_server.storage.open import open_store
from metastore_server.storage.port import Put

from metastore_server.catalog.security import grants

TABLE, OTHER = 7, 8


def _grant_keys(store: object) -> set[bytes]:
    return {key for key, _ in store.scan(layout.META, *layout.grant_range())}  # type: ignore[attr-defined]


@pytest.mark.parametrize("dropped", [3, 20])  # one by one (<= _FEW_PARTITIONS), one scan
def test_exactly_the_dropped_partitions_grants_go(tmp_path: Path, dropped: int) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'm.db'}")
    store.ensure_tables(layout.TABLE_SPECS)
    # "p=1" is a prefix of "p=10": dropping the one must leave the other's grants
    names = ["p=1", "p=10", *(f"ds=2026-01-{d:02d}" for d in range(1, 31))]
    objects = []
    for table in (TABLE, OTHER):
        for name in names:
            objects.append((table, name, layout.partition_object(table, name)))
            objects.append((table, name, layout.column_object(table, name, "c")))
        objects.append((table, "", layout.table_object(table)))
    keys = {(t, n, layout.grant_key(o, b"uUSER\x00bob", "SELECT", "admin")) for t, n, o in objects}
    store.mutate([Put(layout.META, key, {layout.OBJECT: b"{}"}) for _, _, key in keys])
    gone = {"p=1", *names[2 : dropped + 1]}
    grants.forget_partition_grants(store, TABLE, sorted(gone))
    kept = {key for t, n, key in keys if not (t == TABLE and n in gone)}
    assert _grant_keys(store) == kept
    store.close()
