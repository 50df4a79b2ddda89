"""Counting fast statistics (``catalog.data.fast_stats``) on local directories and through
fsspec (its in-memory file system stands for an object store), and the rules' small parts."""

from __future__ import annotations

import os
from pathlib import Path

import fsspec

from metastore_server.catalog.data import fast_stats
from metastore_server.catalog.data.fast_stats import Counted, FastStats, count_place
from metastore_server.catalog.data.filesystems import FileSystems
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.thrift_api import hms

TREE = {"a": 10, "sub/b": 20, "_SUCCESS": 0, ".a.crc": 4, "_temporary/c": 7, ".staging/d": 3,
        "sub/_hidden": 1}  # fmt: skip


def test_local_tree_skips_hidden_names(tmp_path: Path) -> None:
    for relative, size in TREE.items():
        (tmp_path / "t" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "t" / relative).write_bytes(b"x" * size)
    place = FileSystems().resolve(f"file:{tmp_path / 't'}")
    assert count_place(place) == Counted(2, 30, exists=True)
    assert count_place(place.with_path(str(tmp_path / "t" / "a"))) == Counted(1, 10, True)
    assert count_place(place.with_path(str(tmp_path / "none"))) == Counted(0, 0, False)


def test_object_store_keys_below_the_location_only() -> None:
    memory = fsspec.filesystem("memory")
    for relative, size in TREE.items():
        memory.pipe(f"/bucket/t/{relative}", b"x" * size)
    memory.pipe("/bucket/t2/other", b"neighbour")
    place = FileSystems().resolve("memory://bucket/t")
    assert count_place(place) == Counted(2, 30, exists=True)
    assert count_place(place.with_path(place.path + "x")).exists is False
    memory.rm("/bucket", recursive=True)


def test_nothing_counted_when_data_operations_are_off(tmp_path: Path) -> None:
    assert FastStats(DataOperations(enabled=False)).count(f"file:{tmp_path}") is None
    assert FastStats(DataOperations()).count(f"file:{tmp_path}") == Counted(0, 0, True)


def test_accuracy_mark_keeps_the_columns_sorted() -> None:
    params = {"COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"b":"true","a":"false"}}'}
    fast_stats._set_basic_state(params, {"STATS_GENERATED": "TASK"})
    assert params["COLUMN_STATS_ACCURATE"] == (
        '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"false","b":"true"}}'
    )
    fast_stats._set_basic_state(params, {"STATS_GENERATED": "USER"})
    assert "COLUMN_STATS_ACCURATE" not in params


def test_partitions_added_side_by_side(tmp_path: Path) -> None:
    parts = []
    for value in ("1", "2", "3"):
        (tmp_path / value).mkdir()
        (tmp_path / value / "f").write_bytes(b"x" * int(value))
        sd = hms.StorageDescriptor(location=f"file:{tmp_path / value}")
        parts.append(hms.Partition(values=[value], sd=sd, parameters={}))
    parts.append(hms.Partition(values=["4"], sd=hms.StorageDescriptor(
        location=f"file:{tmp_path / '4'}"), parameters={}))  # fmt: skip
    FastStats(DataOperations()).partitions_added(parts, hms.Table(tableType="MANAGED_TABLE"))
    found = [(p.parameters.get("numFiles"), p.parameters.get("totalSize")) for p in parts]
    assert found == [("1", "1"), ("1", "2"), ("1", "3"), (None, None)]


def test_partitions_added_keep_their_own_counts_among_unreadable_locations(
    tmp_path: Path,
) -> None:
    """Local locations are counted in order, the others apart: each partition still gets
    the figures of its own location, and one no file system serves gets none (logged)."""
    parts = []
    for index, location in enumerate(
        [f"file:{tmp_path / 'a'}", "nosuchfs://x/y", f"file:{tmp_path / 'b'}", None]
    ):
        parts.append(hms.Partition(values=[str(index)], parameters={},
                                   sd=hms.StorageDescriptor(location=location)))  # fmt: skip
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "f").write_bytes(b"xy")
    FastStats(DataOperations()).partitions_added(parts, hms.Table(tableType="MANAGED_TABLE"))
    found = [(p.parameters.get("numFiles"), p.parameters.get("totalSize")) for p in parts]
    assert found == [("0", "0"), (None, None), ("1", "2"), (None, None)]


def _walked(path: Path) -> Counted:
    """What ``os.walk`` finds below ``path`` (hidden names pruned, links to directories not
    walked): the count the local counter must give."""
    if not path.exists():
        return Counted(0, 0, exists=False)
    if not path.is_dir():
        return Counted(1, path.stat().st_size, exists=True)
    files = size = 0
    for directory, subdirs, filenames in os.walk(path):
        subdirs[:] = [d for d in subdirs if not d.startswith(("_", "."))]
        for name in filenames:
            if name.startswith(("_", ".")):
                continue
            try:
                size += os.stat(os.path.join(directory, name)).st_size
            except OSError:
                continue
            files += 1
    return Counted(files, size, exists=True)


def test_local_count_is_what_a_walk_finds_links_included(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "o").write_bytes(b"x" * 100)
    (outside / "f").write_bytes(b"x" * 7)
    top = tmp_path / "t"
    tree = {**TREE, "sub/deeper/e": 5, "sub/deeper/more/g": 6, "empty/.k": 1}
    for relative, size in tree.items():
        (top / relative).parent.mkdir(parents=True, exist_ok=True)
        (top / relative).write_bytes(b"x" * size)
    (top / "dir_link").symlink_to(outside)  # a link to a directory: not walked, not a file
    (top / "file_link").symlink_to(outside / "f")  # a link to a file: counted at its size
    (top / "dangling").symlink_to(tmp_path / "nowhere")  # counted as nothing
    (top / "sub" / "_linked").symlink_to(outside)  # hidden: skipped
    place = FileSystems().resolve(f"file:{top}")
    for path in (top, top / "sub", top / "empty", top / "a", top / "file_link", top / "dir_link",
                 top / "dangling", tmp_path / "none"):  # fmt: skip
        assert count_place(place.with_path(str(path))) == _walked(path), path
    assert count_place(place) == Counted(5, 48, exists=True)  # a, sub/b, e, g, file_link
