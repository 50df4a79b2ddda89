"""A concurrent partition workload against one or more metastore endpoints, and its check.

Each worker thread owns one region of one shared table: it adds (``add_partitions_req``, some
with ``ifNotExists``), drops, alters and lists partitions of its region, so it knows exactly what
its region must hold and checks every listing of it (read-your-writes under contention). All
workers also race to create the same shared partitions with ``add_partitions_req(ifNotExists=
true, needResult=true)``: each must be reported created by exactly one caller. Afterwards every
acknowledged, undropped partition must be there exactly once, no dropped one may remain, and the
table's timelines must equal a rebuild from its partitions.

All workers also contend for the same few partitions (region ``contended``): each, from time to
time, adds one (``ifNotExists``, the answer says whether this call created it), drops one (with
its data; ``NoSuchObjectException``: it was not there) or alters one (a unique token parameter;
``InvalidOperationException``: it was not there), recording the acknowledged outcome and the
call's start and end on the client's monotonic clock. Each creation and each drop changes
whether the partition exists and is acknowledged to the one caller that made it, and nothing
else does, so per contended partition acknowledged creations minus acknowledged drops must be 1
if it is there at the end and 0 if not, however the calls interleaved. An acknowledged alter
that started after every other call that changed (or may have changed) the partition had ended
is the last write: the partition must be there with its token. A token found at the end must be
one an alter of that partition wrote, and every contended partition there must be listed once
and read back whole.

Used by ``tests/integration/test_concurrency.py`` and runnable on its own::

    python -m support.stress --uri thrift://127.0.0.1:9083 [--uri ...] --threads 16 --seconds 60
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from metastore_server.timeline import TIME_PARTCOLS_KEY, UPDATE_PERIOD_KEY

from metastore_server.thrift_api import hms, make_client

DB = "stress"
TABLE = "events"
SHARED = "shared"
HOURS = 240  # the dt values each region cycles through
SHARED_BATCH = 4
HOURS_SHARED = 720  # the shared dt values (30 days), added in batches of SHARED_BATCH
CONTENDED = "contended"
#: The contended partitions' dt values (none of them a region's or the shared ones').
CONTENDED_DTS = tuple(f"2024-06-01-{hour:02d}" for hour in range(16))
CONTENDED_EVERY = 3  # one step in this many is a call on a contended partition
TOKEN_KEY = "stress.token"  # the parameter a contended alter sets

# What the server acknowledged to a call on a contended partition.
CREATED, THERE, DROPPED, ABSENT, ALTERED, FAILED = (
    "created",
    "already there",
    "dropped",
    "absent",
    "altered",
    "failed",
)
#: Outcomes of calls that changed the partition, or may have (the answer was lost).
CHANGED = frozenset({CREATED, DROPPED, ALTERED, FAILED})


@dataclass(frozen=True)
class ContendedCall:
    """One call on a contended partition, as its caller saw it."""

    dt: str
    op: str  # "add", "drop" or "alter"
    outcome: str  # CREATED, THERE, DROPPED, ABSENT, ALTERED or FAILED
    token: str  # the token an alter sent ("" for adds and drops)
    start: float  # time.monotonic() before the call was sent
    end: float  # time.monotonic() after its answer came


@dataclass
class Report:
    """What the workload did and what the check found."""

    seconds: float = 0.0
    calls: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    shared_created: Counter[str] = field(default_factory=Counter)
    present: int = 0
    contended: Counter[str] = field(default_factory=Counter)  # "op outcome" -> calls
    contended_present: int = 0  # contended partitions there at the end
    last_writer_checked: int = 0  # contended partitions whose last alter was checked

    def summary(self) -> str:
        calls = sum(self.calls.values())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.calls.items()))
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.contended.items()))
        return (
            f"{calls} calls in {self.seconds:.1f} s ({calls / max(self.seconds, 1e-9):.0f}/s): "
            f"{parts}; {self.present} partitions at the end; contended: "
            f"{sum(self.contended.values())} calls ({outcomes}), {self.contended_present} of "
            f"{len(CONTENDED_DTS)} there at the end, last alter checked on "
            f"{self.last_writer_checked}; {len(self.failures)} failure(s)"
        )


def _dt(hour: int) -> str:
    day, hh = divmod(hour, 24)
    return f"2024-01-{1 + day:02d}-{hh:02d}"


def _partition(dt: str, region: str) -> hms.Partition:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="v", type="int")], parameters={})
    return hms.Partition(
        dbName=DB,
        tableName=TABLE,
        values=[dt, region],
        sd=sd,
        parameters={UPDATE_PERIOD_KEY: "HOURLY"},
    )


def _name(dt: str, region: str) -> str:
    return f"dt={dt}/region={region}"


def prepare(client: Any) -> None:
    """(Re)create the database and the table (opted in to timelines on ``dt``)."""
    try:
        client.drop_database(DB, True, True)
    except hms.NoSuchObjectException:
        pass
    client.create_database(hms.Database(name=DB, description="stress", parameters={}))
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="v", type="int")], parameters={})
    client.create_table(
        hms.Table(
            dbName=DB,
            tableName=TABLE,
            owner="stress",
            sd=sd,
            partitionKeys=[
                hms.FieldSchema(name="dt", type="string"),
                hms.FieldSchema(name="region", type="string"),
            ],
            parameters={TIME_PARTCOLS_KEY: "dt"},
            tableType="MANAGED_TABLE",
        )
    )


class _Worker:
    """One client thread owning one region."""

    def __init__(self, index: int, host: str, port: int, deadline: float, report: Report) -> None:
        self.region = f"r{index:02d}"
        self.rng = random.Random(index)
        self.client = make_client(host, port)
        self.deadline = deadline
        self.report = report
        self.present: dict[str, str] = {}  # dt -> the "touch" parameter last written ("" none)
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.created: Counter[str] = Counter()
        self.failures: list[str] = []
        self.contended: list[ContendedCall] = []

    def run(self) -> None:
        step = 0
        try:
            while time.monotonic() < self.deadline:
                self._step(step)
                step += 1
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            self.failures.append(f"{self.region} step {step}: {type(exc).__name__}: {exc}")
        finally:
            self.client.close()

    def _step(self, step: int) -> None:
        if step % 7 == 3:
            self._add_shared(step // 7)
            return
        if step % CONTENDED_EVERY == 1:
            self._contend(step)
            return
        choice = self.rng.random()
        if choice < 0.4 or not self.present:
            self._add()
        elif choice < 0.6:
            self._drop()
        elif choice < 0.75:
            self._alter(step)
        else:
            self._check_listing()

    def _add(self) -> None:
        free = [_dt(h) for h in self.rng.sample(range(HOURS), 5)]
        wanted = [dt for dt in free if dt not in self.present][: self.rng.randint(1, 3)]
        if not wanted:
            return
        if_not_exists = self.rng.random() < 0.5
        request = hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TABLE,
            parts=[_partition(dt, self.region) for dt in wanted],
            ifNotExists=if_not_exists,
            needResult=True,
        )
        result = self.client.add_partitions_req(request)
        self.calls["add"] += 1
        got = sorted(p.values[0] for p in result.partitions or [])
        if got != sorted(wanted):
            self.failures.append(f"{self.region}: added {wanted}, answer {got}")
        for dt in wanted:
            self.present[dt] = ""

    def _drop(self) -> None:
        dt = self.rng.choice(sorted(self.present))
        self.client.drop_partition(DB, TABLE, [dt, self.region], False)
        self.calls["drop"] += 1
        del self.present[dt]

    def _alter(self, step: int) -> None:
        dt = self.rng.choice(sorted(self.present))
        partition = self.client.get_partition(DB, TABLE, [dt, self.region])
        partition.parameters["touch"] = str(step)
        self.client.alter_partition(DB, TABLE, partition)
        self.calls["alter"] += 2
        self.present[dt] = str(step)

    def _check_listing(self) -> None:
        listed = self.client.get_partitions_by_filter(DB, TABLE, f'region = "{self.region}"', -1)
        self.calls["list"] += 1
        got = {p.values[0]: (p.parameters or {}).get("touch", "") for p in listed}
        if got != self.present:
            extra = sorted(set(got) - set(self.present))[:5]
            missing = sorted(set(self.present) - set(got))[:5]
            changed = sorted(k for k in got if k in self.present and got[k] != self.present[k])
            self.failures.append(
                f"{self.region}: listing differs: extra {extra}, missing {missing}, "
                f"stale {changed[:5]}"
            )

    def _add_shared(self, batch: int) -> None:
        """Every worker adds the same shared batches, in the same order."""
        first = (batch % (HOURS_SHARED // SHARED_BATCH)) * SHARED_BATCH
        dts = [_dt(first + i) for i in range(SHARED_BATCH)]
        request = hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TABLE,
            parts=[_partition(dt, SHARED) for dt in dts],
            ifNotExists=True,
            needResult=True,
        )
        result = self.client.add_partitions_req(request)
        self.calls["add_shared"] += 1
        for partition in result.partitions or []:
            if partition.values[1] != SHARED or partition.values[0] not in dts:
                self.failures.append(f"shared add of {dts} answered {partition.values}")
            self.created[partition.values[0]] += 1

    def _contend(self, step: int) -> None:
        """One add, drop or alter of a random contended partition, recorded with its outcome
        (a call that raised anything else is recorded as FAILED, then the worker stops)."""
        dt = self.rng.choice(CONTENDED_DTS)
        op = self.rng.choice(("add", "add", "drop", "alter"))
        token = f"worker-{self.region}-op-{step}" if op == "alter" else ""
        start = time.monotonic()
        try:
            if op == "add":
                outcome = self._contended_add(dt)
            elif op == "drop":
                outcome = self._contended_drop(dt)
            else:
                outcome = self._contended_alter(dt, token)
        except Exception:
            self.contended.append(ContendedCall(dt, op, FAILED, token, start, time.monotonic()))
            raise
        self.contended.append(ContendedCall(dt, op, outcome, token, start, time.monotonic()))
        self.calls[f"contended_{op}"] += 1

    def _contended_add(self, dt: str) -> str:
        request = hms.AddPartitionsRequest(
            dbName=DB,
            tblName=TABLE,
            parts=[_partition(dt, CONTENDED)],
            ifNotExists=True,
            needResult=True,
        )
        got = [list(p.values) for p in self.client.add_partitions_req(request).partitions or []]
        if got not in ([], [[dt, CONTENDED]]):
            self.failures.append(f"contended add of {dt} answered {got}")
        return CREATED if got else THERE

    def _contended_drop(self, dt: str) -> str:
        try:
            self.client.drop_partition(DB, TABLE, [dt, CONTENDED], True)
        except hms.NoSuchObjectException:
            return ABSENT
        return DROPPED

    def _contended_alter(self, dt: str, token: str) -> str:
        """Alter the partition as read (keeping its update period), plus the token."""
        try:
            partition = self.client.get_partition(DB, TABLE, [dt, CONTENDED])
        except hms.NoSuchObjectException:
            return ABSENT
        partition.parameters = {**(partition.parameters or {}), TOKEN_KEY: token}
        try:
            self.client.alter_partition(DB, TABLE, partition)
        except hms.InvalidOperationException:
            return ABSENT
        return ALTERED


def run(endpoints: Sequence[tuple[str, int]], threads: int, seconds: float) -> Report:
    """Run the workload (workers spread over ``endpoints``) and check the outcome."""
    host, port = endpoints[0]
    setup = make_client(host, port)
    prepare(setup)
    report = Report()
    deadline = time.monotonic() + seconds
    workers = [
        _Worker(i, *endpoints[i % len(endpoints)], deadline=deadline, report=report)
        for i in range(threads)
    ]
    started = time.monotonic()
    running = [threading.Thread(target=w.run, name=w.region) for w in workers]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    report.seconds = time.monotonic() - started
    expected: dict[str, str] = {}
    shared_seen: set[str] = set()
    contended: list[ContendedCall] = []
    for worker in workers:
        contended.extend(worker.contended)
        report.calls.update(worker.calls)
        report.failures.extend(worker.failures)
        report.shared_created.update(worker.created)
        for dt, touch in worker.present.items():
            expected[_name(dt, worker.region)] = touch
    for worker in workers:
        shared_seen.update(worker.created)
    for dt in shared_seen:
        expected[_name(dt, SHARED)] = ""
    _check(setup, endpoints, expected, report)
    _check_contended(setup, contended, report)
    setup.close()
    return report


def _check(
    client: Any, endpoints: Sequence[tuple[str, int]], expected: dict[str, str], report: Report
) -> None:
    names = client.get_partition_names(DB, TABLE, -1)
    report.present = len(names)
    duplicates = [n for n, c in Counter(names).items() if c > 1]
    if duplicates:
        report.failures.append(f"partitions listed twice: {duplicates[:5]}")
    contended = {_name(dt, CONTENDED) for dt in CONTENDED_DTS}  # checked by _check_contended
    uncontended = set(names) - contended
    if uncontended != set(expected):
        extra = sorted(uncontended - set(expected))[:5]
        missing = sorted(set(expected) - uncontended)[:5]
        report.failures.append(f"final partitions differ: extra {extra}, missing {missing}")
    twice = {dt: n for dt, n in report.shared_created.items() if n != 1}
    if twice:
        report.failures.append(f"shared partitions reported created more than once: {twice}")
    listed = client.get_partitions(DB, TABLE, -1)
    for partition in listed:
        name = _name(*partition.values)
        touch = (partition.parameters or {}).get("touch", "")
        if name in expected and expected[name] != touch:
            wanted = expected[name]
            report.failures.append(f"{name}: parameter touch={touch!r}, expected {wanted!r}")
    # Every server's timelines equal a rebuild from the partitions.
    request = hms.GetPartitionTimelinesRequest(dbName=DB, tblName=TABLE)
    kept = []
    for host, port in endpoints:
        other = make_client(host, port)
        kept.append(_ranges(other.get_partition_timelines(request)))
        other.close()
    rebuilt = _ranges(
        client.rebuild_partition_timelines(hms.RebuildTimelinesRequest(dbName=DB, tblName=TABLE))
    )
    for index, ranges in enumerate(kept):
        if ranges != rebuilt:
            report.failures.append(f"server {index}'s timelines differ from a rebuild")


def _check_contended(client: Any, calls: Sequence[ContendedCall], report: Report) -> None:
    """Check each contended partition's end state against the calls made on it."""
    report.contended.update(f"{call.op} {call.outcome}" for call in calls)
    names = Counter(client.get_partition_names(DB, TABLE, -1))
    listed: dict[str, list[hms.Partition]] = {}
    for partition in client.get_partitions(DB, TABLE, -1):
        if list(partition.values)[1:] == [CONTENDED]:
            listed.setdefault(partition.values[0], []).append(partition)
    for dt in CONTENDED_DTS:
        name = _name(dt, CONTENDED)
        mine = [c for c in calls if c.dt == dt]
        if names[name] > 1 or len(listed.get(dt, [])) > 1:
            report.failures.append(
                f"{name}: {names[name]} in the names, {len(listed.get(dt, []))} in the listing"
            )
        present = names[name] > 0
        report.contended_present += present
        if present != (dt in listed):
            report.failures.append(f"{name}: named {present}, listed {dt in listed}")
        if any(c.outcome == FAILED for c in mine):
            continue  # that call's effect is unknown (and it is a failure already)
        # 1. Each creation and each drop is acknowledged to exactly one caller.
        created = sum(c.outcome == CREATED for c in mine)
        dropped = sum(c.outcome == DROPPED for c in mine)
        if created - dropped != int(present):
            report.failures.append(
                f"{name}: {created} acknowledged creation(s) and {dropped} drop(s), "
                f"but it is {'there' if present else 'gone'} at the end"
            )
        final = listed[dt][0] if dt in listed else None
        token = (final.parameters or {}).get(TOKEN_KEY) if final is not None else None
        if final is not None:
            _check_contended_partition(client, dt, final, report)
        # A token found is one an acknowledged alter of this partition wrote.
        if token is not None and token not in {c.token for c in mine if c.outcome == ALTERED}:
            report.failures.append(f"{name}: token {token!r} was never written to it")
        # 2. An acknowledged alter that started after every other change had ended wrote last.
        changes = [c for c in mine if c.outcome in CHANGED]
        alters = [c for c in changes if c.outcome == ALTERED]
        if not alters:
            continue
        last = max(alters, key=lambda c: c.start)
        if all(c.end < last.start for c in changes if c is not last):
            report.last_writer_checked += 1
            if token != last.token:
                report.failures.append(
                    f"{name}: the last alter (alone after every other change) sent "
                    f"{last.token!r}, but the partition is "
                    f"{'gone' if final is None else f'there with token {token!r}'}"
                )


