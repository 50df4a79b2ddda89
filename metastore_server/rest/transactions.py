"""Multi-table commits (``POST /v1/transactions/commit``): every table's commit or none.
The tables' HMS locks are taken in one request; each commit's requirements are checked and
its updates applied, and every new metadata file written, before any table moves; then each
table is pointed at its new file with the compare-and-set of a single commit. Should one of
them lose, those already moved are pointed back (still under the locks) and every new file
removed: the transaction fails with 409 and no table keeps a change of it."""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from pyiceberg.table import CommitTableRequest
from pyiceberg.table.metadata import TableMetadata

from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.commits import check_commit, staged, swap
from metastore_server.rest.errors import RestError, bad_request, no_such_table
from metastore_server.rest.iceberg_tables import (
    IcebergTable,
    MetadataFiles,
    metadata_version,
    new_metadata_location,
)
from metastore_server.rest.locks import table_locks
from metastore_server.rest.tables import find_table

log = structlog.get_logger(__name__)
#: One table's part of a transaction: the table as read, its new metadata file and metadata.
Plan = tuple[IcebergTable, str, TableMetadata]


def commit_transaction(
    calls: MetastoreCalls, files: MetadataFiles, requests: Sequence[CommitTableRequest]
) -> None:
    """Commit every request (each an existing table's) or none; 409 when one loses."""
    names = [_table_of(r) for r in requests]
    if len(set(names)) != len(names):
        raise bad_request("A transaction names a table more than once")
    with table_locks(calls, names):
        plans: list[Plan] = []
        for (db, name), request in zip(names, requests, strict=True):
            current = find_table(calls, files, db, name)
            if current is None:
                raise no_such_table(f"{db}.{name}")
            metadata = staged(current, request)
            if metadata == current.metadata:
                continue
            version = metadata_version(current.metadata_location) + 1
            location = new_metadata_location(metadata, version)
            check_commit(calls, files, db, name, current, location, metadata)
            plans.append((current, location, metadata))
        written: list[tuple[str, str]] = []
        try:
            for _, location, metadata in plans:
                files.write(metadata, location)
                written.append((location, metadata.location))
        except BaseException:
            _remove(files, written)
            raise
        _switch_all(calls, files, plans)


def _switch_all(
    calls: MetastoreCalls, files: MetadataFiles, plans: list[Plan]
) -> None:
    """Point each table at its new file; on a failure, point those done back."""
    done: list[Plan] = []
    for index, plan in enumerate(plans):
        current, location, metadata = plan
        try:
            swap(calls, files, current, location, metadata)
        except BaseException:
            _remove(files, [(loc, m.location) for _, loc, m in plans[index + 1 :]])
            _undo(calls, files, done)
            raise
        done.append(plan)


def _undo(
    calls: MetastoreCalls, files: MetadataFiles, done: list[Plan]
) -> None:
    """Point the tables of ``done`` back at the files they had (their new files removed)."""
    for before, location, metadata in reversed(done):
        moved = IcebergTable(before.hive, location, metadata)
        try:
            swap(calls, files, moved, before.metadata_location, before.metadata, discard=False,
                 previous=before.previous or "")  # fmt: skip
        except RestError as exc:  # logged: the table keeps the transaction's change
            log.error("iceberg_transaction_not_undone", table=f"{before.hive.dbName}."
                      f"{before.hive.tableName}", reason=exc.message)  # fmt: skip
            continue
        _remove(files, [(location, metadata.location)])


def _remove(files: MetadataFiles, written: Sequence[tuple[str, str]]) -> None:
    """Remove new metadata files (each with its table's location)."""
    for location, table_location in written:
        try:
            files.delete(location, table_location)
        except (OSError, RestError) as exc:
            log.warning("iceberg_metadata_file_kept", path=location, reason=str(exc))


def _table_of(request: CommitTableRequest) -> tuple[str, str]:
    namespace = request.identifier.namespace.root
    if len(namespace) != 1:
        raise no_such_table(".".join([*namespace, request.identifier.name]))
    return namespace[0], request.identifier.name
