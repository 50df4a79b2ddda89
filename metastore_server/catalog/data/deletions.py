"""Deleting data once a metadata change has committed: what is deleted (``Deletion``), the
places never deleted (``Guard``), and carrying a deletion out: to the trash or for good, the
places it keeps left standing, symbolic links removed as links, and the parents a partition
drop left empty removed up to its table's directory. A failure then is logged with its path
and error and put on the call's audit line, never raised. See ``docs/managed-data.md``.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog

from metastore_server import audit
from metastore_server.catalog.data import files as data_files
from metastore_server.catalog.data.files import reason
from metastore_server.catalog.data.filesystems import Place

log = structlog.get_logger(__name__)


def real_path(place: Place) -> str | None:
    """A local place's path with symbolic links resolved; None for other file systems."""
    return os.path.realpath(place.path) if place.is_local else None


#: Places asked for under one parent after which ``RealPaths`` lists the parent once (one
#: ``scandir``) instead of looking at each place (one ``lstat`` each).
LIST_PARENT_FROM = 16


class RealPaths:
    """``real_path`` for many places of one call: each directory on the way is resolved once
    (from its own parent's answer), so that places sharing a parent (databases under the
    warehouse, tables under their databases) cost one ``lstat`` each rather than one per
    component; past ``LIST_PARENT_FROM`` places under one parent, the parent is listed once
    and its entries that are links are known without an ``lstat`` each. Answers are those of
    ``os.path.realpath``; nothing is kept beyond the object (the file system may change
    between calls)."""

    def __init__(self) -> None:
        self._reals: dict[str, str] = {}
        #: Per parent (by its real path): how many places were asked under it, then the names
        #: of its entries that are links (None: it could not be listed).
        self._asked: dict[str, int] = {}
        self._links: dict[str, frozenset[str] | None] = {}

    def of(self, place: Place) -> str | None:
        """The real path of a local place (None for other file systems)."""
        if not place.is_local:
            return None
        return self._real(place.path)

    def of_path(self, path: str) -> str:
        """``os.path.realpath`` of a local path."""
        return self._real(path)

    def _real(self, path: str) -> str:
        known = self._reals.get(path)
        if known is not None:
            return known
        parent, name = os.path.split(path)
        if not os.path.isabs(path) or name in ("", ".", "..") or parent == path:
            real = os.path.realpath(path)
        else:
            real_parent = self._real(parent)
            candidate = os.path.join(real_parent, name)
            real = os.path.realpath(candidate) if self._linked(real_parent, name) else candidate
        self._reals[path] = real
        return real

    def _linked(self, real_parent: str, name: str) -> bool:
        """Whether the entry ``name`` of the directory ``real_parent`` is a link (as
        ``realpath``: a missing entry is not)."""
        links = self._links.get(real_parent, False)
        if links is False:
            asked = self._asked.get(real_parent, 0) + 1
            self._asked[real_parent] = asked
            if asked >= LIST_PARENT_FROM:
                links = self._links[real_parent] = _links_in(real_parent)
        if isinstance(links, frozenset):
            return name in links
        try:
            return stat.S_ISLNK(os.lstat(os.path.join(real_parent, name)).st_mode)
        except OSError:
            return False  # as realpath: a missing component stays as it is written


def _links_in(directory: str) -> frozenset[str] | None:
    """The names of the entries of ``directory`` that are links; None when it cannot be
    listed (then each entry is looked at on its own)."""
    try:
        with os.scandir(directory) as entries:
            return frozenset(entry.name for entry in entries if entry.is_symlink())
    except OSError:
        return None


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class Guard:
    """A place resolved once for many comparisons (its real path too, when local)."""

    place: Place
    real: str | None

    @classmethod
    def of(cls, place: Place, real_paths: RealPaths | None = None) -> Guard:
        real = real_paths.of(place) if real_paths is not None else real_path(place)
        return cls(place, real)

    def held_by(self, place: Place, real: str | None) -> bool:
        """Whether ``place`` (real path ``real``) is this place or holds it."""
        if place.is_local and self.place.is_local:  # the same test, by the paths alone
            if within(self.place.path.rstrip("/"), place.path.rstrip("/")):
                return True
        elif place.same_as(self.place) or place.contains(self.place):
            return True
        return real is not None and self.real is not None and within(self.real, real)


@dataclass
class Deletion:
    """A directory to delete once the metadata change it belongs to has committed."""

    place: Place
    #: What it is, for logs and the audit line ("table db.t").
    what: str
    #: Deleted for good rather than moved to the trash.
    purge: bool
    #: Why it is kept after all (a protected place); None: delete it.
    kept: str | None = None
    #: Empty parents to remove afterwards, at most this many levels up...
    parent_levels: int = 0
    #: ...and only strictly inside this place.
    boundary: Place | None = None
    #: Places inside it that stay (other tables' data): only the rest is deleted.
    keep: list[Guard] = field(default_factory=list)


