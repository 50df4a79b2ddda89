"""HMS's fast statistics: ``numFiles`` and ``totalSize`` of a table or partition, counted from
the files at its location on any file system the data layer serves, and HMS 2.3's rules for
when a create, an add or an alter counts them (``docs/managed-data.md#fast-statistics``).

The rules, as HMS 2.3 applies them with ``hive.stats.autogather`` on (its default):

- counted: every file below the location, in the whole tree, except those whose path below
  the location has a name starting with ``_`` or ``.`` (``_SUCCESS``, ``.crc`` files,
  ``_temporary``); directories and object-store directory markers are not files;
- ``create_table`` (unpartitioned, not a view) and ``add_partition(s)``/``append_partition``
  count them when the location already exists and the object does not carry both already;
  a location the call creates gets none;
- an alter (``alter_table`` of an unpartitioned table, ``alter_partition(s)``,
  ``rename_partition``) counts them again unless the environment context says
  ``DO_NOT_UPDATE_STATS=true``; a partition keeps what it carries when both equal the stored
  ones (and no ``STATS_GENERATED`` asks for more); a missing location counts as empty;
- a ``DO_NOT_UPDATE_STATS`` table parameter is removed by a count of the table, and skips it
  when ``true``; a count marks the basic statistics accurate in ``COLUMN_STATS_ACCURATE``
  only when the context says ``STATS_GENERATED=TASK``, and otherwise removes that parameter.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import structlog

from metastore_server.catalog.data.files import reason
from metastore_server.catalog.data.filesystems import Place
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.underway import SeenDirs
from metastore_server.thrift_api import hms


class _Located(Protocol):
    """A storage descriptor as counting reads it."""

    @property
    def location(self) -> str | None: ...


class AddedPartition(Protocol):
    """A partition being added as counting reads and writes it: an ``hms.Partition``, or an
    add's partition that came as wire bytes (``partitions.wire_adding.WireAnswer``)."""

    @property
    def parameters(self) -> dict[str, str] | None: ...
    @parameters.setter
    def parameters(self, value: dict[str, str]) -> None: ...
    @property
    def sd(self) -> _Located | None: ...

log = structlog.get_logger(__name__)

NUM_FILES = "numFiles"
TOTAL_SIZE = "totalSize"
FAST_STATS = (NUM_FILES, TOTAL_SIZE)
#: Table parameter or environment-context property: leave the basic statistics as sent.
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
#: Environment-context property: who computed the statistics sent (``TASK`` or ``USER``).
STATS_GENERATED = "STATS_GENERATED"
TASK = "TASK"
USER = "USER"
#: Parameter saying which statistics are accurate (``{"BASIC_STATS":"true",...}``).
COLUMN_STATS_ACCURATE = "COLUMN_STATS_ACCURATE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
#: Locations an add reads at once (HMS's ``hive.metastore.fshandler.threads`` is 15).
COUNT_THREADS = 8

#: An environment context's properties (None: no context).
Context = Mapping[str, str] | None
Params = MutableMapping[str, str]


@dataclass(frozen=True)
class Counted:
    """What lies at a location: files and bytes counted, and whether it exists."""

    files: int
    size: int
    exists: bool
    #: Whether it is a local directory (found listing it).
    directory: bool = field(default=False, compare=False)


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def count_place(place: Place) -> Counted:
    """Files and bytes at ``place`` as HMS counts them (a file location is one file)."""
    if place.is_local:
        return _count_local(place.path)
    return _count_remote(place)


def _count_local(path: str) -> Counted:
    """Files and bytes below a local ``path``, hidden names skipped, links to directories
    not followed (as ``os.walk`` walks), a directory that cannot be listed counted as empty.
    The directory is listed straight away (a partition's is mostly empty): no ``stat`` first
    unless it is not one."""
    try:
        listing: os._ScandirIterator[str] | None = os.scandir(path)
    except FileNotFoundError:
        return Counted(0, 0, exists=False)
    except NotADirectoryError:
        try:
            return Counted(1, os.stat(path).st_size, exists=True)
        except FileNotFoundError:
            return Counted(0, 0, exists=False)
    except OSError:  # there, but not to be listed: what stat says of it
        top = os.stat(path)
        if not stat.S_ISDIR(top.st_mode):
            return Counted(1, top.st_size, exists=True)
        return Counted(0, 0, exists=True, directory=True)
    files = size = 0
    below: list[str] = []  # directories still to list (one open at a time)
    while listing is not None:
        with listing as entries:
            for entry in entries:
                if _hidden(entry.name):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    if not _is_link(entry):
                        below.append(entry.path)
                    continue
                try:
                    size += os.stat(entry.path).st_size
                except OSError:
                    continue  # removed meanwhile, or a dangling link
                files += 1
        listing = None
        while below and listing is None:
            with contextlib.suppress(OSError):  # gone meanwhile, or not to be listed
                listing = os.scandir(below.pop())
    return Counted(files, size, exists=True, directory=True)


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _count_remote(place: Place) -> Counted:
    root = place.path.rstrip("/")
    try:
        found = place.fs.find(root, withdirs=False, detail=True)
    except FileNotFoundError:
        return Counted(0, 0, exists=False)
    files = size = 0
    for path, info in found.items():
        if info.get("type", "file") != "file" or path.endswith("/"):
            continue  # directory markers (S3A's ``dir/`` keys)
        if path != root and not path.startswith(root + "/"):
            continue  # a neighbour sharing the prefix (``t2`` beside ``t``)
        relative = path[len(root) :].strip("/")
        if relative and any(_hidden(part) for part in relative.split("/")):
            continue
        files += 1
        size += int(info.get("size") or 0)
    exists = bool(found) or bool(place.fs.exists(root))
    return Counted(files, size, exists=exists)


