"""Killing a server process between any two of its HBase writes, for
``tests/integration/test_kill_at_every_step.py``.

``Zygote`` is a subprocess that has imported the server once and forks a fresh server process
(a handler over its own HBase store) for each run, so that a run costs milliseconds instead of
an interpreter start. A forked server builds its handler, says ``ready <pid>``, waits for
``go``, makes one metadata change (``CHANGES``) and exits; the test arms the HBase test double
to ``kill -9`` it when a chosen write arrives. ``snapshot`` is what a client can see of the
change's database (tables, columns, partitions, their directories, grants, timelines, and the
notification events after a given id), without clocks and fast statistics.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metastore_server.thrift_api import hms

DB = "k"
TIMED = {"cube.storagetable.time.partcols": "ds"}
DAILY = {"cube.storagetable.partition.update.period": "DAILY"}
#: Parameters left out of a snapshot: clocks, and fast statistics (counted, or not, by each
#: server's own settings).
_UNCOMPARED = (
    *("transient_lastDdlTime", "last_modified_time", "last_modified_by"),
    *("numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE"),
    "numFilesErasureCoded",
)
_REPO = Path(__file__).resolve().parents[2]


def _cols(*names: str) -> list[hms.FieldSchema]:
    return [hms.FieldSchema(name=n, type="string", comment="") for n in names]


def _sd(location: str | None = None, cols: tuple[str, ...] = ("x",)) -> hms.StorageDescriptor:
    return hms.StorageDescriptor(
        cols=_cols(*cols), location=location, parameters={},
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=hms.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}
        ),
    )  # fmt: skip


def table(name: str, params: dict[str, str] | None = None, **extra: Any) -> hms.Table:
    """A managed table partitioned by ``ds``."""
    return hms.Table(tableName=name, dbName=DB, owner="me", sd=_sd(), tableType="MANAGED_TABLE",
                     partitionKeys=_cols("ds"), parameters=dict(params or {}), **extra)  # fmt: skip


def partition(name: str, day: str, params: dict[str, str] | None = None) -> hms.Partition:
    """A partition of ``name`` with a default location."""
    return hms.Partition(values=[day], dbName=DB, tableName=name, sd=_sd(),
                         parameters=dict(params or {}))  # fmt: skip


def _with_data(handler: Any, name: str, days: list[str], params: dict[str, str] | None = None
               ) -> None:  # fmt: skip
    handler.add_partitions([partition(name, day, params) for day in days])
    for day in days:
        location = handler.get_partition(DB, name, [day]).sd.location
        (Path(location.removeprefix("file:")) / "f.parquet").write_text("data")


# -- the changes: (set-up, change), each given a handler ---------------------------------------


def _set_up_add(h: Any) -> None:
    h.create_table(table("t", TIMED))


def _add(h: Any) -> None:
    h.add_partitions([partition("t", d, DAILY) for d in ("2024-01-01", "2024-01-02")])


def _set_up_drop(h: Any) -> None:
    h.create_table(table("t", TIMED))
    _with_data(h, "t", ["2024-01-01", "2024-01-02", "2024-01-03"], DAILY)


def _drop(h: Any) -> None:
    names = hms.RequestPartsSpec(names=["ds=2024-01-01", "ds=2024-01-02"])
    h.drop_partitions_req(hms.DropPartitionsRequest(dbName=DB, tblName="t", parts=names,
                                                    deleteData=True, needResult=False))  # fmt: skip


def _set_up_rename(h: Any) -> None:
    h.create_table(table("t", TIMED))
    _with_data(h, "t", ["2024-01-01"], DAILY)


def _rename(h: Any) -> None:
    h.rename_partition(DB, "t", ["2024-01-01"], partition("t", "2024-01-05", DAILY))


def _set_up_exchange(h: Any) -> None:
    h.create_table(table("src"))
    h.create_table(table("dst"))
    _with_data(h, "src", ["1"])


def _exchange(h: Any) -> None:
    h.exchange_partition({"ds": "1"}, DB, "src", DB, "dst")


def _set_up_cascade(h: Any) -> None:
    h.create_table(table("t"))
    _with_data(h, "t", ["1", "2"])


def _cascade(h: Any) -> None:
    changed = h.get_table(DB, "t")
    changed.sd.cols = [*changed.sd.cols, *_cols("added")]
    h.alter_table_with_cascade(DB, "t", changed, True)


def _create_with_grants(h: Any) -> None:
    grant = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="me",
                                   grantorType=hms.PrincipalType.USER,
                                   grantOption=False)  # fmt: skip
    granted = table("granted", privileges=hms.PrincipalPrivilegeSet(
        userPrivileges={"bob": [grant]}, rolePrivileges={"analysts": [grant]}))  # fmt: skip
    h.create_table(granted)


def _nothing(h: Any) -> None:
    return None


CHANGES: dict[str, tuple[Callable[[Any], None], Callable[[Any], None]]] = {
    "add": (_set_up_add, _add),
    "drop": (_set_up_drop, _drop),
    "rename": (_set_up_rename, _rename),
    "exchange": (_set_up_exchange, _exchange),
    "alter-cascade": (_set_up_cascade, _cascade),
    "create-with-grants": (_nothing, _create_with_grants),
}


def set_up(handler: Any, change: str) -> int:
    """Create the change's database and what it needs; the last notification event id."""
    handler.create_database(hms.Database(name=DB, description="", parameters={}))
    CHANGES[change][0](handler)
    return int(handler.get_current_notificationEventId().eventId)


