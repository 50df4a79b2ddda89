"""Table operations of the REST catalog on the HMS tables Iceberg's HiveCatalog makes: list,
load, create (and stage-create), register, drop (and purge), rename."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder

from metastore_server.catalog.basics import code_properties, names
from metastore_server.rest import paging
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import (
    RestError,
    already_exists,
    bad_request,
    forbidden,
    from_metastore,
    no_such_namespace,
    no_such_table,
)
from metastore_server.rest.iceberg_tables import (
    METADATA_LOCATION,
    WRITE_METADATA_PATH,
    IcebergTable,
    MetadataFiles,
    NotMetadata,
    guarded_by,
    hive_table,
    is_iceberg,
    new_metadata_location,
    point_at,
)
from metastore_server.rest.locks import table_lock
from metastore_server.rest.namespaces import LOCATION, load_database, properties_of
from metastore_server.rest.paging import WHOLE, Page
from metastore_server.thrift_api import hms

#: Table objects read per call when listing a namespace's Iceberg tables.
LIST_CHUNK = 500
#: What Iceberg's HiveCatalog gives every new table unless told otherwise.
DEFAULT_PROPERTIES = {"write.parquet.compression-codec": "zstd"}
#: Environment context of the alters made here: no file counting (not Hive's files).
NO_STATS = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})


def list_tables(
    calls: MetastoreCalls, db: str, page: Page = WHOLE
) -> tuple[list[dict[str, Any]], str | None]:
    """The namespace's Iceberg tables as identifiers (a page of them, and the next page's
    token); 404 when it does not exist."""
    return identifiers(calls, db, is_iceberg, page)


def identifiers(
    calls: MetastoreCalls, db: str, keep: Callable[[Any], bool], page: Page = WHOLE
) -> tuple[list[dict[str, Any]], str | None]:
    """The namespace's HMS tables that ``keep`` keeps, as identifiers, in name order: the
    page asked (read a chunk at a time, only as far as the page needs) and the next page's
    token; 404 when the namespace does not exist."""
    load_database(calls, db)

    def kept(chunk: Sequence[str]) -> list[str]:
        tables = calls.get_table_objects_by_name(db, list(chunk))
        return sorted(t.tableName for t in tables if keep(t))

    found, token = paging.collect(calls.get_all_tables(db), page, kept, LIST_CHUNK)
    return [{"namespace": [db], "name": name} for name in found], token


def find_table(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str
) -> IcebergTable | None:
    """The Iceberg table ``db.name`` with its current metadata; None when there is no table
    of that name; 404 when it is not an Iceberg table."""
    try:
        table = calls.get_table(db, name)
    except hms.NoSuchObjectException:
        return None
    location = (table.parameters or {}).get(METADATA_LOCATION)
    if not is_iceberg(table) or not location:
        raise no_such_table(f"{db}.{name} (not an Iceberg table)")
    metadata = files.read(location)
    check_bound(files, f"{db}.{name}", table, location, metadata)
    files.note_code_properties(f"{db}.{name}", {**(table.parameters or {}), **metadata.properties})
    return IcebergTable(table, location, metadata)


def check_bound(
    files: MetadataFiles, name: str, table: Any, location: str, metadata: TableMetadata
) -> None:
    """403 unless the metadata file is the HMS table's own: the location it names is the
    table's location (the one the authorizer guards), and the file lies under it (or under
    its ``write.metadata.path``). A table pointed (through Thrift) at another table's metadata
    file is not served: loading, committing to or purging it would reach the other table."""
    own = table.sd.location if table.sd is not None else None
    if not own or not files.boundary.same(metadata.location, own):
        raise forbidden(f"The metadata file of {name} names the location {metadata.location}, "
                        f"not the table's own ({own or 'none'}): it is not served")  # fmt: skip
    folder = metadata.properties.get(WRITE_METADATA_PATH)
    if files.boundary.outside_table(location, own) is None:
        return
    if folder and files.boundary.outside_table(location, folder) is None:
        return
    raise forbidden(f"The metadata file {location} of {name} lies outside the table's location "
                    f"{own}: it is not served")  # fmt: skip


def load_table(calls: MetastoreCalls, files: MetadataFiles, db: str, name: str) -> IcebergTable:
    """The Iceberg table ``db.name``; 404 when it does not exist."""
    found = find_table(calls, files, db, name)
    if found is None:
        raise no_such_table(f"{db}.{name}")
    return found


def only_referenced_snapshots(metadata: TableMetadata) -> TableMetadata:
    """``metadata`` with only the snapshots a branch or tag points at (``snapshots=refs``)."""
    wanted = {ref.snapshot_id for ref in metadata.refs.values()}
    kept = [s for s in metadata.snapshots if s.snapshot_id in wanted]
    return metadata.model_copy(update={"snapshots": kept})


def create_table(
    calls: MetastoreCalls, files: MetadataFiles, db: str, body: Mapping[str, Any]
) -> tuple[str | None, TableMetadata]:
    """Create an Iceberg table from a CreateTableRequest: its first metadata file, then its
    HMS table; with ``stage-create`` nothing is kept (the metadata is returned for a later
    commit that creates the table). 409 when it exists, 404 when the namespace does not."""
    name = checked_name(body.get("name"), "CreateTableRequest")
    database = load_database(calls, db)
    metadata = new_metadata(database, name, body)
    check_new_metadata(files, f"Table {db}.{name}", metadata, None)
    if body.get("stage-create"):
        if _exists(calls, db, name):
            raise already_exists("Table", f"{db}.{name}")
        return None, metadata
    location = new_metadata_location(metadata, 0)
    table = hive_table(db, name, metadata, location, owner=calls.session.user,
                       now=int(time.time()))  # fmt: skip
    calls.authorize("create_table", table)  # before any file is written
    files.write(metadata, location)
    create_in_metastore(calls, table, "Table", lambda: files.delete(location, metadata.location))
    return location, metadata


def checked_name(name: Any, what: str) -> str:
    """A new table's or view's name; 400 unless HMS takes it (word characters only), checked
    before any file is written (a name becomes a directory of the default location)."""
    if not isinstance(name, str) or not name:
        raise bad_request(f"{what} needs a name")
    if not names.is_valid_name(names.normalize(name)):
        raise bad_request(f"{name} is not a valid object name")
    return name


def check_new_metadata(
    files: MetadataFiles, what: str, metadata: Any, before: Mapping[str, str] | None
) -> None:
    """400 when ``metadata`` sets a property naming code that ``before`` (the properties it
    had) did not hold; 400/403 when its location is not one the catalog may write under."""
    keys = code_properties.keys_set(metadata.properties, before)
    if keys:
        raise bad_request(code_properties.refusal(keys, what))
    files.boundary.check_root(metadata.location, f"{what} location")


def new_metadata(database: Any, name: str, body: Mapping[str, Any]) -> TableMetadata:
    """The first metadata of a table created by ``body`` (a CreateTableRequest)."""
    properties = {**DEFAULT_PROPERTIES, **string_map(body.get("properties"), "properties")}
    location = body.get("location") or default_location(database, name)
    try:
        schema = Schema.model_validate(body["schema"])
        spec = (PartitionSpec.model_validate(body["partition-spec"])
                if body.get("partition-spec") else UNPARTITIONED_PARTITION_SPEC)  # fmt: skip
        order = (SortOrder.model_validate(body["write-order"])
                 if body.get("write-order") else UNSORTED_SORT_ORDER)  # fmt: skip
        return new_table_metadata(schema=schema, partition_spec=spec, sort_order=order,
                                  location=str(location).rstrip("/"),
                                  properties=properties)  # fmt: skip
    except KeyError:
        raise bad_request("CreateTableRequest needs a schema") from None
    except (ValidationError, ValueError) as exc:
        raise bad_request(f"Invalid CreateTableRequest: {exc}") from None


def default_location(database: Any, name: str) -> str:
    """A new table's location: below its database's, as Iceberg's HiveCatalog places it."""
    base = properties_of(database).get(LOCATION)
    if not base:
        raise bad_request(f"Namespace {database.name} has no location: give the table one")
    return f"{base.rstrip('/')}/{name}"


