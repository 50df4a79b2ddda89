"""Run by tests/integration/test_full_store_disk.py inside a private mount namespace: a server
whose store and warehouse lie on a small tmpfs, the disk then filled, calls made, the disk
emptied again. Prints one JSON object: each call's outcome."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from integration.conftest import RunningServer, make_partition, make_table  # noqa: E402

from metastore_server.thrift_api import hms  # noqa: E402


def main(root: Path) -> dict[str, object]:
    server = RunningServer(root / "server", storage=f"sqlite:///{root}/store.db")
    conn = server.client()
    out: dict[str, object] = {}

    def attempt(name: str, call: Callable[[], object]) -> None:
        try:
            out[name] = call()
        except Exception as exc:  # noqa: BLE001 - the outcome is the answer
            out[name] = f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"

    try:
        conn.create_database(hms.Database(name="d", description="", parameters={}))
        conn.create_table(make_table("d", "t", keys=[("ds", "string")]))
        filler = root / "filler"
        with filler.open("wb") as fill:
            try:
                while True:
                    fill.write(b"x" * 65536)
                    fill.flush()
            except OSError as exc:
                out["filled"] = exc.strerror
        parts = [make_partition("d", "t", [str(i)]) for i in range(200)]
        attempt("create_table", lambda: conn.create_table(make_table("d", "t2")))
        attempt("add_partitions", lambda: conn.add_partitions(parts))
        attempt("tables", lambda: conn.get_all_tables("d"))
        attempt("partitions", lambda: len(conn.get_partition_names("d", "t", -1)))
        os.unlink(filler)
        attempt("create_table_after", lambda: conn.create_table(make_table("d", "t3")))
        attempt("add_partitions_after", lambda: conn.add_partitions(parts))
        attempt("tables_after", lambda: conn.get_all_tables("d"))
    finally:
        conn.close()
        server.stop()
    return out


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(Path(sys.argv[1]))), flush=True)
