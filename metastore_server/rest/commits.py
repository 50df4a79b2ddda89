"""Commits of the REST catalog, as atomic as Iceberg's HiveCatalog makes a Thrift commit and
safe against it: under the HMS table lock (EXCLUSIVE, table level, as HiveCatalog takes it),
the current metadata is read, the commit's requirements checked and its updates applied
(pyiceberg's own code), the new metadata file written, and the table pointed at it with a
compare-and-set of ``metadata_location`` (``expected_parameter_key``/``_value``). A commit
that loses (a requirement no longer holds, or the table moved on) gets 409 and its file is
removed."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table import CommitTableRequest
from pyiceberg.table.metadata import TableMetadata, TableMetadataV1
from pyiceberg.table.update import AssertCreate, update_table_metadata

from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import (
    bad_request,
    commit_failed,
    from_metastore,
    no_such_table,
)
from metastore_server.rest.iceberg_tables import (
    IcebergTable,
    MetadataFiles,
    guarded_by,
    hive_table,
    metadata_version,
    new_metadata_location,
    point_at,
)
from metastore_server.rest.locks import table_lock
from metastore_server.rest.tables import check_new_metadata, find_table, register
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import deep_copy


def parse_commit(document: dict[str, Any], db: str, name: str) -> CommitTableRequest:
    """A CommitTableRequest from its JSON object (its identifier, when left out, the path's);
    400 when it names an unknown requirement or update, or another table."""
    document.setdefault("identifier", {"namespace": [db], "name": name})
    try:
        request = CommitTableRequest.model_validate(document)
    except ValidationError as exc:
        raise bad_request(f"Invalid CommitTableRequest: {_first_error(exc)}") from None
    if tuple(request.identifier.namespace.root) != (db,) or request.identifier.name != name:
        raise bad_request("The commit's identifier is not the table of its path")
    return request


def commit_table(
    calls: MetastoreCalls, files: MetadataFiles, request: CommitTableRequest
) -> tuple[str, TableMetadata]:
    """Commit ``request`` to its table (creating it for a staged create's ``assert-create``);
    the new metadata file and metadata. 404 no such table, 409 the commit lost."""
    namespace = request.identifier.namespace.root
    if len(namespace) != 1:
        raise no_such_table(".".join([*namespace, request.identifier.name]))
    db, name = namespace[0], request.identifier.name
    with table_lock(calls, db, name):
        current = find_table(calls, files, db, name)
        creates = any(isinstance(r, AssertCreate) for r in request.requirements)
        if current is None and not creates:
            raise no_such_table(f"{db}.{name}")
        metadata = staged(current, request)
        if current is not None and metadata == current.metadata:
            return current.metadata_location, current.metadata  # nothing changed: no file
        version = metadata_version(current.metadata_location) + 1 if current else 0
        location = new_metadata_location(metadata, version)
        check_commit(calls, files, db, name, current, location, metadata)
        files.write(metadata, location)
        if current is None:
            register(calls, files, db, name, location, metadata)
        else:
            swap(calls, files, current, location, metadata)
        return location, metadata


def check_commit(
    calls: MetastoreCalls,
    files: MetadataFiles,
    db: str,
    name: str,
    current: IcebergTable | None,
    location: str,
    metadata: TableMetadata,
) -> None:
    """Before a commit writes its file: 400 when it sets a property naming code or moves the
    table where the catalog may not write; 403 when the caller may not change (or create) the
    table, or the file would lie outside its location or the data roots."""
    before = current.metadata.properties if current is not None else None
    check_new_metadata(files, f"Table {db}.{name}", metadata, before)
    files.boundary.check_file(location, metadata.location)
    if current is None:
        calls.authorize("create_table", hive_table(db, name, metadata, location,
                                                   owner=calls.session.user, now=0))  # fmt: skip
        return
    planned = deep_copy(current.hive)
    point_at(planned, metadata, location, current.metadata_location, before)
    calls.authorize("alter_table_with_environment_context", db, name, planned,
                    guarded_by(current.metadata_location))  # fmt: skip


def staged(current: IcebergTable | None, request: CommitTableRequest) -> TableMetadata:
    """The table's metadata with the request's updates applied, once its requirements hold
    (409 when one does not; 400 for updates that cannot apply)."""
    base = current.metadata if current is not None else None
    try:
        for requirement in request.requirements:
            requirement.validate(base)
    except CommitFailedException as exc:
        raise commit_failed(str(exc)) from None
    try:
        return update_table_metadata(
            base_metadata=base if base is not None else _empty_metadata(),
            updates=request.updates,
            enforce_validation=base is None,
            metadata_location=current.metadata_location if current is not None else None,
        )
    except (ValueError, ValidationError, NotImplementedError, StopIteration, KeyError,
            IndexError) as exc:  # fmt: skip
        raise bad_request(f"Cannot apply the commit's updates: {type(exc).__name__} "
                          f"{exc}") from None  # fmt: skip


def swap(
    calls: MetastoreCalls,
    files: MetadataFiles,
    current: IcebergTable,
    location: str,
    metadata: TableMetadata,
    *,
    discard: bool = True,
    previous: str | None = None,
) -> None:
    """Point the HMS table at the new metadata file, only while it still points at the one
    the commit read (409 otherwise, and the new file removed unless ``discard`` is off);
    ``previous_metadata_location`` becomes the file it pointed at, or ``previous`` when
    given (an undo restores the one it had)."""
    table = current.hive
    old_properties = current.metadata.properties
    before = previous if previous is not None else current.metadata_location
    point_at(table, metadata, location, before, old_properties)
    context = guarded_by(current.metadata_location)
    db, name = table.dbName, table.tableName
    try:
        calls.alter_table_with_environment_context(db, name, table, context)
    except BaseException as exc:
        if discard:
            files.delete(location, metadata.location)
        if isinstance(exc, hms.NoSuchObjectException):
            raise no_such_table(f"{db}.{name}") from None
        if isinstance(exc, hms.MetaException | hms.InvalidOperationException):
            message = exc.message or str(exc)
            if "has been modified" in message:  # the compare-and-set lost
                raise commit_failed(f"{db}.{name} was changed by another commit: "
                                    f"{message}") from None  # fmt: skip
            raise from_metastore(exc) from None
        raise


def _empty_metadata() -> TableMetadata:
    """The base a staged create's updates are applied to (as pyiceberg's catalogs do)."""
    # model_construct skips validation: the fields the updates will set are left out.
    return TableMetadataV1.model_construct(  # type: ignore[call-arg]
        last_column_id=-1, schema=Schema()
    )


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"{where}: {first.get('msg')}"


