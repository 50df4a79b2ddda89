"""The schema registry (``create_ischema`` and friends) and named serdes (``add_serde``,
``get_serde``), stored as HMS 4 keeps them.

A schema is named by catalog, database (which must exist) and name, lower-case; its versions by
the schema and a number. A schema with versions is not dropped. The latest version is the one
of the highest number. ``get_schemas_by_cols`` finds the versions having a column of that name
(either case), comment (HMS matches ``colNamespace`` against the column's comment) and type,
each when given. A serde is named as sent; mapping a version to one copies it into the version.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import CAS_TRIES, NamedRows, Stored
from metastore_server.catalog.objects.databases import Databases
from metastore_server.thrift_api import hms

_ALTERED = ("schemaType", "compatibility", "validationLevel", "canEvolve", "schemaGroup",
            "description")  # fmt: skip


def _schema_parts(name: hms.ISchemaName | None) -> tuple[str, str, str]:
    """The row name of a schema; MetaException when a part is missing."""
    if name is None:
        raise hms.MetaException(message="A schema name is required")
    parts = (
        names.normalize(name.catName) or names.DEFAULT_CATALOG,
        names.normalize(name.dbName),
        names.normalize(name.schemaName),
    )
    if not parts[1] or not parts[2] or any("\x00" in part for part in parts):
        raise hms.MetaException(message="A schema needs its database and name")
    return parts


def _label(parts: tuple[str, ...]) -> str:
    return ".".join(parts)


def _version_parts(descriptor: hms.SchemaVersionDescriptor | None) -> tuple[str, ...]:
    if descriptor is None or descriptor.version is None:
        raise hms.MetaException(message="A schema version descriptor needs its version")
    return (*_schema_parts(descriptor.schema), f"{descriptor.version + 2**31:011d}")


class Schemas:
    """Schemas, their versions, and serdes on the store."""

    def __init__(self, ctx: CatalogContext, databases: Databases) -> None:
        self._ctx = ctx
        self._databases = databases
        self._schemas = NamedRows(ctx.store, "ischema", hms.ISchema)
        self._versions = NamedRows(ctx.store, "schemaversion", hms.SchemaVersion)
        self._serdes = NamedRows(ctx.store, "serde", hms.SerDeInfo)

    def create(self, schema: hms.ISchema | None) -> None:
        """Create a schema in an existing database."""
        if schema is None:
            raise hms.MetaException(message="A schema is required")
        parts = _schema_parts(hms.ISchemaName(schema.catName, schema.dbName, schema.name))
        if parts[0] != names.DEFAULT_CATALOG or self._databases.find(parts[1]) is None:
            raise hms.NoSuchObjectException(
                message=f"Database {parts[0]}.{parts[1]} does not exist"
            )
        stored = copy.deepcopy(schema)
        stored.catName, stored.dbName, stored.name = parts
        if not self._schemas.create(parts, stored):
            raise hms.AlreadyExistsException(
                message=f"Schema with name {_label(parts)} already exists"
            )

    def _read(self, name: hms.ISchemaName | None) -> Stored[hms.ISchema]:
        parts = _schema_parts(name)
        stored = self._schemas.read(parts)
        if stored is None:
            raise hms.NoSuchObjectException(message=f"No schema named {_label(parts)} exists")
        return stored

    def get(self, name: hms.ISchemaName | None) -> hms.ISchema:
        """A schema."""
        return self._read(name).obj

    def alter(self, request: hms.AlterISchemaRequest | None) -> None:
        """Change a schema's settings (not its name)."""
        request = request or hms.AlterISchemaRequest()
        if request.newSchema is None:
            raise hms.MetaException(message="The new schema is required")
        for _ in range(CAS_TRIES):
            was = self._read(request.name)
            altered = copy.deepcopy(was.obj)
            for field in _ALTERED:
                setattr(altered, field, getattr(request.newSchema, field))
            if self._schemas.replace(was, altered):
                return
        raise hms.MetaException(message="The schema kept changing meanwhile")

    def drop(self, name: hms.ISchemaName | None) -> None:
        """Drop a schema that has no versions."""
        for _ in range(CAS_TRIES):
            was = self._read(name)
            if next(self._versions.scan(was.parts), None) is not None:
                raise hms.InvalidOperationException(
                    message=f"Schema {_label(was.parts)} cannot be dropped, it has at least one "
                    "schema version"
                )
            if self._schemas.delete(was):
                return
        raise hms.MetaException(message="The schema kept changing meanwhile")

    def add_version(self, version: hms.SchemaVersion | None) -> None:
        """Add a version of an existing schema."""
        if version is None:
            raise hms.MetaException(message="A schema version is required")
        schema = self._read(version.schema)
        parts = _version_parts(hms.SchemaVersionDescriptor(version.schema, version.version))
        stored = copy.deepcopy(version)
        stored.schema = hms.ISchemaName(*schema.parts)
        stored.createdAt = stored.createdAt or self._ctx.now()
        stored.state = stored.state or hms.SchemaVersionState.INITIATED
        if not self._versions.create(parts, stored):
            raise hms.AlreadyExistsException(
                message=f"Schema version {_label(schema.parts)} {version.version} already exists"
            )

    def _read_version(
        self, descriptor: hms.SchemaVersionDescriptor | None
    ) -> Stored[hms.SchemaVersion]:
        parts = _version_parts(descriptor)  # (refuses a missing descriptor)
        stored = self._versions.read(parts)
        if stored is None:
            version = descriptor.version if descriptor is not None else None
            raise hms.NoSuchObjectException(
                message=f"No schema version {_label(parts[:3])} {version} exists"
            )
        return stored

    def version(self, descriptor: hms.SchemaVersionDescriptor | None) -> hms.SchemaVersion:
        """One version."""
        return self._read_version(descriptor).obj

    def versions(self, name: hms.ISchemaName | None) -> list[hms.SchemaVersion]:
        """Every version of a schema, oldest first; NoSuchObjectException when there is none."""
        parts = _schema_parts(name)
        found = [stored.obj for stored in self._versions.scan(parts)]
        if not found:
            raise hms.NoSuchObjectException(message=f"No versions of schema {_label(parts)}")
        return found

    def latest(self, name: hms.ISchemaName | None) -> hms.SchemaVersion:
        """The version of the highest number."""
        return self.versions(name)[-1]

    def drop_version(self, descriptor: hms.SchemaVersionDescriptor | None) -> None:
        """Drop one version."""
        for _ in range(CAS_TRIES):
            if self._versions.delete(self._read_version(descriptor)):
                return
        raise hms.MetaException(message="The schema version kept changing meanwhile")

    def _change_version(
        self, descriptor: hms.SchemaVersionDescriptor | None, field: str, value: object
    ) -> None:
        for _ in range(CAS_TRIES):
            was = self._read_version(descriptor)
            changed = copy.deepcopy(was.obj)
            setattr(changed, field, value)
            if self._versions.replace(was, changed):
                return
        raise hms.MetaException(message="The schema version kept changing meanwhile")

    def set_state(self, request: hms.SetSchemaVersionStateRequest | None) -> None:
        """Record a version's state."""
        request = request or hms.SetSchemaVersionStateRequest()
        if request.state is None:
            raise hms.MetaException(message="A state is required")
        self._change_version(request.schemaVersion, "state", request.state)

    def map_serde(self, request: hms.MapSchemaVersionToSerdeRequest | None) -> None:
        """Give a version a named serde."""
        request = request or hms.MapSchemaVersionToSerdeRequest()
        self._read_version(request.schemaVersion)
        serde = self.serde(hms.GetSerdeRequest(serdeName=request.serdeName))
        self._change_version(request.schemaVersion, "serDe", serde)

    def by_cols(self, request: hms.FindSchemasByColsRqst | None) -> hms.FindSchemasByColsResp:
        """The versions having a column matching every criterion given."""
        request = request or hms.FindSchemasByColsRqst()
        if request.colName is None and request.colNamespace is None and request.type is None:
            raise hms.MetaException(
                message="You must provide at least one of colName, colNamespace, or type"
            )

        def matches(col: hms.FieldSchema) -> bool:
            return (
                (request.colName is None or (col.name or "").lower() == request.colName.lower())
                and (request.colNamespace is None or col.comment == request.colNamespace)
                and (request.type is None or (col.type or "").lower() == request.type.lower())
            )

        found = [
            hms.SchemaVersionDescriptor(schema=stored.obj.schema, version=stored.obj.version)
            for stored in self._versions.scan()
            if any(matches(col) for col in stored.obj.cols or [])
        ]
        return hms.FindSchemasByColsResp(schemaVersions=found)

    def add_serde(self, serde: hms.SerDeInfo | None) -> None:
        """Store a named serde."""
        if serde is None or not serde.name or "\x00" in serde.name:
            raise hms.MetaException(message="A serde needs its name")
        if not self._serdes.create((serde.name,), serde):
            raise hms.AlreadyExistsException(message=f"Serde with name {serde.name} already exists")

    def serde(self, request: hms.GetSerdeRequest | None) -> hms.SerDeInfo:
        """A named serde."""
        name = (request or hms.GetSerdeRequest()).serdeName
        if not name or "\x00" in name:
            raise hms.MetaException(message="A serde name is required")
        found = self._serdes.find((name,))
        if found is None:
            raise hms.NoSuchObjectException(message=f"No serde named {name} exists")
        return found
