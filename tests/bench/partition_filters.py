"""Partition-filter benchmark (docs/benchmarks.md): latency of filter shapes on big partitioned
tables.

Loads ``bench_db.events_<N>`` (partition keys ds string, hr int, region string; N partitions
through ``add_partitions``; one table per size, so that a re-run of any size reuses what is
loaded) into each target metastore, then times the filter shapes of :func:`shapes` on each:
p50/p90/p99 latency, partitions returned, partitions per second and, for our server when this
script starts it, the rows it scanned (from its audit lines). It prints figures and never
asserts anything; it is not collected by pytest.

The partition directories are created before the partitions are registered, as a writer of
the data files would (``--server-mkdirs`` leaves that to the servers: HMS on a local warehouse
then forks ``ls``/``chmod``/``chown`` for every directory, pyspark's jars having no native
Hadoop library, which caps its load at ~20 partitions/s).

Targets: our server (started here on 127.0.0.1 with its store in ``--data-dir``, or
``--ours thrift://127.0.0.1:PORT``), any ``--reference thrift://127.0.0.1:PORT``, and with
``--reference-hms postgres`` the reference Apache Hive Metastore 2.3.x (pyspark's jars) on a
PostgreSQL started here. That metastore listens on every interface, so it is only started in a
private network namespace whose only interface is loopback::

    unshare -n bash -c 'ip link set lo up; \\
        .venv/bin/python tests/bench/partition_filters.py --reference-hms postgres'

Latency is measured at a client chosen with ``--client``:

* ``python`` (default): thriftpy2; the reply is read off the socket and its partitions skipped
  without building objects (thriftpy2 decodes far slower than a Java client would, and both
  servers pay the same);
* ``python-decode``: thriftpy2, replies decoded;
* ``java``: Hive's own generated Java client from the pyspark jars (what Spark runs), replies
  decoded into Java objects (``tests/bench/java/MetastoreBenchClient.java``);
* ``java-skip``: the same Java client sending the same requests, the reply walked with Thrift's
  ``TProtocolUtil.skip`` (every byte read, no object built): the server's side of a call with
  the least client cost Java's Thrift library allows;
* ``drain``: framed transport on every server (ours is started with ``--transport framed``, the
  reference HMS with ``hive.metastore.thrift.framed.transport.enabled``; a ``--reference`` or
  ``--ours`` URI must be framed too): each reply frame is read whole off the socket and only its
  result header is looked at, so the time is the server's, not a client's decoding.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[2]
for _path in (REPO_ROOT, REPO_ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from process_memory import MemorySampler  # noqa: E402
from support.net import LOOPBACK, in_isolated_netns  # noqa: E402
from thriftpy2.protocol import TBinaryProtocol  # noqa: E402
from thriftpy2.protocol import binary as pybin  # noqa: E402
from thriftpy2.thrift import TApplicationException, TMessageType, TType, args_to_kwargs  # noqa: E402
from thriftpy2.transport import TMemoryBuffer  # noqa: E402

from metastore_server import __version__ as OUR_VERSION  # noqa: E402
from metastore_server import thrift_api  # noqa: E402

hms = thrift_api.hms
SERVICE = thrift_api.ThriftHiveMetastore

DB = "bench_db"
START_DAY = date(2024, 1, 1)
DAYS_TARGET = 200  # about this many days, whatever the size: a 1% range is ~2 days
HOURS = 24
LOOPBACK_NAMES = {"127.0.0.1", "localhost"}
ISOLATED_HINT = (
    "unshare -n bash -c 'ip link set lo up; "
    ".venv/bin/python tests/bench/partition_filters.py --reference-hms postgres'"
)
COLUMNS = (
    ("event_id", "bigint"),
    ("user_id", "bigint"),
    ("event_type", "string"),
    ("payload", "string"),
    ("event_time", "timestamp"),
)
PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


# --------------------------------------------------------------------------- the data set


@dataclass(frozen=True)
class Dataset:
    """N partitions: consecutive days x 24 hours x R regions, the last day cut short.

    Partitions are enumerated day by day, hour by hour, region by region and the first N are
    kept, so the size is exact; R is chosen so that there are about DAYS_TARGET days.
    """

    size: int
    #: R when given (``--regions``; 0: chosen for about DAYS_TARGET days).
    region_count: int = 0

    @property
    def regions(self) -> list[str]:
        """Region values r0 .. r{R-1}."""
        count = self.region_count or max(1, round(self.size / (DAYS_TARGET * HOURS)))
        return [f"r{i}" for i in range(count)]

    @property
    def per_day(self) -> int:
        """Partitions of one full day."""
        return HOURS * len(self.regions)

    @property
    def days(self) -> int:
        """Days holding at least one partition."""
        return -(-self.size // self.per_day)

    @property
    def table(self) -> str:
        """One table per size (and region count), so that re-runs reuse what is loaded."""
        suffix = f"_r{self.region_count}" if self.region_count else ""
        return f"events_{self.size}{suffix}"

    def day(self, index: int) -> str:
        """The ds value of day ``index`` (0-based)."""
        return (START_DAY + timedelta(days=index)).isoformat()

    def values(self, start: int, stop: int) -> Iterator[list[str]]:
        """Partition values [ds, hr, region] of partitions start .. stop-1."""
        regions = self.regions
        for i in range(start, min(stop, self.size)):
            d, rest = divmod(i, self.per_day)
            hr, r = divmod(rest, len(regions))
            yield [self.day(d), str(hr), regions[r]]


def _sd(location: str | None) -> Any:
    return hms.StorageDescriptor(
        cols=[hms.FieldSchema(name=n, type=t, comment=None) for n, t in COLUMNS],
        location=location,
        inputFormat=PARQUET_IN,
        outputFormat=PARQUET_OUT,
        compressed=False,
        numBuckets=-1,
        serdeInfo=hms.SerDeInfo(
            name=None,
            serializationLib=PARQUET_SERDE,
            parameters={"serialization.format": "1"},
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
        skewedInfo=hms.SkewedInfo(
            skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}
        ),
        storedAsSubDirectories=False,
    )


def make_table(ds: Dataset) -> Any:
    """The partitioned Parquet table, as Spark creates it."""
    return hms.Table(
        tableName=ds.table,
        dbName=DB,
        owner="bench",
        createTime=int(time.time()),
        lastAccessTime=0,
        retention=0,
        sd=_sd(None),
        partitionKeys=[
            hms.FieldSchema(name="ds", type="string", comment=None),
            hms.FieldSchema(name="hr", type="int", comment=None),
            hms.FieldSchema(name="region", type="string", comment=None),
        ],
        parameters={"spark.sql.sources.provider": "parquet"},
        viewOriginalText=None,
        viewExpandedText=None,
        tableType="MANAGED_TABLE",
    )


def make_partition(ds: Dataset, values: list[str], table_location: str) -> Any:
    """A partition with a Parquet storage descriptor under the table's location."""
    name = f"ds={values[0]}/hr={values[1]}/region={values[2]}"
    return hms.Partition(
        values=values,
        dbName=DB,
        tableName=ds.table,
        createTime=int(time.time()),
        lastAccessTime=0,
        sd=_sd(f"{table_location.rstrip('/')}/{name}"),
        parameters={},
    )


