"""Iceberg views as the HMS tables Iceberg's HiveCatalog makes of them: a ``VIRTUAL_VIEW`` with
``table_type=ICEBERG-VIEW`` and ``metadata_location``, its view metadata (pyiceberg's model)
in files beside it. Created, loaded, listed, replaced (a commit of view updates under the HMS
lock, with the compare-and-set of a table's commit), renamed, registered and dropped."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pyiceberg.schema import Schema
from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

from metastore_server.catalog.basics import code_properties
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import (
    RestError,
    bad_request,
    commit_failed,
)
from metastore_server.rest.iceberg_tables import (
    METADATA_LOCATION,
    PREVIOUS_METADATA_LOCATION,
    TABLE_TYPE,
    MetadataFiles,
    NotMetadata,
    guarded_by,
    hive_type,
    metadata_version,
)
from metastore_server.rest.locks import table_lock
from metastore_server.rest.namespaces import load_database
from metastore_server.rest.paging import WHOLE, Page
from metastore_server.rest.tables import (
    checked_name,
    create_in_metastore,
    default_location,
    identifiers,
    read_registered,
    string_map,
)
from metastore_server.rest.view_updates import apply_view_updates
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import deep_copy

ICEBERG_VIEW = "ICEBERG-VIEW"
VIRTUAL_VIEW = "VIRTUAL_VIEW"


def no_such_view(name: str) -> RestError:
    """404: the view does not exist."""
    return RestError(404, "NoSuchViewException", f"View does not exist: {name}")


def is_iceberg_view(table: Any) -> bool:
    """Whether an HMS table is an Iceberg view."""
    kind = str((table.parameters or {}).get(TABLE_TYPE, "")).upper()
    return table.tableType == VIRTUAL_VIEW and kind == ICEBERG_VIEW


def list_views(
    calls: MetastoreCalls, db: str, page: Page = WHOLE
) -> tuple[list[dict[str, Any]], str | None]:
    """The namespace's Iceberg views as identifiers (a page, and the next page's token); 404
    when it does not exist."""
    return identifiers(calls, db, is_iceberg_view, page)


def load_view(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str
) -> tuple[Any, str, ViewMetadata]:
    """The view's HMS table, metadata file and metadata; 404 when there is no such view."""
    try:
        table = calls.get_table(db, name)
    except hms.NoSuchObjectException:
        raise no_such_view(f"{db}.{name}") from None
    location = (table.parameters or {}).get(METADATA_LOCATION)
    if not is_iceberg_view(table) or not location:
        raise no_such_view(f"{db}.{name}")
    metadata = read_view(files, location)
    files.note_code_properties(f"{db}.{name}", {**(table.parameters or {}), **metadata.properties})
    return table, location, metadata


def read_view(files: MetadataFiles, location: str) -> ViewMetadata:
    """The view metadata in the file at ``location`` (403 outside the data roots)."""
    files.boundary.check_read(location, "View metadata file")
    with files.io(location).new_input(location).open() as stream:
        text = stream.read()
    try:
        return ViewMetadata.model_validate_json(text)
    except ValueError as exc:  # pydantic's error shows the input: never the file's text
        raise NotMetadata(f"{location} is not a view metadata file "
                          f"({type(exc).__name__})") from None  # fmt: skip


def write_view(files: MetadataFiles, metadata: ViewMetadata, version: int) -> str:
    """Write ``metadata`` as the view's file of ``version`` (under its location, 403
    otherwise); its location."""
    file_name = f"{version:05d}-{uuid.uuid4()}.metadata.json"
    location = f"{metadata.location.rstrip('/')}/metadata/{file_name}"
    files.boundary.check_file(location, metadata.location)
    with files.io(location).new_output(location).create() as stream:
        stream.write(metadata.model_dump_json().encode("utf-8"))
    return location


def _delete(files: MetadataFiles, location: str, metadata: ViewMetadata) -> None:
    """Remove a view metadata file no view came to point at."""
    files.boundary.check_file(location, metadata.location)
    files.io(location).delete(location)


