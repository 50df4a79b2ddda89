"""Catalogs, databases within catalogs (``@cat#pattern`` as Hive 3/4 clients send it), the
database request forms, data connectors, the store UUID and the property store, over a real
socket."""

from __future__ import annotations

import uuid

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_table


def new_catalog(name: str, location: str = "file:/tmp/cat", description: str = "d") -> object:
    return hms.CreateCatalogRequest(
        catalog=hms.Catalog(name=name, description=description, locationUri=location)
    )


def connector(name: str, url: str = "jdbc:mysql://db:3306") -> hms.DataConnector:
    return hms.DataConnector(
        name=name, type="mysql", url=url, description="remote", parameters={"user": "u"}
    )


# -- catalogs ---------------------------------------------------------------------------------


def test_default_catalog_is_hive_at_the_warehouse_root(client, running) -> None:
    hive = client.get_catalog(hms.GetCatalogRequest(name="HIVE")).catalog
    assert hive.name == "hive"
    assert hive.locationUri == "file:" + str(running.warehouse.absolute())
    assert hive.description == "Default catalog for Hive"
    assert "hive" in client.get_catalogs().names
    with pytest.raises(hms.MetaException) as info:
        client.drop_catalog(hms.DropCatalogRequest(name="hive"))
    assert "hive" in info.value.message


def test_catalog_lifecycle(client) -> None:
    client.create_catalog(new_catalog("Life_Cat", location="file:/tmp/life"))
    with pytest.raises(hms.AlreadyExistsException):
        client.create_catalog(new_catalog("life_cat"))
    with pytest.raises(hms.InvalidObjectException):
        client.create_catalog(new_catalog("no_location", location=""))
    with pytest.raises(hms.InvalidObjectException):
        client.create_catalog(new_catalog("bad name!"))
    got = client.get_catalog(hms.GetCatalogRequest(name="LIFE_CAT")).catalog
    assert (got.name, got.locationUri, got.description) == ("life_cat", "file:/tmp/life", "d")
    assert got.createTime > 0
    assert {"hive", "life_cat"} <= set(client.get_catalogs().names)
    client.alter_catalog(
        hms.AlterCatalogRequest(
            name="life_cat",
            newCat=hms.Catalog(name="life_cat", description="new", locationUri="file:/tmp/n"),
        )
    )
    got = client.get_catalog(hms.GetCatalogRequest(name="life_cat")).catalog
    assert (got.locationUri, got.description) == ("file:/tmp/n", "new")
    with pytest.raises(hms.InvalidOperationException):
        client.alter_catalog(
            hms.AlterCatalogRequest(
                name="life_cat", newCat=hms.Catalog(name="other", locationUri="file:/x")
            )
        )
    client.drop_catalog(hms.DropCatalogRequest(name="Life_Cat"))
    assert "life_cat" not in client.get_catalogs().names
    with pytest.raises(hms.NoSuchObjectException):
        client.get_catalog(hms.GetCatalogRequest(name="life_cat"))
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_catalog(hms.DropCatalogRequest(name="life_cat"))
    with pytest.raises(hms.NoSuchObjectException):
        client.alter_catalog(
            hms.AlterCatalogRequest(name="life_cat", newCat=hms.Catalog(locationUri="file:/x"))
        )


def test_databases_live_in_their_catalog(client) -> None:
    client.create_catalog(new_catalog("spark"))
    client.create_database(hms.Database(name="Spark_Db", catalogName="SPARK", parameters={}))
    assert client.get_databases("@spark#") == ["spark_db"]
    assert client.get_databases("@SPARK#spark*") == ["spark_db"]
    assert "spark_db" not in client.get_all_databases()
    assert "spark_db" not in client.get_databases("@hive#")
    assert "spark_db" not in client.get_databases("*")
    assert client.get_database("@spark#spark_db").catalogName == "spark"
    request = hms.GetDatabaseRequest(name="spark_db", catalogName="spark")
    assert client.get_database_req(request).name == "spark_db"
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database("spark_db")  # no prefix: the hive catalog
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database_req(hms.GetDatabaseRequest(name="spark_db", catalogName="hive"))
    with pytest.raises(hms.NoSuchObjectException) as info:
        client.get_database("@nocat#spark_db")
    assert info.value.message == "Catalog nocat does not exist"
    with pytest.raises(hms.InvalidObjectException):
        client.create_database(hms.Database(name="orphan", catalogName="nocat", parameters={}))
    with pytest.raises(hms.InvalidOperationException):
        client.drop_catalog(hms.DropCatalogRequest(name="spark"))
    client.drop_database("@spark#spark_db", False, False)
    assert client.get_databases("@spark#") == []
    client.drop_catalog(hms.DropCatalogRequest(name="spark"))


