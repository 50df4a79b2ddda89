"""The places drops never delete (every database directory), indexed by path so that a drop
looks only at those at or below what it deletes, and kept from one call to the next while the
locations and the directories holding them are unchanged.

A guard is held by a place that is it or holds it, by the paths as written or by the real paths
(``Guard.held_by``). The index answers the same question from two sorted lists (paths and real
paths): the guards held by a place are one or two ranges of each. Real paths depend on the file
system, so a kept index is used again only when every directory holding its local places still
has the same real path, device, inode and modification time (an entry added, removed or replaced
by a link changes the time), and that time was old enough when the directory was looked at that
a later change cannot have been given the same time: ``SETTLED_S``, or ``COARSE_SETTLED_S`` on a
file system whose times are whole seconds; or, for a directory holding many places (listed),
when listing it again finds the same real path and the same entries that are links (a sibling
directory made or removed, as by a database's create or drop, changes no place's real path).
Otherwise the index is built again, but a place's
guard is kept when its directory still has the same real path and the same entries that are
links (listed once per directory: no ``lstat`` per place); a place that is itself a link is
resolved anew each time.

``OtherTables`` keeps every other table's directory out of a drop's deletions (``--authorization
privileges``), with the index of every table's directory.
"""

from __future__ import annotations

import bisect
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

import structlog

from metastore_server import audit
from metastore_server.catalog.data.deletions import LIST_PARENT_FROM, Deletion, Guard, RealPaths
from metastore_server.catalog.data.filesystems import Place

log = structlog.get_logger(__name__)

#: How old a directory's modification time must be for the directory to be trusted unchanged
#: while that time is (longer than a tick of the clock a file system stamps times with)...
SETTLED_S = 0.05
#: ...and on a file system whose times are whole seconds.
COARSE_SETTLED_S = 2.0

_Stamp = tuple[int, int, int]


