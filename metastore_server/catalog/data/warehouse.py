"""The warehouse directory: default locations of databases, tables and partitions. Creating,
deleting and moving data is ``operations``'s job, counting it ``fast_stats``'s."""

from __future__ import annotations

import os
from pathlib import Path

from metastore_server.catalog.data import filesystems as data_fs


def to_uri(path: Path) -> str:
    """The ``file:`` URI HMS uses for a local path (``file:/abs/path``)."""
    return "file:" + str(path)


def local_path(location: str | None) -> Path | None:
    """The local path of a ``file:`` URI or bare absolute path; None for other file systems
    (and for text no file system accepts: a NUL character)."""
    path = data_fs.local_path(location)
    return Path(path) if path is not None else None


class Warehouse:
    """Default locations under a root directory."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()

    @property
    def root_uri(self) -> str:
        """The root as a ``file:`` URI."""
        return to_uri(self.root)

    def database_location(self, db: str) -> str:
        """Default location of a database: ``<root>/<db>.db`` (the root itself for default)."""
        if db == "default":
            return to_uri(self.root)
        return to_uri(self.root / f"{db}.db")

    @staticmethod
    def child_location(parent: str, child: str) -> str:
        """``parent/child`` for a location URI (no normalisation of the parent)."""
        return parent.rstrip("/") + "/" + child
