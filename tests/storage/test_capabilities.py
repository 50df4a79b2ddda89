"""The optional capabilities each backend offers (``storage.port.Capabilities``) work as the
port describes them, and a backend offers exactly what it declares."""

from __future__ import annotations

from typing import Any

import pytest
from metastore_server.storage.port import (
    CAPABILITY_NAMES,
    Capabilities,
    Put,
    StoragePort,
    TableSpec,
)

T = "t"
ON_HBASE = frozenset({"transaction", "undo_note", "untracked", "scan_until_pending"})
EMBEDDED = CAPABILITY_NAMES - {"undo_note", "untracked", "scan_until_pending"}
EXPECTED = {"embedded": EMBEDDED, "hbase-double": ON_HBASE, "hbase": ON_HBASE}


@pytest.fixture(autouse=True)
def _tables(store: StoragePort) -> None:
    store.ensure_tables([TableSpec(T)])


def test_a_backend_offers_what_it_declares(backend: Any, store: StoragePort) -> None:
    capabilities = Capabilities.of(store)
    assert capabilities.offered() == store.offers == EXPECTED[backend.name]
    for name in CAPABILITY_NAMES - store.offers:
        assert getattr(capabilities, name) is None


def test_the_offered_capabilities_work(store: StoragePort) -> None:
    capabilities = Capabilities.of(store)
    before = capabilities.change_token() if capabilities.change_token else None
    for i in range(5):
        assert store.mutate([Put(T, b"k%d" % i, {b"c:v": b"%d" % i})])
    if capabilities.change_token is not None:
        assert capabilities.change_token() != before
    if capabilities.count_range is not None:
        assert capabilities.count_range(T, b"k1", b"k4") == 3
        assert capabilities.count_range(T, limit=2) == 2
    if capabilities.last_key is not None:
        assert capabilities.last_key(T) == b"k4"
        assert capabilities.last_key(T, b"k1", b"k3") == b"k2"
        assert capabilities.last_key(T, b"k5") is None
        assert capabilities.last_key(T, b"k2", b"k2") is None
    if capabilities.scan_columns is not None:
        rows, read, lacking = capabilities.scan_columns(T, b"k3", None, (b"c:v",))
        assert (rows, read, lacking) == ([(b"3", b"k3"), (b"4", b"k4")], 2, 0)
    if capabilities.transaction is not None:
        with pytest.raises(RuntimeError), capabilities.transaction():
            store.mutate([Put(T, b"k9", {b"c:v": b"9"})])
            raise RuntimeError("undo it")
        assert store.get(T, b"k9") is None
    if capabilities.writers_lock is not None:
        with capabilities.writers_lock():
            assert store.mutate([Put(T, b"k8", {b"c:v": b"8"})])