# --------------------------------------------------------------------------- filter shapes


@dataclass(frozen=True)
class Shape:
    """One timed call: a name, the Thrift method and its arguments (a filter, maybe)."""

    name: str
    method: str
    args: tuple[Any, ...]
    filter: str | None = None
    returns_count: bool = False  # the result is a number, not partitions


def latest_ds_request(table: str) -> hms.PartitionValuesRequest:
    """The request for a table's latest ``ds`` (distinct, descending, one row)."""
    return hms.PartitionValuesRequest(
        dbName=DB,
        tblName=table,
        partitionKeys=[hms.FieldSchema(name="ds", type="string", comment=None)],
        applyDistinct=True,
        ascending=False,
        maxParts=1,
    )


def shapes(ds: Dataset) -> list[Shape]:
    """The filter shapes of docs/benchmarks.md on data set ``ds``."""
    mid = ds.days // 2
    span = max(1, round(ds.days / 100))
    regions = ds.regions
    point = f'ds = "{ds.day(mid)}" and hr = 7 and region = "{regions[len(regions) // 2]}"'
    range_1pct = f'ds >= "{ds.day(mid)}" and ds < "{ds.day(mid + span)}"'
    in_days = ", ".join(f'"{ds.day(i * (ds.days - 1) // 4)}"' for i in range(5))
    month = ds.day(mid)[:7]
    filters = [
        ("point", point),
        ("range_1pct", range_1pct),
        ("non_leading_eq", "hr = 7"),
        ("in_list", f"(ds) in ({in_days})"),
        ("region_in", '(region) in ("r1", "r2")'),
        ("or_keys", f'ds = "{ds.day(mid)}" or region = "r1"'),
        ("like_region", 'region like "r1.*"'),
        ("like_ds_month", f'ds like "{month}.*"'),
    ]
    out = [
        Shape(name, "get_partitions_by_filter", (DB, ds.table, text, -1), text)
        for name, text in filters
    ]
    latest = latest_ds_request(ds.table)
    out.append(
        Shape("latest_ds", "get_partition_values", (latest,), "distinct ds, descending, 1 row")
    )
    out.append(Shape("full_listing", "get_partitions", (DB, ds.table, -1)))
    out.append(
        Shape(
            "count_range_1pct",
            "get_num_partitions_by_filter",
            (DB, ds.table, range_1pct),
            range_1pct,
            returns_count=True,
        )
    )
    out.append(Shape("partition_names", "get_partition_names", (DB, ds.table, -1)))
    return out


# --------------------------------------------------------------------------- clients


def raw_call(client: Any, method: str, *args: Any) -> int:
    """Call ``method`` and read the reply without decoding it; the size of the result.

    The result's list header gives the number of elements (partitions, names); a number result
    is returned as is. The elements are skipped by thriftpy2's Cython protocol. Declared
    exceptions are decoded and raised.
    """
    spec = getattr(SERVICE, method + "_args").thrift_spec
    client._send(method, **args_to_kwargs(spec, *args))
    iprot = client._iprot
    trans = iprot.trans
    _name, mtype, _seqid = iprot.read_message_begin()
    if mtype == TMessageType.EXCEPTION:
        app_error = TApplicationException()
        iprot.read_struct(app_error)
        iprot.read_message_end()
        raise app_error
    result_spec = getattr(SERVICE, method + "_result").thrift_spec
    size = -1
    error: BaseException | None = None
    while True:
        ftype, fid = pybin.read_field_begin(trans)
        if ftype == TType.STOP:
            break
        if fid == 0 and ftype in (TType.LIST, TType.SET):
            etype, size = pybin.read_list_begin(trans)
            for _ in range(size):
                iprot.skip(etype)
        elif fid == 0 and ftype == TType.I32:
            size = struct.unpack("!i", trans.read(4))[0]
        elif fid == 0 and ftype == TType.STRUCT:  # get_partition_values: rows of values
            response = result_spec[0][2]()
            iprot.read_struct(response)
            size = len(response.partitionValues or [])
        elif fid in result_spec and ftype == TType.STRUCT:
            error = result_spec[fid][2]()
            iprot.read_struct(error)
        else:
            iprot.skip(ftype)
    iprot.read_message_end()
    if error is not None:
        raise error
    return size


def decoded_call(client: Any, method: str, *args: Any) -> int:
    """Call ``method`` through the decoding client; the size of the result."""
    result = getattr(client, method)(*args)
    if isinstance(result, hms.PartitionValuesResponse):
        return len(result.partitionValues or [])
    return result if isinstance(result, int) else len(result)


