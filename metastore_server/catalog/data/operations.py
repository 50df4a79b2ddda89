"""Managed data: the directories the metastore creates, deletes and moves, on every file system.

HMS's order is kept: what a change must do to data is checked first, and a change that cannot
be carried out is refused with nothing changed; then the metadata changes; data is deleted only
after that, and a delete that fails then is logged and put on the call's audit line. Moves are
made before the metadata change and undone when it fails (where the file system cannot rename,
the data is copied, and the source is deleted only after the metadata change).

Safety rules, whatever a location says:
- a file system root (``/``, a bucket), and the protected places the catalog names (the
  warehouse root, database directories) are never deleted, nor anything holding one (local
  paths are also compared with symbolic links resolved);
- a symbolic link is never followed: a location that is a link loses the link, not its target,
  and links inside a deleted directory are removed as links;
- empty parents are removed only strictly inside the boundary given (a partition's table).
"""

from __future__ import annotations

import getpass
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import structlog

from metastore_server import audit
from metastore_server.catalog.data import files as data_files
from metastore_server.catalog.data.files import reason
from metastore_server.catalog.data.filesystems import FileSystems, FileSystemUnavailable, Place
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: Tries at making a directory whose parent a finishing drop may remove meanwhile.
_MAKEDIRS_ATTEMPTS = 5
#: Longest wait of a directory being made for a committed drop's delete of it to finish.
_DELETION_WAIT_S = 120.0

#: Builds the exception refusing a change, from the reason (``file:/x is not writable by u``).
Refusal = Callable[[str], Exception]
#: Builds the exception refusing a directory that cannot be made, from its URI and the detail.
MakeRefusal = Callable[[str, str], Exception]


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _real(place: Place) -> str | None:
    """A local place's path with symbolic links resolved; None for other file systems."""
    return os.path.realpath(place.path) if place.is_local else None


def _key(place: Place) -> tuple[str, str, str]:
    return place.protocol, place.authority, place.path.rstrip("/")


def _overlap(one: Place, other: Place) -> bool:
    """Whether two places are one, or one holds the other."""
    return one.same_as(other) or one.contains(other) or other.contains(one)


def _within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class Guard:
    """A place resolved once for many comparisons (its real path too, when local)."""

    place: Place
    real: str | None

    @classmethod
    def of(cls, place: Place) -> Guard:
        return cls(place, _real(place))

    def held_by(self, place: Place, real: str | None) -> bool:
        """Whether ``place`` (real path ``real``) is this place or holds it."""
        if place.same_as(self.place) or place.contains(self.place):
            return True
        return real is not None and self.real is not None and _within(self.real, real)


@dataclass
class MadeDirs:
    """Directories one call created, removed again (when still empty) if its metadata change
    fails."""

    places: list[Place] = field(default_factory=list)


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


def _report_failure(place: Place, what: str, error: str) -> None:
    log.error("data_delete_failed", location=place.uri, what=what, error=error)
    audit.append("data_errors", f"{place.uri}: {error}")


class Move:
    """A directory moved for a metadata change: ``prepare`` before the change, then
    ``commit`` after it, or ``rollback`` when it failed."""

    def __init__(self, source: Place, target: Place, what: str) -> None:
        self.source, self.target, self.what = source, target, what
        self._moved = False
        self._renamed = False

    def prepare(self) -> None:
        """Rename the data, or copy it where the file system cannot rename; raises (having
        removed a partial copy) when that fails."""
        try:
            self._renamed = data_files.move_tree(self.source, self.target)
        except Exception:
            self._discard_copy()
            raise
        self._moved = True

    def commit(self) -> None:
        """Finish after the metadata change: a copied source is deleted (a failure is logged
        and audited; the data is whole at the new place)."""
        if not self._moved or self._renamed:
            return
        try:
            data_files.remove_tree(self.source)
            error = "still present after delete" if data_files.exists(self.source) else None
        except Exception as exc:  # noqa: BLE001 - reported, never raised after a commit
            error = reason(exc)
        if error is not None:
            _report_failure(self.source, f"old location of {self.what} after a move", error)

    def rollback(self) -> None:
        """Undo ``prepare`` after the metadata change failed."""
        if not self._moved:
            return
        self._moved = False
        if not self._renamed:
            self._discard_copy()
            return
        try:
            os.rename(self.target.path, self.source.path)
        except Exception as exc:  # noqa: BLE001
            _report_failure(self.target, f"moving {self.what} back", reason(exc))

    def _discard_copy(self) -> None:
        try:
            if data_files.exists(self.target):
                data_files.remove_tree(self.target)
        except Exception as exc:  # noqa: BLE001
            _report_failure(self.target, f"partial copy of {self.what}", reason(exc))


