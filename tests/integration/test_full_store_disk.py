"""The store's disk full: a clear MetaException, nothing half-written, reads go on, and writes
work again once there is space. Runs on a 3 MiB tmpfs in a private mount namespace (needs root
and unshare; skipped otherwise)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TEST_STORAGE

PROBE = Path(__file__).resolve().parents[1] / "support" / "full_disk_probe.py"


def _tmpfs_possible() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m t /mnt"],
                          capture_output=True, timeout=30)  # fmt: skip
    return done.returncode == 0


@pytest.mark.skipif(TEST_STORAGE != "embedded", reason="the embedded store's file on a full disk")
@pytest.mark.skipif(not _tmpfs_possible(), reason="needs root and unshare -m to mount a tmpfs")
def test_a_full_store_disk(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    script = (f"mount -t tmpfs -o size=3m tmpfs {mount} && "
              f"exec {sys.executable} {PROBE} {mount}")  # fmt: skip
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"the probe failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    out = json.loads(lines[-1].removeprefix("RESULT "))
    assert out["filled"] == "No space left on device"
    assert out["create_table"].startswith("MetaException") and "full" in out["create_table"]
    assert out["add_partitions"].startswith("MetaException") and "full" in out["add_partitions"]
    assert out["tables"] == ["t"]  # reads go on; the refused table is not there
    assert out["partitions"] == 0  # all or nothing
    assert out["create_table_after"] is None
    assert out["add_partitions_after"] == 200
    assert out["tables_after"] == ["t", "t3"]
