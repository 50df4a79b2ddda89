"""Managed data: the directories the metastore creates, deletes and moves, on every file system.

HMS's order is kept: what a change must do to data is checked first, and a change that cannot
be carried out is refused with nothing changed; then the metadata changes; data is deleted only
after that, and a delete that fails then is logged and put on the call's audit line. Moves are
made before the metadata change and undone when it fails (an object store copies first and
deletes the source only after the metadata change).

Safety rules, whatever a location says:
- a file system root (``/``, a bucket), and the protected places the catalog names (the
  warehouse root, database directories) are never deleted, nor anything holding one;
- a symbolic link is never followed: a location that is a link loses the link, not its target,
  and links inside a deleted directory are removed as links;
- empty parents are removed only strictly inside the boundary given (a partition's table).
"""

from __future__ import annotations

import contextlib
import errno
import getpass
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import structlog

from metastore_server import audit
from metastore_server.catalog.data_fs import FileSystems, FileSystemUnavailable, Place
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: Name prefix of the object written and removed to learn whether a place is writable.
PROBE_PREFIX = ".metastore-write-probe-"

#: Builds the exception refusing a change, from the reason (``file:/x is not writable by u``).
Refusal = Callable[[str], Exception]
#: Builds the exception refusing a directory that cannot be made, from its URI and the detail.
MakeRefusal = Callable[[str, str], Exception]


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _exists(place: Place) -> bool:
    """Whether anything (a link too) is at ``place``."""
    return os.path.lexists(place.path) if place.is_local else bool(place.fs.exists(place.path))


