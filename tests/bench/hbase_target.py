"""Our server's storage for a benchmark run on HBase: a real HBase Thrift1 gateway
(``--hbase HOST:PORT``) or the HBase test double started in a process of its own
(``--hbase-double``), under a fresh table prefix."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def hbase_storage(
    hbase: str | None, double: bool, stack: contextlib.ExitStack, log: Callable[[str], None]
) -> str | None:
    """The storage URL of our server on HBase (``hbase`` as host:port, or the double when
    ``double``, stopped with ``stack``), under a fresh table prefix; None: the embedded
    store."""
    from support.hbase_double import storage_url  # (tests/ is on the path once a bench runs)

    prefix = f"bench{secrets.token_hex(3)}_"
    if hbase:
        host, _, port = hbase.rpartition(":")
        return storage_url(host, int(port), prefix=prefix)
    if not double:
        return None
    code = ("import sys; from support.hbase_double import HBaseDouble; "
            "d = HBaseDouble().start(); print('PORT', d.address[1], flush=True); sys.stdin.read(); "
            "import os; os._exit(0)")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env)  # fmt: skip
    stack.callback(process.wait, 30)
    stack.callback(process.stdin.close)  # type: ignore[union-attr]  # its end: stdin closes
    port = 0
    for line in process.stdout:  # type: ignore[union-attr]  # (its log lines come first)
        if line.startswith(b"PORT "):
            port = int(line.split()[1])
            break
    if not port:
        raise SystemExit("the HBase double did not start")
    log(f"HBase double on 127.0.0.1:{port} (pid {process.pid})")
    return storage_url("127.0.0.1", port, prefix=prefix)
