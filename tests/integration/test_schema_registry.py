"""The schema registry over a real socket: schemas in existing databases, their numbered
versions with states and serdes, and named serdes, with HMS 4's uniqueness and errors."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import RunningServer, column, create_db


@pytest.fixture(scope="module", autouse=True)
def database(running: RunningServer) -> None:
    """The database every schema of the module lives in."""
    connection = running.client()
    create_db(connection, "sdb")
    connection.close()


def schema_name(name: str, db: str = "sdb") -> hms.ISchemaName:
    return hms.ISchemaName(catName="hive", dbName=db, schemaName=name)


def make_schema(name: str, db: str = "sdb") -> hms.ISchema:
    return hms.ISchema(
        schemaType=hms.SchemaType.AVRO, name=name, catName="hive", dbName=db,
        compatibility=hms.SchemaCompatibility.BACKWARD,
        validationLevel=hms.SchemaValidation.ALL, canEvolve=True, description="first",
    )  # fmt: skip


def make_version(name: str, number: int, *cols: hms.FieldSchema) -> hms.SchemaVersion:
    return hms.SchemaVersion(
        schema=schema_name(name), version=number, createdAt=100 + number, cols=list(cols),
        schemaText="{}",
    )  # fmt: skip


def descriptor(name: str, number: int) -> hms.SchemaVersionDescriptor:
    return hms.SchemaVersionDescriptor(schema=schema_name(name), version=number)


def test_schema_lifecycle(client) -> None:
    client.create_ischema(make_schema("Orders"))
    got = client.get_ischema(schema_name("orders"))
    assert (got.name, got.dbName, got.compatibility) == ("orders", "sdb", 2)
    with pytest.raises(hms.AlreadyExistsException):
        client.create_ischema(make_schema("orders"))
    with pytest.raises(hms.NoSuchObjectException):
        client.create_ischema(make_schema("x", db="no_such_db"))
    changed = make_schema("ignored")
    changed.description, changed.canEvolve = "second", False
    client.alter_ischema(hms.AlterISchemaRequest(name=schema_name("orders"), newSchema=changed))
    altered = client.get_ischema(schema_name("orders"))
    assert (altered.name, altered.description, altered.canEvolve) == ("orders", "second", False)
    with pytest.raises(hms.NoSuchObjectException):
        client.alter_ischema(hms.AlterISchemaRequest(name=schema_name("nope"), newSchema=changed))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_schema_all_versions(schema_name("orders"))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_schema_latest_version(schema_name("orders"))
    client.add_schema_version(make_version("orders", 1, column("id", "bigint")))
    client.add_schema_version(
        make_version("orders", 10, column("id", "bigint"), column("Amt", "double"))
    )
    client.add_schema_version(make_version("orders", 2, column("id", "int")))
    with pytest.raises(hms.AlreadyExistsException):
        client.add_schema_version(make_version("orders", 2))
    with pytest.raises(hms.NoSuchObjectException):
        client.add_schema_version(make_version("nope", 1))
    assert [v.version for v in client.get_schema_all_versions(schema_name("orders"))] == [1, 2, 10]
    latest = client.get_schema_latest_version(schema_name("orders"))
    assert (latest.version, latest.state, latest.createdAt) == (
        10,
        hms.SchemaVersionState.INITIATED,
        110,
    )
    with pytest.raises(hms.InvalidOperationException, match="at least one schema version"):
        client.drop_ischema(schema_name("orders"))
    client.set_schema_version_state(
        hms.SetSchemaVersionStateRequest(schemaVersion=descriptor("orders", 2),
                                         state=hms.SchemaVersionState.ENABLED))  # fmt: skip
    assert (
        client.get_schema_version(descriptor("orders", 2)).state == hms.SchemaVersionState.ENABLED
    )
    with pytest.raises(hms.NoSuchObjectException):
        client.get_schema_version(descriptor("orders", 3))
    for number in (1, 2, 10):
        client.drop_schema_version(descriptor("orders", number))
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_schema_version(descriptor("orders", 1))
    client.drop_ischema(schema_name("orders"))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_ischema(schema_name("orders"))


def test_schemas_by_columns(client) -> None:
    client.create_ischema(make_schema("cols"))
    noted = column("id", "bigint")
    noted.comment = "ns1"
    client.add_schema_version(make_version("cols", 1, noted))
    client.add_schema_version(make_version("cols", 2, column("ID", "int")))

    def find(**criteria: str) -> list[int]:
        answer = client.get_schemas_by_cols(hms.FindSchemasByColsRqst(**criteria))
        return [d.version for d in answer.schemaVersions if d.schema.schemaName == "cols"]

    assert find(colName="id") == [1, 2]
    assert find(colName="id", type="bigint") == [1]
    assert find(colNamespace="ns1") == [1]
    assert find(type="string") == []
    with pytest.raises(hms.MetaException, match="at least one"):
        client.get_schemas_by_cols(hms.FindSchemasByColsRqst())


def test_serdes(client) -> None:
    serde = hms.SerDeInfo(
        name="AvroSerde",
        serializationLib="org.example.Avro",
        parameters={"a": "1"},
        serdeType=hms.SerdeType.SCHEMA_REGISTRY,
    )
    client.add_serde(serde)
    with pytest.raises(hms.AlreadyExistsException):
        client.add_serde(serde)
    assert client.get_serde(hms.GetSerdeRequest(serdeName="AvroSerde")) == serde
    with pytest.raises(hms.NoSuchObjectException):
        client.get_serde(hms.GetSerdeRequest(serdeName="nope"))
    client.create_ischema(make_schema("mapped"))
    client.add_schema_version(make_version("mapped", 1))
    mapped = descriptor("mapped", 1)
    client.map_schema_version_to_serde(
        hms.MapSchemaVersionToSerdeRequest(schemaVersion=mapped, serdeName="AvroSerde")
    )
    assert client.get_schema_version(descriptor("mapped", 1)).serDe == serde
    with pytest.raises(hms.NoSuchObjectException):
        client.map_schema_version_to_serde(
            hms.MapSchemaVersionToSerdeRequest(schemaVersion=mapped, serdeName="nope")
        )