class DataOperations:
    """Creates, deletes and moves directories for the catalog through each location's own file
    system (``data_fs``); ``enabled=False`` (``--data-operations off``) leaves data to someone
    else. With trash roots (one per file system), deleted data is moved there unless purged."""

    def __init__(
        self,
        filesystems: FileSystems | None = None,
        *,
        enabled: bool = True,
        trash_roots: Sequence[str] = (),
        protected: Sequence[str] = (),
    ) -> None:
        self.filesystems = filesystems or FileSystems()
        self.enabled = enabled
        self._known_buckets: set[str] = set()
        #: Places committed changes are still deleting (``reserve``), with how many; and a
        #: condition told of every change to them.
        self._deleting: dict[tuple[str, str, str], tuple[Place, int]] = {}
        self._deleting_changed = threading.Condition()
        self._trash = [Guard.of(self.filesystems.resolve(root)) for root in trash_roots]
        self._protected = [Guard.of(self.filesystems.resolve(p)) for p in protected]

    # -- resolving ---------------------------------------------------------------------------

    def place(self, location: str, refuse: Refusal) -> Place:
        """The place of a location; ``refuse(reason)`` raised when no file system serves it."""
        try:
            return self.filesystems.resolve(location)
        except FileSystemUnavailable as exc:
            raise refuse(f"{location}: {exc}") from None

    def find_place(self, location: str | None) -> Place | None:
        """The place of a location, None when it has none or no file system serves it."""
        if not location:
            return None
        try:
            return self.filesystems.resolve(location)
        except FileSystemUnavailable:
            return None

    def guards(self, locations: Iterable[str | None]) -> list[Guard]:
        """Places one call must never delete (database directories), resolved once for all
        the deletions it plans."""
        found = []
        for location in locations:
            place = self.find_place(location)
            if place is not None:
                found.append(Guard.of(place))
        return found

    # -- creating ----------------------------------------------------------------------------

    def make_dirs(self, locations: Iterable[str | None], refuse: MakeRefusal) -> MadeDirs:
        """Create each missing directory (an object store only needs its bucket to exist: it
        has no directories). ``refuse(uri, detail)`` is raised, after removing what this call
        made, when one cannot be made."""
        made = MadeDirs()
        if not self.enabled:
            return made
        try:
            for location in locations:
                if not location:
                    continue
                try:
                    place = self.filesystems.resolve(location)
                except FileSystemUnavailable as exc:
                    raise refuse(location, str(exc)) from None
                self._make_dir(place, made, refuse)
        except BaseException:
            self.undo(made)
            raise
        return made

    def _make_dir(self, place: Place, made: MadeDirs, refuse: MakeRefusal) -> None:
        if place.is_local:
            self._wait_for_deletions(place)
            top = self._first_missing(place.path)
            if top is None:
                if not os.path.isdir(place.path):
                    raise refuse(place.uri, "it exists and is not a directory")
                return
            for attempt in range(_MAKEDIRS_ATTEMPTS):
                try:
                    os.makedirs(place.path, exist_ok=True)
                    break
                except FileNotFoundError as exc:
                    # A drop finishing removed an empty parent while the path was being made.
                    if attempt + 1 == _MAKEDIRS_ATTEMPTS:
                        raise refuse(place.uri, reason(exc)) from None
                except OSError as exc:
                    raise refuse(place.uri, reason(exc)) from None
            made.places.append(place.with_path(top))
            return
        if place.protocol == "s3":
            self._require_bucket(place, refuse)
            return
        try:
            if place.fs.isdir(place.path):
                return
            place.fs.makedirs(place.path, exist_ok=True)
        except Exception as exc:  # noqa: BLE001 - a client's own error types too
            raise refuse(place.uri, reason(exc)) from None
        made.places.append(place)

    @staticmethod
    def _first_missing(path: str) -> str | None:
        """The outermost missing directory on the way to ``path``; None when it exists."""
        if os.path.lexists(path):
            return None
        top = path
        parent = os.path.dirname(top)
        while parent != top and not os.path.lexists(parent):
            top, parent = parent, os.path.dirname(parent)
        return top

    def _require_bucket(self, place: Place, refuse: MakeRefusal) -> None:
        bucket = place.path.split("/", 1)[0]
        if bucket in self._known_buckets:
            return
        try:
            exists = place.fs.exists(bucket)
        except PermissionError:
            exists = True  # it is there, this server may not look at it
        except Exception as exc:  # noqa: BLE001
            raise refuse(place.uri, reason(exc)) from None
        if not exists:
            raise refuse(place.uri, f"bucket {bucket} does not exist")
        self._known_buckets.add(bucket)

    def undo(self, made: MadeDirs) -> None:
        """Remove the directories ``make_dirs`` made, where nothing was put in them since."""
        for place in reversed(made.places):
            try:
                if place.is_local:
                    for directory, _subdirs, _files in os.walk(place.path, topdown=False):
                        os.rmdir(directory)
                else:
                    place.fs.rmdir(place.path)
            except Exception:  # noqa: BLE001,S112 - not empty (someone wrote there), or gone
                continue
        made.places.clear()

    # -- deleting ----------------------------------------------------------------------------

    def plan_delete(
        self,
        location: str | None,
        *,
        what: str,
        purge: bool,
        refuse: Refusal,
        guards: Sequence[Guard] = (),
        parent_levels: int = 0,
        boundary: str | None = None,
    ) -> Deletion | None:
        """Check that a directory can be deleted once a metadata change commits: its file
        system is known and it is writable (``refuse(reason)`` otherwise). None when there is
        nothing to delete. A protected place (a root, the server's protected places, and
        ``guards``) or one holding one is planned as kept, with the reason."""
        if not self.enabled or not location:
            return None
        place = self.place(location, refuse)
        kept = self._kept_reason(place, guards)
        bound = self.find_place(boundary) if boundary else None
        deletion = Deletion(place, what, purge, kept, parent_levels, bound)
        if kept is not None:
            return deletion
        if place.is_local:
            if not os.path.lexists(place.path):
                return None
            parent = os.path.dirname(place.path)
            if not os.access(parent, os.W_OK | os.X_OK):
                raise refuse(f"{place.uri_of(parent)} is not writable by {_user()}")
            return deletion
        try:
            if not place.fs.exists(place.path):
                return None
        except Exception as exc:  # noqa: BLE001 - a client's own error types too
            raise refuse(f"{place.uri} cannot be read: {reason(exc)}") from None
        failure = data_files.probe_writable(place)
        if failure is not None:
            log.warning("data_not_writable", location=place.uri, detail=failure)
            raise refuse(f"{place.uri} is not writable by {_user()}: {failure}")
        return deletion

    def _kept_reason(self, place: Place, guards: Sequence[Guard]) -> str | None:
        if place.is_root:
            return f"{place.uri} is a file system root"
        real = _real(place)
        for guard in [*self._protected, *guards]:
            if guard.held_by(place, real):
                return f"{place.uri} is or holds {guard.place.uri}, which is never deleted"
        for trash in self._trash:
            if trash.held_by(place, real):
                return f"{place.uri} holds the trash {trash.place.uri}"
        return None

    def keep_inside(self, deletion: Deletion, locations: Iterable[str | None]) -> None:
        """Have ``deletion`` leave the places among ``locations`` that lie in it (or are it,
        or hold it: then nothing of it is deleted); compared with links resolved too."""
        mine = Guard.of(deletion.place)
        for guard in self.guards(locations):
            if deletion.kept is not None:
                return
            if mine.held_by(guard.place, guard.real):
                deletion.kept = f"{guard.place.uri}, which stays, is or holds it"
            elif guard.held_by(deletion.place, mine.real):
                deletion.keep.append(guard)

    def reserve(self, deletions: Iterable[Deletion | None]) -> None:
        """Mark what a committed change will delete, before its write lock is let go: until
        ``carry_out`` has deleted it, a directory made at or around it (a partition added
        again) waits, so the late delete never takes a new partition's directory."""
        with self._deleting_changed:
            for deletion in deletions:
                if deletion is not None and deletion.kept is None:
                    key = _key(deletion.place)
                    place, count = self._deleting.get(key, (deletion.place, 0))
                    self._deleting[key] = (place, count + 1)

    def _wait_for_deletions(self, place: Place) -> None:
        deadline = time.monotonic() + _DELETION_WAIT_S
        with self._deleting_changed:
            while any(_overlap(place, pending) for pending, _ in self._deleting.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("data_deletion_wait_expired", location=place.uri)
                    return
                self._deleting_changed.wait(left)

    def cancel(self, deletions: Iterable[Deletion | None]) -> None:
        """Give up what ``reserve`` marked, deleting nothing (its change did not commit)."""
        for deletion in deletions:
            if deletion is not None and deletion.kept is None:
                self._release(deletion.place)

    def _release(self, place: Place) -> None:
        with self._deleting_changed:
            key = _key(place)
            pending = self._deleting.get(key)
            if pending is not None:
                if pending[1] > 1:
                    self._deleting[key] = (pending[0], pending[1] - 1)
                else:
                    del self._deleting[key]
            self._deleting_changed.notify_all()

    def carry_out(self, deletions: Iterable[Deletion | None]) -> None:
        """Delete (or move to the trash) what was planned; never raises: a failure is logged
        with its path and error and listed on the audit line (``data_errors``)."""
        for deletion in deletions:
            if deletion is None:
                continue
            if deletion.kept is not None:
                log.warning("data_kept", location=deletion.place.uri, what=deletion.what,
                            reason=deletion.kept)  # fmt: skip
                audit.append("data_kept", deletion.place.uri)
                continue
            try:
                if self._delete(deletion):
                    self._remove_empty_parents(deletion)
            finally:
                self._release(deletion.place)

    def _delete(self, deletion: Deletion) -> bool:
        place = deletion.place
        trash = None if deletion.purge else self._trash_for(place)

        def remove(target: Place) -> None:
            if trash is not None:
                self._to_trash(target, trash)
            else:
                data_files.remove_tree(target)

        try:
            if deletion.keep:
                left = self._delete_except(place, deletion.keep, remove)
            else:
                remove(place)
                left = data_files.exists(place)
        except Exception as exc:  # noqa: BLE001 - reported, never raised after a commit
            _report_failure(place, deletion.what, reason(exc))
            return False
        if left:
            _report_failure(place, deletion.what, "still present after delete")
            return False
        event = "data_trashed" if trash is not None else "data_deleted"
        log.info(event, location=place.uri, what=deletion.what, kept_inside=len(deletion.keep))
        audit.append(event, place.uri)
        return True

    @staticmethod
    def _delete_except(
        place: Place, keep: list[Guard], remove: Callable[[Place], None]
    ) -> bool:
        """``remove`` what lies in ``place`` outside the ``keep`` places; whether something
        that should have gone is still there."""
        if not place.is_local:
            kept = [k.place.path.rstrip("/") for k in keep]
            for path in data_files.files(place):
                if not any(_within(path, k) for k in kept):
                    remove(place.with_path(path))
            return any(
                not any(_within(path, k) for k in kept) for path in data_files.files(place)
            )
        if os.path.islink(place.path):
            remove(place)  # the link goes, whatever lies behind it stays
            return os.path.lexists(place.path)
        # Walk the real tree (links inside are never followed) and compare real paths.
        reals = [k.real for k in keep if k.real is not None]

        def walk(path: str) -> None:
            if path in reals:
                return
            if not any(_within(k, path) for k in reals):
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

    def _trash_for(self, place: Place) -> Guard | None:
        for trash in self._trash:
            if trash.place.protocol == place.protocol and (
                place.protocol == "s3" or trash.place.authority == place.authority
            ):
                return trash
        return None

    @staticmethod
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

    def _remove_empty_parents(self, deletion: Deletion) -> None:
        """HMS removes the parents a partition drop left empty, up to the table directory."""
        boundary = deletion.boundary
        parent = deletion.place.parent
        for _ in range(deletion.parent_levels):
            if parent is None or boundary is None or not boundary.contains(parent):
                return
            if parent.is_local:
                if os.path.islink(parent.path):
                    return
                real, bound = os.path.realpath(parent.path), os.path.realpath(boundary.path)
                if real == bound or not _within(real, bound):
                    return
            try:
                if data_files.exists(parent) and not data_files.remove_empty_dir(parent):
                    return  # not empty
            except Exception:  # noqa: BLE001 - best effort, as in HMS
                return
            parent = parent.parent

    # -- moving ------------------------------------------------------------------------------

    def plan_move(self, source: str, target: str, *, what: str, subject: str) -> Move | None:
        """Check that ``source`` can be moved to ``target`` (HMS's rules for a rename of
        ``subject``, ``db.table``: one file system, nothing at the target) and return the move;
        None when there is nothing to move. Raises InvalidOperationException otherwise."""
        if not self.enabled:
            return None

        def refuse(detail: str) -> Exception:
            return hms.InvalidOperationException(
                message=(
                    f"Alter Table operation for {subject} failed to move data due to: "
                    f"'{detail}' See hive log file for details."
                )
            )

        src, dst = self.place(source, refuse), self.place(target, refuse)
        if src.same_as(dst):
            return None
        if not src.same_filesystem(dst):
            raise hms.InvalidOperationException(
                message=(
                    f"table new location {dst.uri} is on a different file system than the old "
                    f"location {src.uri}. This operation is not supported"
                )
            )
        if self._kept_reason(src, ()) is not None:
            raise refuse(f"{src.uri} is never moved")
        try:
            taken = data_files.exists(dst)
            exists = data_files.exists(src)
        except Exception as exc:  # noqa: BLE001
            raise refuse(reason(exc)) from None
        if taken:
            raise hms.InvalidOperationException(
                message=f"New location for this table {subject} already exists : {dst.uri}"
            )
        if not exists:
            return None
        if src.is_local and not os.access(os.path.dirname(src.path), os.W_OK | os.X_OK):
            raise refuse(f"{src.uri_of(os.path.dirname(src.path))} is not writable by {_user()}")
        if not src.is_local:
            failure = data_files.probe_writable(src)
            if failure is not None:
                raise refuse(f"{src.uri} is not writable by {_user()}: {failure}")
        return Move(src, dst, what)

    def prepare(self, move: Move | None, subject: str) -> None:
        """Carry out the data half of a move before its metadata change."""
        if move is None:
            return
        try:
            move.prepare()
        except Exception as exc:  # noqa: BLE001 - refused with nothing changed
            raise hms.InvalidOperationException(
                message=(
                    f"Alter Table operation for {subject} failed to move data due to: "
                    f"'{reason(exc)}' See hive log file for details."
                )
            ) from None
        log.info("data_moved", source=move.source.uri, target=move.target.uri, what=move.what)
        audit.append("data_moved", f"{move.source.uri} -> {move.target.uri}")
