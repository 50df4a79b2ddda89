"""The storage contract's backends: one fixture, one param per backend.

A backend is described by a ``Backend``: how to open a store in this process, and the Python
source that opens the same store in another process (for the crash test). Adding HBase means
adding one factory to ``_FACTORIES``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from storage.embedded import SqliteStore
from storage.port import StoragePort


@dataclass(frozen=True)
class Backend:
    """One store's worth of backing storage, which may be opened several times."""

    name: str
    open: Callable[[], StoragePort]
    open_source: str
    """Python source that binds ``store`` to the same store in a fresh process."""


def _embedded(tmp_path: Path) -> Backend:
    path = str(tmp_path / "nested" / "store.db")
    source = f"from storage.embedded import SqliteStore\nstore = SqliteStore({path!r})\n"
    return Backend("embedded", lambda: SqliteStore(path), source)


_FACTORIES: dict[str, Callable[[Path], Backend]] = {"embedded": _embedded}


@pytest.fixture(params=sorted(_FACTORIES))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """A fresh, empty backing storage for each test and backend."""
    return _FACTORIES[request.param](tmp_path)


@pytest.fixture
def store(backend: Backend) -> Iterator[StoragePort]:
    """An open store on the backend, closed after the test."""
    opened = backend.open()
    try:
        yield opened
    finally:
        opened.close()