def _check_contended_partition(client: Any, dt: str, listed: hms.Partition, report: Report) -> None:
    """A contended partition that is there reads back whole, alone and in the listing."""
    name = _name(dt, CONTENDED)
    try:
        alone = client.get_partition(DB, TABLE, [dt, CONTENDED])
    except hms.NoSuchObjectException:
        report.failures.append(f"{name}: listed, but get_partition does not find it")
        return
    for how, partition in (("listed", listed), ("read alone", alone)):
        params = partition.parameters or {}
        cols = [c.name for c in (partition.sd.cols if partition.sd else None) or []]
        if (
            list(partition.values) != [dt, CONTENDED]
            or params.get(UPDATE_PERIOD_KEY) != "HOURLY"
            or cols != ["v"]
        ):
            report.failures.append(
                f"{name} {how}: values {partition.values}, columns {cols}, parameters {params}"
            )


def _ranges(result: Any) -> dict[tuple[str, str], list[str]]:
    return {(t.updatePeriod, t.column): list(t.ranges) for t in result.timelines or []}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the workload from the command line and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", action="append", required=True, help="thrift://host:port")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    endpoints = []
    for uri in args.uri:
        host, _, port = uri.removeprefix("thrift://").partition(":")
        endpoints.append((host, int(port or 9083)))
    report = run(endpoints, args.threads, args.seconds)
    print(report.summary())
    for failure in report.failures:
        print("FAILURE:", failure)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
