"""File operations on a place of any file system, the same way whatever it is.

Local paths go through ``os`` and ``shutil`` (a symbolic link is never followed: it is removed
or moved as a link); other file systems through their fsspec implementation, where a
"directory" is a key prefix: trees are listed, copied and checked file by file (an object
store's directory markers, keys ending in ``/``, are not data and are not copied).
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid

from metastore_server.catalog.data.filesystems import Place

#: Name prefix of the object written and removed to learn whether a place is writable.
PROBE_PREFIX = ".metastore-write-probe-"


def exists(place: Place) -> bool:
    """Whether anything (a link too) is at ``place``."""
    if place.is_local:
        return os.path.lexists(place.path)
    return bool(place.fs.exists(place.path))


def files(place: Place) -> list[str]:
    """Paths of the data files at or below a place of a remote file system."""
    return [path for path in place.fs.find(place.path) if not path.endswith("/")]


def remove_tree(place: Place) -> None:
    """Delete what is at ``place``: a link as a link, a directory with all it holds."""
    if place.is_local:
        if os.path.islink(place.path):
            os.unlink(place.path)
        elif os.path.isdir(place.path):
            shutil.rmtree(place.path)  # removes links inside as links
        elif os.path.lexists(place.path):
            os.unlink(place.path)
        return
    place.fs.rm(place.path, recursive=True)


def copy_tree(source: Place, target: Place) -> None:
    """Copy a tree to a place that does not exist yet; OSError when not all of it arrived."""
    if source.is_local:
        os.makedirs(os.path.dirname(target.path), exist_ok=True)
        if os.path.isdir(source.path) and not os.path.islink(source.path):
            shutil.copytree(source.path, target.path, symlinks=True)
        else:
            shutil.copy2(source.path, target.path, follow_symlinks=False)
        return
    fs = source.fs
    root = source.path.rstrip("/")
    wanted = files(source)
    for path in wanted:
        fs.copy(path, target.path.rstrip("/") + path[len(root) :])
    arrived = len(files(target)) if wanted else 0
    if arrived != len(wanted):
        raise OSError(errno.EIO, f"copied {arrived} of {len(wanted)} files to {target.uri}")


def move_tree(source: Place, target: Place) -> bool:
    """Put a tree at ``target``: renamed when the file system can (True), else copied, the
    source left for the caller to delete (False)."""
    if source.is_local:
        os.makedirs(os.path.dirname(target.path), exist_ok=True)
        try:
            os.rename(source.path, target.path)  # a link moves as a link
            return True
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
    copy_tree(source, target)  # another device, or an object store
    return False


def remove_empty_dir(place: Place) -> bool:
    """Remove a directory that holds nothing (no data file); whether it was removed."""
    if place.is_local:
        try:
            os.rmdir(place.path)
        except OSError:
            return False
        return True
    if not place.fs.exists(place.path) or files(place):
        return False
    place.fs.rm(place.path, recursive=True)  # directory markers only
    return True


def probe_writable(place: Place) -> str | None:
    """Write and remove a probe object inside ``place`` (object stores and HDFS tell whether
    a delete would be allowed only by trying); None when both worked, else what failed."""
    probe = f"{place.path.rstrip('/')}/{PROBE_PREFIX}{uuid.uuid4().hex}"
    try:
        place.fs.pipe(probe, b"")
    except Exception as exc:  # noqa: BLE001 - a client's own error types too
        return f"cannot write ({reason(exc)})"
    try:
        place.fs.rm(probe)
        left = place.fs.exists(probe)
    except Exception as exc:  # noqa: BLE001
        return f"cannot delete ({reason(exc)}); probe left at {place.uri_of(probe)}"
    return f"cannot delete; probe left at {place.uri_of(probe)}" if left else None


def reason(exc: BaseException) -> str:
    """An exception as ``Type: message`` for logs and messages."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
