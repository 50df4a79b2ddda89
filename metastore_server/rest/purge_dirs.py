"""The directories a purge leaves empty: once a dropped table's files are deleted, the
directories that held them are removed, deepest first, up to and including the table's
location, each only when it holds nothing (``rmdir``: a directory still holding a file of
another table or of a user stays, and so do its parents). Nothing outside the location is
removed, nor anything reached through a symbolic link (a location that is a link is left
whole), nor a data root or a file system root."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable

import structlog

from metastore_server.catalog.data import files as data_files
from metastore_server.catalog.data.deletions import within
from metastore_server.catalog.data.filesystems import Place
from metastore_server.rest.boundary import FileBoundary
from metastore_server.rest.errors import RestError

log = structlog.get_logger(__name__)
#: How a directory on the way is opened: never through a link.
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def remove_left_dirs(boundary: FileBoundary, location: str, purged: Iterable[str]) -> int:
    """Remove the directories under the table ``location`` that the ``purged`` files left
    empty, and the location itself when empty; how many were removed."""
    try:
        top = boundary.place(location, "Table location")
    except RestError:
        return 0
    if top.is_root or boundary.roots.outside(top) is not None:
        return 0
    candidates = _parents_within(boundary, top, purged)
    if any(root.place.same_as(top) for root in boundary.roots.roots):
        candidates.discard(top.path.rstrip("/"))  # a data root stays, even empty
    ordered = sorted(candidates, key=lambda path: (-path.count("/"), path))
    if top.is_local:
        removed = _remove_local(top, ordered)
    else:
        removed = sum(1 for path in ordered if _remove_remote(top.with_path(path)))
    log.info("iceberg_purge_dirs_removed", location=top.uri, removed=removed)
    return removed


def _parents_within(boundary: FileBoundary, top: Place, purged: Iterable[str]) -> set[str]:
    """The location's path and the directories between it and each purged file."""
    top_path = top.path.rstrip("/")
    found = {top_path}
    for uri in purged:
        try:
            place = boundary.place(uri, "File")
        except RestError:
            continue
        if not top.contains(place):
            continue
        parent = posixpath.dirname(place.path.rstrip("/"))
        while parent != top_path and within(parent, top_path) and parent not in found:
            found.add(parent)
            parent = posixpath.dirname(parent)
    return found


def _remove_local(top: Place, ordered: list[str]) -> int:
    """``rmdir`` each of ``ordered`` (deepest first), reached from the location's directory
    one component at a time without following a link; none when the location is a link."""
    top_path = top.path.rstrip("/")
    try:
        top_fd = os.open(top_path, _DIRECTORY)
    except OSError:  # gone, or a link (O_NOFOLLOW): nothing is removed through it
        if os.path.islink(top_path):
            log.warning("iceberg_purge_dirs_kept", location=top.uri, reason="a link")
        return 0
    try:
        removed = sum(1 for path in ordered if path != top_path
                      and _rmdir_below(top_fd, path[len(top_path) + 1 :]))  # fmt: skip
    finally:
        os.close(top_fd)
    if top_path in ordered and not os.path.islink(top_path):
        removed += _rmdir(top_path)
    return removed


def _rmdir_below(top_fd: int, relative: str) -> bool:
    """Remove the empty directory ``relative`` below the open directory ``top_fd``."""
    parts = relative.split("/")
    opened: list[int] = []
    try:
        fd = top_fd
        for part in parts[:-1]:
            fd = os.open(part, _DIRECTORY, dir_fd=fd)
            opened.append(fd)
        os.rmdir(parts[-1], dir_fd=fd)  # a link is no directory: it stays
        return True
    except OSError:
        return False  # gone, still holding something, or a link on the way: it stays
    finally:
        for fd in opened:
            os.close(fd)


def _rmdir(path: str) -> int:
    """1 when the empty directory ``path`` was removed, else 0 (it holds something)."""
    try:
        os.rmdir(path)
    except OSError:
        return 0
    return 1


def _remove_remote(place: Place) -> bool:
    """Remove a directory of another file system when it holds no file (its markers)."""
    try:
        return data_files.remove_empty_dir(place)
    except Exception as exc:  # noqa: BLE001 - a client's own error types too; best effort
        log.warning("iceberg_purge_dir_kept", location=place.uri, reason=type(exc).__name__)
        return False
