"""Iceberg tables as the HMS tables Iceberg's HiveCatalog makes: an external table with
``table_type=ICEBERG``, ``metadata_location`` (and ``previous_metadata_location``), the
columns of the current schema in Hive's types, and the Iceberg table's properties copied
into its parameters. The metadata files are read and written through pyiceberg's FileIO."""

from __future__ import annotations

import threading
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from pyiceberg.exceptions import ValidationError as PyIcebergValidationError
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import FromInputFile, ToOutputFile
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.types import (
    DecimalType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
)

from metastore_server.catalog.basics import code_properties
from metastore_server.rest.boundary import FileBoundary
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
#: Iceberg's table property placing metadata files elsewhere than ``<location>/metadata``.
WRITE_METADATA_PATH = "write.metadata.path"
EXTERNAL = "EXTERNAL"
#: The storage formats Iceberg's HiveCatalog gives its tables (for engines that read the
#: table through Hive's own readers, which an Iceberg table is not for).
INPUT_FORMAT = "org.apache.hadoop.mapred.FileInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.mapred.FileOutputFormat"
SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"

_PRIMITIVES = {
    "boolean": "boolean",
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "date": "date",
    "time": "string",
    "timestamp": "timestamp",
    "timestamptz": "timestamp with local time zone",
    "timestamp_ns": "timestamp",
    "timestamptz_ns": "timestamp with local time zone",
    "string": "string",
    "uuid": "string",
    "binary": "binary",
    "unknown": "void",
}


def is_iceberg(table: Any) -> bool:
    """Whether an HMS table is an Iceberg table (HiveCatalog's ``table_type``)."""
    return str((table.parameters or {}).get(TABLE_TYPE, "")).upper() == ICEBERG


@dataclass
class IcebergTable:
    """An Iceberg table as stored: its HMS table, current metadata file and metadata."""

    hive: Any
    metadata_location: str
    metadata: TableMetadata

    def __post_init__(self) -> None:
        #: The table's ``previous_metadata_location`` as read (None: it had none).
        self.previous: str | None = (self.hive.parameters or {}).get(PREVIOUS_METADATA_LOCATION)


class NotMetadata(ValueError):
    """A file read as table metadata is not (its text is never repeated: it may be any
    file a caller named)."""


#: Metadata files kept read (a file never changes once written: a commit writes a new one).
KEPT_FILES = 64


class MetadataFiles:
    """Reads and writes tables' metadata files through pyiceberg's FileIO, chosen by the file's
    scheme and built from the server's own settings (``properties``: ``s3.endpoint``...), never
    from a table's: a table's properties choose no code and no endpoint here. Every file is
    checked against ``boundary`` first. The last files read or written are kept, parsed and
    as JSON: a table's current one is read by every load."""

    def __init__(self, properties: Mapping[str, str], boundary: FileBoundary | None = None) -> None:
        self.properties = dict(properties)
        self.boundary = boundary or FileBoundary()
        self._kept: OrderedDict[str, tuple[TableMetadata, str]] = OrderedDict()
        self._lock = threading.Lock()
        self._noted: set[tuple[str, tuple[str, ...]]] = set()

    def io(self, location: str) -> FileIO:
        """The FileIO of ``location``: the server's settings alone."""
        return load_file_io(dict(self.properties), location)

    def read(self, location: str) -> TableMetadata:
        """The metadata in the file at ``location``."""
        return self.read_with_json(location)[0]

    def read_with_json(self, location: str) -> tuple[TableMetadata, str]:
        """The metadata in the file at ``location`` and its JSON (403 outside the data
        roots)."""
        self.boundary.check_read(location, "Metadata file")
        with self._lock:
            kept = self._kept.get(location)
            if kept is not None:
                self._kept.move_to_end(location)
                return kept
        try:
            metadata = FromInputFile.table_metadata(self.io(location).new_input(location))
        except FileNotFoundError:
            raise
        except (ValueError, PyIcebergValidationError, OSError, EOFError, zlib.error) as exc:
            raise NotMetadata(f"{location} is not a table metadata file "  # never its text
                              f"({type(exc).__name__})") from None  # fmt: skip
        return self._keep(location, metadata)

    def write(self, metadata: TableMetadata, location: str) -> None:
        """Write ``metadata`` to a new file at ``location`` (never over an existing one); 403
        when ``location`` is not under the table's location or the data roots."""
        self.boundary.check_file(location, metadata.location)
        ToOutputFile.table_metadata(metadata, self.io(location).new_output(location))
        self._keep(location, metadata)

    def _keep(self, location: str, metadata: TableMetadata) -> tuple[TableMetadata, str]:
        entry = (metadata, metadata.model_dump_json())
        with self._lock:
            self._kept[location] = entry
            while len(self._kept) > KEPT_FILES:
                self._kept.popitem(last=False)
        return entry

    def delete(self, location: str, table_location: str) -> None:
        """Remove the file at ``location`` (a metadata file no table came to point at), when
        it lies under ``table_location`` and the data roots (403 otherwise)."""
        self.boundary.check_file(location, table_location)
        with self._lock:
            self._kept.pop(location, None)
        self.io(location).delete(location)

    def note_code_properties(self, name: str, properties: Mapping[str, str]) -> None:
        """Log once per table and keys that ``name`` carries properties naming code, which
        this server never reads (``code_properties``)."""
        keys = tuple(code_properties.code_keys(properties))
        if not keys:
            return
        with self._lock:
            if (name, keys) in self._noted:
                return
            if len(self._noted) > 10_000:
                self._noted.clear()
            self._noted.add((name, keys))
        log.warning("iceberg_code_properties_ignored", table=name, keys=list(keys))


