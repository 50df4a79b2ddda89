"""PySpark side by side: the same statements (an external table over files already there, an
INSERT OVERWRITE into it, a converted insert into a partitioned table and one overwriting a
partition) against the reference Hive Metastore 2.3.10 and against our server, each from a Spark
process of its own; DESCRIBE EXTENDED of the tables and their partitions (Statistics, Table
Properties, Partition Parameters) and whether a join broadcasts the external table must be
the same. Skipped, saying why, where the reference metastore cannot start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.net import MetastoreEndpoint
from support.spark_fast_stats import DB

from metastore_server.thrift_api import make_client

pytestmark = pytest.mark.spark

DRIVER = Path(__file__).parent.parent / "support" / "spark_fast_stats.py"


def _shown(endpoint: MetastoreEndpoint, work: Path) -> dict[str, Any]:
    pytest.importorskip("pyspark", reason="pyspark is not installed")
    out = work / "shown.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        str(Path(__file__).parent.parent.parent), os.environ.get("PYTHONPATH")])))  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(DRIVER), endpoint.uri, endpoint.warehouse_dir, str(work / "lake"),
         str(out)], env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(out.read_text())


def _stored(endpoint: MetastoreEndpoint) -> dict[str, Any]:
    """The tables' and partitions' parameters as stored (without DDL times); drops the
    database."""
    client = make_client(endpoint.host, endpoint.port)
    try:
        found: dict[str, Any] = {}
        for table in ("ext", "part"):
            found[table] = _plain(client.get_table(DB, table).parameters)
        for part in client.get_partitions(DB, "part", -1):
            found["/".join(part.values)] = _plain(part.parameters)
        client.drop_database(DB, True, True)
        return found
    finally:
        client.close()


def _plain(params: dict[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (params or {}).items() if k != "transient_lastDdlTime"}


def test_describe_extended_matches_the_reference(
    reference_hms: MetastoreEndpoint,
    our_metastore: MetastoreEndpoint,
    tmp_path: Path,
) -> None:
    theirs = _shown(reference_hms, tmp_path / "reference")
    ours = _shown(our_metastore, tmp_path / "ours")
    assert theirs["ext_created"].get("Statistics"), theirs  # HMS counted the existing files
    assert ours == theirs
    assert _stored(our_metastore) == _stored(reference_hms)
