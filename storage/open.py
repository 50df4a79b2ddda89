"""Open the storage backend a URL names (``open_store``): ``sqlite:///path`` (default) or
``hbase://host:port``; describe and probe it.

``hbase://host[:port]?prefix=hms_&namespace=&pool_size=8&timeout_ms=60000&transport=buffered
&protocol=binary&connect_retries=5&retry_backoff_ms=200&scan_batch=1000&write_batch=200``
(every parameter optional; see ``storage.hbase``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlparse

from metastore_server.storage.port import StoragePort

#: The storage URLs ``open_store`` takes, as an error message names them.
ACCEPTED_FORMS = (
    "sqlite:///relative/path.db (from the working directory), sqlite:////absolute/path.db, "
    "or hbase://host:port (?prefix=hms_&namespace=...)"
)


def describe(url: str) -> str:
    """A short human description of a storage URL, for the start-up log."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        return f"embedded SQLite at {os.path.abspath(sqlite_path(url))}"
    if parsed.scheme == "hbase":
        from metastore_server.storage.hbase_settings import HBaseSettings

        try:
            return HBaseSettings.from_url(url).describe()
        except ValueError as error:
            return f"{url} (invalid: {error})"
    return url


def sqlite_path(url: str) -> str:
    """The file path of a ``sqlite:///relative`` or ``sqlite:////absolute`` URL."""
    rest = url[len("sqlite://") :]
    if rest.startswith("/"):
        rest = rest[1:]
    return rest or "./var/metastore.db"


def open_store(
    url: str,
    *,
    writer_lease_s: float | None = None,
    undoers: Mapping[str, Callable[[bytes], None]] | None = None,
) -> StoragePort:
    """The backend for a storage URL; ValueError for an unknown scheme or a bad parameter,
    ``storage.hbase.HBaseUnavailableError`` when HBase cannot be reached (after retries).
    ``writer_lease_s``: after how long an unfinished change of a dead server process is
    rolled back (HBase; the embedded store's writers take turns); ``undoers``: by kind, what
    undoes the store's undo notes of such a change (``storage.port.UndoNote``)."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from metastore_server.storage.embedded import SqliteStore

        return SqliteStore(sqlite_path(url))
    if parsed.scheme == "hbase":
        from metastore_server.storage.hbase import HBaseStore
        from metastore_server.storage.hbase_settings import HBaseSettings

        options: dict[str, Any] = {"undoers": undoers}
        if writer_lease_s is not None:
            options["writer_lease_s"] = writer_lease_s
        return HBaseStore(HBaseSettings.from_url(url), **options)
    raise ValueError(f"unsupported storage URL {url!r}: use {ACCEPTED_FORMS}")


def probe_store(url: str) -> tuple[str | None, str]:
    """(reason, detail) of a cheap read of the store ``url`` names, made afresh (see
    ``storage.probes``): (None, "") when it answered."""
    from metastore_server.storage import probes

    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = sqlite_path(url)
        if path == ":memory:":  # a private file no other connection can find: it answers
            return None, ""
        return probes.probe_sqlite(path)
    if parsed.scheme == "hbase":
        from metastore_server.storage.hbase_settings import HBaseSettings

        return probes.probe_hbase(HBaseSettings.from_url(url))
    return "store: unknown kind", url
