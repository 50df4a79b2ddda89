"""``GuardIndex`` and ``IndexKeeper``: the indexed guards answer what testing each guard in turn
answers, and an index kept between calls follows changes of the file system (a database
directory replaced by a link into a dropped directory is seen on the next call)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from metastore_server.catalog.data import guard_index
from metastore_server.catalog.data.deletions import Guard
from metastore_server.catalog.data.filesystems import FileSystems
from metastore_server.catalog.data.guard_index import GuardIndex, GuardSet, IndexKeeper
from metastore_server.catalog.data.operations import DataOperations


def _linear(guards: list[Guard], place: object, real: str | None) -> Guard | None:
    return next((g for g in guards if g.held_by(place, real)), None)  # type: ignore[arg-type]


def _tree(tmp_path: Path) -> tuple[list[str], list[Path]]:
    """Database locations (plain, trailing slash, linked, nested, missing, duplicated,
    another file system) and places to delete around them."""
    wh = tmp_path / "wh"
    for name in ("a.db", "b.db", "a.db/t", "c.db/t/p", "other"):
        (wh / name).mkdir(parents=True, exist_ok=True)
    (wh / "l.db").symlink_to(wh / "c.db" / "t")
    (tmp_path / "wh-alias").symlink_to(wh)
    locations = [
        f"file:{wh / 'a.db'}",
        f"file:{wh / 'b.db'}/",
        f"file:{wh / 'l.db'}",
        f"file:{wh / 'a.db' / 't'}",
        f"file:{wh / 'missing.db'}",
        f"file:{wh / 'a.db'}",
        f"{wh / 'other'}",
        "s3a://bucket/wh/s.db",
        "s3a://bucket/wh/",
    ] + [f"file:{wh / f'x{i}.db'}" for i in range(40)]
    places = [
        wh,
        wh / "a.db",
        wh / "a.db" / "t",
        wh / "a.db" / "u",
        wh / "c.db",
        wh / "c.db" / "t",
        wh / "c.db" / "t" / "p",
        wh / "c.db" / "tt",
        wh / "b",
        wh / "b.db",
        wh / "missing.db",
        tmp_path / "wh-alias" / "c.db",
        tmp_path / "wh-alias" / "a.db" / "t",
        wh / "x1.db",
        wh / "x10.db",
        tmp_path,
    ]
    return locations, places


@pytest.fixture
def no_s3(monkeypatch: pytest.MonkeyPatch) -> None:
    """S3 places without s3fs: only their paths are compared here."""
    monkeypatch.setattr(FileSystems, "_fs", lambda self, protocol, authority: None)


def test_the_index_answers_as_each_guard_in_turn(tmp_path: Path, no_s3: None) -> None:
    locations, places = _tree(tmp_path)
    filesystems = FileSystems()
    data = DataOperations(filesystems)
    guards = data.guards(locations)
    index = data.guard_index(locations)
    assert index.guards == guards
    targets = [filesystems.resolve(f"file:{p}") for p in places]
    targets += [filesystems.resolve(u) for u in ("s3a://bucket/wh", "s3a://bucket/wh/s.db/x")]
    for place in targets:
        real = os.path.realpath(place.path) if place.is_local else None
        assert index.first_held_by(place, real) == _linear(guards, place, real), place.uri
    extra = data.guards([f"file:{tmp_path}/wh/c.db"])
    both = GuardSet(index, before=tuple(extra))
    place = filesystems.resolve(f"file:{tmp_path}/wh/c.db")
    assert both.first_held_by(place, place.path) == extra[0]
    assert GuardSet(index, after=tuple(extra)).first_held_by(place, place.path) == _linear(
        guards + extra, place, place.path
    )


@pytest.mark.parametrize("count", [30, 5])  # the warehouse listed once; each looked at
def test_a_kept_index_sees_a_directory_replaced_by_a_link(tmp_path: Path, count: int) -> None:
    """Kept while the warehouse is unchanged (the same object); a database directory replaced
    by a link into a table's directory then keeps that table's directory from being deleted."""
    wh = tmp_path / "wh"
    table = wh / "work.db" / "t"
    (table / "inner").mkdir(parents=True)
    names = [f"db_{i}.db" for i in range(count)]
    for name in names:
        (wh / name).mkdir()
    settled = time.time() - 100  # changed long ago: its time is trusted
    os.utime(wh, (settled, settled))
    locations = [f"file:{wh / name}" for name in names]
    filesystems = FileSystems()
    keeper = IndexKeeper(lambda loc: filesystems.resolve(loc) if loc else None)
    first = keeper.index(locations)
    assert keeper.index(locations) is first
    table_place = filesystems.resolve(f"file:{table}")
    assert first.first_held_by(table_place, str(table)) is None
    shutil.rmtree(wh / "db_3.db")
    (wh / "db_3.db").symlink_to(table / "inner")
    again = keeper.index(locations)
    assert again is not first
    held = again.first_held_by(table_place, str(table))
    assert held is not None and held.place.path == str(wh / "db_3.db")
    assert again.guards == DataOperations(filesystems).guards(locations)
    # Guards of places whose directory did not change are the ones kept.
    assert again.guards[0] is first.guards[0]


def test_an_index_is_kept_while_its_directory_gains_and_loses_plain_entries(
    tmp_path: Path,
) -> None:
    """A directory of many places that changed (a sibling made or removed, as by a database's
    create and drop) is listed again; with the same real path and the same links the index is
    kept; a link made in it since is seen."""
    wh = tmp_path / "wh"
    (wh / "t").mkdir(parents=True)
    for i in range(20):
        (wh / f"d{i}.db").mkdir()
    settled = time.time() - 100
    os.utime(wh, (settled, settled))
    locations = [f"file:{wh / f'd{i}.db'}" for i in range(20)]
    filesystems = FileSystems()
    keeper = IndexKeeper(lambda loc: filesystems.resolve(loc) if loc else None)
    first = keeper.index(locations)
    (wh / "x.db").mkdir()
    os.rmdir(wh / "d19.db")
    os.utime(wh, (settled + 1, settled + 1))
    assert keeper.index(locations) is first
    assert keeper.index(locations) is first  # the new time is kept with it
    os.rmdir(wh / "d3.db")
    (wh / "d3.db").symlink_to(wh / "t")
    os.utime(wh, (settled + 2, settled + 2), follow_symlinks=False)
    again = keeper.index(locations)
    assert again is not first
    place = filesystems.resolve(f"file:{wh / 't'}")
    held = again.first_held_by(place, str(wh / "t"))
    assert held is not None and held.place.path == str(wh / "d3.db")
    assert again.guards == DataOperations(filesystems).guards(locations)


def test_an_unsettled_directory_is_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory changed within ``SETTLED_S`` is not trusted by its time: the next index is
    built again (from a listing), and sees a link made since."""
    monkeypatch.setattr(guard_index, "SETTLED_S", 3600.0)
    monkeypatch.setattr(guard_index, "COARSE_SETTLED_S", 3600.0)
    wh = tmp_path / "wh"
    (wh / "t").mkdir(parents=True)
    for i in range(20):
        (wh / f"d{i}.db").mkdir()
    locations = [f"file:{wh / f'd{i}.db'}" for i in range(20)]
    filesystems = FileSystems()
    keeper = IndexKeeper(lambda loc: filesystems.resolve(loc) if loc else None)
    first = keeper.index(locations)
    os.rmdir(wh / "d3.db")
    (wh / "d3.db").symlink_to(wh / "t")
    again = keeper.index(locations)
    place = filesystems.resolve(f"file:{wh / 't'}")
    assert first.first_held_by(place, str(wh / "t")) is None
    held = again.first_held_by(place, str(wh / "t"))
    assert held is not None and held.real == str(wh / "t")


