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

Deletions are carried out by ``deletions``, moves by ``moves``, and what committed changes are
still deleting is kept by ``underway``; this module plans them and makes directories. See
``docs/managed-data.md``.
"""

from __future__ import annotations

import contextvars
import getpass
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import cast

import structlog

from metastore_server import audit
from metastore_server.catalog.data import files as data_files
from metastore_server.catalog.data.deletions import (
    Deletion,
    Guard,
    RealPaths,
    delete,
    real_path,
    remove_empty_parents,
    trash_for,
)
from metastore_server.catalog.data.files import reason
from metastore_server.catalog.data.filesystems import FileSystems, FileSystemUnavailable, Place
from metastore_server.catalog.data.guard_index import (
    GuardIndex,
    GuardSet,
    IndexKeeper,
    OtherTables,
    keep_indexed,
)
from metastore_server.catalog.data.moves import Move, move_refused, undo_noted
from metastore_server.catalog.data.permissions import give_to_caller
from metastore_server.catalog.data.roots import DataRoots
from metastore_server.catalog.data.underway import DirsUnderway, SeenDirs
from metastore_server.storage import retrying
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: Threads making the local directories of one call, when it has at least
#: ``MAKE_IN_THREADS_FROM`` of them.
MAKE_THREADS = 4
MAKE_IN_THREADS_FROM = 64
#: Tries at making a directory whose parent a finishing drop may remove meanwhile: the
#: retry policy's ``retrying.MAKEDIRS``.

#: Builds the exception refusing a change, from the reason (``file:/x is not writable by u``).
Refusal = Callable[[str], Exception]
#: Places a deletion must not delete: guards in their order, or indexed (``guard_index``).
Guards = Sequence[Guard] | GuardIndex | GuardSet
#: Builds the exception refusing a directory that cannot be made, from its URI and the detail.
MakeRefusal = Callable[[str, str], Exception]


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _note_present(made: MadeDirs, path: str) -> None:
    """Note that the local directory ``path`` and its parent exist (``MadeDirs.present``)."""
    path = path.rstrip("/") or path
    made.present.update((path, os.path.dirname(path)))


@dataclass
class MadeDirs:
    """Directories one call created, removed again (when still empty) if its metadata change
    fails."""

    places: list[Place] = field(default_factory=list)
    #: Local directories known to exist during the call (made or found): a directory whose
    #: parent is among them is made with one ``mkdir``, without looking first.
    present: set[str] = field(default_factory=set)


class DataOperations:
    """Creates, deletes and moves directories for the catalog through each location's own file
    system (``filesystems``); ``enabled=False`` (``--data-operations off``) leaves data to someone
    else. With trash roots (one per file system), deleted data is moved there unless purged."""

    def __init__(
        self,
        filesystems: FileSystems | None = None,
        *,
        enabled: bool = True,
        trash_roots: Sequence[str] = (),
        protected: Sequence[str] = (),
        roots: DataRoots | None = None,
    ) -> None:
        self.filesystems = filesystems or FileSystems()
        self.enabled = enabled
        self._known_buckets: set[str] = set()
        #: Deletions committed changes are still to carry out (``reserve``), and whether
        #: directories seen before a write lock are still there (``seeing``).
        self._underway = DirsUnderway()
        self._trash = [Guard.of(self.filesystems.resolve(root)) for root in trash_roots]
        self._protected = [Guard.of(self.filesystems.resolve(p)) for p in protected]
        #: Where data may be created, moved and deleted (``--data-roots``); the roots
        #: themselves are never deleted.
        self.roots = roots or DataRoots()
        self._protected.extend(self.roots.roots)
        #: Told of each move just before it is made (the catalog records it in the store's
        #: transaction, so that a move of a process that dies before its commit is undone).
        self.journal: Callable[[Move], None] | None = None
        #: Give the local directories made for a call to the user it is made as (as HMS
        #: makes them as that user): ``--authorization storage``, where the server may chown.
        self.give_to_caller = False
        #: Drops leave other tables' directories standing (``--authorization privileges``).
        self.other_tables: OtherTables | None = None
        self._indexes: dict[str, IndexKeeper | None] = {}

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
        real_paths = RealPaths()
        for location in locations:
            place = self.find_place(location)
            if place is not None:
                found.append(Guard.of(place, real_paths))
        return found

    def guard_index(self, locations: Sequence[str | None], kind: str = "databases") -> GuardIndex:
        """``guards`` of many locations (every database directory; ``kind`` names the list),
        indexed by path; kept between calls while still right (``guard_index.IndexKeeper``)."""
        keeper = self._indexes.setdefault(kind, None) or IndexKeeper(self.find_place)
        self._indexes[kind] = keeper
        return keeper.index(locations)

    # -- creating ----------------------------------------------------------------------------

    def seeing(self) -> SeenDirs | None:
        """Start noting the local directories a call finds before its write lock; None when
        a deletion is pending (a directory seen may be deleted before it is made)."""
        return self._underway.seeing()

    def make_dirs(
        self,
        locations: Iterable[str | None],
        refuse: MakeRefusal,
        *,
        owned: bool = True,
        seen: SeenDirs | None = None,
    ) -> MadeDirs:
        """Create each missing directory (an object store only needs its bucket to exist: it
        has no directories). ``refuse(uri, detail)`` is raised, after removing what this call
        made, when one cannot be made. Outside the data roots, a location of an object that
        owns its data (``owned``: a database, a managed table's) is refused, existing or not;
        another's directory is not made (logged and audited as ``data_not_made``). ``seen``:
        directories found just before (``seeing``), not looked at again when still trusted."""
        made = MadeDirs()
        if not self.enabled:
            return made
        trusted = self._underway.trusted(seen)
        not_made: list[str] = []
        found: list[str] = []  # trusted: there
        local: list[Place] = []
        roots = self.roots
        try:
            for location in locations:
                if not location:
                    continue
                try:
                    place = self.filesystems.resolve(location)
                except FileSystemUnavailable as exc:
                    raise refuse(location, str(exc)) from None
                if roots.active and roots.covering(place) is None:  # (the reason made once)
                    uri = place.uri
                    if owned:  # outside the active roots: a reason, not None
                        raise refuse(uri, cast(str, roots.outside(place)))
                    if not not_made:
                        log.info("data_not_made", location=uri, reason=roots.outside(place))
                    not_made.append(uri)
                    audit.append("data_not_made", uri)
                    continue
                if place.is_local and place.path in trusted:
                    found.append(place.path)
                elif place.is_local:
                    local.append(place)  # made together below, side by side when many
                else:
                    self._make_dir(place, made, refuse)
            if local:  # what is there helps make the rest
                for path in found:
                    _note_present(made, path)
                self._make_local(local, made, refuse)
        except BaseException:
            self.undo(made)
            raise
        if len(not_made) > 1:  # one line for the call, not one per directory
            log.info("data_not_made_more", count=len(not_made) - 1, last=not_made[-1])
        return made

    def _make_local(self, places: list[Place], made: MadeDirs, refuse: MakeRefusal) -> None:
        """Make local directories: in order, or, when there are many, in ``MAKE_THREADS``
        threads (as HMS uses threads for this), each taking a run of consecutive parents, so
        that siblings are made by one thread with one ``mkdir`` each. A failure is raised as
        the first in the request's order; what every thread made is in ``made`` (undone by
        the caller)."""
        if len(places) < MAKE_IN_THREADS_FROM:
            for place in places:
                self._make_dir(place, made, refuse)
            return
        places = self._missing(places, made)
        if not places:
            return
        groups: dict[str, list[tuple[int, Place]]] = {}
        for index, place in enumerate(places):
            parent = os.path.dirname(place.path.rstrip("/") or place.path)
            groups.setdefault(parent, []).append((index, place))
        runs = list(groups.values())
        step = -(-len(runs) // MAKE_THREADS)
        shares = [
            [item for run in runs[i : i + step] for item in run] for i in range(0, len(runs), step)
        ]
        outcomes: list[tuple[MadeDirs, tuple[int, BaseException] | None]] = []

        def make_share(share: list[tuple[int, Place]]) -> None:
            own = MadeDirs()
            failure = None
            for index, place in share:
                try:
                    self._make_dir(place, own, refuse)
                except BaseException as exc:  # noqa: BLE001 - raised by the caller, in order
                    failure = (index, exc)
                    break
            outcomes.append((own, failure))

        with ThreadPoolExecutor(len(shares), thread_name_prefix="mkdirs") as pool:
            # Each thread in a copy of the call's context: who the call is made as (the owner
            # given to the directories) is known there too.
            futures = [
                pool.submit(contextvars.copy_context().run, make_share, share) for share in shares
            ]
            for future in futures:
                future.result()
        failures = []
        for own, failure in outcomes:
            made.places.extend(own.places)
            if failure is not None:
                failures.append(failure)
        if failures:
            raise min(failures, key=lambda f: f[0])[1]

    def _missing(self, places: list[Place], made: MadeDirs) -> list[Place]:
        """The local places that are not directories yet, in order (the others noted present):
        one ``stat`` each in this thread, so that a load whose directories exist hands no
        thread a directory to find (after any pending deletion of it has ended)."""
        missing = []
        for place in places:
            self._underway.wait(place)
            if os.path.isdir(place.path):
                _note_present(made, place.path)
            else:
                missing.append(place)
        return missing

    def _make_dir(self, place: Place, made: MadeDirs, refuse: MakeRefusal) -> None:
        if place.is_local:
            self._underway.wait(place)
            if self._make_in_present(place, made, refuse):
                return
            top = self._first_missing(place.path)
            if top is None:
                if not os.path.isdir(place.path):
                    raise refuse(place.uri, "it exists and is not a directory")
                _note_present(made, place.path)
                return
            try:  # again when a drop finishing removed an empty parent meanwhile
                retrying.again_on(retrying.MAKEDIRS, (FileNotFoundError,),
                                  lambda: os.makedirs(place.path, exist_ok=True))  # fmt: skip
            except OSError as exc:
                raise refuse(place.uri, reason(exc)) from None
            made.places.append(place.with_path(top))
            _note_present(made, place.path)
            if self.give_to_caller:
                give_to_caller(top, place.path)
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

    def _make_in_present(self, place: Place, made: MadeDirs, refuse: MakeRefusal) -> bool:
        """Make a local directory whose parent this call made or found, with one ``mkdir``;
        False (nothing done) when its parent is not known to exist, or has gone since."""
        path = place.path.rstrip("/") or place.path
        if os.path.dirname(path) not in made.present:
            return False
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise refuse(place.uri, "it exists and is not a directory") from None
            made.present.add(path)
            return True
        except FileNotFoundError:
            made.present.clear()  # a drop finishing removed a parent: look again
            return False
        except OSError as exc:
            raise refuse(place.uri, reason(exc)) from None
        made.places.append(place.with_path(path))
        made.present.add(path)
        if self.give_to_caller:
            give_to_caller(path, path)
        return True

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
        if made.places:  # another call may have seen them before its lock
            self._underway.changing()
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

    def check_inside(self, location: str | None, refuse: Refusal) -> None:
        """Refuse (``refuse(reason)``) a location given to an object that owns its data (an
        alter's new location) when it lies outside the data roots."""
        if not self.enabled or not self.roots.active or not location:
            return
        outside = self.roots.outside(self.place(location, refuse))
        if outside is not None:
            raise refuse(outside)

    # -- deleting ----------------------------------------------------------------------------

    def plan_delete(
        self,
        location: str | None,
        *,
        what: str,
        purge: bool,
        refuse: Refusal,
        guards: Guards = (),
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
        levels = min(parent_levels, self.roots.levels_inside(place))
        deletion = Deletion(place, what, purge, kept, levels, bound)
        if kept is not None:
            return deletion
        if place.is_local:
            if not os.path.lexists(place.path):
                return None
            self._refuse_outside(place, refuse)
            parent = os.path.dirname(place.path)
            if not os.access(parent, os.W_OK | os.X_OK):
                raise refuse(f"{place.uri_of(parent)} is not writable by {_user()}")
            return deletion
        try:
            if not place.fs.exists(place.path):
                return None
        except Exception as exc:  # noqa: BLE001 - a client's own error types too
            raise refuse(f"{place.uri} cannot be read: {reason(exc)}") from None
        self._refuse_outside(place, refuse)
        failure = data_files.probe_writable(place)
        if failure is not None:
            log.warning("data_not_writable", location=place.uri, detail=failure)
            raise refuse(f"{place.uri} is not writable by {_user()}: {failure}")
        return deletion

    def _refuse_outside(self, place: Place, refuse: Refusal) -> None:
        """A drop of data outside the data roots is refused, with nothing changed."""
        outside = self.roots.outside(place)
        if outside is not None:
            log.warning("data_outside_roots", location=place.uri, roots=self.roots.describe())
            raise refuse(outside)

    def _kept_reason(self, place: Place, guards: Guards) -> str | None:
        if place.is_root:
            return f"{place.uri} is a file system root"
        real = real_path(place)
        held = next((g for g in self._protected if g.held_by(place, real)), None)
        if held is None:
            if isinstance(guards, GuardIndex | GuardSet):
                held = guards.first_held_by(place, real)
            else:
                held = next((g for g in guards if g.held_by(place, real)), None)
        if held is not None:
            return f"{place.uri} is or holds {held.place.uri}, which is never deleted"
        for trash in self._trash:
            if trash.held_by(place, real):
                return f"{place.uri} holds the trash {trash.place.uri}"
        return None

    def keep_inside(self, deletion: Deletion, locations: Iterable[str | None] | GuardIndex) -> None:
        """Have ``deletion`` leave the places among ``locations`` (or indexed: ``guard_index``)
        that lie in it (or are it, or hold it: then nothing of it is deleted); compared with
        links resolved too."""
        mine = Guard.of(deletion.place)
        if isinstance(locations, GuardIndex):
            keep_indexed(deletion, mine, locations)
            return
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
        self._underway.reserve(
            deletion.place
            for deletion in deletions
            if deletion is not None and deletion.kept is None
        )

    def cancel(self, deletions: Iterable[Deletion | None]) -> None:
        """Give up what ``reserve`` marked, deleting nothing (its change did not commit)."""
        for deletion in deletions:
            if deletion is not None and deletion.kept is None:
                self._underway.release(deletion.place)

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
                trash = None if deletion.purge else trash_for(self._trash, deletion.place)
                if delete(deletion, trash):
                    remove_empty_parents(deletion)
            finally:
                self._underway.release(deletion.place)

    # -- moving ------------------------------------------------------------------------------

    def plan_move(self, source: str, target: str, *, what: str, subject: str) -> Move | None:
        """Check that ``source`` can be moved to ``target`` (HMS's rules for a rename of
        ``subject``, ``db.table``: one file system, nothing at the target) and return the move;
        None when there is nothing to move. Raises InvalidOperationException otherwise."""
        if not self.enabled:
            return None

        def refuse(detail: str) -> Exception:
            return move_refused(subject, detail)

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
        for place in (src, dst):
            outside = self.roots.outside(place)
            if outside is not None:
                raise refuse(outside)
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

    def undo_noted_move(self, payload: bytes) -> None:
        """Undo a move of a process that died before its change committed (``Move.note``),
        for whoever rolls that change back."""
        self._underway.changing()
        undo_noted(self.find_place, payload)

    def prepare(self, move: Move | None, subject: str) -> None:
        """Carry out the data half of a move before its metadata change."""
        if move is None:
            return
        if self.journal is not None:
            self.journal(move)
        self._underway.changing()
        try:
            move.prepare()
        except Exception as exc:  # noqa: BLE001 - refused with nothing changed
            raise move_refused(subject, reason(exc)) from None
        log.info("data_moved", source=move.source.uri, target=move.target.uri, what=move.what)
        audit.append("data_moved", f"{move.source.uri} -> {move.target.uri}")
