"""A dropped table's files, deleted when the drop asks for a purge (``purgeRequested``): what
its metadata reaches (data and delete files of every snapshot's manifests, the manifests,
the manifest lists, statistics files) and its metadata files (the current one and those of
its metadata log). A file that cannot be deleted is logged and skipped: the table is gone
already, as in Iceberg's own purge."""

from __future__ import annotations

import structlog
from pyiceberg.table.metadata import TableMetadata

from metastore_server.rest.iceberg_tables import MetadataFiles

log = structlog.get_logger(__name__)


def reachable_files(
    files: MetadataFiles, metadata_location: str, metadata: TableMetadata
) -> set[str]:
    """Every file the table's metadata reaches, its metadata files included."""
    io = files.io(metadata_location, metadata.properties)
    found = {metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)}
    found |= {s.statistics_path for s in metadata.statistics}
    for snapshot in metadata.snapshots:
        found.add(snapshot.manifest_list)
        for manifest in snapshot.manifests(io):
            found.add(manifest.manifest_path)
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=False):
                found.add(entry.data_file.file_path)
    return found


def purge_files(files: MetadataFiles, metadata_location: str, metadata: TableMetadata) -> int:
    """Delete the files of a dropped table; how many were deleted."""
    try:
        paths = reachable_files(files, metadata_location, metadata)
    except (OSError, ValueError) as exc:
        log.warning("iceberg_purge_incomplete", metadata_location=metadata_location,
                    reason=f"{type(exc).__name__}: {exc}")  # fmt: skip
        paths = {metadata_location}
    io = files.io(metadata_location, metadata.properties)
    deleted = 0
    for path in sorted(paths):
        try:
            io.delete(path)
            deleted += 1
        except (OSError, ValueError) as exc:
            log.warning("iceberg_purge_file_kept", path=path, reason=f"{type(exc).__name__}: {exc}")
    log.info("iceberg_table_purged", metadata_location=metadata_location, files=deleted)
    return deleted
