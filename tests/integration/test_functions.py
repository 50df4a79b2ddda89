"""Functions over a real socket."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db


def make_function(db: str, name: str) -> hms.Function:
    return hms.Function(
        functionName=name,
        dbName=db,
        className="com.example.Upper",
        ownerName="me",
        ownerType=hms.PrincipalType.USER,
        createTime=0,
        functionType=hms.FunctionType.JAVA,
        resourceUris=[hms.ResourceUri(resourceType=hms.ResourceType.JAR, uri="file:/tmp/u.jar")],
    )


def test_function_lifecycle(client) -> None:
    create_db(client, "fdb")
    client.create_function(make_function("fdb", "My_Upper"))
    function = client.get_function("fdb", "my_upper")
    assert function.className == "com.example.Upper"
    assert function.resourceUris[0].uri == "file:/tmp/u.jar"
    assert client.get_functions("fdb", "my_*") == ["my_upper"]
    assert "my_upper" in [f.functionName for f in client.get_all_functions().functions]
    with pytest.raises(hms.AlreadyExistsException):
        client.create_function(make_function("fdb", "my_upper"))
    changed = make_function("fdb", "my_upper")
    changed.className = "com.example.Lower"
    client.alter_function("fdb", "my_upper", changed)
    assert client.get_function("fdb", "my_upper").className == "com.example.Lower"
    client.drop_function("fdb", "my_upper")
    with pytest.raises(hms.NoSuchObjectException):
        client.get_function("fdb", "my_upper")


def test_function_in_missing_database(client) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        client.create_function(make_function("no_db", "f"))
