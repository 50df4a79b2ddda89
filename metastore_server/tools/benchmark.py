"""The workload, timing and reports of ``metastore-server bench``.

Against each metastore the benchmark creates one database and, per partition count N, a table
``parts_<N>`` keyed by (ds string, hr int, region string) holding N partitions (loaded with
``add_partitions_req`` in batches), then times a fixed mix of calls on it (:func:`operations`,
plus ``add_partitions``/``drop_partitions`` of a few new partitions). Replies are decoded by the
thriftpy2 client, so a latency is what a Python client sees. Nothing here depends on which
metastore answers: any Hive Metastore speaking the binary protocol over a buffered transport.
"""

from __future__ import annotations

import contextlib
import csv
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlparse

from metastore_server.client import DEFAULT_PORT, MetastoreClient
from metastore_server.thrift_api import hms
from metastore_server.tools.progress import ProgressBar

KEYS = (("ds", "string"), ("hr", "int"), ("region", "string"))
REGIONS = ("r0", "r1", "r2", "r3")
HOURS = 24
START_DAY = date(2024, 1, 1)
BY_NAMES = 100  # partitions asked for by name
CHURN = 5  # partitions added then dropped per timed add/drop
CHURN_DAY = "2199-12-31"  # their ds: after every loaded day
COLUMNS = (("id", "bigint"), ("payload", "string"))
PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"

#: The timed operations, in report order.
OPERATION_NAMES = (
    "get_table",
    "get_partition_names",
    "filter_point",
    "filter_leading_range",
    "filter_non_leading",
    "filter_in_list",
    "get_partitions_by_names",
    "get_partition_values",
    "add_partitions",
    "drop_partitions",
)
CSV_COLUMNS = (
    "metastore",
    "uri",
    "partitions",
    "operation",
    "calls",
    "mean_ms",
    "median_ms",
    "p95_ms",
    "p99_ms",
    "min_ms",
    "max_ms",
    "rows",
    "error",
)


# --------------------------------------------------------------------------- the data set