def report_failure(place: Place, what: str, error: str) -> None:
    """Log and audit a deletion (or move) that failed after its change committed."""
    log.error("data_delete_failed", location=place.uri, what=what, error=error)
    audit.append("data_errors", f"{place.uri}: {error}")


def delete(deletion: Deletion, trash: Guard | None) -> bool:
    """Carry out one deletion after its change has committed: to ``trash`` (None: for good),
    leaving the places it keeps; whether it is done (a failure is logged and audited, never
    raised)."""
    place = deletion.place

    def remove(target: Place) -> None:
        if trash is not None:
            _to_trash(target, trash)
        else:
            data_files.remove_tree(target)

    try:
        if deletion.keep:
            left = _delete_except(place, deletion.keep, remove)
        else:
            remove(place)
            left = data_files.exists(place)
    except Exception as exc:  # noqa: BLE001 - reported, never raised after a commit
        report_failure(place, deletion.what, reason(exc))
        return False
    if left:
        report_failure(place, deletion.what, "still present after delete")
        return False
    event = "data_trashed" if trash is not None else "data_deleted"
    log.info(event, location=place.uri, what=deletion.what, kept_inside=len(deletion.keep))
    audit.append(event, place.uri)
    return True


def _delete_except(place: Place, keep: list[Guard], remove: Callable[[Place], None]) -> bool:
    """``remove`` what lies in ``place`` outside the ``keep`` places; whether something
    that should have gone is still there."""
    if not place.is_local:
        kept = [k.place.path.rstrip("/") for k in keep]
        for path in data_files.files(place):
            if not any(within(path, k) for k in kept):
                remove(place.with_path(path))
        return any(not any(within(path, k) for k in kept) for path in data_files.files(place))
    if os.path.islink(place.path):
        remove(place)  # the link goes, whatever lies behind it stays
        return os.path.lexists(place.path)
    # Walk the real tree (links inside are never followed) and compare real paths.
    reals = [k.real for k in keep if k.real is not None]

    def walk(path: str) -> None:
        if path in reals:
            return
        if not any(within(k, path) for k in reals):
            remove(place.with_path(path))
            return
        for entry in os.scandir(path):
            walk(entry.path)
        try:
            os.rmdir(path)  # goes when nothing stayed inside
        except OSError:
            pass

    walk(os.path.realpath(place.path))
    return False


def trash_for(trashes: Sequence[Guard], place: Place) -> Guard | None:
    """The trash among ``trashes`` on ``place``'s file system (None: there is none)."""
    for trash in trashes:
        if trash.place.protocol == place.protocol and (
            place.protocol == "s3" or trash.place.authority == place.authority
        ):
            return trash
    return None


def _to_trash(place: Place, trash: Guard) -> None:
    """Move ``place`` under ``trash/Current/`` keeping its path (a name already taken
    there gets the time in milliseconds appended)."""
    relative = place.path.lstrip("/")
    if not place.is_local and place.protocol != "s3" and place.authority:
        relative = f"{place.authority}/{relative}"
    target = trash.place.with_path(f"{trash.place.path.rstrip('/')}/Current/{relative}")
    if data_files.exists(target):
        target = target.with_path(f"{target.path}.{int(time.time() * 1000)}")
    if not data_files.move_tree(place, target):
        data_files.remove_tree(place)  # copied (an object store, another device)
    log.info("data_trash_target", location=place.uri, trash=target.uri)


def remove_empty_parents(deletion: Deletion) -> None:
    """HMS removes the parents a partition drop left empty, up to the table directory."""
    boundary = deletion.boundary
    parent = deletion.place.parent
    real = bound = None
    for _ in range(deletion.parent_levels):
        if parent is None or boundary is None or not boundary.contains(parent):
            return
        if parent.is_local:
            if os.path.islink(parent.path):
                return
            # Resolved once: the next parent's real path is this one's parent (no link here).
            real = os.path.realpath(parent.path) if real is None else os.path.dirname(real)
            bound = bound or os.path.realpath(boundary.path)
            if real == bound or not within(real, bound):
                return
            try:
                os.rmdir(parent.path)
            except FileNotFoundError:
                pass  # gone already: its parent may be left empty still
            except OSError:
                return  # not empty
            parent = parent.parent
            continue
        try:
            if data_files.exists(parent) and not data_files.remove_empty_dir(parent):
                return  # not empty
        except Exception:  # noqa: BLE001 - best effort, as in HMS
            return
        parent = parent.parent