def create_view(
    calls: MetastoreCalls, files: MetadataFiles, db: str, body: Mapping[str, Any]
) -> tuple[str, ViewMetadata]:
    """Create a view from a CreateViewRequest; 409 when a table or view of that name exists,
    404 when the namespace does not."""
    name = checked_name(body.get("name"), "CreateViewRequest")
    database = load_database(calls, db)
    try:
        schema = Schema.model_validate(body["schema"])
        version = ViewVersion.model_validate(body["view-version"])
    except KeyError as exc:
        raise bad_request(f"CreateViewRequest needs {exc.args[0]}") from None
    except ValidationError as exc:
        raise bad_request(f"Invalid CreateViewRequest: {exc.errors()[0].get('msg')}") from None
    schema = schema.model_copy(update={"schema_id": version.schema_id})
    metadata = ViewMetadata(
        view_uuid=str(uuid.uuid4()), format_version=1,
        location=str(body.get("location") or default_location(database, name)).rstrip("/"),
        schemas=[schema], current_version_id=version.version_id, versions=[version],
        version_log=[ViewHistoryEntry(timestamp_ms=version.timestamp_ms,
                                      version_id=version.version_id)],
        properties=string_map(body.get("properties"), "CreateViewRequest properties"),
    )  # fmt: skip
    check_view(files, f"View {db}.{name}", metadata, None)
    calls.authorize("create_table", _as_located(_hms_view(calls, db, name, "", metadata),
                                                metadata))  # fmt: skip
    location = write_view(files, metadata, 0)
    _create_hms_view(calls, files, db, name, location, metadata)
    return location, metadata


def check_view(
    files: MetadataFiles, what: str, metadata: ViewMetadata, before: Mapping[str, str] | None
) -> None:
    """400 when the view's metadata sets a property naming code; 400/403 when its location
    is not one the catalog may write under."""
    keys = code_properties.keys_set(metadata.properties, before)
    if keys:
        raise bad_request(code_properties.refusal(keys, what))
    files.boundary.check_root(metadata.location, f"{what} location")


def register_view(
    calls: MetastoreCalls, files: MetadataFiles, db: str, body: Mapping[str, Any]
) -> tuple[str, ViewMetadata]:
    """A view for an existing view metadata file (RegisterViewRequest)."""
    name, location = body.get("name"), body.get("metadata-location")
    if not isinstance(location, str) or not location:
        raise bad_request("RegisterViewRequest needs a name and a metadata-location")
    name = checked_name(name, "RegisterViewRequest")
    load_database(calls, db)
    metadata = read_registered(lambda path: read_view(files, path), location)
    check_view(files, f"View {db}.{name}", metadata, None)
    if files.boundary.outside_table(location, metadata.location) is not None:
        raise bad_request(f"The view metadata file {location} is not under its view's location "
                          f"{metadata.location}")  # fmt: skip
    calls.authorize("create_table", _as_located(_hms_view(calls, db, name, location, metadata),
                                                metadata))  # fmt: skip
    _create_hms_view(calls, files, db, name, location, metadata, keep_file=True)
    return location, metadata


def _create_hms_view(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str, location: str,
    metadata: ViewMetadata, keep_file: bool = False,
) -> None:  # fmt: skip
    table = _hms_view(calls, db, name, location, metadata)
    create_in_metastore(calls, table, "View",
                        None if keep_file else lambda: _delete(files, location, metadata))


def _as_located(table: Any, metadata: ViewMetadata) -> Any:
    """``table`` (a view's HMS table, kept without a location as HiveCatalog keeps views)
    with the view's location, as the authorizer is to judge it: the view's files go there."""
    table.sd.location = metadata.location
    return table


def _hms_view(calls: MetastoreCalls, db: str, name: str, location: str,
              metadata: ViewMetadata) -> Any:  # fmt: skip
    """The HMS table of a new view whose metadata file is ``location``."""
    now = int(time.time())
    table = hms.Table(dbName=db, tableName=name, owner=calls.session.user, createTime=now,
                      lastAccessTime=now, retention=0, partitionKeys=[],
                      tableType=VIRTUAL_VIEW, parameters={})  # fmt: skip
    _point_at(table, metadata, location, None)
    return table


