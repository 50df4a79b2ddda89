"""Stored procedures and packages (HPL/SQL) over a real socket: kept by catalog, database and
name in existing databases, created or replaced, read, listed and dropped as HMS 4 does."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db


def procedure(db: str, name: str, source: str = "BEGIN NULL; END") -> hms.StoredProcedure:
    return hms.StoredProcedure(name=name, dbName=db, catName="hive", ownerName="bob", source=source)


def proc_request(db: str, name: str) -> hms.StoredProcedureRequest:
    return hms.StoredProcedureRequest(catName="hive", dbName=db, procName=name)


def test_stored_procedure_lifecycle(client) -> None:
    create_db(client, "pdb")
    create_db(client, "pdb2")
    client.create_stored_procedure(procedure("PDB", "Greet"))
    client.create_stored_procedure(procedure("pdb", "other"))
    client.create_stored_procedure(procedure("pdb2", "third"))
    got = client.get_stored_procedure(proc_request("pdb", "GREET"))
    assert (got.name, got.dbName, got.catName, got.source) == (
        "greet",
        "pdb",
        "hive",
        "BEGIN NULL; END",
    )
    # creating an existing name replaces it (HMS creates or updates)
    client.create_stored_procedure(procedure("pdb", "greet", "BEGIN PRINT 1; END"))
    assert client.get_stored_procedure(proc_request("pdb", "greet")).source == "BEGIN PRINT 1; END"
    listed = client.get_all_stored_procedures
    assert listed(hms.ListStoredProcedureRequest(catName="hive", dbName="pdb")) == [
        "greet",
        "other",
    ]
    assert listed(hms.ListStoredProcedureRequest(catName="hive")) == ["greet", "other", "third"]
    assert listed(hms.ListStoredProcedureRequest(catName="spark")) == []
    client.drop_stored_procedure(proc_request("pdb", "greet"))
    client.drop_stored_procedure(proc_request("pdb", "greet"))  # not there: nothing happens
    with pytest.raises(hms.NoSuchObjectException, match="not found"):
        client.get_stored_procedure(proc_request("pdb", "greet"))
    assert listed(hms.ListStoredProcedureRequest(catName="hive", dbName="pdb")) == ["other"]


def test_stored_procedure_needs_its_database(client) -> None:
    with pytest.raises(hms.NoSuchObjectException, match="does not exist"):
        client.create_stored_procedure(procedure("no_such_db", "p"))
    with pytest.raises(hms.MetaException):
        client.create_stored_procedure(procedure("pdb", ""))


def package_request(db: str, name: str, body: str = "PROCEDURE p; END") -> hms.AddPackageRequest:
    return hms.AddPackageRequest(
        catName="hive", dbName=db, packageName=name, ownerName="bob", header="h", body=body
    )


def test_package_lifecycle(client) -> None:
    create_db(client, "kdb")
    client.add_package(package_request("kdb", "Util"))
    client.add_package(package_request("kdb", "more"))
    found = client.find_package(
        hms.GetPackageRequest(catName="hive", dbName="KDB", packageName="util")
    )
    assert (found.packageName, found.dbName, found.header, found.body) == (
        "util",
        "kdb",
        "h",
        "PROCEDURE p; END",
    )
    client.add_package(package_request("kdb", "util", "PROCEDURE q; END"))
    again = client.find_package(
        hms.GetPackageRequest(catName="hive", dbName="kdb", packageName="util")
    )
    assert again.body == "PROCEDURE q; END"
    assert client.get_all_packages(hms.ListPackageRequest(catName="hive", dbName="kdb")) == [
        "more",
        "util",
    ]
    client.drop_package(hms.DropPackageRequest(catName="hive", dbName="kdb", packageName="util"))
    client.drop_package(hms.DropPackageRequest(catName="hive", dbName="kdb", packageName="util"))
    with pytest.raises(hms.NoSuchObjectException):
        client.find_package(hms.GetPackageRequest(catName="hive", dbName="kdb", packageName="util"))
    assert client.get_all_packages(hms.ListPackageRequest(catName="hive")) == ["more"]
    with pytest.raises(hms.MetaException, match="does not exist"):
        client.add_package(package_request("no_such_db", "p"))


def test_procedures_and_packages_are_separate_names(client) -> None:
    create_db(client, "sdb")
    client.create_stored_procedure(procedure("sdb", "same"))
    client.add_package(package_request("sdb", "same"))
    client.drop_package(hms.DropPackageRequest(catName="hive", dbName="sdb", packageName="same"))
    assert client.get_stored_procedure(proc_request("sdb", "same")).name == "same"