# -- what a client sees ------------------------------------------------------------------------


def _plain(params: dict[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (params or {}).items() if k not in _UNCOMPARED}


def snapshot(handler: Any, after_event: int) -> dict[str, Any]:
    """What a client sees of the database (see the module docstring)."""
    tables = {}
    for name in sorted(handler.get_all_tables(DB)):
        found = handler.get_table(DB, name)
        grants = handler.list_privileges(
            "bob", hms.PrincipalType.USER,
            hms.HiveObjectRef(objectType=hms.HiveObjectType.TABLE, dbName=DB, objectName=name),
        )  # fmt: skip
        parts = {}
        for part in handler.get_partitions(DB, name, -1):
            location = part.sd.location.removeprefix("file:")
            parts["/".join(part.values)] = {
                "cols": [c.name for c in part.sd.cols],
                "dir": os.path.basename(location),
                "data": sorted(os.listdir(location)) if os.path.isdir(location) else None,
                "params": _plain(part.parameters),
            }
        tables[name] = {
            "cols": [c.name for c in found.sd.cols],
            "params": _plain(found.parameters),
            "partitions": parts,
            "grants": sorted(g.grantInfo.privilege for g in grants),
        }
    events = handler.get_next_notification(
        hms.NotificationEventRequest(lastEvent=after_event, maxEvents=1000)
    ).events
    return {"tables": tables, "events": [(e.eventType, e.tableName) for e in events]}


# -- the zygote --------------------------------------------------------------------------------


@dataclass
class Run:
    """A forked server process: its pid, and how to let it go."""

    pid: int


class Zygote:
    """The subprocess that forks server processes (see the module docstring)."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_REPO), str(_REPO / "tests")])}
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from support.kill_steps import _zygote_main; _zygote_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1,
        )  # fmt: skip
        self._expect("zygote")

    def _expect(self, word: str) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith(word):
            raise RuntimeError(f"the zygote said {line!r}, not {word}")
        return line[len(word) :].strip()

    def _say(self, line: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def start(self, storage: str, warehouse: str, lease_s: float, change: str) -> Run:
        """Fork a server process on ``storage`` that will make ``change`` when told to."""
        self._say(json.dumps({"storage": storage, "warehouse": warehouse, "lease": lease_s,
                              "change": change}))  # fmt: skip
        return Run(int(self._expect("ready")))

    def go(self) -> int:
        """Let the forked process make its change; its exit status (-9: killed)."""
        self._say("go")
        return int(self._expect("exit"))

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)


def _zygote_main() -> None:
    """The zygote's loop (runs in the subprocess)."""
    from metastore_server.server.app import build_handler
    from metastore_server.server.config import ServerConfig

    said = os.fdopen(os.dup(1), "w", buffering=1)  # the protocol's lines
    os.dup2(2, 1)  # the servers' logs go to stderr

    def say(*words: object) -> None:
        print(*words, file=said, flush=True)

    say("zygote")
    for line in sys.stdin:
        order = json.loads(line)
        go_read, go_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the server process
            os.close(go_write)
            config = ServerConfig(host="127.0.0.1", port=0, storage=order["storage"],
                                  warehouse=order["warehouse"],
                                  writer_lease=order["lease"])  # fmt: skip
            handler, _ = build_handler(config)
            say("ready", os.getpid())
            os.read(go_read, 1)
            CHANGES[order["change"]][1](handler)
            os._exit(0)
        os.close(go_read)
        sys.stdin.readline()  # "go"
        os.write(go_write, b"g")
        os.close(go_write)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        say("exit", code)