def new_metadata_location(metadata: TableMetadata, version: int) -> str:
    """Where the table's metadata file of ``version`` goes (``<version>-<uuid>``, under
    ``metadata/`` or ``write.metadata.path``), as Iceberg names it; computed here, never by
    a location provider a table's properties name."""
    folder = metadata.properties.get(WRITE_METADATA_PATH) or f"{metadata.location}/metadata"
    return f"{folder.rstrip('/')}/{version:05d}-{uuid.uuid4()}.metadata.json"


def metadata_version(location: str) -> int:
    """The version in a metadata file's name (``00003-<uuid>.metadata.json`` -> 3); -1 when
    the name does not follow Iceberg's pattern."""
    name = location.rsplit("/", 1)[-1]
    head, _, rest = name.partition("-")
    if not head.isdigit() or not rest.endswith(".metadata.json"):
        return -1
    try:
        uuid.UUID(rest.removesuffix(".metadata.json").removesuffix(".gz"))
    except ValueError:
        return -1
    return int(head)


def guarded_by(metadata_location: str) -> Any:
    """The environment context of an alter that applies only while the table still points
    at ``metadata_location`` (HMS's ``expected_parameter_key``/``_value`` compare-and-set),
    and counts no files (an Iceberg table's are not Hive's)."""
    return hms.EnvironmentContext(properties={
        "expected_parameter_key": METADATA_LOCATION,
        "expected_parameter_value": metadata_location,
        "DO_NOT_UPDATE_STATS": "true",
    })  # fmt: skip


def hive_type(kind: IcebergType) -> str:
    """The Hive type name of an Iceberg type, as Iceberg's HiveCatalog writes columns."""
    if isinstance(kind, StructType):
        fields = ",".join(f"{f.name}:{hive_type(f.field_type)}" for f in kind.fields)
        return f"struct<{fields}>"
    if isinstance(kind, ListType):
        return f"array<{hive_type(kind.element_type)}>"
    if isinstance(kind, MapType):
        return f"map<{hive_type(kind.key_type)},{hive_type(kind.value_type)}>"
    if isinstance(kind, DecimalType):
        return f"decimal({kind.precision},{kind.scale})"
    text = str(kind)
    if text.startswith("fixed["):
        return "binary"
    return _PRIMITIVES.get(text, "string")


def _column(field: NestedField) -> Any:
    return hms.FieldSchema(name=field.name, type=hive_type(field.field_type), comment=field.doc)


def hive_table(
    db: str,
    name: str,
    metadata: TableMetadata,
    metadata_location: str,
    *,
    owner: str | None,
    now: int,
) -> Any:
    """A new HMS table for an Iceberg table."""
    table = hms.Table(dbName=db, tableName=name, owner=metadata.properties.get("owner", owner),
                      createTime=now, lastAccessTime=now, retention=0, partitionKeys=[],
                      tableType="EXTERNAL_TABLE", parameters={})  # fmt: skip
    point_at(table, metadata, metadata_location, None, None)
    return table


def point_at(
    table: Any,
    metadata: TableMetadata,
    metadata_location: str,
    previous: str | None,
    old_properties: Mapping[str, str] | None,
) -> None:
    """Make ``table`` the HMS side of ``metadata`` at ``metadata_location``: its columns and
    location, the metadata file (and the one before), the Iceberg properties (those the
    table lost removed, parameters set by others kept; none naming code is copied)."""
    table.sd = hms.StorageDescriptor(
        cols=[_column(f) for f in metadata.schema().fields],
        location=metadata.location,
        inputFormat=INPUT_FORMAT,
        outputFormat=OUTPUT_FORMAT,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(serializationLib=SERDE, parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    parameters = dict(table.parameters or {})
    for key in set(old_properties or ()) - set(metadata.properties):
        parameters.pop(key, None)
    ours = {EXTERNAL: "TRUE", TABLE_TYPE: ICEBERG, METADATA_LOCATION: metadata_location}
    parameters.pop(PREVIOUS_METADATA_LOCATION, None)
    if previous:
        ours[PREVIOUS_METADATA_LOCATION] = previous
    parameters.update({k: str(v) for k, v in metadata.properties.items()
                       if k not in ours and not code_properties.names_code(k)})  # fmt: skip
    parameters.update(ours)
    table.parameters = parameters