def _under_any(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _real_inside(inner: str, outer: str) -> bool:
    """Whether local ``inner`` lies strictly inside ``outer``, symlinks resolved."""
    outer_real = _real(outer).rstrip("/") + "/"
    inner_real = _real(inner)
    return inner_real != outer_real.rstrip("/") and inner_real.startswith(outer_real)


def _holds(place: Place, other: Place) -> bool:
    """Whether ``place`` is ``other`` or contains it (local paths also with links resolved)."""
    if place.same_as(other) or place.contains(other):
        return True
    if place.is_local and other.is_local:
        mine, theirs = _real(place.path), _real(other.path)
        return theirs == mine or theirs.startswith(mine.rstrip("/") + "/")
    return False


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
    #: Places inside it that stay (other tables' directories): only the rest is deleted.
    keep: list[Place] = field(default_factory=list)


class Move:
    """A directory moved for a metadata change: ``prepare`` before the change, then
    ``commit`` after it, or ``rollback`` when it failed."""

    def __init__(self, source: Place, target: Place, what: str) -> None:
        self.source, self.target, self.what = source, target, what
        self._moved = False

    def prepare(self) -> None:
        """Move (local) or copy (other file systems) the data; raises OSError."""
        fs = self.source.fs
        if self.source.is_local:
            os.makedirs(os.path.dirname(self.target.path), exist_ok=True)
            os.rename(self.source.path, self.target.path)  # a link moves as a link
        else:
            fs.copy(self.source.path, self.target.path, recursive=True)
            copied = len(fs.find(self.target.path))
            expected = len(fs.find(self.source.path))
            if copied != expected:
                self._discard_copy()
                raise OSError(f"copied {copied} of {expected} files to {self.target.uri}")
        self._moved = True

    def commit(self) -> None:
        """Finish after the metadata change: an object store's source copy is deleted (a
        failure is logged and audited: the data is whole at the new place)."""
        if not self._moved or self.source.is_local:
            return
        try:
            self.source.fs.rm(self.source.path, recursive=True)
            left = self.source.fs.exists(self.source.path)
        except OSError as exc:
            left, error = True, _reason(exc)
        else:
            error = "still present after delete"
        if left:
            _report_failure(self.source, f"old location of {self.what} after a move", error)

    def rollback(self) -> None:
        """Undo ``prepare`` after the metadata change failed."""
        if not self._moved:
            return
        try:
            if self.source.is_local:
                os.rename(self.target.path, self.source.path)
            else:
                self._discard_copy()
        except OSError as exc:
            _report_failure(self.target, f"moving {self.what} back", _reason(exc))
        self._moved = False

    def _discard_copy(self) -> None:
        try:
            self.target.fs.rm(self.target.path, recursive=True)
        except OSError as exc:
            _report_failure(self.target, f"partial copy of {self.what}", _reason(exc))


def _report_failure(place: Place, what: str, error: str) -> None:
    log.error("data_delete_failed", location=place.uri, what=what, error=error)
    audit.append("data_errors", f"{place.uri}: {error}")


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
        self._trash: list[Place] = [self.filesystems.resolve(root) for root in trash_roots]
        self._protected = [self.filesystems.resolve(p) for p in protected]

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
            top = self._first_missing(place.path)
            if top is None:
                if not os.path.isdir(place.path):
                    raise refuse(place.uri, "it exists and is not a directory")
                return
            try:
                os.makedirs(place.path, exist_ok=True)
            except OSError as exc:
                raise refuse(place.uri, _reason(exc)) from None
            made.places.append(place.with_path(top))
            return
        if place.protocol == "s3":
            self._require_bucket(place, refuse)
            return
        try:
            if place.fs.isdir(place.path):
                return
            place.fs.makedirs(place.path, exist_ok=True)
        except OSError as exc:
            raise refuse(place.uri, _reason(exc)) from None
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
        except OSError as exc:
            raise refuse(place.uri, _reason(exc)) from None
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
            except OSError:
                continue  # not empty (someone wrote there) or gone: leave it
        made.places.clear()

    # -- deleting ----------------------------------------------------------------------------

    def plan_delete(
        self,
        location: str | None,
        *,
        what: str,
        purge: bool,
        refuse: Refusal,
        protected: Sequence[str | None] = (),
        parent_levels: int = 0,
        boundary: str | None = None,
    ) -> Deletion | None:
        """Check that a directory can be deleted once a metadata change commits: its file
        system is known and it is writable (``refuse(reason)`` otherwise). None when there is
        nothing to delete. A protected place (a root, the server's protected places, and
        ``protected``) or one holding one is planned as kept, with the reason."""
        if not self.enabled or not location:
            return None
        place = self.place(location, refuse)
        kept = self._kept_reason(place, protected)
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
        except OSError as exc:
            raise refuse(f"{place.uri}: {_reason(exc)}") from None
        self._probe_writable(place, refuse)
        return deletion

    def _kept_reason(self, place: Place, protected: Sequence[str | None]) -> str | None:
        if place.is_root:
            return f"{place.uri} is a file system root"
        for guarded in [*self._protected, *filter(None, map(self.find_place, protected))]:
            if _holds(place, guarded):
                return f"{place.uri} is or holds {guarded.uri}, which is never deleted"
        for trash in self._trash:
            if _holds(place, trash):
                return f"{place.uri} holds the trash {trash.uri}"
        return None

    @staticmethod
    def _probe_writable(place: Place, refuse: Refusal) -> None:
        """Write and remove a probe object inside ``place``: object stores and HDFS tell
        whether a delete would be allowed only by trying."""
        probe = f"{place.path.rstrip('/')}/{PROBE_PREFIX}{uuid.uuid4().hex}"
        try:
            place.fs.pipe(probe, b"")
        except OSError as exc:
            raise refuse(f"{place.uri} is not writable by {_user()} ({_reason(exc)})") from None
        try:
            place.fs.rm(probe)
            left = place.fs.exists(probe)
        except OSError as exc:
            left, detail = True, _reason(exc)
        else:
            detail = "a written object could not be removed"
        if left:
            log.warning("data_probe_left", location=place.uri_of(probe))
            raise refuse(f"{place.uri}: objects cannot be deleted by {_user()} ({detail})")

    def keep_inside(self, deletion: Deletion, locations: Iterable[str | None]) -> None:
        """Have ``deletion`` leave the places among ``locations`` that lie in it (or are it:
        then nothing of it is deleted)."""
        for location in locations:
            place = self.find_place(location)
            if place is None or deletion.kept is not None:
                continue
            if _holds(place, deletion.place):
                deletion.kept = f"{place.uri}, which stays, is or holds it"
            elif _holds(deletion.place, place):
                deletion.keep.append(place)

    def carry_out(self, deletions: Iterable[Deletion | None]) -> None:
        """Delete (or move to the trash) what was planned; never raises: a failure is logged
        with its path and error and listed on the audit line (``data_errors``)."""
        for deletion in deletions:
            if deletion is None:
                continue
            if deletion.kept is not None:
                log.warning("data_kept", location=deletion.place.uri, what=deletion.what,
                            reason=deletion.kept)
                audit.append("data_kept", deletion.place.uri)
                continue
            if self._delete(deletion):
                self._remove_empty_parents(deletion)

    def _delete(self, deletion: Deletion) -> bool:
        place = deletion.place
        trash = None if deletion.purge else self._trash_for(place)

        def remove(target: Place) -> None:
            if trash is not None:
                self._to_trash(target, trash)
            elif target.is_local:
                self._delete_local(target.path)
            else:
                target.fs.rm(target.path, recursive=True)

        try:
            if deletion.keep:
                left = self._delete_except(place, deletion.keep, remove)
            else:
                remove(place)
                left = _exists(place)
        except FileNotFoundError:
            left = False
        except OSError as exc:
            _report_failure(place, deletion.what, _reason(exc))
            return False
        if left:
            _report_failure(place, deletion.what, "still present after delete")
            return False
        event = "data_trashed" if trash is not None else "data_deleted"
        log.info(event, location=place.uri, what=deletion.what, kept_inside=len(deletion.keep))
        audit.append(event, place.uri)
        return True

    @staticmethod
    def _delete_local(path: str) -> None:
        if os.path.islink(path):
            log.info("data_link_removed", location=path, target_kept=os.readlink(path))
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)  # removes links inside as links, never follows them
        else:
            os.unlink(path)

    @staticmethod
    def _delete_except(
        place: Place, keep: list[Place], remove: Callable[[Place], None]
    ) -> bool:
        """``remove`` what lies in ``place`` outside the ``keep`` places; whether something
        that should have gone is still there."""
        kept = [k.path.rstrip("/") for k in keep]
        if not place.is_local:
            for path in place.fs.find(place.path):
                if not _under_any(path, kept):
                    remove(place.with_path(path))
            return any(not _under_any(f, kept) for f in place.fs.find(place.path))

        def holds_kept(path: str) -> bool:
            return any(k == path or k.startswith(path + "/") for k in kept)

        def walk(path: str) -> None:
            if not holds_kept(path):
                remove(place.with_path(path))
                return
            if path in kept:
                return
            for entry in os.scandir(path):
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path)
                elif not holds_kept(entry.path):
                    remove(place.with_path(entry.path))
            with contextlib.suppress(OSError):
                os.rmdir(path)  # goes when nothing stayed inside

        walk(place.path.rstrip("/"))
        return False

    def _trash_for(self, place: Place) -> Place | None:
        for trash in self._trash:
            if trash.protocol == place.protocol and (
                place.protocol == "s3" or trash.authority == place.authority
            ):
                return trash
        return None

    @staticmethod
    def _to_trash(place: Place, trash: Place) -> str:
        """Move ``place`` under ``trash/Current/`` keeping its path (a name already taken
        there gets the time in milliseconds appended); the URI it went to."""
        relative = place.path.lstrip("/")
        if not place.is_local and place.protocol != "s3" and place.authority:
            relative = f"{place.authority}/{relative}"
        target = f"{trash.path.rstrip('/')}/Current/{relative}"
        fs = trash.fs
        if (os.path.lexists(target) if trash.is_local else fs.exists(target)):
            target = f"{target}.{int(time.time() * 1000)}"
        if trash.is_local:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.move(place.path, target)
        else:
            fs.mv(place.path, target, recursive=True)
            if fs.exists(place.path):
                raise OSError(errno.EIO, f"still present after moving to {trash.uri_of(target)}")
        return trash.uri_of(target)

    def _remove_empty_parents(self, deletion: Deletion) -> None:
        """HMS removes the parents a partition drop left empty, up to the table directory."""
        boundary = deletion.boundary
        parent = deletion.place.parent
        for _ in range(deletion.parent_levels):
            if parent is None or boundary is None or not boundary.contains(parent):
                return
            try:
                if parent.is_local:
                    if os.path.islink(parent.path) or not _real_inside(
                        parent.path, boundary.path
                    ):
                        return
                    os.rmdir(parent.path)  # only an empty directory goes
                elif parent.fs.exists(parent.path):
                    if parent.fs.find(parent.path):
                        return
                    parent.fs.rm(parent.path, recursive=True)
            except OSError:
                return  # not empty, or gone
            parent = parent.parent

    # -- moving ------------------------------------------------------------------------------

    def plan_move(self, source: str, target: str, *, what: str, subject: str) -> Move | None:
        """Check that ``source`` can be moved to ``target`` (HMS's rules for a rename of
        ``subject``, ``db.table``: one file system, nothing at the target) and return the move;
        None when there is nothing to move. Raises InvalidOperationException otherwise."""
        if not self.enabled:
            return None

        def refuse(reason: str) -> Exception:
            return hms.InvalidOperationException(
                message=(
                    f"Alter Table operation for {subject} failed to move data due to: "
                    f"'{reason}' See hive log file for details."
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
        if src.is_root or self._kept_reason(src, ()) is not None:
            raise refuse(f"{src.uri} is never moved")
        try:
            if src.is_local:
                taken = os.path.lexists(dst.path)
                exists = os.path.lexists(src.path)
            else:
                taken = dst.fs.exists(dst.path)
                exists = src.fs.exists(src.path)
        except OSError as exc:
            raise refuse(_reason(exc)) from None
        if taken:
            raise hms.InvalidOperationException(
                message=f"New location for this table {subject} already exists : {dst.uri}"
            )
        if not exists:
            return None
        if src.is_local and not os.access(os.path.dirname(src.path), os.W_OK | os.X_OK):
            raise refuse(f"{src.uri_of(os.path.dirname(src.path))} is not writable by {_user()}")
        return Move(src, dst, what)

    def prepare(self, move: Move | None, subject: str) -> None:
        """Carry out the data half of a move before its metadata change."""
        if move is None:
            return
        try:
            move.prepare()
        except OSError as exc:
            raise hms.InvalidOperationException(
                message=(
                    f"Alter Table operation for {subject} failed to move data due to: "
                    f"'{_reason(exc)}' See hive log file for details."
                )
            ) from None
        log.info("data_moved", source=move.source.uri, target=move.target.uri, what=move.what)
        audit.append("data_moved", f"{move.source.uri} -> {move.target.uri}")
