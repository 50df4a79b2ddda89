"""Databases over a real socket: the default database, create/get/list/alter/drop and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_table


def test_default_database_exists_with_hms_owner(client, running) -> None:
    db = client.get_database("default")
    assert db.name == "default"
    assert db.ownerName == "public"
    assert db.ownerType == hms.PrincipalType.ROLE
    assert db.locationUri == "file:" + str(running.warehouse.absolute())


def test_create_get_and_list(client, running) -> None:
    client.create_database(hms.Database(name="Sales_DB", description="d", parameters={"a": "b"}))
    db = client.get_database("sales_db")
    assert db.name == "sales_db"
    assert db.parameters == {"a": "b"}
    assert db.locationUri == "file:" + str(running.warehouse.absolute() / "sales_db.db")
    assert Path(db.locationUri[len("file:") :]).is_dir()
    assert "sales_db" in client.get_all_databases()
    assert client.get_databases("sales*") == ["sales_db"]
    assert client.get_databases("nomatch*|default") == ["default"]
    assert client.get_databases("sales.db") == ["sales_db"]  # '.' is any character, as in HMS
    assert client.get_databases("") == []
    assert client.get_database("@hive#sales_db").name == "sales_db"


def test_create_existing_is_already_exists(client) -> None:
    create_db(client, "dup_db")
    with pytest.raises(hms.AlreadyExistsException) as info:
        create_db(client, "dup_db")
    assert "dup_db" in info.value.message


def test_invalid_database_name(client) -> None:
    with pytest.raises(hms.InvalidObjectException):
        client.create_database(hms.Database(name="bad name!", parameters={}))


def test_missing_database(client) -> None:
    with pytest.raises(hms.NoSuchObjectException) as info:
        client.get_database("nope")
    assert "nope" in info.value.message


def test_alter_database(client) -> None:
    create_db(client, "alter_db")
    client.alter_database(
        "alter_db", hms.Database(name="alter_db", description="new", parameters={"k": "v"})
    )
    db = client.get_database("alter_db")
    assert db.description == "new"
    assert db.parameters == {"k": "v"}


def test_drop_non_empty_database_needs_cascade(client, running) -> None:
    create_db(client, "full_db")
    client.create_table(make_table("full_db", "t"))
    with pytest.raises(hms.InvalidOperationException) as info:
        client.drop_database("full_db", True, False)
    assert "is not empty" in info.value.message
    location = Path(client.get_database("full_db").locationUri[len("file:") :])
    client.drop_database("full_db", True, True)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database("full_db")
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table("full_db", "t")
    assert not location.exists()


def test_drop_default_refused(client) -> None:
    with pytest.raises(hms.MetaException):
        client.drop_database("default", False, False)


def test_drop_missing_database(client) -> None:
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_database("never_was", False, False)
