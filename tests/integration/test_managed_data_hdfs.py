"""Managed data on HDFS through pyarrow's HadoopFileSystem.

It needs what a real deployment needs: a namenode (``METASTORE_TEST_HDFS=hdfs://host:port``)
and a Hadoop client on this machine (a JVM, libhdfs, ``CLASSPATH=$(hadoop classpath --glob)``);
without them it is skipped, saying which is missing. What a server without a Hadoop client
answers is tested everywhere (``test_managed_data.py``: a drop refused with nothing changed).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from metastore_server.catalog.data.filesystems import FileSystems, FileSystemUnavailable, Place
from metastore_server.thrift_api import hms

from .conftest import RunningServer, make_partition, make_table

HDFS = os.environ.get("METASTORE_TEST_HDFS", "").rstrip("/")


def _hdfs_root() -> Place:
    if not HDFS:
        pytest.skip(
            "no HDFS to test against: set METASTORE_TEST_HDFS=hdfs://namenode:port on a machine "
            "with a Hadoop client (JVM, libhdfs, CLASSPATH)"
        )
    try:
        return FileSystems().resolve(f"{HDFS}/")
    except FileSystemUnavailable as exc:
        pytest.skip(f"no Hadoop client here: {exc}")


@pytest.fixture()
def hdfs_dir() -> Iterator[Place]:
    root = _hdfs_root()
    place = root.with_path(f"/tmp/metastore-test-{uuid.uuid4().hex}")
    place.fs.makedirs(place.path, exist_ok=True)
    yield place
    place.fs.rm(place.path, recursive=True)


def test_create_drop_rename_on_hdfs(hdfs_dir: Place, tmp_path: Path) -> None:
    server = RunningServer(tmp_path)
    conn = server.client()
    fs = hdfs_dir.fs
    try:
        location = hdfs_dir.uri_of(f"{hdfs_dir.path}/h.db")
        conn.create_database(
            hms.Database(name="h", description="", parameters={}, locationUri=location)
        )
        conn.create_table(make_table("h", "t", keys=[("ds", "string")]))
        table_path = f"{hdfs_dir.path}/h.db/t"
        assert fs.isdir(table_path)
        conn.add_partitions([make_partition("h", "t", ["1"]), make_partition("h", "t", ["2"])])
        for value in ("1", "2"):
            fs.pipe(f"{table_path}/ds={value}/part-0", b"PAR1")
        conn.drop_partition("h", "t", ["1"], True)
        assert not fs.exists(f"{table_path}/ds=1")
        renamed = conn.get_table("h", "t")
        renamed.tableName = "t2"
        conn.alter_table("h", "t", renamed)
        assert fs.exists(f"{hdfs_dir.path}/h.db/t2/ds=2/part-0")
        assert not fs.exists(table_path)
        conn.drop_table("h", "t2", True)
        assert not fs.exists(f"{hdfs_dir.path}/h.db/t2")
        conn.drop_database("h", True, True)
        assert not fs.exists(f"{hdfs_dir.path}/h.db")
    finally:
        conn.close()
        server.stop()