def _both(params: Mapping[str, str]) -> bool:
    return all(key in params for key in FAST_STATS)


def _same(old: Mapping[str, str] | None, new: Mapping[str, str]) -> bool:
    """Whether the new fast statistics equal the stored ones (both present, same numbers)."""
    if not old:
        return False
    for key in FAST_STATS:
        if key not in old or key not in new:
            return False
        try:
            if int(old[key]) != int(new[key]):
                return False
        except ValueError:
            return False
    return True


def _accurate(previous: str | None) -> str:
    """``COLUMN_STATS_ACCURATE`` with the basic statistics marked accurate, keeping the
    columns the previous value named."""
    columns: dict[str, str] = {}
    try:
        parsed = json.loads(previous) if previous else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("COLUMN_STATS"), dict):
        for name, value in sorted(parsed["COLUMN_STATS"].items()):
            columns[str(name)] = "true" if str(value).lower() == "true" else "false"
    doc: dict[str, object] = {"BASIC_STATS": "true"}
    if columns:
        doc["COLUMN_STATS"] = columns
    return json.dumps(doc, separators=(",", ":"))


def _set_basic_state(params: Params, context: Context) -> None:
    if (context or {}).get(STATS_GENERATED) == TASK:
        params[COLUMN_STATS_ACCURATE] = _accurate(params.get(COLUMN_STATS_ACCURATE))
    else:
        params.pop(COLUMN_STATS_ACCURATE, None)


def _put(params: Params, counted: Counted, context: Context) -> None:
    params[NUM_FILES], params[TOTAL_SIZE] = str(counted.files), str(counted.size)
    _set_basic_state(params, context)


def _told_not_to(context: Context) -> bool:
    return (context or {}).get(DO_NOT_UPDATE_STATS) == "true"


def _parameter_says_skip(params: Params) -> bool:
    """Remove a ``DO_NOT_UPDATE_STATS`` table parameter; whether it said ``true``."""
    value = params.pop(DO_NOT_UPDATE_STATS, None)
    return value is not None and value.lower() == "true"


