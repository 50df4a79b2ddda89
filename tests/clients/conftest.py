"""A server with one small scenario that every foreign-language client test reads, and what the
Python client reads from it (the answers the other clients must match)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.conftest import RunningServer, create_db, make_partition, make_table
from metastore_server.timeline import TIME_PARTCOLS_KEY, UPDATE_PERIOD_KEY

from metastore_server.thrift_api import hms

REPO_ROOT = Path(__file__).resolve().parents[2]
IDL = REPO_ROOT / "thrift" / "hive_metastore.thrift"

DB = "clients_db"
TABLE = "daily"
KEYS = [("dt", "string"), ("region", "string")]
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-05", "2024-01-06"]
REGIONS = ["eu", "us"]
#: A filter on both keys; the clients send it as is.
FILTER = 'dt >= "2024-01-02" and region = "eu"'


def thrift_compiler() -> str | None:
    """The Apache Thrift compiler (`thrift`), if installed."""
    return shutil.which("thrift")


def generate(language: str, out: Path) -> Path:
    """Run the Thrift compiler on our IDL as is (with its fb303 include); ``out`` is returned."""
    compiler = thrift_compiler()
    assert compiler is not None
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [compiler, "-r", "--gen", language, "-I", str(IDL.parent), "-o", str(out), str(IDL)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"thrift --gen {language} failed:\n{done.stdout}{done.stderr}"
    return out


def python_view(client: object) -> dict[str, object]:
    """What the Python client reads from the scenario, in the shape the other clients print."""
    table = client.get_table(DB, TABLE)  # type: ignore[attr-defined]
    found = client.get_partitions_by_filter(DB, TABLE, FILTER, -1)  # type: ignore[attr-defined]
    keys = [hms.FieldSchema(name=name, type=type_) for name, type_ in KEYS]
    values = client.get_partition_values(  # type: ignore[attr-defined]
        hms.PartitionValuesRequest(
            dbName=DB,
            tblName=TABLE,
            partitionKeys=keys[1:],
            applyDistinct=True,
            filter='dt >= "2024-01-03"',
            ascending=False,
        )
    )
    return {
        "databases": sorted(client.get_all_databases()),  # type: ignore[attr-defined]
        "table": {
            "dbName": table.dbName,
            "tableName": table.tableName,
            "tableType": table.tableType,
            "partitionKeys": [[k.name, k.type] for k in table.partitionKeys],
            "location": table.sd.location,
            "timeColumns": table.parameters.get(TIME_PARTCOLS_KEY),
        },
        "filtered": sorted(
            [p.values, p.sd.location, p.parameters.get(UPDATE_PERIOD_KEY)] for p in found
        ),
        "partitionValues": [row.row for row in values.partitionValues],
    }


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server on 127.0.0.1 (buffered transport, binary protocol: Hive's default) holding one
    database and one table opted in to partition timelines, with partitions on two keys."""
    server = RunningServer(tmp_path_factory.mktemp("clients"))
    client = server.client()
    try:
        create_db(client, DB)
        client.create_table(make_table(DB, TABLE, keys=KEYS, parameters={TIME_PARTCOLS_KEY: "dt"}))
        partitions = []
        for day in DAYS:
            for region in REGIONS:
                partition = make_partition(DB, TABLE, [day, region])
                partition.parameters = {UPDATE_PERIOD_KEY: "DAILY"}
                partitions.append(partition)
        client.add_partitions(partitions)
    finally:
        client.close()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """An empty server of the module's own (for the third-party Python clients)."""
    running = RunningServer(tmp_path_factory.mktemp("client-metastore"))
    yield running
    running.stop()
