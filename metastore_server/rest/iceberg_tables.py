"""Iceberg tables as the HMS tables Iceberg's HiveCatalog makes: an external table with
``table_type=ICEBERG``, ``metadata_location`` (and ``previous_metadata_location``), the
columns of the current schema in Hive's types, and the Iceberg table's properties copied
into its parameters. The metadata files are read and written through pyiceberg's FileIO."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import FromInputFile, ToOutputFile
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.types import (
    DecimalType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
)

from metastore_server.thrift_api import hms

TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
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


#: Metadata files kept read (a file never changes once written: a commit writes a new one).
KEPT_FILES = 64


class MetadataFiles:
    """Reads and writes tables' metadata files (pyiceberg's FileIO, chosen by the file's
    scheme; ``properties``: FileIO settings such as ``s3.endpoint``). The last files read or
    written are kept, parsed and as JSON: a table's current one is read by every load."""

    def __init__(self, properties: Mapping[str, str]) -> None:
        self.properties = dict(properties)
        self._kept: OrderedDict[str, tuple[TableMetadata, str]] = OrderedDict()
        self._lock = threading.Lock()

    def io(self, location: str, table_properties: Mapping[str, str] | None = None) -> FileIO:
        """The FileIO of ``location`` (the table's own settings over the server's)."""
        return load_file_io({**self.properties, **(table_properties or {})}, location)

    def read(self, location: str) -> TableMetadata:
        """The metadata in the file at ``location``."""
        return self.read_with_json(location)[0]

    def read_with_json(self, location: str) -> tuple[TableMetadata, str]:
        """The metadata in the file at ``location`` and its JSON."""
        with self._lock:
            kept = self._kept.get(location)
            if kept is not None:
                self._kept.move_to_end(location)
                return kept
        metadata = FromInputFile.table_metadata(self.io(location).new_input(location))
        return self._keep(location, metadata)

    def write(self, metadata: TableMetadata, location: str) -> None:
        """Write ``metadata`` to a new file at ``location`` (never over an existing one)."""
        ToOutputFile.table_metadata(metadata, self.io(location, metadata.properties)
                                    .new_output(location))  # fmt: skip
        self._keep(location, metadata)

    def _keep(self, location: str, metadata: TableMetadata) -> tuple[TableMetadata, str]:
        entry = (metadata, metadata.model_dump_json())
        with self._lock:
            self._kept[location] = entry
            while len(self._kept) > KEPT_FILES:
                self._kept.popitem(last=False)
        return entry

    def delete(self, location: str) -> None:
        """Remove the file at ``location`` (a metadata file no table came to point at)."""
        with self._lock:
            self._kept.pop(location, None)
        self.io(location).delete(location)


def new_metadata_location(metadata: TableMetadata, version: int) -> str:
    """Where the table's metadata file of ``version`` goes (``<version>-<uuid>``, under
    ``metadata/`` or ``write.metadata.path``), as Iceberg names it."""
    provider = load_location_provider(metadata.location, metadata.properties)
    return provider.new_table_metadata_file_location(version)


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
    table lost removed, parameters set by others kept)."""
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
    parameters.update({k: str(v) for k, v in metadata.properties.items() if k not in ours})
    parameters.update(ours)
    table.parameters = parameters
