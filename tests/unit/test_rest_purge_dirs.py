"""The directories a REST purge leaves empty: removed deepest first up to the table's location,
never one holding something, a data root, a place outside the location, or anything reached
through a link on the way; on another file system (fsspec's memory one) too."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the 'rest' extra is not installed")
from metastore_server.catalog.data.filesystems import FileSystems  # noqa: E402
from metastore_server.catalog.data.roots import DataRoots  # noqa: E402
from metastore_server.rest.boundary import FileBoundary  # noqa: E402
from metastore_server.rest.purge_dirs import remove_left_dirs  # noqa: E402


def _boundary(roots: tuple[str, ...] = ()) -> FileBoundary:
    filesystems = FileSystems()
    return FileBoundary(filesystems, DataRoots.parse(list(roots), filesystems))


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_empty_directories_go_up_to_the_location(tmp_path: Path) -> None:
    table = tmp_path / "db" / "t"
    for folder in ("metadata", "data/p=1/q=2", "data/keep", "untouched_empty"):
        (table / folder).mkdir(parents=True)
    (table / "data" / "keep" / "mine.txt").write_text("mine")
    purged = [f"{table}/metadata/v1.json", f"file:{table}/data/p=1/q=2/f.parquet",
              f"{table}/data/keep/gone.parquet", f"{tmp_path}/db/other/x.parquet"]  # fmt: skip
    assert remove_left_dirs(_boundary(), f"file:{table}", purged) == 3
    # untouched_empty held none of the table's files: it is not the purge's to remove.
    assert _tree(table) == ["data", "data/keep", "data/keep/mine.txt", "untouched_empty"]
    assert remove_left_dirs(_boundary(), str(table), []) == 0
    (table / "untouched_empty").rmdir()
    (table / "data" / "keep" / "mine.txt").unlink()
    assert remove_left_dirs(_boundary(), str(table), [f"{table}/data/keep/mine.txt"]) == 3
    assert not table.exists() and (tmp_path / "db").is_dir()


def test_a_link_on_the_way_is_not_followed(tmp_path: Path) -> None:
    table, outside = tmp_path / "t", tmp_path / "outside"
    (outside / "deep" / "empty").mkdir(parents=True)
    table.mkdir()
    (table / "data").symlink_to(outside / "deep")
    purged = [f"{table}/data/empty/f.parquet"]
    assert remove_left_dirs(_boundary(), str(table), purged) == 0
    assert (outside / "deep" / "empty").is_dir() and (table / "data").is_symlink()
    linked = tmp_path / "linked"
    linked.symlink_to(outside)
    assert remove_left_dirs(_boundary(), str(linked), [f"{linked}/deep/empty/f"]) == 0
    assert (outside / "deep" / "empty").is_dir() and linked.is_symlink()


def test_a_data_root_stays_even_empty(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "metadata").mkdir(parents=True)
    boundary = _boundary((str(root),))
    assert remove_left_dirs(boundary, str(root), [f"{root}/metadata/v1.json"]) == 1
    assert root.is_dir() and _tree(root) == []
    (tmp_path / "out" / "metadata").mkdir(parents=True)
    out = tmp_path / "out"
    assert remove_left_dirs(boundary, str(out), [f"{out}/metadata/v1.json"]) == 0
    assert (out / "metadata").is_dir()


def test_another_file_system_keeps_directories_holding_files() -> None:
    boundary = _boundary()
    fs = boundary.filesystems.resolve("memory://bucket/t").fs
    fs.mkdir("/bucket/t/metadata")
    fs.pipe("/bucket/t/data/user/keep.txt", b"mine")
    fs.mkdir("/bucket/t/data/empty")
    try:
        purged = ["memory://bucket/t/metadata/v1.json", "memory://bucket/t/data/empty/f"]
        assert remove_left_dirs(boundary, "memory://bucket/t", purged) == 2
        assert not fs.exists("/bucket/t/metadata") and not fs.exists("/bucket/t/data/empty")
        assert fs.cat("/bucket/t/data/user/keep.txt") == b"mine"
    finally:
        fs.rm("/bucket", recursive=True)