def test_an_empty_index_holds_nothing(tmp_path: Path) -> None:
    index = GuardIndex([])
    place = FileSystems().resolve(f"file:{tmp_path}")
    assert index.first_held_by(place, str(tmp_path)) is None


def test_keeping_inside_through_an_index_keeps_what_the_list_keeps(
    tmp_path: Path, no_s3: None
) -> None:
    """A database drop keeps the tables' directories inside its own, and keeps everything
    when one holds it: the same through the index as through the list, links included."""
    locations, places = _tree(tmp_path)
    filesystems = FileSystems()
    data = DataOperations(filesystems)
    index = data.guard_index(locations, kind="tables")
    outcomes = set()
    for path in places:
        by_list = data.plan_delete(f"file:{path}", what="db", purge=True, refuse=ValueError)
        by_index = data.plan_delete(f"file:{path}", what="db", purge=True, refuse=ValueError)
        if by_list is None:
            assert by_index is None
            continue
        assert by_index is not None
        data.keep_inside(by_list, locations)
        data.keep_inside(by_index, index)
        assert (by_index.kept, by_index.keep) == (by_list.kept, by_list.keep), path
        outcomes.add((by_list.kept is not None, bool(by_list.keep)))
    # Both outcomes occur: kept whole (a table at or above it) and some places kept inside.
    assert (True, False) in outcomes and (False, True) in outcomes
