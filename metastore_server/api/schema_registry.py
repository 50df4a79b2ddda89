"""The schema registry calls of HMS 4: schemas, their versions and named serdes, stored and
read back. See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class SchemaRegistryCalls(Area):
    """Schemas. Raises NoSuchObjectException (no such schema, version, serde or database),
    AlreadyExistsException, InvalidOperationException (dropping a schema with versions) and
    MetaException (a request without names)."""

    @thrift(since="3", rule=auth.event("CREATE_ISCHEMA"))
    def create_ischema(self, schema: hms.ISchema) -> None:
        """Create a schema in an existing database."""
        self.catalog.schemas.create(schema)

    @thrift(since="3", rule=auth.event("ALTER_ISCHEMA"))
    def alter_ischema(self, rqst: hms.AlterISchemaRequest) -> None:
        """Change a schema's settings."""
        self.catalog.schemas.alter(rqst)

    @thrift(since="3", rule=auth.event("READ_ISCHEMA"))
    def get_ischema(self, name: hms.ISchemaName) -> hms.ISchema:
        """A schema."""
        return self.catalog.schemas.get(name)

    @thrift(since="3", rule=auth.event("DROP_ISCHEMA"))
    def drop_ischema(self, name: hms.ISchemaName) -> None:
        """Drop a schema without versions."""
        self.catalog.schemas.drop(name)

    @thrift(since="3", rule=auth.event("ADD_SCHEMA_VERSION"))
    def add_schema_version(self, schemaVersion: hms.SchemaVersion) -> None:  # noqa: N803
        """Add a version to a schema."""
        self.catalog.schemas.add_version(schemaVersion)

    @thrift(since="3", rule=auth.event("READ_SCHEMA_VERSION"))
    def get_schema_version(self, schemaVersion: hms.SchemaVersionDescriptor) -> hms.SchemaVersion:  # noqa: N803
        """One version of a schema."""
        return self.catalog.schemas.version(schemaVersion)

    @thrift(since="3", rule=auth.event("READ_SCHEMA_VERSION"))
    def get_schema_latest_version(self, schemaName: hms.ISchemaName) -> hms.SchemaVersion:  # noqa: N803
        """A schema's version of the highest number."""
        return self.catalog.schemas.latest(schemaName)

    @thrift(since="3", rule=auth.event("READ_SCHEMA_VERSION"))
    def get_schema_all_versions(self, schemaName: hms.ISchemaName) -> list[hms.SchemaVersion]:  # noqa: N803
        """Every version of a schema."""
        return self.catalog.schemas.versions(schemaName)

    @thrift(since="3", rule=auth.event("DROP_SCHEMA_VERSION"))
    def drop_schema_version(self, schemaVersion: hms.SchemaVersionDescriptor) -> None:  # noqa: N803
        """Drop one version."""
        self.catalog.schemas.drop_version(schemaVersion)

    @thrift(since="3", rule=auth.event("READ_SCHEMA_VERSION"))
    def get_schemas_by_cols(self, rqst: hms.FindSchemasByColsRqst) -> hms.FindSchemasByColsResp:
        """The versions having a matching column."""
        return self.catalog.schemas.by_cols(rqst)

    @thrift(since="3", rule=auth.event("ALTER_SCHEMA_VERSION"))
    def map_schema_version_to_serde(self, rqst: hms.MapSchemaVersionToSerdeRequest) -> None:
        """Give a version a named serde."""
        self.catalog.schemas.map_serde(rqst)

    @thrift(since="3", rule=auth.event("ALTER_SCHEMA_VERSION"))
    def set_schema_version_state(self, rqst: hms.SetSchemaVersionStateRequest) -> None:
        """Record a version's state."""
        self.catalog.schemas.set_state(rqst)

    @thrift(since="3", rule=auth.API)
    def add_serde(self, serde: hms.SerDeInfo) -> None:
        """Store a named serde."""
        self.catalog.schemas.add_serde(serde)

    @thrift(since="3", rule=auth.OPEN)
    def get_serde(self, rqst: hms.GetSerdeRequest) -> hms.SerDeInfo:
        """A named serde."""
        return self.catalog.schemas.serde(rqst)
