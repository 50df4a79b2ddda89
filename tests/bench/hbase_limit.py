"""HBase's own write rate, the limit the benchmarks on HBase print ours beside: the rows our
server wrote to one of its tables, read back (untimed) and put again raw, as HBase's client
batches them (``mutateRows`` of ``batch`` rows, over ``connections`` connections at once), into
a scratch table with the same families, dropped afterwards. Ours does more (the intent, the
before-images, the events), so the ratio says what that costs."""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Sequence

import happybase

Row = tuple[bytes, dict[bytes, bytes]]
TIMEOUT_MS = 600_000


def read_rows(
    host: str, port: int, table: bytes, batch: int = 1000, limit: int | None = None
) -> list[Row]:
    """The rows of an HBase table, the first ``limit`` (untimed: the rows the limit puts
    again)."""
    connection = happybase.Connection(host, port, timeout=TIMEOUT_MS)
    try:
        return list(connection.table(table).scan(batch_size=batch, limit=limit))
    finally:
        connection.close()


def store_limit(
    storage: str,
    ours: float,
    *,
    batch: int,
    connections: int,
    max_rows: int,
    what: str = "partition",
) -> str:
    """A line that sets ``ours`` (``what`` rows a second of the server on the ``hbase://``
    store ``storage``: ``partition`` or ``table``) beside HBase's own rate for up to
    ``max_rows`` of the rows it wrote to that port table."""
    from metastore_server.storage import layout
    from metastore_server.storage.hbase import HBaseSettings

    settings = HBaseSettings.from_url(storage)
    table = settings.table_name({"partition": layout.PARTITIONS, "table": layout.TABLES}[what])
    rows = read_rows(settings.host, settings.port, table, limit=max_rows)
    rate = raw_put_rate(
        settings.host, settings.port, table, rows, batch=batch, connections=connections
    )
    return (
        f"limit: {rate:,.0f} rows/s, HBase's own mutateRows of {len(rows):,} of the {what} "
        f"rows written ({batch} a call over {connections} connections); limit / load = "
        f"{rate / ours:.2f}x"
    )


def raw_put_rate(
    host: str, port: int, source: bytes, rows: Sequence[Row], *, batch: int, connections: int
) -> float:
    """Rows per second HBase takes the ``rows`` at, put raw into a scratch table with the
    families of ``source``, ``batch`` rows a mutateRows, over ``connections`` connections."""
    admin = happybase.Connection(host, port, timeout=TIMEOUT_MS)
    scratch = source + b"_raw" + secrets.token_hex(3).encode()
    try:
        families = {
            name.decode(): {"max_versions": 1} for name in admin.table(source).families()
        }
        admin.create_table(scratch, families)
        try:
            return len(rows) / _put_all(host, port, scratch, rows, batch, connections)
        finally:
            admin.delete_table(scratch, disable=True)
    finally:
        admin.close()


def _put_all(
    host: str, port: int, table: bytes, rows: Sequence[Row], batch: int, connections: int
) -> float:
    """Seconds to put ``rows`` over ``connections`` connections (each its share, in order)."""
    shares = [rows[i::connections] for i in range(connections)]
    opened = [happybase.Connection(host, port, timeout=TIMEOUT_MS) for _ in shares]
    failures: list[BaseException] = []

    def put(connection: happybase.Connection, share: Sequence[Row]) -> None:
        try:
            with connection.table(table).batch(batch_size=batch) as writer:
                for key, cells in share:
                    writer.put(key, cells)
        except BaseException as error:  # noqa: BLE001 - reported after the clock stops
            failures.append(error)

    threads = [threading.Thread(target=put, args=pair) for pair in zip(opened, shares, strict=True)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    for connection in opened:
        with contextlib.suppress(Exception):
            connection.close()
    if failures:
        raise RuntimeError(f"raw puts failed: {failures[0]!r}")
    return seconds
