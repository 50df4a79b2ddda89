"""The embedded store's files hold keys (the REST token signing key, the delegation tokens'
master keys): created 0600 in directories made 0700, whatever the umask; existing files or a
directory others may use are warned about at open, named with their mode, and left as they
are."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from metastore_server.storage import embedded_files
from metastore_server.storage.embedded import SqliteStore
from metastore_server.storage.port import Put, TableSpec
from structlog.testing import capture_logs


@pytest.fixture(autouse=True)
def fresh_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    """A logger that follows the configuration of the moment (capture_logs must see it)."""
    monkeypatch.setattr(embedded_files, "log", structlog.get_logger(embedded_files.__name__))


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: modes must come from the server, not the umask."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def write_something(store: SqliteStore) -> None:
    store.ensure_tables([TableSpec("t", ("f",))])
    store.mutate([Put("t", b"k", {b"f:c": b"secret"})])


def test_a_fresh_store_and_its_new_directories_are_the_servers_users_only(
    tmp_path: Path, open_umask: None
) -> None:
    path = tmp_path / "made" / "by" / "server" / "metastore.db"
    with capture_logs() as logs, SqliteStore(str(path)) as store:
        write_something(store)
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-writers.lock")]
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
    for directory in (tmp_path / "made", tmp_path / "made" / "by", path.parent):
        assert mode(directory) == 0o700, directory
    assert not [e for e in logs if e["log_level"] == "warning"]


def test_an_open_store_is_warned_about_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "metastore.db"
    with SqliteStore(str(path)) as store:
        write_something(store)
    path.chmod(0o644)
    with capture_logs() as logs, SqliteStore(str(path)):
        pass
    warned = [e for e in logs if e["event"] == "store_file_open_to_others"]
    assert [(e["path"], e["mode"], e["hint"]) for e in warned] == [
        (str(path), "0644", f"chmod 600 {path}")
    ]
    assert mode(path) == 0o644  # warned, not changed behind the owner's back


def test_an_open_wal_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "metastore.db"
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    wal = Path(f"{path}-wal")
    os.close(os.open(wal, os.O_CREAT | os.O_WRONLY, 0o600))
    wal.chmod(0o640)
    with capture_logs() as logs:
        embedded_files.prepare(str(path))
    assert [(e["path"], e["mode"]) for e in logs] == [(str(wal), "0640")]


def test_a_directory_others_may_use_is_warned_about(tmp_path: Path) -> None:
    directory = tmp_path / "var"
    directory.mkdir()
    directory.chmod(0o755)
    with capture_logs() as logs, SqliteStore(str(directory / "metastore.db")):
        pass
    warned = [e for e in logs if e["event"] == "store_directory_open_to_others"]
    assert [(e["path"], e["mode"], e["hint"]) for e in warned] == [
        (str(directory), "0755", f"chmod 700 {directory}")
    ]
    assert mode(directory) == 0o755
    assert mode(directory / "metastore.db") == 0o600


def test_a_shared_directory_is_not_to_be_closed_but_left(tmp_path: Path) -> None:
    """A directory like /tmp (sticky, everyone's): the hint is a directory of the store's
    own, not chmod 700 of the shared one."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with capture_logs() as logs:
        embedded_files.prepare(str(shared / "metastore.db"))
    (warned,) = [e for e in logs if e["event"] == "store_directory_open_to_others"]
    assert warned["mode"] == "1777" and "chmod" not in warned["hint"]
    assert "directory of its own" in warned["hint"]


def test_a_private_store_is_not_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "metastore.db"
    tmp_path.chmod(0o700)
    with SqliteStore(str(path)) as store:
        write_something(store)
    with capture_logs() as logs, SqliteStore(str(path)) as store:
        write_something(store)
    assert not [e for e in logs if e["log_level"] == "warning"]


def test_a_memory_store_is_private_too() -> None:
    with SqliteStore(":memory:") as store:
        write_something(store)
        path = Path(store._path)  # noqa: SLF001 - where its private file lies
        assert mode(path) == 0o600 and mode(path.parent) == 0o700