def _stamp(path: str) -> _Stamp | None:
    """(device, inode, modification time in ns) of a directory; None when it is not one or
    its time is too recent to trust."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    settled = COARSE_SETTLED_S if st.st_mtime_ns % 1_000_000_000 == 0 else SETTLED_S
    if not stat.S_ISDIR(st.st_mode) or time.time_ns() - st.st_mtime_ns < settled * 1e9:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns


def _range(keys: list[tuple[str, int]], root: str) -> list[int]:
    """The indexes of the entries whose key ``within(key, root)``."""
    found = []
    for exact in {root, root.rstrip("/")}:
        at = bisect.bisect_left(keys, (exact, -1))
        while at < len(keys) and keys[at][0] == exact:
            found.append(keys[at][1])
            at += 1
    prefix = root.rstrip("/") + "/"
    at = bisect.bisect_left(keys, (prefix, -1))
    while at < len(keys) and keys[at][0].startswith(prefix):
        found.append(keys[at][1])
        at += 1
    return found


class GuardIndex:
    """Guards in their order, with their local ones indexed by path and by real path."""

    def __init__(self, guards: Sequence[Guard]) -> None:
        self.guards = list(guards)
        self._others = [i for i, g in enumerate(self.guards) if not g.place.is_local]
        local = [(i, g) for i, g in enumerate(self.guards) if g.place.is_local]
        self._paths = sorted((g.place.path.rstrip("/"), i) for i, g in local)
        self._reals = sorted((g.real, i) for i, g in local if g.real is not None)
        self._by_path: dict[str, list[int]] = {}
        self._by_real: dict[str, list[int]] = {}
        for i, g in local:
            self._by_path.setdefault(g.place.path.rstrip("/"), []).append(i)
            if g.real is not None:
                self._by_real.setdefault(g.real, []).append(i)

    def held(self, place: Place, real: str | None) -> list[int]:
        """The positions of the guards that ``place`` (real path ``real``) is or holds, in
        order."""
        return sorted(self._held(place, real))

    def _held(self, place: Place, real: str | None) -> set[int]:
        found = {i for i in self._others if self.guards[i].held_by(place, real)}
        if place.is_local:
            found.update(_range(self._paths, place.path.rstrip("/")))
            if real is not None:
                found.update(_range(self._reals, real))
        # A place of another file system holds no local place (nor by its real path: it has
        # none).
        return found

    def first_held_by(self, place: Place, real: str | None) -> Guard | None:
        """The first guard (in their order) that ``place`` (real path ``real``) is or holds;
        None when there is none. The answer of testing each with ``Guard.held_by``."""
        found = self._held(place, real)
        return self.guards[min(found)] if found else None

    def holding(self, place: Place, real: str | None) -> set[int]:
        """The positions of the guards that are ``place`` or hold it (``real`` its real path):
        those passing ``Guard(place, real).held_by(guard.place, guard.real)``."""
        mine = Guard(place, real)
        found = {i for i in self._others if mine.held_by(self.guards[i].place, self.guards[i].real)}
        if place.is_local:
            for ancestor in _ancestors(place.path):
                found.update(self._by_path.get(ancestor, ()))
            if real is not None:
                for ancestor in _ancestors(real):
                    found.update(self._by_real.get(ancestor, ()))
                found.update(self._by_real.get("/", ()))
        return found


def _ancestors(path: str) -> list[str]:
    """``path`` and each directory holding it, without a trailing ``/`` (the root: '')."""
    found = []
    current = path.rstrip("/")
    while True:
        found.append(current)
        if not current:
            return found
        parent = os.path.dirname(current)
        current = "" if parent == "/" or parent == current else parent.rstrip("/")


def keep_indexed(
    deletion: Deletion, mine: Guard, index: GuardIndex, skip: Collection[int] = ()
) -> None:
    """``DataOperations.keep_inside`` with indexed places (``mine``: the deletion's place as a
    guard): the places it holds before the first that holds it are kept; that one keeps it
    whole. The positions in ``skip`` are not looked at (what the call deletes itself)."""
    if deletion.kept is not None:
        return
    holding = index.holding(deletion.place, mine.real).difference(skip)
    first = min(holding) if holding else len(index.guards)
    inside = index.held(deletion.place, mine.real)
    deletion.keep.extend(index.guards[i] for i in inside if i < first and i not in skip)
    if holding:
        deletion.kept = f"{index.guards[first].place.uri}, which stays, is or holds it"


#: Directories of objects, indexed, and the object at each position of the index (the
#: ``db.table`` of a table, the name of a database).
NamedDirs = tuple[GuardIndex, Sequence[str]]


@dataclass(frozen=True)
class OtherTables:
    """Drops that leave every other table's directory standing (``--authorization
    privileges``): a deletion is, holds or lies in another table's directory keeps it (or is
    kept whole), whoever owns that table, as a database drop keeps the tables that stay."""

    #: The directories of every table now.
    table_dirs: Callable[[], NamedDirs]

    def keep(self, deletions: Iterable[Deletion | None], dropped: Collection[str]) -> None:
        """Have ``deletions`` leave the directories of the tables other than ``dropped`` (the
        ``db.table`` names the call drops or empties itself)."""
        live = [d for d in deletions if d is not None and d.kept is None]
        if not live:
            return
        index, names = self.table_dirs()
        skip = frozenset(i for i, name in enumerate(names) if name in dropped)
        for deletion in live:
            before = len(deletion.keep)
            keep_indexed(deletion, Guard.of(deletion.place), index, skip)
            for guard in deletion.keep[before:]:  # (kept whole: said when carried out)
                log.warning("data_kept_inside", location=deletion.place.uri,
                            what=deletion.what, kept=guard.place.uri)  # fmt: skip
                audit.append("data_kept", guard.place.uri)


@dataclass(frozen=True)
class GuardSet:
    """Guards of one call: a few of its own around an index shared between calls."""

    index: GuardIndex
    before: tuple[Guard, ...] = ()
    after: tuple[Guard, ...] = ()

    def first_held_by(self, place: Place, real: str | None) -> Guard | None:
        """The first guard (``before``, the index, ``after``) ``place`` is or holds."""
        for guard in self.before:
            if guard.held_by(place, real):
                return guard
        held = self.index.first_held_by(place, real)
        if held is not None:
            return held
        return next((g for g in self.after if g.held_by(place, real)), None)


@dataclass(frozen=True)
class _Dir:
    """What a directory holding local places was found to be."""

    #: Its real path.
    real: str
    #: Its stamp (``_stamp``); None when too recent to be trusted.
    stamp: _Stamp | None
    #: The names of its entries that are links; None when it could not be listed.
    links: frozenset[str] | None


def _dir_state(path: str, old: _Dir | None, real_paths: RealPaths, listed: bool) -> _Dir:
    """The directory ``path`` now: the same ``old`` when its stamp shows it unchanged, else
    listed again (when ``listed``: it holds many places) or not (each place looked at)."""
    real = real_paths.of_path(path)
    stamp = _stamp(real)
    if old is not None and old.real == real and stamp is not None and stamp == old.stamp:
        return old
    return _Dir(real, stamp, _links_in(real) if listed else None)


@dataclass(frozen=True)
class _Kept:
    locations: tuple[str | None, ...]
    index: GuardIndex
    #: Each directory holding a local place, as written, and what it was.
    dirs: dict[str, _Dir]
    #: The guard of each location.
    guards: dict[str, Guard]
    #: Whether a place is itself a link (its real path is found anew each time).
    links: bool


def _parent_and_name(path: str) -> tuple[str, str] | None:
    """(parent, name) of a path whose real path is its parent's joined with the name unless
    the name is a link; None for paths ``realpath`` alone resolves (the root, ``..``)."""
    parent, name = os.path.split(path)
    if not os.path.isabs(path) or name in ("", ".", "..") or parent == path:
        return None
    return parent, name


class IndexKeeper:
    """The last index built for a list of locations: used again while the directories holding
    its places are unchanged; otherwise rebuilt, keeping the guards of places whose directory
    has the same real path and the same links in it."""

    def __init__(self, find_place: Callable[[str | None], Place | None]) -> None:
        self._find_place = find_place
        self._kept: _Kept | None = None

    def index(self, locations: Sequence[str | None]) -> GuardIndex:
        """The index of the guards of ``locations`` (those some file system serves)."""
        wanted = tuple(locations)
        kept = self._kept
        dirs: dict[str, _Dir] = {}
        real_paths = RealPaths()
        if kept is not None and not kept.links:
            for path, old in kept.dirs.items():
                dirs[path] = _dir_state(path, old, real_paths, old.links is not None)
            if kept.locations == wanted and all(_same(dirs[p], kept.dirs[p]) for p in dirs):
                if any(dirs[p] is not kept.dirs[p] for p in dirs):
                    self._kept = _Kept(wanted, kept.index, dirs, kept.guards, False)
                return kept.index
        # Directories holding many places are listed (one scandir), the others' places are
        # looked at one by one (one lstat each).
        many = Counter(
            os.path.dirname(place.path)
            for place in map(self._find_place, wanted)
            if place is not None and place.is_local
        )
        listed = {path for path, count in many.items() if count >= LIST_PARENT_FROM}
        guards: dict[str, Guard] = {}
        ordered = []
        links = False
        for location in wanted:
            place = self._find_place(location)
            if place is None or location is None:  # (no place has no location)
                continue
            guard = guards.get(location)
            if guard is None:
                guard, linked = self._guard(
                    place, location, kept, dirs, (real_paths, listed)
                )
                guards[location] = guard
                links = links or linked
            ordered.append(guard)
        index = GuardIndex(ordered)
        self._kept = _Kept(wanted, index, dirs, guards, links)
        return index

    def _guard(
        self,
        place: Place,
        location: str,
        kept: _Kept | None,
        dirs: dict[str, _Dir],
        listing: tuple[RealPaths, set[str]],
    ) -> tuple[Guard, bool]:
        """The guard of a place, and whether the place is a link; the one kept when its
        directory has the same real path and links."""
        split = _parent_and_name(place.path) if place.is_local else None
        if split is None:
            return Guard.of(place), place.is_local
        parent, name = split
        state = dirs.get(parent)
        if state is None:
            old = kept.dirs.get(parent) if kept is not None else None
            real_paths, listed = listing
            state = dirs[parent] = _dir_state(parent, old, real_paths, parent in listed)
        candidate = os.path.join(state.real, name)
        linked = os.path.islink(candidate) if state.links is None else name in state.links
        if linked:
            return Guard(place, os.path.realpath(candidate)), True
        old_guard = kept.guards.get(location) if kept is not None else None
        if old_guard is not None and old_guard.real == candidate:
            return old_guard, False
        return Guard(place, candidate), False


def _same(now: _Dir, then: _Dir) -> bool:
    """Whether the places in a directory have the real paths they had: the directory is
    unchanged, or (listed again) has the same real path and the same entries that are links
    (an entry added or removed that is no link changes none of them)."""
    return now is then or (now.real == then.real and now.links is not None
                           and now.links == then.links)  # fmt: skip


def _links_in(directory: str) -> frozenset[str] | None:
    """The names of the entries of ``directory`` that are links; None when it cannot be
    listed."""
    try:
        with os.scandir(directory) as entries:
            return frozenset(entry.name for entry in entries if entry.is_symlink())
    except OSError:
        return None