def register(
    calls: MetastoreCalls,
    files: MetadataFiles,
    db: str,
    name: str,
    metadata_location: str,
    metadata: TableMetadata,
) -> None:
    """Create the HMS table of an Iceberg table whose metadata file is written; the file is
    removed again when the table cannot be created (409, 404)."""
    table = hive_table(db, name, metadata, metadata_location, owner=calls.session.user,
                       now=int(time.time()))  # fmt: skip
    create_in_metastore(calls, table, "Table",
                        lambda: files.delete(metadata_location, metadata.location))


def create_in_metastore(
    calls: MetastoreCalls, table: Any, what: str, discard: Callable[[], None] | None
) -> None:
    """Create the HMS table of a table or view; when it cannot be, ``discard`` (its new
    metadata file, then pointed at by nothing) and answer 409 (it exists), 404 (no such
    namespace) or the metastore's error."""
    try:
        calls.create_table(table)
    except BaseException as exc:
        if discard is not None:
            discard()
        if isinstance(exc, hms.AlreadyExistsException):
            raise already_exists(what, f"{table.dbName}.{table.tableName}") from None
        if isinstance(exc, hms.InvalidObjectException | hms.NoSuchObjectException):
            raise no_such_namespace(table.dbName) from None
        if isinstance(exc, hms.MetaException):
            raise from_metastore(exc) from None
        raise