@dataclass(frozen=True)
class Layout:
    """N partitions enumerated day by day, hour by hour (0-23), region by region (r0-r3)."""

    size: int

    @property
    def table(self) -> str:
        """The table holding them."""
        return f"parts_{self.size}"

    @property
    def per_day(self) -> int:
        """Partitions of one full day."""
        return HOURS * len(REGIONS)

    @property
    def days(self) -> int:
        """Days holding at least one partition."""
        return max(1, -(-self.size // self.per_day))

    @staticmethod
    def day(index: int) -> str:
        """The ds value of day ``index`` (0-based)."""
        return (START_DAY + timedelta(days=index)).isoformat()

    def values(self, index: int) -> list[str]:
        """[ds, hr, region] of partition ``index``."""
        d, rest = divmod(index, self.per_day)
        hr, r = divmod(rest, len(REGIONS))
        return [self.day(d), str(hr), REGIONS[r]]

    def batches(self, size: int) -> Iterator[list[list[str]]]:
        """The partition values in lists of at most ``size``."""
        for start in range(0, self.size, size):
            yield [self.values(i) for i in range(start, min(start + size, self.size))]


def partition_name(values: Sequence[str]) -> str:
    """``ds=.../hr=.../region=...``."""
    return "/".join(f"{key}={value}" for (key, _), value in zip(KEYS, values, strict=True))


def _sd() -> Any:
    return hms.StorageDescriptor(
        cols=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in COLUMNS],
        location=None,
        inputFormat=PARQUET_IN,
        outputFormat=PARQUET_OUT,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(
            name=None, serializationLib=PARQUET_SERDE, parameters={"serialization.format": "1"}
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def make_table(db: str, layout: Layout) -> Any:
    """The partitioned Parquet table of ``layout``."""
    return hms.Table(
        tableName=layout.table,
        dbName=db,
        owner="bench",
        createTime=int(time.time()),
        lastAccessTime=0,
        retention=0,
        sd=_sd(),
        partitionKeys=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in KEYS],
        parameters={},
        tableType="MANAGED_TABLE",
    )


def make_partitions(db: str, table: str, rows: Sequence[Sequence[str]]) -> list[Any]:
    """Partitions of ``table`` with these values (the metastore picks their locations)."""
    now = int(time.time())
    return [
        hms.Partition(
            values=list(values),
            dbName=db,
            tableName=table,
            createTime=now,
            lastAccessTime=0,
            sd=_sd(),
            parameters={},
        )
        for values in rows
    ]


# --------------------------------------------------------------------------- statistics


@dataclass
class Stats:
    """The timed calls of one operation: latencies (ms), rows of the last answer, or an error."""

    samples_ms: list[float] = field(default_factory=list)
    rows: int | None = None
    error: str | None = None

    def percentile(self, q: float) -> float:
        """Percentile ``q`` (0..100), interpolated between samples; NaN without samples."""
        xs = sorted(self.samples_ms)
        if not xs:
            return math.nan
        pos = (len(xs) - 1) * q / 100
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    @property
    def mean(self) -> float:
        """Mean latency; NaN without samples."""
        return sum(self.samples_ms) / len(self.samples_ms) if self.samples_ms else math.nan

    @property
    def median(self) -> float:
        """Median latency."""
        return self.percentile(50)


@dataclass
class Row:
    """One metastore x partition count x operation."""

    metastore: str
    uri: str
    partitions: int
    operation: str
    stats: Stats


# --------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Operation:
    """A timed call: its report name, what it sends, and the call (answer: rows returned)."""

    name: str
    description: str
    call: Callable[[MetastoreClient], int]


def _filter_op(name: str, db: str, table: str, text: str) -> Operation:
    return Operation(
        name,
        f"get_partitions_by_filter: {text}",
        lambda c: len(c.get_partitions_by_filter(db, table, text, -1)),
    )


@dataclass(frozen=True)
class FilterValues:
    """The values the filters of :func:`operations` name, all present in the table."""

    point: list[str]  # [ds, hr, region] of one partition
    range_start: str  # leading-key range [start, end) of ds: about a tenth of the days
    range_end: str
    hour: str  # the non-leading key's value
    in_days: list[str]  # up to five distinct ds values spread over the table

    @classmethod
    def of(cls, layout: Layout) -> FilterValues:
        """The values for ``layout``."""
        mid = layout.days // 2
        span = max(1, layout.days // 10)
        return cls(
            point=layout.values(layout.size // 2),
            range_start=layout.day(mid),
            range_end=layout.day(mid + span),
            hour=layout.values(min(layout.size, layout.per_day) // 2)[1],
            in_days=list(dict.fromkeys(layout.day(i * (layout.days - 1) // 4) for i in range(5))),
        )


def operations(db: str, layout: Layout) -> list[Operation]:
    """The read operations on ``layout``'s table (add/drop are timed by :func:`time_churn`)."""
    table = layout.table
    v = FilterValues.of(layout)
    point = " and ".join(
        f'{key} = "{value}"' if kind == "string" else f"{key} = {value}"
        for (key, kind), value in zip(KEYS, v.point, strict=True)
    )
    leading = f'ds >= "{v.range_start}" and ds < "{v.range_end}"'
    in_days = ", ".join(f'"{day}"' for day in v.in_days)
    count = min(BY_NAMES, layout.size)
    names = [partition_name(layout.values(i * layout.size // count)) for i in range(count)]
    values_request = hms.PartitionValuesRequest(
        dbName=db,
        tblName=table,
        partitionKeys=[hms.FieldSchema(name="ds", type="string")],
        applyDistinct=True,
        ascending=True,
        maxParts=-1,
    )
    return [
        Operation("get_table", "get_table", lambda c: 1 if c.get_table(db, table) else 0),
        Operation(
            "get_partition_names",
            "get_partition_names: every name",
            lambda c: len(c.get_partition_names(db, table, -1)),
        ),
        _filter_op("filter_point", db, table, point),
        _filter_op("filter_leading_range", db, table, leading),
        _filter_op("filter_non_leading", db, table, f"hr = {v.hour}"),
        _filter_op("filter_in_list", db, table, f"(ds) in ({in_days})"),
        Operation(
            "get_partitions_by_names",
            f"get_partitions_by_names: {count} names spread over the table",
            lambda c: len(c.get_partitions_by_names(db, table, names)),
        ),
        Operation(
            "get_partition_values",
            "get_partition_values: distinct ds",
            lambda c: len(c.get_partition_values(values_request).partitionValues or []),
        ),
    ]


CHURN_DESCRIPTIONS = {
    "add_partitions": f"add_partitions_req: {CHURN} new partitions",
    "drop_partitions": f"drop_partitions_req: the {CHURN} by name",
}


def describe_operations(db: str, layout: Layout) -> list[tuple[str, str]]:
    """(name, what it sends) of every operation, in report order."""
    out = [(op.name, op.description) for op in operations(db, layout)]
    return out + list(CHURN_DESCRIPTIONS.items())


def error_text(exc: BaseException) -> str:
    """An operation's error as reported."""
    message = getattr(exc, "message", None) or str(exc)
    return f"{type(exc).__name__}: {message}".replace("\n", " ")[:200]


def _timed(call: Callable[[], int]) -> tuple[int, float]:
    started = time.perf_counter()
    rows = call()
    return rows, (time.perf_counter() - started) * 1000


def time_operation(client: MetastoreClient, op: Operation, warmup: int, calls: int) -> Stats:
    """Warm up, then time ``calls`` calls of ``op``; an error ends it (and is recorded)."""
    stats = Stats()
    try:
        for _ in range(warmup):
            op.call(client)
        for _ in range(calls):
            stats.rows, ms = _timed(lambda: op.call(client))
            stats.samples_ms.append(ms)
    except Exception as exc:  # noqa: BLE001 - reported in the table; the run goes on
        stats.error = error_text(exc)
    return stats


def time_churn(
    client: MetastoreClient, db: str, table: str, warmup: int, calls: int
) -> tuple[Stats, Stats]:
    """Add :data:`CHURN` new partitions then drop them, ``warmup`` + ``calls`` times; the
    (add, drop) timings of the last ``calls`` rounds."""
    rows = [[CHURN_DAY, str(hr), REGIONS[0]] for hr in range(CHURN)]
    names = [partition_name(v) for v in rows]
    added, dropped = Stats(), Stats()

    def add() -> int:
        request = hms.AddPartitionsRequest(
            dbName=db,
            tblName=table,
            parts=make_partitions(db, table, rows),
            ifNotExists=False,
            needResult=True,
        )
        return len(client.add_partitions_req(request).partitions or [])

    def drop() -> int:
        request = hms.DropPartitionsRequest(
            dbName=db,
            tblName=table,
            parts=hms.RequestPartsSpec(names=names),
            deleteData=True,
            ifExists=True,
            needResult=True,
        )
        return len(client.drop_partitions_req(request).partitions or [])

    current = added
    try:
        for i in range(warmup + calls):
            current = added
            rows_added, ms_add = _timed(add)
            current = dropped
            rows_dropped, ms_drop = _timed(drop)
            if i >= warmup:
                added.samples_ms.append(ms_add)
                added.rows = rows_added
                dropped.samples_ms.append(ms_drop)
                dropped.rows = rows_dropped
    except Exception as exc:  # noqa: BLE001 - reported in the table; the run goes on
        current.error = error_text(exc)
        if current is added:
            dropped.error = "not run: add_partitions failed"
    return added, dropped


# --------------------------------------------------------------------------- loading


@dataclass
class Load:
    """How a table was loaded."""

    partitions: int
    seconds: float

    @property
    def rate(self) -> float:
        """Partitions per second."""
        return self.partitions / self.seconds if self.seconds > 0 else math.inf


def load_table(
    client: MetastoreClient,
    db: str,
    layout: Layout,
    batch: int,
    progress: ProgressBar,
    label: str = "",
) -> Load:
    """Create ``layout``'s table and add its partitions, ``batch`` per ``add_partitions_req``."""
    client.create_table(make_table(db, layout))
    started = time.monotonic()
    progress.start(label or layout.table, layout.size)
    for values in layout.batches(batch):
        request = hms.AddPartitionsRequest(
            dbName=db,
            tblName=layout.table,
            parts=make_partitions(db, layout.table, values),
            ifNotExists=False,
            needResult=False,
        )
        client.add_partitions_req(request)
        progress.advance(len(values))
    progress.end()
    return Load(layout.size, time.monotonic() - started)


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    """A metastore under test: a label for the reports (host:port), its URI, how to log in to
    it (``MetastoreClient``'s options), a connection, and what it said it is (``identity``)."""

    label: str
    uri: str
    client: MetastoreClient | None = None
    timeout_ms: int = 600_000
    login: dict[str, Any] = field(default_factory=dict)
    identity: str = ""

    def connect(self) -> MetastoreClient:
        """(Re)open the connection."""
        self.close()
        self.client = MetastoreClient.from_uri(self.uri, timeout_ms=self.timeout_ms, **self.login)
        return self.client

    def close(self) -> None:
        """Close the connection, if open."""
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()
            self.client = None


def labels(uris: Sequence[str]) -> list[str]:
    """``host:port`` of each URI, made unique with ``#2``, ``#3``... when repeated."""
    out: list[str] = []
    for uri in uris:
        parts = urlparse(uri)
        base = f"{parts.hostname or uri}:{parts.port or DEFAULT_PORT}"
        label, n = base, 1
        while label in out:
            n += 1
            label = f"{base}#{n}"
        out.append(label)
    return out


def bench_target(
    target: Target,
    db: str,
    layout: Layout,
    *,
    warmup: int,
    calls: int,
    batch: int,
    progress: bool,
    err: TextIO,
) -> tuple[Load, list[Row]]:
    """Load ``layout``'s table into ``target`` and time every operation on it."""
    client = target.client or target.connect()
    bar = ProgressBar(err, visible=progress)
    load = load_table(client, db, layout, batch, bar, f"{target.label} {layout.table}")
    rows: list[Row] = []

    def record(name: str, stats: Stats) -> None:
        rows.append(Row(target.label, target.uri, layout.size, name, stats))
        if stats.error is not None:  # maybe a broken connection: start the next one afresh
            target.connect()

    for op in operations(db, layout):
        record(op.name, time_operation(target.client or target.connect(), op, warmup, calls))
    added, dropped = time_churn(target.client or target.connect(), db, layout.table, warmup, calls)
    record("add_partitions", added)
    record("drop_partitions", dropped)
    return load, rows


# --------------------------------------------------------------------------- reports


def _ms(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def format_table(rows: Sequence[Row]) -> str:
    """The results as a fixed-width text table."""
    width = max([len("metastore"), *(len(r.metastore) for r in rows)])
    op_width = max([len("operation"), *(len(r.operation) for r in rows)])
    header = (
        f"{'metastore':<{width}} {'partitions':>10} {'operation':<{op_width}} {'calls':>5} "
        f"{'mean ms':>9} {'median ms':>9} {'p95 ms':>9} {'p99 ms':>9} {'rows':>8}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        s = r.stats
        lead = f"{r.metastore:<{width}} {r.partitions:>10,} {r.operation:<{op_width}}"
        if s.error is not None and not s.samples_ms:
            lines.append(f"{lead} error: {s.error}")
            continue
        rows_text = "-" if s.rows is None else f"{s.rows:,}"
        line = (
            f"{lead} {len(s.samples_ms):>5} {_ms(s.mean):>9} {_ms(s.median):>9} "
            f"{_ms(s.percentile(95)):>9} {_ms(s.percentile(99)):>9} {rows_text:>8}"
        )
        if s.error is not None:
            line += f"  error: {s.error}"
        lines.append(line)
    return "\n".join(lines)


def _csv_ms(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.3f}"


def write_csv(path: Path, rows: Sequence[Row]) -> None:
    """One line per metastore x partitions x operation, columns :data:`CSV_COLUMNS`."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            s = r.stats
            xs = s.samples_ms
            writer.writerow(
                [
                    r.metastore,
                    r.uri,
                    r.partitions,
                    r.operation,
                    len(xs),
                    _csv_ms(s.mean),
                    _csv_ms(s.median),
                    _csv_ms(s.percentile(95)),
                    _csv_ms(s.percentile(99)),
                    _csv_ms(min(xs)) if xs else "",
                    _csv_ms(max(xs)) if xs else "",
                    "" if s.rows is None else s.rows,
                    s.error or "",
                ]
            )


def log(err: TextIO, message: str) -> None:
    """A progress line on stderr."""
    print(message, file=err, flush=True)


def stderr_is_tty() -> bool:
    """Whether a progress bar can be drawn."""
    return sys.stderr.isatty()