def test_hive_client_call_sequence(client) -> None:
    """What a Hive 3.1/4 client sends to list databases and open one."""
    create_db(client, "sales_eu")
    create_db(client, "sales_us")
    client.create_table(make_table("sales_eu", "orders"))
    listed = client.get_databases("@hive#")
    assert {"default", "sales_eu", "sales_us"} <= set(listed)
    assert listed == sorted(listed)
    assert listed == client.get_all_databases()
    assert client.get_databases("@hive#sales*") == ["sales_eu", "sales_us"]
    assert client.get_databases("@hive#SALES_E*|nope") == ["sales_eu"]
    assert client.get_databases("@hive#!") == []  # the empty pattern matches none
    assert client.get_all_tables("@hive#sales_eu") == ["orders"]
    assert client.get_database("@hive#sales_eu").name == "sales_eu"
    assert client.get_databases("@unknown_catalog#") == []


# -- the database request forms -----------------------------------------------------------------


def test_database_request_forms(client, running) -> None:
    client.create_database_req(
        hms.CreateDatabaseRequest(
            databaseName="Req_Db", description="by request", parameters={"a": "1"}
        )
    )
    db = client.get_database("req_db")
    assert (db.description, db.parameters) == ("by request", {"a": "1"})
    assert db.locationUri == "file:" + str(running.warehouse.absolute() / "req_db.db")
    with pytest.raises(hms.AlreadyExistsException):
        client.create_database_req(hms.CreateDatabaseRequest(databaseName="req_db"))
    changed = hms.Database(name="req_db", description="altered", parameters={"b": "2"})
    client.alter_database_req(hms.AlterDatabaseRequest(oldDbName="req_db", newDb=changed))
    db = client.get_database("req_db")
    assert (db.description, db.parameters) == ("altered", {"b": "2"})
    with pytest.raises(hms.NoSuchObjectException):
        client.alter_database_req(hms.AlterDatabaseRequest(oldDbName="nope_db", newDb=changed))
    client.create_table(make_table("req_db", "t"))
    drop = hms.DropDatabaseRequest(
        name="req_db", ignoreUnknownDb=False, deleteData=True, cascade=False
    )
    with pytest.raises(hms.InvalidOperationException):
        client.drop_database_req(drop)
    drop.cascade = True
    client.drop_database_req(drop)
    assert "req_db" not in client.get_all_databases()
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_database_req(drop)
    drop.ignoreUnknownDb = True
    client.drop_database_req(drop)  # no error


# -- data connectors ----------------------------------------------------------------------------


def test_impala_start_sequence(start_server) -> None:
    """catalogd lists connectors on every reset (start included), then reads each."""
    client = start_server().client()
    assert client.get_dataconnectors() == []
    client.create_dataconnector_req(hms.CreateDataConnectorRequest(connector=connector("My_Sql")))
    assert client.get_dataconnectors() == ["my_sql"]
    got = client.get_dataconnector_req(hms.GetDataConnectorRequest(connectorName="my_sql"))
    assert (got.name, got.type, got.url, got.parameters) == (
        "my_sql",
        "mysql",
        "jdbc:mysql://db:3306",
        {"user": "u"},
    )
    with pytest.raises(hms.AlreadyExistsException):
        client.create_dataconnector_req(
            hms.CreateDataConnectorRequest(connector=connector("my_sql"))
        )
    client.alter_dataconnector_req(
        hms.AlterDataConnectorRequest(
            connectorName="my_sql", newConnector=connector("my_sql", url="jdbc:mysql://new:1")
        )
    )
    got = client.get_dataconnector_req(hms.GetDataConnectorRequest(connectorName="MY_SQL"))
    assert got.url == "jdbc:mysql://new:1"
    client.drop_dataconnector_req(hms.DropDataConnectorRequest(connectorName="my_sql"))
    assert client.get_dataconnectors() == []
    with pytest.raises(hms.NoSuchObjectException):
        client.get_dataconnector_req(hms.GetDataConnectorRequest(connectorName="my_sql"))
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_dataconnector_req(hms.DropDataConnectorRequest(connectorName="my_sql"))
    client.drop_dataconnector_req(
        hms.DropDataConnectorRequest(connectorName="my_sql", ifNotExists=True)
    )
    client.close()


