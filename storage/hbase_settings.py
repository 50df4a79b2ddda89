"""Where the HBase store (``storage.hbase``) finds its Thrift gateway and how it talks to it:
``HBaseSettings``, the fields of an ``hbase://`` storage URL, checked, and the HBase table
name of a port table; and the HBase shell commands that create the tables pre-split
(``shell_script``), for an operator. Pure; no I/O."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import parse_qs, urlparse

from metastore_server.storage import hbase_keys
from metastore_server.storage.port import TableSpec

DEFAULT_PORT = 9090
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")


#: A table id as partition keys begin with it (8 bytes, big-endian).
_TABLE_ID = struct.Struct(">q")


@dataclass(frozen=True)
class HBaseSettings:
    """Where the HBase Thrift gateway is and how to talk to it (the storage URL's fields)."""

    host: str = "localhost"
    port: int = DEFAULT_PORT
    prefix: str = "hms_"
    namespace: str = ""
    pool_size: int = 8
    timeout_ms: int = 60_000
    transport: str = "buffered"
    protocol: str = "binary"
    connect_retries: int = 5
    retry_backoff_ms: int = 200
    scan_batch: int = 1000
    write_batch: int = 200
    max_cell_bytes: int = hbase_keys.MAX_CELL_BYTES

    def __post_init__(self) -> None:
        if not self.host:
            raise ValueError("an hbase:// storage URL needs a host")
        if not 0 < self.port < 65536:
            raise ValueError(f"bad HBase Thrift port {self.port}")
        if not _NAME_CHARS.fullmatch(self.prefix) or not _NAME_CHARS.fullmatch(self.namespace):
            raise ValueError("prefix and namespace may hold only letters, digits, '_', '.', '-'")
        if self.transport not in ("buffered", "framed"):
            raise ValueError("transport is 'buffered' or 'framed'")
        if self.protocol not in ("binary", "compact"):
            raise ValueError("protocol is 'binary' or 'compact'")
        for name in ("pool_size", "timeout_ms", "scan_batch", "write_batch", "max_cell_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.connect_retries < 0 or self.retry_backoff_ms < 0:
            raise ValueError("connect_retries and retry_backoff_ms must not be negative")

    @classmethod
    def from_url(cls, url: str) -> HBaseSettings:
        """Settings from ``hbase://host[:port]?param=value&...``; ValueError for anything else
        (unknown parameters included)."""
        parsed = urlparse(url)
        if parsed.scheme != "hbase":
            raise ValueError(f"not an hbase:// URL: {url!r}")
        if parsed.path not in ("", "/"):
            raise ValueError(f"an hbase:// URL has no path (use ?namespace=): {url!r}")
        values: dict[str, Any] = {
            "host": parsed.hostname or "",
            "port": parsed.port or DEFAULT_PORT,
        }
        known = {f.name for f in fields(cls)}
        for name, given in parse_qs(parsed.query, keep_blank_values=True).items():
            if name not in known or name in ("host", "port"):
                allowed = ", ".join(sorted(set(known) - {"host", "port"}))
                raise ValueError(f"unknown hbase:// URL parameter {name!r} (known: {allowed})")
            if len(given) != 1:
                raise ValueError(f"hbase:// URL parameter {name!r} given {len(given)} times")
            default = getattr(cls, name)
            try:
                values[name] = int(given[0]) if isinstance(default, int) else given[0]
            except ValueError:
                raise ValueError(
                    f"hbase:// URL parameter {name}={given[0]!r} is no integer"
                ) from None
        return cls(**values)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def table_name(self, table: str) -> bytes:
        """The HBase table name of a port table."""
        if not table or not _NAME_CHARS.fullmatch(table):
            raise ValueError(f"bad table name {table!r}")
        name = self.prefix + table
        if name[0] in ".-":
            raise ValueError(f"HBase table names cannot start with {name[0]!r}: {name!r}")
        return ((self.namespace + ":" if self.namespace else "") + name).encode("ascii")

    def describe(self) -> str:
        where = f"{self.namespace}:{self.prefix}*" if self.namespace else f"{self.prefix}*"
        return (
            f"HBase Thrift gateway at {self.address} (tables {where}, pool {self.pool_size}, "
            f"timeout {self.timeout_ms} ms, {self.transport}/{self.protocol})"
        )


def shell_script(
    settings: HBaseSettings, specs: Iterable[TableSpec], split_keys: Mapping[str, Sequence[bytes]]
) -> str:
    """HBase shell commands that create the tables pre-split (``split_keys`` per port table)
    with one version and NEW_VERSION_BEHAVIOR, for an operator to run before the first start
    (the Thrift gateway cannot pre-split)."""
    lines = []
    if settings.namespace:
        lines.append(f"create_namespace '{settings.namespace}'")
    for spec in specs:
        name = settings.table_name(spec.name).decode()
        families = ", ".join(
            f"{{NAME => '{f}', VERSIONS => 1, BLOOMFILTER => 'ROW', "
            "NEW_VERSION_BEHAVIOR => 'true'}"
            for f in spec.families
        )
        splits = split_keys.get(spec.name)
        tail = ""
        if splits:
            quoted = ", ".join('"' + "".join(f"\\x{b:02X}" for b in key) + '"' for key in splits)
            tail = f", SPLITS => [{quoted}]"
        lines.append(f"create '{name}', {families}{tail}")
    return "\n".join(lines) + "\n"


def table_id_split_keys(regions: int, table_ids: int) -> list[bytes]:
    """Split keys for the partitions table: ``regions`` ranges of about equal numbers of table
    ids below ``table_ids`` (partition keys start with the 8-byte big-endian table id)."""
    if regions < 2:
        return []
    step = max(table_ids // regions, 1)
    return [_TABLE_ID.pack(step * i) for i in range(1, regions) if step * i < 2**63]
