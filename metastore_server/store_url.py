"""Open the storage backend a URL names: ``sqlite:///path`` (default) or ``hbase://host:port``."""

from __future__ import annotations

from urllib.parse import urlparse

from storage.port import StoragePort


def describe(url: str) -> str:
    """A short human description of a storage URL, for the start-up log."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        return f"embedded SQLite at {sqlite_path(url)}"
    return url


def sqlite_path(url: str) -> str:
    """The file path of a ``sqlite:///relative`` or ``sqlite:////absolute`` URL."""
    rest = url[len("sqlite://") :]
    if rest.startswith("/"):
        rest = rest[1:]
    return rest or "./var/metastore.db"


def open_store(url: str) -> StoragePort:
    """The backend for a storage URL; ValueError for an unknown scheme."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from storage.embedded import SqliteStore

        return SqliteStore(sqlite_path(url))
    raise ValueError(f"unsupported storage URL {url!r}: use sqlite:///path")
