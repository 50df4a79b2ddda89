"""The benchmarks' data set (docs/benchmarks.md): a partitioned Parquet table of N partitions
(keys ds string, hr int, region string), its Thrift objects and its ``add_partitions`` calls
encoded beforehand."""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import bench_path  # noqa: F401 - puts the repository on sys.path
from thrift_wire import encode_call

from metastore_server import thrift_api

hms = thrift_api.hms
SERVICE = thrift_api.ThriftHiveMetastore

DB = "bench_db"
START_DAY = date(2024, 1, 1)
DAYS_TARGET = 200  # about this many days, whatever the size: a 1% range is ~2 days
HOURS = 24
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


def storage_descriptor(location: str | None) -> Any:
    """The table's (or a partition's) Parquet storage descriptor at ``location``."""
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


def parquet_table(name: str, keys: list[Any], parameters: dict[str, str]) -> Any:
    """A managed Parquet table ``name`` of ``DB`` partitioned by ``keys``, owned by bench."""
    return hms.Table(
        tableName=name,
        dbName=DB,
        owner="bench",
        createTime=int(time.time()),
        lastAccessTime=0,
        retention=0,
        sd=storage_descriptor(None),
        partitionKeys=keys,
        parameters=parameters,
        viewOriginalText=None,
        viewExpandedText=None,
        tableType="MANAGED_TABLE",
    )


def make_table(ds: Dataset) -> Any:
    """The partitioned Parquet table, as Spark creates it."""
    keys = [
        hms.FieldSchema(name="ds", type="string", comment=None),
        hms.FieldSchema(name="hr", type="int", comment=None),
        hms.FieldSchema(name="region", type="string", comment=None),
    ]
    return parquet_table(ds.table, keys, {"spark.sql.sources.provider": "parquet"})


def make_partition(ds: Dataset, values: list[str], table_location: str) -> Any:
    """A partition with a Parquet storage descriptor under the table's location."""
    name = f"ds={values[0]}/hr={values[1]}/region={values[2]}"
    return hms.Partition(
        values=values,
        dbName=DB,
        tableName=ds.table,
        createTime=int(time.time()),
        lastAccessTime=0,
        sd=storage_descriptor(f"{table_location.rstrip('/')}/{name}"),
        parameters={},
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
        body = encode_call("add_partitions", (parts,))
        messages.append(struct.pack("!i", len(body)) + body if framed else body)
    return messages
