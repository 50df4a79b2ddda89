"""The operations of the API benchmark (``api_calls.py``): the data each size needs, and each
timed operation as a request encoded before the clock starts (or, for the call sequences, the
calls themselves).

Per size N and target: databases ``apidb_00000`` .. (N of them, shared by the sizes), a
database ``api_n<N>`` of N unpartitioned tables ``t_00000`` .. (every odd one external), and a
database ``api_w<N>`` holding ``parts`` and ``ren`` (N partitions each, keyed by ds, hr,
region as in the partition-filter benchmark), ``alter_me``, ``ice`` (an Iceberg table as
Iceberg's HiveCatalog registers it), ``single`` (partitioned, empty) and the tables the write
operations create. Every table and partition is given a location whose directory exists
before the call (as a writer of the data makes it), so neither server forks file-system
commands to make directories (HMS on a local warehouse does, per directory).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_targets import Target
from byte_copy import encode_reply
from partition_dataset import Dataset, hms, make_partition, make_table
from partition_load import local_dir
from thrift_wire import read_reply

BATCH = 1000  # partitions per add_partitions while loading
NAMES_LISTINGS = ("get_all_databases", "get_all_tables", "get_table_meta", "get_partition_names")
#: Operations timed on their byte-copy limit: the names listings, and the smallest reads (where
#: the limit is the round trip of the client and the loopback alone).
LIMITED = (*NAMES_LISTINGS, "get_database", "get_table", "get_current_notificationEventId")

# --------------------------------------------------------------------------- wire


def send_and_skip(client: Any, method: str, message: bytes) -> None:
    """Send an encoded call on ``client``'s connection and read its reply without building
    objects (the result is skipped by thriftpy2's Cython protocol); declared exceptions are
    decoded and raised, as is an application exception."""
    trans = client._oprot.trans
    trans.write(message)
    trans.flush()
    read_reply(client, method, count=False)


# --------------------------------------------------------------------------- context


@dataclass
class Ctx:
    """One target's connection and state for one size."""

    target: Target
    client: Any
    n: int
    warehouse: Path  # local directory of the target's warehouse
    state: dict[str, Any] = field(default_factory=dict)
    counter: int = 0

    @property
    def list_db(self) -> str:
        return f"api_n{self.n}"

    @property
    def work_db(self) -> str:
        return f"api_w{self.n}"

    @property
    def ds(self) -> Dataset:
        return Dataset(self.n)

    def seq(self) -> int:
        """A number new on every use (names of the objects the write operations create)."""
        self.counter += 1
        return self.counter

    def table_dir(self, db: str, name: str) -> Path:
        """A fresh directory for table ``name`` of ``db`` (created)."""
        path = self.warehouse / f"{db}.db" / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def table_names(n: int) -> list[str]:
    """The tables of ``api_n<N>``."""
    return [f"t_{i:05d}" for i in range(n)]


def new_table(ctx: Ctx, db: str, name: str, *, partitioned: bool, external: bool) -> Any:
    """A Parquet table (keys ds, hr, region when partitioned) with a location that exists."""
    table = make_table(ctx.ds)
    table.dbName, table.tableName = db, name
    table.sd.location = ctx.table_dir(db, name).as_uri()
    if not partitioned:
        table.partitionKeys = []
    if external:
        table.tableType = "EXTERNAL_TABLE"
        table.parameters = {**table.parameters, "EXTERNAL": "TRUE"}
    return table


def partitions(ctx: Ctx, table: Any, start: int, stop: int) -> list[Any]:
    """Partitions start .. stop-1 of the data set for ``table``, their directories made."""
    location = str(table.sd.location)
    out = []
    for values in ctx.ds.values(start, stop):
        part = make_partition(ctx.ds, values, location)
        part.dbName, part.tableName = table.dbName, table.tableName
        out.append(part)
        path = local_dir(str(part.sd.location))
        if path is not None:
            path.mkdir(parents=True, exist_ok=True)
    return out


# --------------------------------------------------------------------------- set-up


def setup(ctx: Ctx, log: Callable[[str], None]) -> None:
    """Create what size ``ctx.n`` needs on ``ctx.target`` (what exists is kept)."""
    c = ctx.client
    have = set(c.get_all_databases())
    for i in range(ctx.n):
        name = f"apidb_{i:05d}"
        if name not in have:
            c.create_database(_database(ctx, name))
    for db in (ctx.list_db, ctx.work_db):
        if db not in have:
            c.create_database(_database(ctx, db))
    existing = set(c.get_all_tables(ctx.list_db))
    for i, name in enumerate(table_names(ctx.n)):
        if name not in existing:
            c.create_table(
                new_table(ctx, ctx.list_db, name, partitioned=False, external=bool(i % 2))
            )
    log(f"  {ctx.target.name}: {ctx.n:,} databases and tables there")
    work = set(c.get_all_tables(ctx.work_db))
    for name in ("parts", "ren"):
        if name not in work:
            table = new_table(ctx, ctx.work_db, name, partitioned=True, external=False)
            c.create_table(table)
            table = c.get_table(ctx.work_db, name)
            for start in range(0, ctx.n, BATCH):
                c.add_partitions(partitions(ctx, table, start, min(start + BATCH, ctx.n)))
    if "alter_me" not in work:
        c.create_table(new_table(ctx, ctx.work_db, "alter_me", partitioned=False, external=False))
    if "single" not in work:
        c.create_table(new_table(ctx, ctx.work_db, "single", partitioned=True, external=False))
    if "ice" not in work:
        ice = new_table(ctx, ctx.work_db, "ice", partitioned=False, external=True)
        ice.parameters = {
            "EXTERNAL": "TRUE",
            "table_type": "ICEBERG",
            "metadata_location": f"{ice.sd.location}/metadata/00000.metadata.json",
        }
        c.create_table(ice)
    ctx.state["ren"] = "ren"
    ctx.state["alter_me"] = c.get_table(ctx.work_db, "alter_me")
    ctx.state["single"] = c.get_table(ctx.work_db, "single")
    log(f"  {ctx.target.name}: {ctx.n:,} partitions in {ctx.work_db}.parts and .ren")


def _database(ctx: Ctx, name: str) -> Any:
    path = ctx.warehouse / f"{name}.db"
    path.mkdir(parents=True, exist_ok=True)
    return hms.Database(name=name, description="API benchmark", locationUri=path.as_uri(),
                        parameters={})  # fmt: skip


def warehouse_of(client: Any) -> Path:
    """The local directory of a metastore's warehouse (the parent of ``default``'s)."""
    location = str(client.get_database("default").locationUri)
    path = local_dir(location)
    if path is None:
        raise RuntimeError(f"the benchmark needs a local warehouse, not {location}")
    return path.parent if path.name.endswith(".db") else path


# --------------------------------------------------------------------------- operations


Request = tuple[str, tuple[Any, ...]]


@dataclass
class Op:
    """One timed operation.

    ``request`` gives one call, encoded before the clock starts and its reply skipped; ``run``
    makes a sequence of calls (decoded: each needs the previous answer) inside the clock.
    ``prepare`` runs untimed before each. ``count`` gives the rows (untimed, decoded).
    ``methods`` are the audited methods whose server time is the operation's.
    """

    name: str
    methods: tuple[str, ...]
    count: Callable[[Ctx], int]
    request: Callable[[Ctx], Request] | None = None
    run: Callable[[Ctx], None] | None = None
    prepare: Callable[[Ctx], None] | None = None


def _one(_ctx: Ctx) -> int:
    return 1


def _n(ctx: Ctx) -> int:
    return ctx.n


def _point(ctx: Ctx) -> str:
    ds, hr, region = next(ctx.ds.values(ctx.n // 2, ctx.n // 2 + 1))
    return f'ds = "{ds}" and hr = {hr} and region = "{region}"'


def _range(ctx: Ctx) -> str:
    ds = ctx.ds
    mid = ds.days // 2
    return f'ds >= "{ds.day(mid)}" and ds < "{ds.day(mid + max(1, ds.days // 10))}"'


def _create_drop_db(ctx: Ctx) -> None:
    name = ctx.state.pop("db_name")
    ctx.client.create_database(ctx.state.pop("db"))
    ctx.client.drop_database(name, True, True)


def _prepare_db(ctx: Ctx) -> None:
    name = f"apix_{ctx.n}_{ctx.seq()}"
    ctx.state["db_name"], ctx.state["db"] = name, _database(ctx, name)


def _create_table(ctx: Ctx) -> Request:
    table = new_table(ctx, ctx.work_db, f"c_{ctx.seq()}", partitioned=False, external=False)
    return "create_table", (table,)


def _alter_table(ctx: Ctx) -> Request:
    table = ctx.state["alter_me"]
    table.parameters = {**(table.parameters or {}), "bench.seq": str(ctx.seq())}
    return "alter_table", (ctx.work_db, "alter_me", table)


def _prepare_drop_table(ctx: Ctx) -> None:
    name = f"d_{ctx.seq()}"
    ctx.client.create_table(new_table(ctx, ctx.work_db, name, partitioned=False, external=False))
    ctx.state["drop"] = name


def _rename(ctx: Ctx) -> Request:
    old = ctx.state["ren"]
    table = ctx.client.get_table(ctx.work_db, old)  # untimed: the request is made first
    table.tableName = "ren2" if old == "ren" else "ren"
    ctx.state["ren"] = table.tableName
    return "alter_table", (ctx.work_db, old, table)


def _prepare_add_partitions(ctx: Ctx) -> None:
    table = new_table(ctx, ctx.work_db, f"ap_{ctx.seq()}", partitioned=True, external=False)
    ctx.client.create_table(table)
    ctx.state["parts"] = partitions(ctx, table, 0, ctx.n)


def _single_partition(ctx: Ctx) -> Any:
    """A partition of ``single`` not added yet (its directory made)."""
    k = ctx.seq()
    table = ctx.state["single"]
    part = make_partition(ctx.ds, [f"x{k}", "0", "r0"], str(table.sd.location))
    part.dbName, part.tableName = table.dbName, table.tableName
    local = local_dir(str(part.sd.location))
    if local is not None:
        local.mkdir(parents=True, exist_ok=True)
    return part


def _prepare_drop_partition(ctx: Ctx) -> None:
    part = _single_partition(ctx)
    ctx.client.add_partition(part)
    ctx.state["drop_vals"] = part.values


def _notification_request(ctx: Ctx) -> Any:
    return hms.NotificationEventRequest(lastEvent=0, maxEvents=ctx.n)


def _txn(ctx: Ctx) -> None:
    opened = ctx.client.open_txns(
        hms.OpenTxnRequest(num_txns=1, user="bench", hostname=socket.gethostname())
    )
    ctx.client.commit_txn(hms.CommitTxnRequest(txnid=opened.txn_ids[0]))


def _iceberg_cycle(ctx: Ctx) -> None:
    """What Iceberg's HiveCatalog does to commit: lock the table, check the lock, read the
    table, swap ``metadata_location`` (the old value expected), unlock."""
    c, db = ctx.client, ctx.work_db
    component = hms.LockComponent(type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE,
                                  dbname=db, tablename="ice",
                                  operationType=hms.DataOperationType.NO_TXN)  # fmt: skip
    lock = c.lock(hms.LockRequest(component=[component], user="bench",
                                  hostname=socket.gethostname()))  # fmt: skip
    try:
        c.check_lock(hms.CheckLockRequest(lockid=lock.lockid))
        table = c.get_table(db, "ice")
        old = table.parameters["metadata_location"]
        table.parameters = {**table.parameters, "previous_metadata_location": old,
                            "metadata_location": f"{old.rsplit('/', 1)[0]}/{ctx.seq():05d}"
                            ".metadata.json"}  # fmt: skip
        context = hms.EnvironmentContext(properties={
            "expected_parameter_key": "metadata_location", "expected_parameter_value": old,
            "DO_NOT_UPDATE_STATS": "true"})  # fmt: skip
        c.alter_table_with_environment_context(db, "ice", table, context)
    finally:
        c.unlock(hms.UnlockRequest(lockid=lock.lockid))


def _distinct_days(ctx: Ctx) -> int:
    return ctx.ds.days


def _values_request(ctx: Ctx) -> Any:
    key = hms.FieldSchema(name="ds", type="string", comment=None)
    return hms.PartitionValuesRequest(dbName=ctx.work_db, tblName="parts", partitionKeys=[key],
                                      applyDistinct=True)  # fmt: skip


def _all_part_names(ctx: Ctx) -> list[str]:
    if "part_names" not in ctx.state:
        ctx.state["part_names"] = ctx.client.get_partition_names(ctx.work_db, "parts", -1)
    return ctx.state["part_names"]


def operations() -> list[Op]:
    """Every operation, in the order they run."""
    c = lambda f: lambda ctx: f(ctx.client, ctx)  # noqa: E731 - a count from a decoded call
    mid = lambda ctx: next(ctx.ds.values(ctx.n // 2, ctx.n // 2 + 1))  # noqa: E731
    return [
        Op("get_all_databases", ("get_all_databases",),
           c(lambda cl, _: len(cl.get_all_databases())),
           request=lambda ctx: ("get_all_databases", ())),
        Op("get_database", ("get_database",), _one,
           request=lambda ctx: ("get_database", (ctx.list_db,))),
        Op("create+drop_database", ("create_database", "drop_database"), _one,
           run=_create_drop_db, prepare=_prepare_db),
        Op("get_all_tables", ("get_all_tables",),
           c(lambda cl, ctx: len(cl.get_all_tables(ctx.list_db))),
           request=lambda ctx: ("get_all_tables", (ctx.list_db,))),
        Op("get_tables 't_*1'", ("get_tables",),
           c(lambda cl, ctx: len(cl.get_tables(ctx.list_db, "t_*1"))),
           request=lambda ctx: ("get_tables", (ctx.list_db, "t_*1"))),
        Op("get_tables_by_type", ("get_tables_by_type",),
           c(lambda cl, ctx: len(cl.get_tables_by_type(ctx.list_db, "*", "EXTERNAL_TABLE"))),
           request=lambda ctx: ("get_tables_by_type", (ctx.list_db, "*", "EXTERNAL_TABLE"))),
        Op("get_table_meta", ("get_table_meta",),
           c(lambda cl, ctx: len(cl.get_table_meta(ctx.list_db, "*", []))),
           request=lambda ctx: ("get_table_meta", (ctx.list_db, "*", []))),
        Op("get_table", ("get_table",), _one,
           request=lambda ctx: ("get_table", (ctx.list_db, "t_00000"))),
        Op("get_table_objects_by_name", ("get_table_objects_by_name",),
           c(lambda cl, ctx: len(cl.get_table_objects_by_name(ctx.list_db,
                                                               table_names(ctx.n)))),
           request=lambda ctx: ("get_table_objects_by_name", (ctx.list_db,
                                                              table_names(ctx.n)))),
        Op("create_table", ("create_table",), _one, request=_create_table),
        Op("alter_table", ("alter_table",), _one, request=_alter_table),
        Op("drop_table", ("drop_table",), _one, prepare=_prepare_drop_table,
           request=lambda ctx: ("drop_table", (ctx.work_db, ctx.state["drop"], True))),
        Op("rename (N partitions)", ("alter_table",), _n, request=_rename),
        Op("add_partitions (N)", ("add_partitions",), _n, prepare=_prepare_add_partitions,
           request=lambda ctx: ("add_partitions", (ctx.state["parts"],))),
        Op("add_partition", ("add_partition",), _one,
           request=lambda ctx: ("add_partition", (_single_partition(ctx),))),
        Op("get_partition", ("get_partition",), _one,
           request=lambda ctx: ("get_partition", (ctx.work_db, "parts", list(mid(ctx))))),
        Op("get_partition_names", ("get_partition_names",),
           c(lambda cl, ctx: len(_all_part_names(ctx))),
           request=lambda ctx: ("get_partition_names", (ctx.work_db, "parts", -1))),
        Op("get_partitions", ("get_partitions",),
           c(lambda cl, ctx: len(cl.get_partitions(ctx.work_db, "parts", -1))),
           request=lambda ctx: ("get_partitions", (ctx.work_db, "parts", -1))),
        Op("get_partitions_by_names", ("get_partitions_by_names",),
           c(lambda cl, ctx: len(cl.get_partitions_by_names(ctx.work_db, "parts",
                                                             _all_part_names(ctx)))),
           request=lambda ctx: ("get_partitions_by_names", (ctx.work_db, "parts",
                                                            _all_part_names(ctx)))),
        Op("get_partitions_by_filter point", ("get_partitions_by_filter",),
           c(lambda cl, ctx: len(cl.get_partitions_by_filter(ctx.work_db, "parts",
                                                              _point(ctx), -1))),
           request=lambda ctx: ("get_partitions_by_filter", (ctx.work_db, "parts",
                                                             _point(ctx), -1))),
        Op("get_partitions_by_filter range", ("get_partitions_by_filter",),
           c(lambda cl, ctx: len(cl.get_partitions_by_filter(ctx.work_db, "parts",
                                                              _range(ctx), -1))),
           request=lambda ctx: ("get_partitions_by_filter", (ctx.work_db, "parts",
                                                             _range(ctx), -1))),
        Op("drop_partition", ("drop_partition",), _one, prepare=_prepare_drop_partition,
           request=lambda ctx: ("drop_partition", (ctx.work_db, "single",
                                                   ctx.state["drop_vals"], True))),
        Op("get_next_notification (N)", ("get_next_notification",),
           c(lambda cl, ctx: len(cl.get_next_notification(_notification_request(ctx)).events
                                 or [])),
           request=lambda ctx: ("get_next_notification", (_notification_request(ctx),))),
        Op("get_current_notificationEventId", ("get_current_notificationEventId",), _one,
           request=lambda ctx: ("get_current_notificationEventId", ())),
        Op("open_txns+commit_txn", ("open_txns", "commit_txn"), _one, run=_txn),
        Op("iceberg lock cycle", ("lock", "check_lock", "get_table",
                                  "alter_table_with_environment_context", "unlock"),
           _one, run=_iceberg_cycle),
        Op("get_partition_values", ("get_partition_values",), _distinct_days,
           request=lambda ctx: ("get_partition_values", (_values_request(ctx),))),
    ]  # fmt: skip


def limit_reply(ctx: Ctx, op: Op) -> tuple[str, bytes, int] | None:
    """For an operation timed on its byte-copy limit (``LIMITED``): (method, its reply as the
    target sends it, encoded beforehand, rows: names of a listing, else 1); None for others."""
    if op.name not in LIMITED or op.request is None:
        return None
    method, args = op.request(ctx)
    success = getattr(ctx.client, method)(*args)
    rows = len(success) if isinstance(success, list) else 1
    return method, encode_reply(method, success), rows
