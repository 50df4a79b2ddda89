"""Python metastore clients from PyPI against our server: hive-metastore-client (generated from
Hive 3's IDL, with its helpers) and hmsclient (Hive 2's IDL), each through a whole cycle."""

from __future__ import annotations

from pathlib import Path

import pytest
from integration.conftest import RunningServer

PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"


def test_hive_metastore_client_cycle(server: RunningServer, tmp_path: Path) -> None:
    hmc = pytest.importorskip("hive_metastore_client", reason="hive-metastore-client missing")
    from hive_metastore_client.builders import (
        ColumnBuilder,
        DatabaseBuilder,
        PartitionBuilder,
        SerDeInfoBuilder,
        StorageDescriptorBuilder,
        TableBuilder,
    )

    location = f"file:{tmp_path}/events"
    with hmc.HiveMetastoreClient(server.host, server.port) as client:
        client.create_database_if_not_exists(DatabaseBuilder(name="hmc_db").build())
        client.create_database_if_not_exists(DatabaseBuilder(name="hmc_db").build())  # again
        sd = StorageDescriptorBuilder(
            columns=[ColumnBuilder("id", "string").build(), ColumnBuilder("v", "int").build()],
            location=location, input_format=PARQUET_IN, output_format=PARQUET_OUT,
            serde_info=SerDeInfoBuilder(serialization_lib=PARQUET_SERDE).build(),
        ).build()  # fmt: skip
        keys = [ColumnBuilder("dt", "string").build()]
        table = TableBuilder(table_name="events", db_name="hmc_db", owner="me",
                             storage_descriptor=sd, partition_keys=keys).build()  # fmt: skip
        client.create_external_table(table)

        client.add_columns_to_table("hmc_db", "events", [ColumnBuilder("extra", "string").build()])
        assert [c.name for c in client.get_table("hmc_db", "events").sd.cols] == [
            "id", "v", "extra"]  # fmt: skip
        client.drop_columns_from_table("hmc_db", "events", ["extra"])  # uses setMetaConf
        assert [c.name for c in client.get_table("hmc_db", "events").sd.cols] == ["id", "v"]

        partitions = [
            PartitionBuilder(values=[day], db_name="hmc_db", table_name="events",
                             sd=sd).build()  # fmt: skip
            for day in ("2024-01-01", "2024-01-02", "2024-01-03")
        ]
        client.add_partitions_to_table("hmc_db", "events", partitions)
        client.add_partitions_if_not_exists("hmc_db", "events", partitions[:1])
        assert client.get_partition_keys_names("hmc_db", "events") == ["dt"]
        assert sorted(client.get_partition_values_from_table("hmc_db", "events")) == [
            ["2024-01-01"], ["2024-01-02"], ["2024-01-03"]]  # fmt: skip
        client.bulk_drop_partitions("hmc_db", "events", [["2024-01-01"]])
        assert client.get_partition_names("hmc_db", "events", -1) == [
            "dt=2024-01-02", "dt=2024-01-03"]  # fmt: skip
        client.drop_table("hmc_db", "events", True)
        client.drop_database("hmc_db", True, False)
        assert "hmc_db" not in client.get_all_databases()


def test_hmsclient_cycle(server: RunningServer, tmp_path: Path) -> None:
    hmsclient = pytest.importorskip("hmsclient", reason="hmsclient is not installed")
    from hmsclient.genthrift.hive_metastore import ttypes

    with hmsclient.HMSClient(host=server.host, port=server.port) as client:
        client.create_database(ttypes.Database(name="hms_db", description="d",
                                               locationUri=f"file:{tmp_path}/hms_db.db",
                                               parameters={}))  # fmt: skip
        cols = [ttypes.FieldSchema(name="v", type="int", comment="")]
        sd = ttypes.StorageDescriptor(
            cols=cols, location=None, inputFormat=PARQUET_IN, outputFormat=PARQUET_OUT,
            compressed=False, numBuckets=-1,
            serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET_SERDE, parameters={}),
            bucketCols=[], sortCols=[], parameters={},
        )  # fmt: skip
        client.create_table(ttypes.Table(
            tableName="t", dbName="hms_db", owner="me", sd=sd,
            partitionKeys=[ttypes.FieldSchema(name="ds", type="string", comment="")],
            parameters={}, tableType="MANAGED_TABLE"))  # fmt: skip
        assert client.get_all_tables("hms_db") == ["t"]
        table = client.get_table("hms_db", "t")
        for value in ("1", "2", "3"):
            client.add_partition(table, [value])  # hmsclient's helper
        assert client.check_for_named_partition("hms_db", "t", "ds=1")
        assert not client.check_for_named_partition("hms_db", "t", "ds=9")
        found = client.get_partitions_by_filter("hms_db", "t", 'ds = "1"', -1)
        assert [p.values for p in found] == [["1"]]
        assert (tmp_path / "hms_db.db" / "t" / "ds=1").is_dir()
        client.drop_partitions("hms_db", "t", ["ds=1", "ds=2"])
        assert client.get_partition_names("hms_db", "t", -1) == ["ds=3"]
        client.drop_table("hms_db", "t", True)
        assert not (tmp_path / "hms_db.db" / "t").exists()
        client.drop_database("hms_db", True, True)
        assert "hms_db" not in client.get_all_databases()
