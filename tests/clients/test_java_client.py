"""Hive's Java metastore client (``HiveMetaStoreClient`` 2.3 from the pyspark wheel's jars, as
Spark uses it) calls the server through ``java/HiveClientCheck.java``, compiled here with
``javac``: it reads the same databases, table, filtered partitions and partition values as the
Python client. Skipped without a JDK or the pyspark jars."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.reference_hms import find_pyspark_jars

from .conftest import DB, FILTER, KEYS, TABLE, python_view

SOURCE = Path(__file__).resolve().parent / "java" / "HiveClientCheck.java"
JARS = find_pyspark_jars()

if shutil.which("javac") is None or shutil.which("java") is None:
    pytest.skip("needs a JDK (javac and java)", allow_module_level=True)
if JARS is None:
    pytest.skip("needs the pyspark wheel's jars (pip install pyspark)", allow_module_level=True)


def compiled(out: Path) -> Path:
    """``HiveClientCheck`` compiled against the pyspark jars into ``out``."""
    done = subprocess.run(
        ["javac", "-nowarn", "-cp", str(JARS / "*"), "-d", str(out), str(SOURCE)],
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
