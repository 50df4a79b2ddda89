"""``RealPaths``: the real paths of many places of one call, each parent directory resolved
once; the answers are ``os.path.realpath``'s, links anywhere in a path included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metastore_server.catalog.data import deletions
from metastore_server.catalog.data.deletions import Guard, RealPaths
from metastore_server.catalog.data.filesystems import FileSystems
from metastore_server.catalog.data.operations import DataOperations


def _tree(tmp_path: Path) -> list[Path]:
    """Paths through a plain parent, a linked parent, a linked leaf, a relative link, a
    dangling link, a missing directory and a link loop."""
    wh = tmp_path / "wh"
    (wh / "a.db").mkdir(parents=True)
    (tmp_path / "elsewhere" / "b.db").mkdir(parents=True)
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
    (wh / "c.db").symlink_to(tmp_path / "elsewhere" / "b.db")
    (wh / "rel.db").symlink_to("../elsewhere")
    (wh / "dangling.db").symlink_to(tmp_path / "gone")
    (wh / "loop1").symlink_to(wh / "loop2")
    (wh / "loop2").symlink_to(wh / "loop1")
    return [
        wh / "a.db",
        wh / "missing.db",
        wh / "missing" / "x.db",
        tmp_path / "linked" / "b.db",
        tmp_path / "linked" / "none.db",
        wh / "c.db",
        wh / "rel.db",
        wh / "rel.db" / "b.db",
        wh / "dangling.db",
        wh / "loop1",
        wh / "loop1" / "x",
        wh / "a.db" / ".." / "c.db",
        Path("/"),
    ]


def test_real_paths_are_those_of_realpath(tmp_path: Path) -> None:
    filesystems = FileSystems()
    resolver = RealPaths()
    for path in _tree(tmp_path) * 2:  # the second time from what the first resolved
        place = filesystems.resolve(f"file:{path}")
        assert resolver.of(place) == os.path.realpath(place.path), path


def test_siblings_cost_one_lstat_each_then_one_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Places under one parent resolve it once: the lstat calls grow by one per place, not
    by one per component of each path, and past ``LIST_PARENT_FROM`` places the parent is
    listed once instead (no lstat for the others)."""
    parent = tmp_path / "deep" / "er" / "warehouse"
    names = [f"db_{i}.db" for i in range(50)]
    for name in names:
        (parent / name).mkdir(parents=True)
    calls: list[str] = []
    real_lstat = os.lstat

    def counting(path: object, *args: object, **kwargs: object) -> os.stat_result:
        calls.append(str(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    filesystems = FileSystems()
    places = [filesystems.resolve(f"file:{parent / name}") for name in names]
    monkeypatch.setattr(os, "lstat", counting)
    resolver = RealPaths()
    reals = [resolver.of(place) for place in places]
    monkeypatch.undo()
    assert reals == [os.path.realpath(parent / name) for name in names]
    leaves = [c for c in calls if os.path.basename(c) in names]
    assert len(leaves) == deletions.LIST_PARENT_FROM - 1 < len(names)
    assert len(calls) - len(leaves) <= len(parent.parts)


def test_a_listed_parent_still_tells_links_from_directories(tmp_path: Path) -> None:
    """Past ``LIST_PARENT_FROM`` siblings, links among them (to anywhere, dangling, relative)
    still resolve as ``realpath`` resolves them."""
    wh = tmp_path / "wh"
    (tmp_path / "target").mkdir()
    paths = []
    for i in range(2 * deletions.LIST_PARENT_FROM):
        path = wh / f"db_{i}.db"
        if i % 5 == 3:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(tmp_path / "target" if i % 2 else Path("../target"))
        elif i % 7 == 6:
            pass  # missing
        else:
            path.mkdir(parents=True)
        paths.append(path)
    filesystems = FileSystems()
    resolver = RealPaths()
    for path in paths + [p / "inner" for p in paths]:
        place = filesystems.resolve(f"file:{path}")
        assert resolver.of(place) == os.path.realpath(place.path), path


def test_guards_of_many_databases_still_see_a_link_into_the_dropped_directory(
    tmp_path: Path,
) -> None:
    """A database directory reached through a link that lies in a table's directory keeps the
    table's directory, however many other database directories are guarded beside it."""
    wh = tmp_path / "wh"
    table = wh / "work.db" / "t"
    (table / "inner").mkdir(parents=True)
    locations = []
    for i in range(30):
        (wh / f"db_{i}.db").mkdir()
        locations.append(f"file:{wh / f'db_{i}.db'}")
    (wh / "sneaky.db").symlink_to(table / "inner")
    locations.append(f"file:{wh / 'sneaky.db'}")
    data = DataOperations(FileSystems(), enabled=True)
    guards = data.guards(locations)
    assert [g.real for g in guards] == [os.path.realpath(loc[5:]) for loc in locations]
    planned = data.plan_delete(
        f"file:{table}", what="table", purge=True, refuse=ValueError, guards=guards
    )
    assert planned is not None and planned.kept is not None
    assert "sneaky.db" in planned.kept
    assert isinstance(guards[0], Guard) and deletions.within(guards[-1].real or "", str(table))
