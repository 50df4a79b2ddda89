"""A log that cannot be written (its disk full) fails no call: the server answers every call
and keeps its connections, its audit lines dropped and counted (tests/unit/test_safe_log.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.net import LOOPBACK, failed_to_start, terminate
from support.our_server import REPO_ROOT, OurServer

from metastore_server.thrift_api import hms, make_client

pytestmark = pytest.mark.any_store

FULL = Path("/dev/full")  # every write fails with ENOSPC; reading it never ends: never read it


@pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full (Linux)")
def test_calls_are_answered_with_the_log_on_a_full_disk(tmp_path: Path) -> None:
    server = OurServer(tmp_path / "server")
    server.workdir.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "METASTORE_TEST_STORAGE": "embedded"}
    with FULL.open("wb") as full:
        proc = subprocess.Popen(server.command(), cwd=server.workdir, env=env,
                                stdin=subprocess.DEVNULL, stdout=full, stderr=full)  # fmt: skip
    try:
        failure = failed_to_start(proc, server.port, 60.0, lambda: terminate(proc, 10.0))
        assert failure is None, f"the server {failure} (its log went to {FULL})"
        conn = make_client(LOOPBACK, server.port)
        try:
            conn.create_database(hms.Database(name="full_log", description="", parameters={}))
            for _ in range(20):
                assert "full_log" in conn.get_all_databases()
            with pytest.raises(hms.NoSuchObjectException):
                conn.get_table("full_log", "missing")  # an error's line is dropped too
            assert conn.get_database("full_log").name == "full_log"
        finally:
            conn.close()
    finally:
        terminate(proc, 10.0)
