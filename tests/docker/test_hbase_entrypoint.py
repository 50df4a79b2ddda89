"""The HBase image's entry point (docker/hbase/start.sh) with a stand-in ``hbase`` command:
it starts the master and the Thrift gateway on HBASE_THRIFT_PORT, ends with the status of the
first of them to end (stopping the other), and passes SIGTERM (docker stop) on to both."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from dockerfiles import DOCKER

START = DOCKER / "hbase" / "start.sh"
#: Records its arguments, then runs until TERM (recorded too), or exits with STUB_<ROLE>_EXIT.
STUB = """#!/usr/bin/env bash
role="$1"
echo "$role started: $*" >> "$STUB_LOG"
trap 'echo "$role stopped" >> "$STUB_LOG"; exit 0' TERM
code_var="STUB_${role^^}_EXIT"
if [ -n "${!code_var:-}" ]; then sleep 0.3; exit "${!code_var}"; fi
while true; do sleep 0.1; done
"""


def _start(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[bytes], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hbase").write_text(STUB)
    (bin_dir / "hbase").chmod(0o755)
    log = tmp_path / "stub.log"
    environ = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STUB_LOG": str(log),
        "HBASE_LOG_DIR": str(tmp_path / "logs"),
        **env,
    }
    return subprocess.Popen(["bash", str(START)], env=environ), log


def _lines(log: Path, count: int) -> list[str]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = log.read_text().splitlines() if log.exists() else []
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"expected {count} lines in {log}")


def test_starts_master_and_gateway_and_ends_with_the_first_to_end(tmp_path: Path) -> None:
    process, log = _start(tmp_path, HBASE_THRIFT_PORT="9191", STUB_MASTER_EXIT="3")
    assert process.wait(timeout=15) == 3
    lines = _lines(log, 3)
    assert "master started: master start" in lines
    assert "thrift started: thrift start -p 9191" in lines
    assert "thrift stopped" in lines  # the gateway is not left running without its master
    assert (tmp_path / "logs").is_dir()


def test_sigterm_stops_both(tmp_path: Path) -> None:
    process, log = _start(tmp_path)
    _lines(log, 2)  # both started
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=15)
    assert {"master stopped", "thrift stopped"} <= set(_lines(log, 4))