def test_remote_database_names_an_existing_connector(client) -> None:
    def remote(name: str, connector_name: str | None) -> hms.Database:
        return hms.Database(
            name=name,
            parameters={},
            type=hms.DatabaseType.REMOTE,
            connector_name=connector_name,
            remote_dbname="shop",
        )

    with pytest.raises(hms.InvalidObjectException):
        client.create_database(remote("remote_db", "no_such_connector"))
    with pytest.raises(hms.InvalidObjectException):
        client.create_database(remote("remote_db", None))
    client.create_dataconnector_req(hms.CreateDataConnectorRequest(connector=connector("pg")))
    client.create_database(remote("remote_db", "PG"))
    db = client.get_database("remote_db")
    assert (db.type, db.connector_name, db.remote_dbname) == (hms.DatabaseType.REMOTE, "pg", "shop")
    assert "remote_db" in client.get_databases("@hive#")
    with pytest.raises(hms.InvalidOperationException):
        client.drop_dataconnector_req(hms.DropDataConnectorRequest(connectorName="pg"))
    client.drop_database("remote_db", False, False)
    client.drop_dataconnector_req(hms.DropDataConnectorRequest(connectorName="pg"))


# -- the store UUID and properties ---------------------------------------------------------------


def test_properties(client) -> None:
    assert client.set_properties(
        hms.PropertySetRequest(
            nameSpace="ns",
            propertyMap={
                "db0.t1.fillFactor": "90",
                "db0.t1.owner": "ann",
                "db0.t2.fillFactor": "50",
                "db1.t1.fillFactor": "90",
            },
        )
    )

    def get(prefix: str, predicate: str | None = None, selection=None) -> dict:
        request = hms.PropertyGetRequest(
            nameSpace="ns", mapPrefix=prefix, mapPredicate=predicate, mapSelection=selection
        )
        return client.get_properties(request).properties

    assert get("db0.") == {
        "db0.t1": {"fillFactor": "90", "owner": "ann"},
        "db0.t2": {"fillFactor": "50"},
    }
    assert set(get("")) == {"db0.t1", "db0.t2", "db1.t1"}
    assert get("db0.t1") == {"db0.t1": {"fillFactor": "90", "owner": "ann"}}
    assert get("db", "fillFactor == '90'", ["fillFactor"]) == {
        "db0.t1": {"fillFactor": "90"},
        "db1.t1": {"fillFactor": "90"},
    }
    assert set(get("db", "fillFactor == '90' && owner != 'ann'")) == {"db1.t1"}
    assert (
        client.get_properties(hms.PropertyGetRequest(nameSpace="other", mapPrefix="")).properties
        == {}
    )
    with pytest.raises(hms.MetaException):
        get("db", "fillFactor > 50")
    with pytest.raises(hms.MetaException):
        client.set_properties(hms.PropertySetRequest(nameSpace="ns", propertyMap={"nodot": "1"}))


def test_state_survives_restart_and_is_shared(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    a, b = first.client(), second.client()
    store_uuid = a.get_metastore_db_uuid()
    assert uuid.UUID(store_uuid)
    assert b.get_metastore_db_uuid() == store_uuid
    a.create_catalog(new_catalog("shared_cat"))
    a.create_database(hms.Database(name="in_shared", catalogName="shared_cat", parameters={}))
    a.create_dataconnector_req(hms.CreateDataConnectorRequest(connector=connector("conn")))
    a.set_properties(hms.PropertySetRequest(nameSpace="ns", propertyMap={"m.p": "v"}))
    assert "shared_cat" in b.get_catalogs().names
    assert b.get_databases("@shared_cat#") == ["in_shared"]
    assert b.get_dataconnectors() == ["conn"]
    with pytest.raises(hms.AlreadyExistsException):
        b.create_catalog(new_catalog("shared_cat"))
    a.close()
    b.close()
    storage = first.config.storage
    first.stop()
    second.stop()
    again = start_server(storage=storage).client()
    assert again.get_metastore_db_uuid() == store_uuid
    assert again.get_databases("@shared_cat#") == ["in_shared"]
    assert (
        again.get_dataconnector_req(hms.GetDataConnectorRequest(connectorName="conn")).url
        == "jdbc:mysql://db:3306"
    )
    request = hms.PropertyGetRequest(nameSpace="ns", mapPrefix="m")
    assert again.get_properties(request).properties == {"m": {"p": "v"}}
    again.close()