def _point_at(table: Any, metadata: ViewMetadata, location: str, previous: str | None) -> None:
    """Make ``table`` the HMS side of the view ``metadata`` at ``location``."""
    version = next(v for v in metadata.versions if v.version_id == metadata.current_version_id)
    schema = next(s for s in metadata.schemas if s.schema_id == version.schema_id)
    sql = version.representations[0].root.sql if version.representations else ""
    table.sd = hms.StorageDescriptor(
        cols=[hms.FieldSchema(name=f.name, type=hive_type(f.field_type), comment=f.doc)
              for f in schema.fields],
        location="", compressed=False, numBuckets=-1, bucketCols=[], sortCols=[],
        parameters={}, serdeInfo=hms.SerDeInfo(parameters={}),
    )  # fmt: skip
    table.viewOriginalText = table.viewExpandedText = sql
    parameters = dict(table.parameters or {})
    parameters.update({k: v for k, v in metadata.properties.items()})
    parameters.update({TABLE_TYPE: ICEBERG_VIEW, METADATA_LOCATION: location})
    parameters.pop(PREVIOUS_METADATA_LOCATION, None)
    if previous:
        parameters[PREVIOUS_METADATA_LOCATION] = previous
    table.parameters = parameters


def replace_view(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str, body: Mapping[str, Any]
) -> tuple[str, ViewMetadata]:
    """Commit view updates (CommitViewRequest) under the view's HMS lock; 409 when its
    requirement does not hold or another commit moved the view on."""
    requirements, updates = body.get("requirements") or [], body.get("updates") or []
    if not isinstance(requirements, list) or not isinstance(updates, list):
        raise bad_request("CommitViewRequest needs lists of requirements and updates")
    with table_lock(calls, db, name):
        table, current, metadata = load_view(calls, files, db, name)
        for requirement in requirements:
            if not isinstance(requirement, dict) or requirement.get("type") != "assert-view-uuid":
                raise bad_request(f"Unknown view requirement: {json.dumps(requirement)}")
            if requirement.get("uuid") != metadata.view_uuid:
                raise commit_failed(f"View UUID does not match: {requirement.get('uuid')} != "
                                    f"{metadata.view_uuid}")  # fmt: skip
        changed = apply_view_updates(metadata, updates)
        if changed == metadata:
            return current, metadata
        check_view(files, f"View {db}.{name}", changed, metadata.properties)
        _point_at(table, changed, current, current)
        calls.authorize("alter_table_with_environment_context", db, name,
                        _as_located(deep_copy(table), changed), guarded_by(current))  # fmt: skip
        location = write_view(files, changed, metadata_version(current) + 1)
        _point_at(table, changed, location, current)
        try:
            calls.alter_table_with_environment_context(db, name, table, guarded_by(current))
        except BaseException:
            _delete(files, location, changed)
            raise
        return location, changed


def drop_view(calls: MetastoreCalls, files: MetadataFiles, db: str, name: str) -> None:
    """Drop the view (its metadata files kept); 404 when it does not exist."""
    load_view(calls, files, db, name)
    calls.drop_table(db, name, False)


def rename_view(calls: MetastoreCalls, files: MetadataFiles, body: Mapping[str, Any]) -> None:
    """Rename a view (the source and destination of a RenameTableRequest)."""
    from metastore_server.rest.namespaces import database_name

    source, target = body.get("source") or {}, body.get("destination") or {}
    if not isinstance(source, dict) or not isinstance(target, dict):
        raise bad_request("RenameTableRequest needs a source and a destination")
    db, name = database_name(source.get("namespace") or []), source.get("name")
    to_db, to_name = database_name(target.get("namespace") or []), target.get("name")
    if not isinstance(name, str):
        raise bad_request("RenameTableRequest needs source and destination names")
    to_name = checked_name(to_name, "RenameTableRequest's destination")
    table, _, _ = load_view(calls, files, db, name)
    load_database(calls, to_db)
    table.dbName, table.tableName = to_db, to_name
    try:
        calls.alter_table_with_environment_context(db, name, table, hms.EnvironmentContext(
            properties={"DO_NOT_UPDATE_STATS": "true"}))  # fmt: skip
    except hms.InvalidOperationException as exc:
        raise RestError(409, "AlreadyExistsException", exc.message or str(exc)) from None