class PythonClient:
    """A thriftpy2 client timing its own calls (``decode``: replies decoded, else skipped)."""

    def __init__(self, target: Target, decode: bool) -> None:
        self._client = target.client()
        self._call = decoded_call if decode else raw_call

    def timed(self, method: str, *args: Any) -> tuple[int, float]:
        """(size of the result, milliseconds) of one call."""
        t0 = time.perf_counter()
        size = self._call(self._client, method, *args)
        return size, (time.perf_counter() - t0) * 1000

    def close(self) -> None:
        """Close the connection."""
        self._client.close()


JAVA_CLIENT = Path(__file__).resolve().parent / "java" / "MetastoreBenchClient.java"


class JavaClientError(Exception):
    """A call the Java client reported as failed (the server's exception, by class name)."""


class JavaClient:
    """``MetastoreBenchClient.java`` in a child JVM: one call per line, timed in Java.

    ``mode`` is ``decode`` (replies decoded into Hive's Java objects) or ``skip`` (walked
    without building objects); see the Java file.
    """

    def __init__(self, target: Target, mode: str, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._proc = subprocess.Popen(
            [
                "java",
                "-cp",
                java_classpath(),
                str(JAVA_CLIENT),
                target.host,
                str(target.port),
                mode,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        first = self._line()
        if first != "ready":
            self.close()
            raise RuntimeError(f"the Java bench client did not start: {first!r}")

    def _line(self) -> str:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.wait(timeout=self._timeout_s)
            raise RuntimeError(f"the Java bench client exited ({code})")
        return line.rstrip("\n")

    def timed(self, method: str, *args: Any) -> tuple[int, float]:
        """(size of the result, milliseconds measured in the JVM) of one call."""
        fields = [method, *(str(a) for a in args)]
        if any("\t" in f or "\n" in f for f in fields):
            raise ValueError("the Java bench client takes no tab or newline in arguments")
        assert self._proc.stdin is not None
        self._proc.stdin.write("\t".join(fields) + "\n")
        self._proc.stdin.flush()
        status, _, rest = self._line().partition("\t")
        if status != "ok":
            raise JavaClientError(rest)
        size, nanos = rest.split("\t")
        return int(size), int(nanos) / 1e6

    def close(self) -> None:
        """End the JVM (closing its input ends its loop)."""
        with contextlib.suppress(Exception):
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def java_classpath() -> str:
    """The jars of the installed pyspark wheel (Hive's metastore client and libthrift)."""
    from support.reference_hms import find_pyspark_jars

    jars = find_pyspark_jars()
    if jars is None:
        raise RuntimeError("the Java client needs pyspark's jars (pip install pyspark)")
    return str(jars / "*")


CLIENT_DESCRIPTIONS = {
    "python": "Python thriftpy2, replies read but not decoded",
    "python-decode": "Python thriftpy2, replies decoded",
    "java": "Hive's Java client (pyspark jars), replies decoded",
    "java-skip": "Hive's Java client (pyspark jars), replies walked with TProtocolUtil.skip",
    "drain": "framed replies read whole off the socket, not decoded (framed transport)",
}


class DrainClient:
    """Frames read off the socket whole, nothing decoded but the result's list header (or
    count): framed transport, so the reply's length is known before it is read. It times how
    fast a server answers and sends, with no client decoding in the way."""

    def __init__(self, target: Target) -> None:
        self._sock = socket.create_connection((target.host, target.port), timeout=600)
        self._buffer = bytearray(1 << 20)

    def timed(self, method: str, *args: Any) -> tuple[int, float]:
        """(size of the result, milliseconds) of one call."""
        spec = getattr(SERVICE, method + "_args")
        out = TMemoryBuffer()
        protocol = TBinaryProtocol(out)
        protocol.write_message_begin(method, TMessageType.CALL, 1)
        protocol.write_struct(spec(**args_to_kwargs(spec.thrift_spec, *args)))
        protocol.write_message_end()
        body = out.getvalue()
        t0 = time.perf_counter()
        self._sock.sendall(struct.pack("!i", len(body)) + body)
        (length,) = struct.unpack("!i", self._read(4)[:4])
        frame = self._read(length)
        ms = (time.perf_counter() - t0) * 1000
        return _result_size(frame), ms

    def _read(self, n: int) -> memoryview:
        if len(self._buffer) < n:
            self._buffer = bytearray(n)
        view = memoryview(self._buffer)
        got = 0
        while got < n:
            k = self._sock.recv_into(view[got:n])
            if not k:
                raise ConnectionError("the server closed the connection")
            got += k
        return view

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()


def _result_size(frame: memoryview) -> int:
    """The element count (or i32 value) of a reply frame's result field."""
    (version,) = struct.unpack_from("!i", frame, 0)
    (name_length,) = struct.unpack_from("!i", frame, 4)
    pos = 8 + name_length + 4
    if version & 0xFF == TMessageType.EXCEPTION:
        raise TApplicationException(message="the server answered an application exception")
    ftype, fid = struct.unpack_from("!bh", frame, pos)
    pos += 3
    if fid == 0 and ftype in (TType.LIST, TType.SET):
        return struct.unpack_from("!bi", frame, pos)[1]
    if fid == 0 and ftype == TType.I32:
        return struct.unpack_from("!i", frame, pos)[0]
    if fid == 0 and ftype == TType.STRUCT:  # get_partition_values: its first field's rows
        ftype, fid = struct.unpack_from("!bh", frame, pos)
        if fid == 1 and ftype == TType.LIST:
            return struct.unpack_from("!bi", frame, pos + 3)[1]
    raise RuntimeError(f"a declared exception (result field {fid})")


CLIENTS = ("python", "python-decode", "java", "java-skip", "drain")


def open_client(kind: str, target: Target) -> PythonClient | JavaClient | DrainClient:
    """A timing client of ``kind`` (one of CLIENTS) connected to ``target``."""
    if kind == "drain":
        return DrainClient(target)
    if kind.startswith("java"):
        return JavaClient(
            target, "skip" if kind == "java-skip" else "decode", target.timeout_ms / 1000
        )
    return PythonClient(target, decode=kind == "python-decode")


# --------------------------------------------------------------------------- targets


class AuditLog:
    """Our server's JSON audit lines (its stderr), read from a remembered offset."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.mark()

    def mark(self) -> None:
        """Forget everything logged so far."""
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def calls(self, method: str) -> list[dict[str, Any]]:
        """Audit lines of ``method`` logged since the last :meth:`mark`."""
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        out = []
        for line in data.splitlines():
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "call" and event.get("method") == method:
                    out.append(event)
        return out


@dataclass
class Target:
    """A metastore to benchmark."""

    name: str
    host: str
    port: int
    description: str
    audit: AuditLog | None = None
    timeout_ms: int = 600_000
    framed: bool = False  # the server speaks framed transport (``--client drain``)
    pid: int | None = None  # the server's process when started here (memory is sampled)

    def client(self) -> Any:
        """A fresh binary client (buffered, or framed for a framed server; close it)."""
        return thrift_api.make_client(
            self.host, self.port, timeout_ms=self.timeout_ms, framed=self.framed
        )

    @contextlib.contextmanager
    def connected(self) -> Iterator[Any]:
        """A client for the duration of a block."""
        client = self.client()
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.close()

    def version(self) -> str:
        """What the server says its version is (fb303 getVersion)."""
        try:
            with self.connected() as client:
                return str(client.getVersion())
        except Exception as exc:  # noqa: BLE001 - informational only
            return f"? ({type(exc).__name__})"


def loopback_target(name: str, uri: str, description: str, timeout_ms: int) -> Target:
    """A target from ``thrift://127.0.0.1:PORT``; other hosts are refused."""
    parts = urlsplit(uri)
    if parts.scheme != "thrift" or not parts.hostname or not parts.port:
        raise SystemExit(f"{name}: expected thrift://127.0.0.1:PORT, got {uri!r}")
    if parts.hostname not in LOOPBACK_NAMES:
        raise SystemExit(f"{name}: this benchmark only talks to 127.0.0.1, not {parts.hostname}")
    return Target(name, LOOPBACK, parts.port, description, timeout_ms=timeout_ms)


# --------------------------------------------------------------------------- loading


@dataclass
class LoadResult:
    """How a table came to hold its partitions."""

    partitions: int
    seconds: float
    reused: bool
    threads: int = 0
    batch: int = 0
    dirs_seconds: float | None = None  # creating the partition directories beforehand

    def describe(self) -> str:
        """One line for the report."""
        if self.reused:
            return f"reused ({self.partitions:,} partitions already there)"
        rate = self.partitions / self.seconds if self.seconds else 0.0
        dirs = (
            "the server created the partition directories"
            if self.dirs_seconds is None
            else f"directories created beforehand in {self.dirs_seconds:.1f} s, not counted"
        )
        return (
            f"loaded {self.partitions:,} in {self.seconds:.1f} s = {rate:,.0f} partitions/s "
            f"({self.threads} threads x {self.batch} per add_partitions; {dirs})"
        )


def count_partitions(target: Target, ds: Dataset) -> int | None:
    """Partitions of the data set's table, None when the table does not exist."""
    with target.connected() as client:
        try:
            client.get_table(DB, ds.table)
        except hms.NoSuchObjectException:
            return None
        return raw_call(client, "get_partition_names", DB, ds.table, -1)


def ensure_table(target: Target, ds: Dataset) -> str:
    """Create the database and the table when missing; the table's location."""
    with target.connected() as client:
        try:
            client.get_database(DB)
        except hms.NoSuchObjectException:
            with contextlib.suppress(hms.AlreadyExistsException):
                client.create_database(
                    hms.Database(name=DB, description="partition filter benchmark", parameters={})
                )
        try:
            table = client.get_table(DB, ds.table)
        except hms.NoSuchObjectException:
            client.create_table(make_table(ds))
            table = client.get_table(DB, ds.table)
        return str(table.sd.location)


def local_dir(location: str) -> Path | None:
    """The directory of a ``file:`` (or plain path) location, None for other file systems."""
    parts = urlsplit(location)
    if parts.scheme not in ("", "file") or parts.netloc not in ("", "localhost"):
        return None
    return Path(parts.path)


def precreate_dirs(ds: Dataset, table_dir: Path) -> float:
    """Create every partition directory under ``table_dir``, as a writer of the data would
    before registering the partitions; the seconds it took."""
    started = time.monotonic()
    for ds_value, hr, region in ds.values(0, ds.size):
        (table_dir / f"ds={ds_value}" / f"hr={hr}" / f"region={region}").mkdir(
            parents=True, exist_ok=True
        )
    return time.monotonic() - started


def load(
    target: Target, ds: Dataset, *, batch: int, threads: int, precreate: bool, quiet: bool
) -> LoadResult:
    """Make the data set's table hold exactly its partitions (reusing a complete one)."""
    present = count_partitions(target, ds)
    if present == ds.size:
        return LoadResult(present, 0.0, reused=True)
    if present is not None:
        log(f"  {target.name}: {ds.table} holds {present:,} partitions; dropping it")
        with target.connected() as client:
            client.drop_table(DB, ds.table, True)
    location = ensure_table(target, ds)
    dirs_s = None
    table_dir = local_dir(location) if precreate else None
    if table_dir is not None:
        dirs_s = precreate_dirs(ds, table_dir)
    batches = [(i, min(i + batch, ds.size)) for i in range(0, ds.size, batch)]
    local = threading.local()
    clients: list[Any] = []
    done = [0]
    lock = threading.Lock()
    next_report = [time.monotonic() + 10]

    def add(bounds: tuple[int, int]) -> None:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = target.client()
            with lock:
                clients.append(client)
        parts = [make_partition(ds, v, location) for v in ds.values(*bounds)]
        client.add_partitions(parts)
        with lock:
            done[0] += len(parts)
            if not quiet and time.monotonic() > next_report[0]:
                next_report[0] = time.monotonic() + 10
                rate = done[0] / (time.monotonic() - started)
                log(f"  {target.name}: {done[0]:,}/{ds.size:,} ({rate:,.0f} partitions/s)")

    started = time.monotonic()
    with ThreadPoolExecutor(threads, thread_name_prefix="load") as pool:
        try:
            list(pool.map(add, batches))
        finally:
            for client in clients:
                with contextlib.suppress(Exception):
                    client.close()
    seconds = time.monotonic() - started
    present = count_partitions(target, ds)
    if present != ds.size:
        raise RuntimeError(f"{target.name}: expected {ds.size} partitions, found {present}")
    return LoadResult(
        ds.size, seconds, reused=False, threads=threads, batch=batch, dirs_seconds=dirs_s
    )


@dataclass(frozen=True)
class LoadDataset(Dataset):
    """The data set in a table of its own, made and dropped by ``measure_load``."""

    @property
    def table(self) -> str:
        """``load_<N>``."""
        return f"load_{self.size}"


def encoded_adds(ds: Dataset, location: str, batch: int, framed: bool) -> list[bytes]:
    """The ``add_partitions`` calls loading ``ds``, each encoded once (binary protocol)."""
    messages = []
    for start in range(0, ds.size, batch):
        parts = [make_partition(ds, v, location) for v in ds.values(start, start + batch)]
        buffer = TMemoryBuffer()
        proto = TBinaryProtocol(buffer)
        proto.write_message_begin("add_partitions", TMessageType.CALL, 0)
        SERVICE.add_partitions_args(new_parts=parts).write(proto)
        proto.write_message_end()
        body = buffer.getvalue()
        messages.append(struct.pack("!i", len(body)) + body if framed else body)
    return messages


def send_adds(target: Target, messages: list[bytes], connections: int) -> float:
    """Send encoded ``add_partitions`` calls over ``connections`` connections at once, each
    reading its answer before its next call; the seconds taken."""
    pending = list(reversed(messages))
    lock = threading.Lock()

    def send_all() -> None:
        with target.connected() as client:
            socket_trans = client._oprot.trans
            while True:
                with lock:
                    if not pending:
                        return
                    message = pending.pop()
                socket_trans.write(message)
                socket_trans.flush()
                client._recv("add_partitions")

    started = time.perf_counter()
    with ThreadPoolExecutor(connections, thread_name_prefix="load") as pool:
        for future in [pool.submit(send_all) for _ in range(connections)]:
            future.result()
    return time.perf_counter() - started


def measure_load(target: Target, size: int, *, batch: int, connections: int) -> LoadResult:
    """The server's load rate: ``size`` partitions into a fresh table, as add_partitions calls
    of ``batch`` encoded beforehand (the client's encoding is not timed) and sent over
    ``connections`` connections at once, directories made first. The table is dropped after."""
    ds = LoadDataset(size)
    with target.connected() as client, contextlib.suppress(hms.NoSuchObjectException):
        client.drop_table(DB, ds.table, True)
    location = ensure_table(target, ds)
    table_dir = local_dir(location)
    dirs_s = precreate_dirs(ds, table_dir) if table_dir is not None else None
    seconds = send_adds(target, encoded_adds(ds, location, batch, target.framed), connections)
    present = count_partitions(target, ds)
    with target.connected() as client:
        client.drop_table(DB, ds.table, True)
    if present != ds.size:
        raise RuntimeError(f"{target.name}: expected {ds.size} partitions, found {present}")
    return LoadResult(
        ds.size, seconds, reused=False, threads=connections, batch=batch, dirs_seconds=dirs_s
    )


def load_targets(
    targets: Sequence[Target], ds: Dataset, args: argparse.Namespace
) -> dict[str, LoadResult]:
    """Load data set ``ds`` into every target (``add_common_arguments``' loading options)."""
    loads: dict[str, LoadResult] = {}
    for t in targets:
        log(f"[{ds.size:,}] loading {DB}.{ds.table} into {t.name} ...")
        loads[t.name] = load(
            t,
            ds,
            batch=args.batch,
            threads=args.load_threads,
            precreate=not args.server_mkdirs,
            quiet=False,
        )
        log(f"  {t.name}: {loads[t.name].describe()}")
    return loads


# --------------------------------------------------------------------------- timing


@dataclass
class Result:
    """The figures of one shape on one target."""

    samples_ms: list[float] = field(default_factory=list)
    returned: int | None = None
    scanned: int | None = None
    matched: int | None = None
    server_ms: list[float] = field(default_factory=list)
    error: str | None = None
    #: Growth of the server's resident memory (its processes together) while timed, MiB.
    memory_mib: float | None = None

    def pct(self, q: float) -> float:
        """Latency percentile ``q`` (0..100) in ms, interpolated between samples."""
        xs = sorted(self.samples_ms)
        if not xs:
            return float("nan")
        pos = (len(xs) - 1) * q / 100
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def time_shape(
    target: Target,
    shape: Shape,
    *,
    client_kind: str,
    warmup: int,
    repeat: int,
    max_seconds: float,
) -> Result:
    """Warm up, then time ``repeat`` calls (see ``timed_calls``) of one shape."""
    result = Result()
    client: PythonClient | JavaClient | DrainClient | None = None
    sampler = MemorySampler(target.pid) if target.pid is not None else None
    try:
        client = open_client(client_kind, target)
        timed = client.timed
        with sampler if sampler is not None else contextlib.nullcontext():
            result.returned = timed_calls(
                target,
                result,
                lambda: timed(shape.method, *shape.args),
                warmup=warmup,
                repeat=repeat,
                max_seconds=max_seconds,
            )
        if sampler is not None:
            result.memory_mib = sampler.growth_mib
    except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
        result.error = error_text(exc)
        return result
    finally:
        if client is not None:
            client.close()
    read_audit(target, shape.method, result)
    return result


def timed_calls(
    target: Target,
    result: Result,
    call: Callable[[], tuple[Any, float]],
    *,
    warmup: int,
    repeat: int,
    max_seconds: float,
) -> Any:
    """Warm up, then time ``repeat`` calls of ``call`` (it returns its answer and its time in
    ms, added to ``result``); fewer when they take longer than ``max_seconds`` (at least one),
    and fewer warm-up calls when they take over a quarter of it. The last answer."""
    warm_until = time.monotonic() + max_seconds / 4
    for _ in range(warmup):
        call()
        if time.monotonic() > warm_until:
            break
    if target.audit is not None:
        target.audit.mark()
    deadline = time.monotonic() + max_seconds
    answer = None
    for _ in range(repeat):
        answer, ms = call()
        result.samples_ms.append(ms)
        if time.monotonic() > deadline:
            break
    return answer


def read_audit(target: Target, method: str, result: Result) -> list[dict[str, Any]]:
    """Our server's audit lines of the timed calls: their own times and the last one's row
    counts go into ``result``; the lines (none for other targets)."""
    if target.audit is None:
        return []
    calls = target.audit.calls(method)
    result.server_ms = [float(c["ms"]) for c in calls if "ms" in c]
    if calls:
        result.scanned = calls[-1].get("rows_scanned")
        result.matched = calls[-1].get("rows_matched")
    return calls


def error_text(exc: BaseException) -> str:
    """A failed shape's error as the report shows it."""
    message = getattr(exc, "message", None) or str(exc)
    return f"{type(exc).__name__}: {message}"[:200]


# --------------------------------------------------------------------------- report


def log(message: str) -> None:
    """Progress on stderr (the figures go to stdout)."""
    print(message, file=sys.stderr, flush=True)


def _rate(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n:.0f}"


def _median(xs: list[float]) -> float:
    return Result(samples_ms=xs).pct(50)


def report(
    ds: Dataset,
    targets: list[Target],
    loads: dict[str, LoadResult],
    results: dict[tuple[str, str], Result],
    shape_list: list[Shape],
) -> str:
    """The table of one size: one row per shape and target."""
    lines = [
        "",
        f"== {ds.size:,} partitions: {DB}.{ds.table} (ds: {ds.days} days from {ds.day(0)}, "
        f"hr: 0..23, region: {len(ds.regions)} value(s)) ==",
    ]
    for t in targets:
        lines.append(f"load {t.name}: {loads[t.name].describe()}")
    ours = "ours"
    header = (
        f"{'shape':<17} {'target':<10} {'n':>3} {'p50 ms':>9} {'p90 ms':>9} {'p99 ms':>9} "
        f"{'returned':>9} {'parts/s':>8} {'scanned':>9} {'srv p50':>8} {'srv us/row':>10} "
        f"{'ref/ours':>8}"
    )
    lines += ["", header, "-" * len(header)]
    for shape in shape_list:
        base = results.get((ours, shape.name))
        for i, t in enumerate(targets):
            r = results[(t.name, shape.name)]
            label = shape.name if i == 0 else ""
            if r.error is not None:
                lines.append(f"{label:<17} {t.name:<10} error: {r.error}")
                continue
            p50 = r.pct(50)
            per_s = "-" if shape.returns_count else _rate((r.returned or 0) / (p50 / 1000))
            scanned = "-" if r.scanned is None else f"{r.scanned:,}"
            srv = f"{_median(r.server_ms):.2f}" if r.server_ms else "-"
            per_row = "-"
            if r.server_ms and r.returned and not shape.returns_count:
                per_row = f"{_median(r.server_ms) * 1000 / r.returned:.2f}"
            ratio = ""
            if i > 0 and base is not None and base.error is None and base.samples_ms:
                ratio = f"{p50 / base.pct(50):.2f}x"
            lines.append(
                f"{label:<17} {t.name:<10} {len(r.samples_ms):>3} {p50:>9.2f} {r.pct(90):>9.2f} "
                f"{r.pct(99):>9.2f} {r.returned or 0:>9,} {per_s:>8} {scanned:>9} {srv:>8} "
                f"{per_row:>10} {ratio:>8}"
            )
    for t in targets:
        listing = results.get((t.name, "full_listing"))
        if listing is not None and listing.memory_mib is not None:
            lines.append(
                f"{t.name}: server memory grew by at most {listing.memory_mib:,.0f} MiB while it "
                f"answered full_listing ({listing.returned or 0:,} partitions)"
            )
    lines += ["", "shapes:"]
    for shape in shape_list:
        what = shape.filter if shape.filter is not None else "(no filter)"
        lines.append(f"  {shape.name:<17} {shape.method}: {what}")
    return "\n".join(lines)


def load_report(targets: list[Target], args: argparse.Namespace) -> str:
    """Each target's load rate (``measure_load``), side by side."""
    lines = [
        "",
        f"== load: {args.load_size:,} partitions in add_partitions calls of {args.batch}, "
        f"encoded beforehand, over {args.load_connections} connections ==",
    ]
    rates: dict[str, float] = {}
    for t in targets:
        log(f"measuring the load rate of {t.name} ...")
        try:
            result = measure_load(
                t, args.load_size, batch=args.batch, connections=args.load_connections
            )
        except Exception as exc:  # noqa: BLE001 - reported, the run goes on
            lines.append(f"load {t.name}: error: {error_text(exc)}")
            continue
        rates[t.name] = result.partitions / result.seconds
        ratio = ""
        if "ours" in rates and t.name != "ours":
            ratio = f"  (ours / {t.name} = {rates['ours'] / rates[t.name]:,.1f}x)"
        lines.append(f"load {t.name}: {result.describe()}{ratio}")
    return "\n".join(lines)


def machine_info() -> list[str]:
    """Cores, CPU, memory, Python."""
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    import thriftpy2

    return [
        f"machine: {os.cpu_count()} cores ({cpu}), {mem} RAM, {platform.platform()}",
        f"python: {platform.python_version()} ({sys.executable}), "
        f"thriftpy2 {thriftpy2.__version__}",
    ]


def java_version() -> str:
    """First line of ``java -version``."""
    from support.reference_hms import find_java

    java = find_java()
    if java is None:
        return "?"
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    return (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else "?"


# --------------------------------------------------------------------------- main


def add_common_arguments(
    parser: argparse.ArgumentParser, *, sizes: str, sizes_help: str, data_dir: Path
) -> None:
    """The options every benchmark of this folder takes (sizes, shapes, timing, targets,
    loading); ``check_common_arguments`` reads them."""
    parser.add_argument(
        "--sizes", default=sizes, help=f"partition counts, comma-separated {sizes_help}"
    )
    parser.add_argument(
        "--shapes",
        default="",
        help="only these shapes, comma-separated (default: all; names as in the report)",
    )
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per shape")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls first")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="stop timing a shape after this long (at least one timed call; default 60)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=data_dir,
        help=f"where started servers keep their data between runs (default ./{data_dir})",
    )
    parser.add_argument(
        "--ours",
        metavar="URI",
        help="an already running server of ours instead of starting one (no rows-read "
        "figures then); 'none': no server of ours (then there is no ratio column)",
    )
    parser.add_argument(
        "--reference",
        metavar="URI",
        action="append",
        default=[],
        help="another metastore to compare (thrift://127.0.0.1:PORT), repeatable",
    )
    parser.add_argument("--batch", type=int, default=1000, help="partitions per add_partitions")
    parser.add_argument(
        "--load-size",
        type=int,
        default=20_000,
        help="partitions of the load-rate measurement, 0 to skip it (default %(default)s)",
    )
    parser.add_argument(
        "--load-connections",
        type=int,
        default=2,
        help="connections sending the load-rate measurement's calls (default %(default)s)",
    )
    parser.add_argument("--load-threads", type=int, default=4, help="client threads loading")
    parser.add_argument(
        "--hbase",
        metavar="HOST:PORT",
        default=os.environ.get("HBASE_THRIFT", ""),
        help="also measure the load rate of a server of ours on this HBase Thrift1 gateway "
        "(its tables under a fresh prefix), beside the embedded store's (default: "
        "$HBASE_THRIFT)",
    )
    parser.add_argument(
        "--server-mkdirs",
        action="store_true",
        help="let the servers create the partition directories while loading (default: create "
        "them first, as a writer of the data files would; HMS on a local warehouse forks "
        "ls/chmod/chown per directory)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="client socket timeout, s (default 600)"
    )


def check_common_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, known_shapes: set[str]
) -> None:
    """Check the options of ``add_common_arguments``; sets ``size_list`` (ascending, no
    repeats) and ``shape_names``."""
    try:
        sizes = {int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()}
    except ValueError:
        parser.error(f"--sizes must be integers, got {args.sizes!r}")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes must be positive")
    args.size_list = sorted(sizes)
    args.shape_names = [s.strip() for s in args.shapes.split(",") if s.strip()]
    unknown = sorted(set(args.shape_names) - known_shapes)
    if unknown:
        names = ", ".join(sorted(known_shapes))
        parser.error(f"unknown --shapes {', '.join(unknown)}; known: {names}")
    if args.repeat < 1 or args.warmup < 0:
        parser.error("--repeat must be >= 1 and --warmup >= 0")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Partition-filter benchmark: prints latency figures per filter shape.",
        epilog=f"Reference HMS on PostgreSQL (as root): {ISOLATED_HINT}",
    )
    add_common_arguments(
        parser,
        sizes="10000,100000",
        sizes_help="(default %(default)s; 1000000 allowed)",
        data_dir=Path("var/bench"),
    )
    parser.add_argument(
        "--reference-hms",
        choices=("postgres", "derby"),
        help="start the reference Hive Metastore 2.3.x here, on PostgreSQL (or Derby)",
    )
    parser.add_argument("--reference-heap", default="4g", help="its JVM heap (default 4g)")
    parser.add_argument(
        "--reference-property",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a hive-site.xml property of the reference HMS started here, repeatable",
    )
    parser.add_argument(
        "--client",
        choices=CLIENTS,
        default="python",
        help="the timing client (see the module docstring; default %(default)s)",
    )
    parser.add_argument(
        "--regions",
        type=int,
        default=0,
        help="regions per day and hour (default: chosen for about 200 days; tables then "
        "events_<N>_r<R>)",
    )
    args = parser.parse_args(argv)
    check_common_arguments(parser, args, {shape.name for shape in shapes(Dataset(1))})
    if args.regions < 0 or args.load_size < 0 or args.load_connections < 1:
        parser.error("--regions and --load-size must be >= 0, --load-connections >= 1")
    args.reference_props = {}
    for item in args.reference_property:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--reference-property takes KEY=VALUE, got {item!r}")
        args.reference_props[key.strip()] = value.strip()
    return args