def register_table(
    calls: MetastoreCalls, files: MetadataFiles, db: str, body: Mapping[str, Any]
) -> tuple[str, TableMetadata]:
    """Register an existing metadata file as table ``name`` (RegisterTableRequest; with
    ``overwrite``, an existing Iceberg table of that name is pointed at it instead)."""
    name, location = body.get("name"), body.get("metadata-location")
    if not isinstance(location, str) or not location:
        raise bad_request("RegisterTableRequest needs a name and a metadata-location")
    name = checked_name(name, "RegisterTableRequest")
    load_database(calls, db)
    metadata = read_registered(files.read, location)
    check_new_metadata(files, f"Table {db}.{name}", metadata, None)
    if files.boundary.outside_table(location, metadata.location) is not None:
        raise bad_request(f"The metadata file {location} is not under its table's location "
                          f"{metadata.location}")  # fmt: skip
    table = hive_table(db, name, metadata, location, owner=calls.session.user,
                       now=int(time.time()))  # fmt: skip
    try:
        create_in_metastore(calls, table, "Table", None)  # the file is not ours to remove
    except RestError as exc:
        if exc.code != 409 or not body.get("overwrite"):
            raise
        repoint(calls, files, db, name, location, metadata)
    return location, metadata


def read_registered(read: Callable[[str], Any], location: str) -> Any:
    """``read(location)``: the metadata of a file a caller registers; 400 when there is none
    or it is not metadata (what the file holds is not repeated: it may be any file); 403
    outside the data roots."""
    try:
        return read(location)
    except FileNotFoundError:
        raise bad_request(f"No metadata file at {location}") from None
    except NotMetadata as exc:
        raise bad_request(str(exc)) from None
    except OSError as exc:
        raise bad_request(f"{location} cannot be read ({type(exc).__name__})") from None


def drop_table(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str, purge: bool
) -> None:
    """Drop the table (its files kept, as an external table's); with ``purge`` its data and
    metadata files are deleted too. 404 when it does not exist."""
    table = load_table(calls, files, db, name)
    try:
        calls.drop_table(db, name, False)
    except hms.NoSuchObjectException:
        raise no_such_table(f"{db}.{name}") from None
    if purge:
        from metastore_server.rest.purge import purge_files

        purge_files(files, table.metadata_location, table.metadata)


def unregister_table(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str
) -> tuple[str, str]:
    """Drop the table from the catalog and keep every file (the spec's unregister): the
    metadata file it pointed at and that file's text, read under the table's lock so no
    commit lands between. Authorized as a drop; 404 when it does not exist."""
    with table_lock(calls, db, name):
        table = load_table(calls, files, db, name)
        document = files.read_with_json(table.metadata_location)[1]
        try:
            calls.drop_table(db, name, False)
        except hms.NoSuchObjectException:
            raise no_such_table(f"{db}.{name}") from None
    return table.metadata_location, document


def rename_table(
    calls: MetastoreCalls, source: Mapping[str, Any], target: Mapping[str, Any]
) -> None:
    """Rename a table (RenameTableRequest's source and destination); 404 when the source or
    the destination's namespace does not exist, 409 when the destination exists."""
    from metastore_server.rest.namespaces import database_name

    db, name = database_name(source.get("namespace") or []), source.get("name")
    to_db, to_name = database_name(target.get("namespace") or []), target.get("name")
    if not isinstance(name, str):
        raise bad_request("RenameTableRequest needs source and destination names")
    to_name = checked_name(to_name, "RenameTableRequest's destination")
    try:
        table = calls.get_table(db, name)
    except hms.NoSuchObjectException:
        raise no_such_table(f"{db}.{name}") from None
    load_database(calls, to_db)
    if _exists(calls, to_db, to_name):
        raise already_exists("Table", f"{to_db}.{to_name}")
    table.dbName, table.tableName = to_db, to_name
    try:
        calls.alter_table_with_environment_context(db, name, table, NO_STATS)
    except hms.NoSuchObjectException:
        raise no_such_table(f"{db}.{name}") from None
    except hms.InvalidOperationException as exc:
        raise RestError(409, "AlreadyExistsException", exc.message or str(exc)) from None


def _exists(calls: MetastoreCalls, db: str, name: str) -> bool:
    try:
        calls.get_table(db, name)
    except hms.NoSuchObjectException:
        return False
    return True


def string_map(value: Any, what: str) -> dict[str, str]:
    """``value`` as properties (none: empty); 400 unless it maps strings to strings."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise bad_request(f"{what} must map strings to strings")
    return dict(value)


def repoint(
    calls: MetastoreCalls, files: MetadataFiles, db: str, name: str, location: str,
    metadata: TableMetadata,
) -> None:  # fmt: skip
    """Point an existing Iceberg table at another metadata file (a register with
    ``overwrite``), under the table lock."""
    with table_lock(calls, db, name):
        current = find_table(calls, files, db, name)
        if current is None:
            raise no_such_table(f"{db}.{name}")
        table = current.hive
        point_at(table, metadata, location, current.metadata_location, current.metadata.properties)
        calls.alter_table_with_environment_context(db, name, table,
                                                   guarded_by(current.metadata_location))
