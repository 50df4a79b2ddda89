"""Directories an add finds counting their files before its write lock (``SeenDirs``): not
looked at again under the lock, unless this process began a deletion or a move since, or had
one pending when looking began."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metastore_server.catalog.data import operations
from metastore_server.catalog.data.fast_stats import FastStats
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.thrift_api import hms

TABLE = hms.Table(tableType="MANAGED_TABLE")


def _refuse(reason: str) -> Exception:
    return hms.MetaException(message=reason)


def _refuse_make(uri: str, detail: str) -> Exception:
    return hms.MetaException(message=f"{uri}: {detail}")


def _partitions(paths: list[Path]) -> list[hms.Partition]:
    return [
        hms.Partition(values=[str(i)], sd=hms.StorageDescriptor(location=f"file:{path}"),
                      parameters={})  # fmt: skip
        for i, path in enumerate(paths)
    ]


def _leaves(tmp_path: Path, count: int = 80) -> list[Path]:
    return [tmp_path / "t" / f"ds={i // 10}" / f"hr={i % 10}" for i in range(count)]


def _seen_by_counting(data: DataOperations, paths: list[Path]):  # noqa: ANN202
    seen = data.seeing()
    assert seen is not None
    FastStats(data).partitions_added(_partitions(paths), TABLE, seen)
    return seen


def _looks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``make_dirs`` looks at (``os.path.isdir``) from now on."""
    looked: list[str] = []
    real = os.path.isdir

    def isdir(path: str) -> bool:
        looked.append(str(path))
        return real(path)

    monkeypatch.setattr(operations.os.path, "isdir", isdir)
    return looked


def test_directories_counted_are_found_without_looking_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaves = _leaves(tmp_path)
    assert len(leaves) >= operations.MAKE_IN_THREADS_FROM
    there, missing = leaves[:60], leaves[60:]
    for leaf in there:
        leaf.mkdir(parents=True)
    (there[1] / "f").write_bytes(b"12345")
    a_file = tmp_path / "t" / "a_file"
    a_file.write_bytes(b"x")
    data = DataOperations()
    seen = _seen_by_counting(data, [*leaves, a_file])
    assert seen.paths == {str(leaf) for leaf in there}  # directories only
    looked = _looks(monkeypatch)
    made = data.make_dirs([f"file:{leaf}" for leaf in leaves], _refuse_make, seen=seen)
    assert all(leaf.is_dir() for leaf in leaves)
    assert not set(looked) & seen.paths
    data.undo(made)  # only what this call made goes again
    assert all(leaf.is_dir() for leaf in there) and (there[1] / "f").exists()
    assert not any(leaf.exists() for leaf in missing)


def test_a_deletion_begun_since_counting_makes_every_directory_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drop committed between the count and the add's lock deleted a directory seen: it
    is made again."""
    leaves = _leaves(tmp_path)
    for leaf in leaves:
        leaf.mkdir(parents=True)
    data = DataOperations()
    seen = _seen_by_counting(data, leaves)
    deletion = data.plan_delete(f"file:{leaves[5]}", what="p", purge=True, refuse=_refuse)
    data.reserve([deletion])
    data.carry_out([deletion])
    assert not leaves[5].exists()
    looked = _looks(monkeypatch)
    data.make_dirs([f"file:{leaf}" for leaf in leaves], _refuse_make, seen=seen)
    assert all(leaf.is_dir() for leaf in leaves)
    assert set(looked) >= {str(leaf) for leaf in leaves if leaf != leaves[5]}


def test_a_move_since_counting_makes_every_directory_looked_at(tmp_path: Path) -> None:
    leaves = _leaves(tmp_path)
    for leaf in leaves:
        leaf.mkdir(parents=True)
    data = DataOperations()
    seen = _seen_by_counting(data, leaves)
    moved = tmp_path / "t" / "ds=0"
    move = data.plan_move(f"file:{moved}", f"file:{tmp_path / 'elsewhere'}", what="table",
                          subject="db.t")  # fmt: skip
    data.prepare(move, "db.t")
    assert not moved.exists()
    data.make_dirs([f"file:{leaf}" for leaf in leaves], _refuse_make, seen=seen)
    assert all(leaf.is_dir() for leaf in leaves)


def test_nothing_is_trusted_while_a_deletion_is_pending(tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()
    data = DataOperations()
    deletion = data.plan_delete(f"file:{tmp_path / 'gone'}", what="p", purge=True,
                                refuse=_refuse)  # fmt: skip
    data.reserve([deletion])
    assert data.seeing() is None
    data.carry_out([deletion])
    assert data.seeing() is not None


def test_a_directory_another_call_made_and_undid_since_counting_is_made_again(
    tmp_path: Path,
) -> None:
    """One add made a directory, a second add's count found it before its lock, then the
    first add failed and removed it again: the second add makes it."""
    leaves = _leaves(tmp_path)
    for leaf in leaves[1:]:
        leaf.mkdir(parents=True)
    data = DataOperations()
    first = data.make_dirs([f"file:{leaves[0]}"], _refuse_make)
    seen = _seen_by_counting(data, leaves)
    assert str(leaves[0]) in seen.paths
    data.undo(first)
    assert not leaves[0].exists()
    data.make_dirs([f"file:{leaf}" for leaf in leaves], _refuse_make, seen=seen)
    assert all(leaf.is_dir() for leaf in leaves)
