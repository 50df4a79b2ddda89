"""PySpark's built-in Hive 2.3 client against ``--authorization privileges`` (in-process server,
127.0.0.1 only, ``--auth none``: Spark's client names its user with ``set_ugi``).

Alice (a Python client claiming her name) owns a database and a table in it; Spark's user may not
read that table until alice grants SELECT, may never drop it or create a table in alice's
database, and sees HMS's refusal in its error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.net import MetastoreEndpoint
from support.spark_session import local_spark

from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig
from metastore_server.thrift_api import hms, make_client

pytestmark = pytest.mark.spark

DB = "authz_spark"
USER = hms.PrincipalType.USER


@pytest.fixture(scope="module")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetastoreEndpoint]:
    """Our server with --authorization privileges, in this process, on a free loopback port."""
    work = tmp_path_factory.mktemp("spark-authz")
    warehouse = work / "warehouse"
    warehouse.mkdir()
    config = ServerConfig(host="127.0.0.1", port=0, storage=f"sqlite:///{work / 'metastore.db'}",
                          warehouse=str(warehouse), authorization="privileges")  # fmt: skip
    config.validate()
    server, close = build_server(config)
    server.start()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.address
    try:
        yield MetastoreEndpoint(host, port, str(warehouse))
    finally:
        server.stop()
        close()


@pytest.fixture(scope="module")
def alice(metastore: MetastoreEndpoint) -> Iterator[Any]:
    """A client claiming to be alice, owner of database DB and its table ``orders``."""
    client = make_client(metastore.host, metastore.port)
    client.set_ugi("alice", [])
    client.create_database(hms.Database(name=DB, description="", parameters={},
                                        ownerName="alice", ownerType=USER))  # fmt: skip
    sd = hms.StorageDescriptor(
        cols=[hms.FieldSchema(name="id", type="int")],
        location=str(Path(metastore.warehouse_dir) / DB / "orders"),
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=hms.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={"serialization.format": "1"},
        ),
        bucketCols=[], sortCols=[], parameters={}, numBuckets=-1, compressed=False,
    )  # fmt: skip
    client.create_table(hms.Table(tableName="orders", dbName=DB, owner="alice", sd=sd,
                                  partitionKeys=[], parameters={}, tableType="MANAGED_TABLE",
                                  createTime=0, lastAccessTime=0, retention=0))  # fmt: skip
    yield client
    client.close()


@pytest.fixture(scope="module")
def spark(metastore: MetastoreEndpoint, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    scratch = tmp_path_factory.mktemp("spark-authz-session")
    with local_spark(metastore, scratch, "metastore-authz") as session:
        yield session


def _spark_user(spark: Any, alice: Any) -> str:
    """The user Spark's client claims: the owner of a table Spark creates in ``default``
    (which everyone owns)."""
    spark.sql("CREATE TABLE IF NOT EXISTS default.spark_own (v INT) USING parquet")
    [table] = alice.get_table_objects_by_name("default", ["spark_own"])  # a listing: open
    return str(table.owner)


def test_spark_reads_only_with_select_and_never_drops_what_it_does_not_own(
    spark: Any, alice: Any
) -> None:
    user = _spark_user(spark, alice)
    assert user and user != "alice"
    with pytest.raises(Exception) as refused:  # noqa: B017 - Spark wraps the MetaException
        spark.sql(f"SELECT * FROM {DB}.orders").collect()
    assert (
        f"Permission denied: Principal [name={user}, type=USER] does not have following "
        f"privileges for operation QUERY [[SELECT] on Object [type=TABLE_OR_VIEW, "
        f"name={DB}.orders]]"
    ) in str(refused.value)

    info = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="alice",
                                  grantorType=USER, grantOption=False)  # fmt: skip
    ref = hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName=DB, objectName="orders")
    alice.grant_privileges(hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=ref, principalName=user, principalType=USER,
        grantInfo=info)]))  # fmt: skip
    assert spark.sql(f"SELECT * FROM {DB}.orders").collect() == []

    with pytest.raises(Exception) as refused:  # noqa: B017
        spark.sql(f"DROP TABLE {DB}.orders")
    assert "for operation DROPTABLE [[OBJECT OWNERSHIP]" in str(refused.value)
    assert alice.get_table(DB, "orders").tableName == "orders"

    with pytest.raises(Exception) as refused:  # noqa: B017
        spark.sql(f"CREATE TABLE {DB}.spark_made (v INT) USING parquet")
    assert (
        f"for operation CREATETABLE [[OBJECT OWNERSHIP] on Object [type=DATABASE, name={DB}]]"
        in str(refused.value)
    )
    assert "spark_made" not in alice.get_all_tables(DB)
    spark.sql("DROP TABLE default.spark_own")  # its own table: allowed
    assert "spark_own" not in alice.get_all_tables("default")


def test_spark_writes_at_default_locations_and_never_at_anothers(spark: Any, alice: Any,
                                                                  metastore: MetastoreEndpoint,
                                                                  ) -> None:  # fmt: skip
    """Locations are owned: Spark's own database, table and partitions (at the default
    locations Spark sends) work; a table at alice's table's directory is refused."""
    spark.sql("CREATE DATABASE IF NOT EXISTS spark_own_db")
    spark.sql("CREATE TABLE spark_own_db.events (v INT, ds STRING, hr STRING) USING parquet "
              "PARTITIONED BY (ds, hr)")  # fmt: skip
    spark.sql("INSERT INTO spark_own_db.events PARTITION (ds='2024-01-01', hr='10:00') "
              "VALUES (1), (2)")  # fmt: skip
    spark.sql("INSERT INTO spark_own_db.events VALUES (3, '2024-01-02', '1')")  # dynamic
    spark.sql("INSERT OVERWRITE spark_own_db.events PARTITION (ds='2024-01-01', hr='10:00') "
              "VALUES (4)")  # fmt: skip
    assert sorted(r.v for r in spark.sql("SELECT v FROM spark_own_db.events").collect()) == [3, 4]

    orders = alice.get_table(DB, "orders").sd.location
    with pytest.raises(Exception) as refused:  # noqa: B017 - Spark wraps the MetaException
        spark.sql(f"CREATE TABLE default.grab (v INT) USING parquet LOCATION '{orders}'")
    assert (
        "for operation CREATETABLE [[SELECT, INSERT, DELETE, OBJECT OWNERSHIP] on Object "
        "[type=LOCAL_URI, name=" in str(refused.value)
    )
    assert "grab" not in alice.get_all_tables("default")
    spark.sql("DROP DATABASE spark_own_db CASCADE")
    assert "spark_own_db" not in alice.get_all_databases()
