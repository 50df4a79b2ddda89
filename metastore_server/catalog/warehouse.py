"""The warehouse directory: default locations, and creating or removing local directories.

Only local paths (``file:`` URIs or bare absolute paths) are touched, and data is only ever
deleted below the warehouse root: a metastore must never remove a user's files elsewhere.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import structlog

log = structlog.get_logger(__name__)


def to_uri(path: Path) -> str:
    """The ``file:`` URI HMS uses for a local path (``file:/abs/path``)."""
    return "file:" + str(path)


def local_path(location: str | None) -> Path | None:
    """The local path of a ``file:`` URI or absolute path; None for other file systems (and for
    text no file system accepts: a NUL character)."""
    if not location or "\x00" in location:
        return None
    if location.startswith("/"):
        return Path(location)
    parsed = urlparse(location)
    if parsed.scheme != "file":
        return None
    if parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


class Warehouse:
    """Default locations under a root directory, and the local file operations HMS performs."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()

    def database_location(self, db: str) -> str:
        """Default location of a database: ``<root>/<db>.db`` (the root itself for default)."""
        if db == "default":
            return to_uri(self.root)
        return to_uri(self.root / f"{db}.db")

    @staticmethod
    def child_location(parent: str, child: str) -> str:
        """``parent/child`` for a location URI (no normalisation of the parent)."""
        return parent.rstrip("/") + "/" + child

    def make_dirs(self, location: str | None) -> None:
        """Create a local directory (and parents) if it does not exist; other schemes: no-op."""
        path = local_path(location)
        if path is None:
            return
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("mkdir_failed", location=location, error=str(exc))

    def is_under_root(self, location: str | None) -> bool:
        """True when the location is a local path strictly inside the warehouse root."""
        path = local_path(location)
        if path is None:
            return False
        resolved = Path(os.path.normpath(path))
        return resolved != self.root and self.root in resolved.parents

    def delete_dir(self, location: str | None) -> bool:
        """Remove a directory tree inside the warehouse root; True if something was removed."""
        if not self.is_under_root(location):
            if location:
                log.info("delete_skipped_outside_warehouse", location=location)
            return False
        path = local_path(location)
        assert path is not None
        if not path.exists():
            return False
        try:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            log.warning("delete_failed", location=location, error=str(exc))
            return False
        return True

    def rename_dir(self, source: str | None, target: str | None) -> bool:
        """Move a directory inside the warehouse root to another place inside it."""
        if not (self.is_under_root(source) and self.is_under_root(target)):
            return False
        src, dst = local_path(source), local_path(target)
        assert src is not None and dst is not None
        if not src.exists() or dst.exists():
            return False
        dst.parent.mkdir(parents=True, exist_ok=True)
        src.rename(dst)
        return True

    @staticmethod
    def quick_stats(location: str | None) -> tuple[int, int] | None:
        """(number of files, total bytes) below a local directory, as HMS's fast stats count
        them: regular files in the whole tree, skipping names that start with ``.`` or ``_``.
        None for other file systems; (0, 0) for a directory that does not exist."""
        path = local_path(location)
        if path is None:
            return None
        files = size = 0
        for directory, subdirs, filenames in os.walk(path):
            subdirs[:] = [d for d in subdirs if not d.startswith((".", "_"))]
            for filename in filenames:
                if filename.startswith((".", "_")):
                    continue
                try:
                    size += os.stat(os.path.join(directory, filename)).st_size
                except OSError:
                    continue
                files += 1
        return files, size
