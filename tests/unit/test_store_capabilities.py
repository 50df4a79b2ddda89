"""``storage.port.Capabilities``: each backend's optional capabilities are declared in its
``offers``, found by name in one place, and a wrong name is an error, never a silent None."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.hbase import HBaseStore
from metastore_server.storage.port import CAPABILITY_NAMES, Capabilities

ALL = frozenset(
    {"change_token", "changed_keys", "count_range", "last_key", "scan_columns",
     "scan_until_pending", "transaction", "undo_note", "untracked", "writers_lock"}
)  # fmt: skip
#: What the embedded store offers: all but undo notes (no process finishes a dead one's
#: transaction there: SQLite leaves it uncommitted), untracked writes (it needs no claims) and
#: scans stopping before a row still to come (one writer at a time: changes commit in order).
EMBEDDED = ALL - {"undo_note", "untracked", "scan_until_pending"}


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(str(tmp_path / "s.db")) as opened:
        yield opened


def test_the_capability_names_are_the_fields_of_capabilities() -> None:
    assert CAPABILITY_NAMES == ALL


@pytest.mark.parametrize("backend", [SqliteStore, HBaseStore])
def test_a_backend_has_exactly_the_methods_it_offers(backend: type) -> None:
    assert backend.offers <= CAPABILITY_NAMES
    for name in CAPABILITY_NAMES:
        assert callable(getattr(backend, name, None)) == (name in backend.offers), name


def test_the_embedded_store_offers_all_but_undo_notes(store: SqliteStore) -> None:
    capabilities = Capabilities.of(store)
    assert SqliteStore.offers == EMBEDDED
    assert capabilities.offered() == EMBEDDED
    assert capabilities.count_range == store.count_range
    assert capabilities.change_token is not None and capabilities.change_token() is not None


def test_hbase_offers_transactions_undo_notes_and_untracked_writes() -> None:
    assert HBaseStore.offers == frozenset(
        {"transaction", "undo_note", "untracked", "scan_until_pending"}
    )


class _Store:
    """A store naming what it offers (only ``offers`` and the methods matter here)."""

    def __init__(self, offers: frozenset[str]) -> None:
        self.offers = offers

    def count_range(self, table: str, start: bytes = b"", stop: bytes | None = None,
                    limit: int | None = None) -> int:  # fmt: skip
        return 0


def test_a_store_without_a_capability_gives_none() -> None:
    capabilities = Capabilities.of(_Store(frozenset()))  # type: ignore[arg-type]
    assert capabilities.count_range is None  # the method is there, but not offered
    assert capabilities.offered() == frozenset()
    assert Capabilities.of(_Store(frozenset({"count_range"}))).count_range is not None  # type: ignore[arg-type]


def test_an_unknown_capability_is_an_error() -> None:
    with pytest.raises(ValueError, match="count_rnage"):
        Capabilities.of(_Store(frozenset({"count_rnage"})))  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        Capabilities().count_rnage  # type: ignore[attr-defined]  # noqa: B018


def test_offering_a_capability_without_its_method_is_an_error() -> None:
    with pytest.raises(TypeError, match="scan_columns"):
        Capabilities.of(_Store(frozenset({"scan_columns"})))  # type: ignore[arg-type]