class FastStats:
    """Counts fast statistics through the data layer's file systems and applies HMS's rules
    to a table's or partition's parameters (changed in place). Nothing is counted when data
    operations are off or a location cannot be read (logged ``fast_stats_unreadable``)."""

    def __init__(self, data: DataOperations, *, autogather: bool = True) -> None:
        self._data = data
        #: HMS's ``hive.stats.autogather``: off, creates and adds count nothing (alters do).
        self._autogather = autogather

    def count(self, location: str | None) -> Counted | None:
        """What lies at ``location``; None when it is not to be read or cannot be."""
        return self._count_at(self._place(location), location)

    def _place(self, location: str | None) -> Place | None:
        """The place of ``location`` to count; None (logged) when it has none to read."""
        if not self._data.enabled or not location:
            return None
        try:
            return self._data.filesystems.resolve(location)
        except Exception as exc:  # noqa: BLE001 - unavailable, or a client's own errors
            log.warning("fast_stats_unreadable", location=location, error=reason(exc))
            return None

    @staticmethod
    def _count_at(place: Place | None, location: str | None) -> Counted | None:
        if place is None:
            return None
        try:
            return count_place(place)
        except Exception as exc:  # noqa: BLE001 - unreadable, or a client's own errors
            log.warning("fast_stats_unreadable", location=location, error=reason(exc))
            return None

    def _count_all(self, pairs: Sequence[tuple[Place, str | None]]) -> list[Counted | None]:
        return [self._count_at(place, location) for place, location in pairs]

    def table_created(self, table: hms.Table, context: Context = None) -> None:
        """``create_table``: an unpartitioned table (not a view) over an existing location
        that does not carry both statistics gets them counted."""
        params = _params(table)
        if not self._autogather or table.tableType == VIRTUAL_VIEW or table.partitionKeys:
            return
        if _parameter_says_skip(params):
            return
        if _both(params):
            return
        counted = self.count(_location(table))
        if counted is not None and counted.exists:
            _put(params, counted, context)

    def table_altered(self, table: hms.Table, before: hms.Table, context: Context = None) -> None:
        """``alter_table`` of an unpartitioned table (not a view): counted again, except
        when a managed table is renamed (HMS leaves its statistics as sent then)."""
        if _told_not_to(context) or table.tableType == VIRTUAL_VIEW or table.partitionKeys:
            return
        renamed = (table.dbName, table.tableName) != (before.dbName, before.tableName)
        external = (before.parameters or {}).get("EXTERNAL", "").upper() == "TRUE"
        if renamed and before.tableType != VIRTUAL_VIEW and not external:
            return
        params = _params(table)
        if _parameter_says_skip(params):
            return
        counted = self.count(_location(table))
        if counted is not None:
            _put(params, counted, context)

    def partition_added(self, part: AddedPartition, table: hms.Table) -> None:
        """``add_partition(s)``: a partition over an existing location that does not carry
        both statistics gets them counted."""
        params = _params(part)
        if not self._autogather or table.tableType == VIRTUAL_VIEW or _both(params):
            return
        counted = self.count(_location(part))
        if counted is not None and counted.exists:
            _put(params, counted, None)

    def partitions_added(
        self, parts: Sequence[AddedPartition], table: hms.Table, seen: SeenDirs | None = None
    ) -> None:
        """``partition_added`` for each of ``parts``: local locations one after the other (a
        few system calls each), the others side by side (as HMS does, in up to
        ``COUNT_THREADS`` threads). The local directories found are noted in ``seen``."""
        if not self._autogather or table.tableType == VIRTUAL_VIEW or not self._data.enabled:
            return  # (with data operations off nothing is counted)
        wanted = [part for part in parts if not _both(_params(part))]
        if len(wanted) <= 1:
            for part in wanted:
                self.partition_added(part, table)
            return
        locations = [_location(part) for part in wanted]
        places = [self._place(location) for location in locations]
        found: list[Counted | None] = [None] * len(wanted)
        remote: list[int] = []
        for index, place in enumerate(places):
            if place is not None and place.is_local:  # a few system calls: no thread helps
                counted = found[index] = self._count_at(place, locations[index])
                if seen is not None and counted is not None and counted.directory:
                    seen.paths.add(place.path)
            elif place is not None:
                remote.append(index)
        if remote:
            threads = min(COUNT_THREADS, len(remote))
            size = -(-len(remote) // threads)  # one task per thread: a run of the locations
            runs = [remote[i : i + size] for i in range(0, len(remote), size)]
            tasks = [[(places[i], locations[i]) for i in run] for run in runs]
            with ThreadPoolExecutor(threads) as pool:
                for run, run_counted in zip(runs, pool.map(self._count_all, tasks), strict=True):
                    for index, one in zip(run, run_counted, strict=True):
                        found[index] = one
        for part, counted in zip(wanted, found, strict=True):
            if counted is not None and counted.exists:
                _put(_params(part), counted, None)

    def partition_altered(self, before: hms.Partition, part: hms.Partition, table: hms.Table,
                          context: Context = None, *, renamed: bool = False) -> None:  # fmt: skip
        """``alter_partition(s)`` and ``rename_partition``: counted again unless told not to,
        or unless the partition carries the stored statistics (an alter then only updates
        the accuracy mark when ``STATS_GENERATED`` asks)."""
        if _told_not_to(context) or table.tableType == VIRTUAL_VIEW:
            return
        params = _params(part)
        generated = (context or {}).get(STATS_GENERATED) in (TASK, USER)
        same = _same(before.parameters, params)
        if _both(params) and not generated and same:
            return
        if same and not renamed:
            _set_basic_state(params, context)
            return
        counted = self.count(_location(part))
        if counted is not None:
            _put(params, counted, context)


def _params(obj: hms.Table | AddedPartition) -> dict[str, str]:
    """The object's parameters, as a dict of its own (set on it)."""
    params = dict(obj.parameters or {})
    obj.parameters = params
    return params


def _location(obj: hms.Table | AddedPartition) -> str | None:
    return obj.sd.location if obj.sd is not None else None