def reference_preflight(kind: str) -> str | None:
    """Why the reference metastore cannot be started here, with what to do; None if it can."""
    from support.postgres import postgres_unavailable_reason
    from support.reference_hms import (
        POSTGRES_JAR_HINT,
        find_postgres_jdbc_jar,
        reference_hms_unavailable_reason,
    )

    if not in_isolated_netns():
        return (
            "the reference HMS listens on every interface, so it is only started in a private "
            f"network namespace with loopback only. Run (as root):\n  {ISOLATED_HINT}"
        )
    reason = reference_hms_unavailable_reason()
    if reason is not None:
        return reason
    if kind == "postgres":
        if find_postgres_jdbc_jar() is None:
            return f"the PostgreSQL JDBC driver jar is missing; install it: {POSTGRES_JAR_HINT}"
        return postgres_unavailable_reason()
    return None


def start_targets(args: argparse.Namespace, stack: contextlib.ExitStack) -> list[Target]:
    """Start (or point at) every target; ours first."""
    timeout_ms = int(args.timeout * 1000)
    data_dir = args.data_dir.resolve()
    framed = getattr(args, "client", None) == "drain"
    targets: list[Target] = []
    if args.ours == "none":
        pass
    elif args.ours:
        targets.append(
            loopback_target("ours", args.ours, f"hbase-metastore at {args.ours}", timeout_ms)
        )
    else:
        from support.our_server import OurServer

        extra = ["--log-level", "info", "--log-format", "json"]
        server = OurServer(
            data_dir / "ours", extra_args=[*extra, *(["--transport", "framed"] if framed else [])]
        )
        store = f"SQLite store {server.workdir / 'metastore.db'}"
        if getattr(args, "ours_storage", None):  # ours on another store (HBase)
            server.storage, store = args.ours_storage, f"store {args.ours_storage}"
        log(f"starting our server ({store}) ...")
        endpoint = stack.enter_context(server)
        targets.append(
            Target(
                "ours",
                endpoint.host,
                endpoint.port,
                f"hbase-metastore {OUR_VERSION}, {store}, audit at info (JSON) for rows scanned",
                audit=AuditLog(server.stderr_path),
                timeout_ms=timeout_ms,
                pid=server.process.pid if server.process is not None else None,
            )
        )
    if args.reference_hms:
        if framed:
            args.reference_props["hive.metastore.thrift.framed.transport.enabled"] = "true"
        targets.append(start_reference(args.reference_hms, args, data_dir, stack, timeout_ms))
    for i, uri in enumerate(args.reference):
        name = "reference" if len(args.reference) == 1 else f"ref{i + 1}"
        targets.append(loopback_target(name, uri, f"metastore at {uri}", timeout_ms))
    for target in targets:
        target.framed = framed
    return targets


