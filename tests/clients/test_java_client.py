"""Hive's Java metastore client (``HiveMetaStoreClient`` 2.3 from the pyspark wheel's jars, as
Spark uses it) calls the server through programs in ``java/``, compiled here with ``javac``:
``HiveClientCheck`` reads the same databases, table, filtered partitions and partition values as
the Python client; ``HiveApiCheck`` takes locks and transactions, writes and reads column
statistics, grants a role and a privilege through it, and decodes the notification log with
Hive's own message deserializer. Skipped without a JDK or the pyspark jars."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.reference_hms import find_pyspark_jars

from .conftest import DB, FILTER, KEYS, TABLE, python_view

JAVA = Path(__file__).resolve().parent / "java"
JARS = find_pyspark_jars()

if shutil.which("javac") is None or shutil.which("java") is None:
    pytest.skip("needs a JDK (javac and java)", allow_module_level=True)
if JARS is None:
    pytest.skip("needs the pyspark wheel's jars (pip install pyspark)", allow_module_level=True)


def compiled(out: Path, program: str = "HiveClientCheck") -> Path:
    """``java/<program>.java`` compiled against the pyspark jars into ``out``."""
    source = JAVA / f"{program}.java"
    done = subprocess.run(
        ["javac", "-nowarn", "-cp", str(JARS / "*"), "-d", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"javac failed:\n{done.stdout}{done.stderr}"
    return out


def test_hive_metastore_client_reads_what_python_reads(scenario, tmp_path: Path) -> None:
    classes = compiled(tmp_path / "classes")
    values_key, values_type = KEYS[1]
    done = subprocess.run(
        [
            "java",
            "-cp",
            os.pathsep.join([str(classes), str(JARS / "*")]),
            "HiveClientCheck",
            scenario.host,
            str(scenario.port),
            DB,
            TABLE,
            FILTER,
            values_key,
            values_type,
            'dt >= "2024-01-03"',
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"HiveClientCheck failed:\n{done.stdout}\n{done.stderr[-4000:]}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    client = scenario.client()
    try:
        expected = python_view(client)
        names = client.get_partition_names(DB, TABLE, -1)
    finally:
        client.close()
    assert {k: seen[k] for k in expected} == expected
    assert seen["partitionNames"] == names

    assert DB in seen["databases"]
    assert seen["table"]["partitionKeys"] == [list(k) for k in KEYS]
    assert [values for values, _, _ in seen["filtered"]] == [
        ["2024-01-02", "eu"],
        ["2024-01-03", "eu"],
        ["2024-01-05", "eu"],
        ["2024-01-06", "eu"],
    ]
    assert len(seen["partitionNames"]) == 10
    assert seen["partitionValues"] == [["us"], ["eu"]]
    assert seen["missingTable"] == "NoSuchObjectException"
    assert seen["afterError"] == len(seen["databases"])


def test_hive_metastore_client_locks_statistics_and_events(server, tmp_path: Path) -> None:
    classes = compiled(tmp_path / "classes", "HiveApiCheck")
    done = subprocess.run(
        ["java", "-cp", os.pathsep.join([str(classes), str(JARS / "*")]), "HiveApiCheck",
         server.host, str(server.port), "java_api"],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, f"HiveApiCheck failed:\n{done.stdout}\n{done.stderr[-4000:]}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["locks"] == {
        "exclusive": "ACQUIRED",
        "readWhileExclusive": "WAITING",
        "shown": 2,
        "readAfterUnlock": "ACQUIRED",
        "txnLock": "ACQUIRED",
        "openBeforeCommit": False,  # an open transaction is not valid to read from
        "validAfterCommit": True,
        "locksAfterCommit": 0,
    }
    assert seen["statistics"] == {
        "table": ["id", 1, 1000, 42],
        "partitionMaxLengths": [7, 12],
        "aggregate": [12, 1],
        "afterDelete": 0,
    }
    assert seen["security"] == {
        "aliceRoles": ["analyst", "public"],
        "throughRole": "SELECT",
        "listed": 1,
        "rolesAfterDrop": False,
    }
    # Each event as Hive 2.3's message reader reads it (HMS 3+'s messages are supersets of
    # 2.3's), and how many of its Thrift objects Thrift's TJSONProtocol decodes.
    assert seen["events"] == [
        ["CREATE_DATABASE", "java_api", 1],
        ["CREATE_TABLE", "events ds", 1],
        ["ADD_PARTITION", ["2024-01-01"], 2],
        ["ADD_PARTITION", ["2024-01-02"], 2],
        ["OPEN_TXN", None, 0],  # HMS 3+'s events (Hive 2.3's reader skips them)
        ["COMMIT_TXN", None, 0],
        ["UPDATE_TBL_COL_STAT_EVENT", None, 2],
        ["UPDATE_PART_COL_STAT_EVENT", None, 2],
        ["UPDATE_PART_COL_STAT_EVENT", None, 2],
        ["DELETE_TBL_COL_STAT_EVENT", None, 0],
        ["ALTER_TABLE", "altered", 2],
        ["ALTER_PARTITION", "yes", 3],
        ["INSERT", {"ds": "2024-01-01"}, 2],
        ["DROP_PARTITION", [{"ds": "2024-01-01"}], 1],
        ["DROP_TABLE", "events", 1],
        ["DROP_DATABASE", "java_api", 1],
    ]
