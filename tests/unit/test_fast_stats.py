"""Counting fast statistics (``catalog.data.fast_stats``) on local directories and through
fsspec (its in-memory file system stands for an object store), and the rules' small parts."""

from __future__ import annotations

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