def start_ours_on_hbase(args: argparse.Namespace, stack: contextlib.ExitStack) -> list[Target]:
    """A server of ours on the HBase of ``--hbase`` (a fresh table prefix), for the load rate."""
    import secrets

    from support.hbase_double import storage_url
    from support.our_server import OurServer

    host, _, port = args.hbase.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"--hbase must be host:port, not {args.hbase!r}")
    url = storage_url(host, int(port), prefix=f"bench{secrets.token_hex(3)}_")
    server = OurServer(args.data_dir.resolve() / "ours-hbase")
    server.storage = url
    log(f"starting our server on HBase ({url}) ...")
    endpoint = stack.enter_context(server)
    return [
        Target(
            "ours-hbase",
            endpoint.host,
            endpoint.port,
            f"hbase-metastore {OUR_VERSION}, HBase store {url}",
            timeout_ms=int(args.timeout * 1000),
        )
    ]


def start_reference(
    kind: str,
    args: argparse.Namespace,
    data_dir: Path,
    stack: contextlib.ExitStack,
    timeout_ms: int,
) -> Target:
    """Start PostgreSQL (when asked) and the reference HMS 2.3.x in ``data_dir``."""
    from support.postgres import PostgresServer
    from support.reference_hms import ReferenceHms, find_pyspark_jars

    jdbc_url = None
    backend = "embedded Derby"
    if kind == "postgres":
        pg = PostgresServer(data_dir / "postgres", settings={"shared_buffers": "512MB"})
        log(f"starting PostgreSQL (cluster {pg.data}) ...")
        stack.enter_context(pg)
        jdbc_url = pg.jdbc_url
        backend = f"PostgreSQL {pg.query('SHOW server_version')} at {jdbc_url}"
    workdir = data_dir / f"reference-hms-{kind}"
    ref = ReferenceHms(
        workdir, heap=args.reference_heap, jdbc_url=jdbc_url, properties=args.reference_props
    )
    log(f"starting the reference HMS ({kind}, logs in {ref.logs}) ...")
    started = time.monotonic()
    endpoint = stack.enter_context(ref)
    log(f"  up in {time.monotonic() - started:.0f} s on port {endpoint.port}")
    jars = find_pyspark_jars()
    jar = next(iter(sorted(jars.glob("hive-metastore-2.3.*.jar")))).name if jars else "?"
    name = "ref-pg" if kind == "postgres" else "ref-derby"
    return Target(
        name,
        endpoint.host,
        endpoint.port,
        f"Apache Hive Metastore ({jar}, {java_version()}, -Xmx{args.reference_heap}) on {backend}"
        + (f"; hive-site additions {args.reference_props}" if args.reference_props else ""),
        timeout_ms=timeout_ms,
        pid=ref.process.pid if ref.process is not None else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when every target could be measured."""
    args = parse_args(argv)
    if args.reference_hms:
        reason = reference_preflight(args.reference_hms)
        if reason is not None:
            log(f"cannot start the reference HMS: {reason}")
            return 2
    with contextlib.ExitStack() as stack:
        targets = start_targets(args, stack)
        print("\n".join(machine_info()))
        for t in targets:
            print(f"{t.name}: {t.description}; getVersion() = {t.version()}")
        print(
            f"client: {CLIENT_DESCRIPTIONS[args.client]}; binary protocol, buffered transport; "
            f"warm-up {args.warmup}, "
            f"then {args.repeat} timed calls per shape (capped at {args.max_seconds:.0f} s)"
        )
        print(
            "columns: n = timed calls; returned = partitions (names; the count for "
            "get_num_partitions_by_filter); parts/s = returned / p50; scanned = rows our server "
            "read (audit line); srv p50 = our server's own time (audit line); "
            "ref/ours = p50 of the row / p50 of ours"
        )
        sys.stdout.flush()
        if args.load_size > 0:
            on_hbase = start_ours_on_hbase(args, stack) if args.hbase else []
            print(load_report([*targets, *on_hbase], args), flush=True)
        for size in args.size_list:
            ds = Dataset(size, args.regions)
            loads = load_targets(targets, ds, args)
            shape_list = [
                s for s in shapes(ds) if not args.shape_names or s.name in args.shape_names
            ]
            results: dict[tuple[str, str], Result] = {}
            for shape in shape_list:
                for t in targets:
                    log(f"[{size:,}] {shape.name} on {t.name} ...")
                    results[(t.name, shape.name)] = time_shape(
                        t,
                        shape,
                        client_kind=args.client,
                        warmup=args.warmup,
                        repeat=args.repeat,
                        max_seconds=args.max_seconds,
                    )
            print(report(ds, targets, loads, results, shape_list), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
