"""A dropped table's files, deleted when the drop asks for a purge (``purgeRequested``): what
its metadata reaches (data and delete files of every snapshot's manifests, the manifests, the
manifest lists, statistics and partition statistics files) and its metadata files (the current
one and those of its metadata log). Only files under the table's own location (and the data
roots) are read or deleted: a file its metadata names elsewhere is kept, and the purge says so
in the log (``iceberg_purge_kept_outside``). A file that cannot be deleted is logged and
skipped: the table is gone already, as in Iceberg's own purge. The directories the purge
leaves empty under the location go too (``purge_dirs``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import structlog
from pyiceberg.table.metadata import TableMetadata

from metastore_server.rest.iceberg_tables import MetadataFiles
from metastore_server.rest.purge_dirs import remove_left_dirs

log = structlog.get_logger(__name__)
#: Paths kept outside the table named in the log line (the count is always there).
SHOWN_OUTSIDE = 5


@dataclass
class Reach:
    """The files a purge may delete (``inside``) and those its metadata names elsewhere."""

    inside: set[str] = field(default_factory=set)
    outside: dict[str, str] = field(default_factory=dict)  # path -> why it is kept

    def add(self, files: MetadataFiles, path: str, location: str) -> bool:
        """Sort ``path`` in; whether it lies inside (may be read and deleted)."""
        if path in self.inside or path in self.outside:
            return path in self.inside
        reason = files.boundary.outside_table(path, location)
        if reason is None:
            self.inside.add(path)
        else:
            self.outside[path] = reason
        return reason is None


def reachable_files(files: MetadataFiles, metadata_location: str, metadata: TableMetadata) -> Reach:
    """Every file the table's metadata reaches, its metadata files included, sorted into those
    under its location (read further: manifests) and those outside (never read). A manifest
    list or manifest that cannot be read is logged and its files are not reached."""
    io, location, reach = files.io(metadata_location), metadata.location, Reach()
    for path in (metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)):
        reach.add(files, path, location)
    for statistics in [*metadata.statistics, *getattr(metadata, "partition_statistics", [])]:
        reach.add(files, statistics.statistics_path, location)
    for snapshot in metadata.snapshots:
        if not reach.add(files, snapshot.manifest_list, location):
            continue
        for manifest in _read(snapshot.manifest_list, partial(snapshot.manifests, io)) or ():
            if not reach.add(files, manifest.manifest_path, location):
                continue
            entries = _read(manifest.manifest_path,
                            partial(manifest.fetch_manifest_entry, io, discard_deleted=False))
            for entry in entries or ():
                reach.add(files, entry.data_file.file_path, location)
    return reach


def _read(path: str, read: Callable[[], list[Any]]) -> list[Any] | None:
    """What ``read`` reads from the Avro file ``path``; None (logged) when it cannot be read:
    a file of any content may be named, and a purge goes on past it."""
    try:
        return read()
    except Exception as exc:  # noqa: BLE001 - any reader failure: the purge goes on
        log.warning("iceberg_purge_unreadable", path=path, reason=type(exc).__name__)
        return None


def purge_files(files: MetadataFiles, metadata_location: str, metadata: TableMetadata) -> int:
    """Delete the files of a dropped table under its location; how many were deleted."""
    reach = reachable_files(files, metadata_location, metadata)
    if reach.outside:
        shown = sorted(reach.outside.items())[:SHOWN_OUTSIDE]
        log.warning("iceberg_purge_kept_outside", metadata_location=metadata_location,
                    kept=len(reach.outside), first=[f"{p}: {why}" for p, why in shown])  # fmt: skip
    io = files.io(metadata_location)
    deleted = 0
    for path in sorted(reach.inside):
        try:
            io.delete(path)
            deleted += 1
        except (OSError, ValueError) as exc:
            log.warning("iceberg_purge_file_kept", path=path, reason=f"{type(exc).__name__}: {exc}")
    log.info("iceberg_table_purged", metadata_location=metadata_location, files=deleted,
             kept_outside=len(reach.outside))  # fmt: skip
    remove_left_dirs(files.boundary, metadata.location, reach.inside)
    return deleted
