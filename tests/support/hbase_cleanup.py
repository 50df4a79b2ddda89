"""Tables of a test's HBase table prefix, emptied or dropped (through happybase, best effort).

Emptying is what lets the test suite reuse a prefix: a real HBase master takes about a second
to create a table and as long to disable and drop it, where a test's few rows are deleted in a
few round trips (a key-only scan, then ``mutateRows`` deletes of every family, 1,000 rows a
call). The Thrift1 gateway (happybase's) has no truncate; HBase's own truncate_preserve is a
disable, a drop and a create on the master, seconds a table, where a test's table holds tens
to thousands of rows. The deletes are tombstones stamped with the region server's clock, so a
row written again later (by the next server, seconds on) is not masked by them.
"""

from __future__ import annotations

from collections.abc import Iterator

import happybase

#: A scan that returns each row's key and nothing else (HBase's own filters; the double
#: understands neither and refuses the scan, which is then read whole).
KEYS_ONLY = b"FirstKeyOnlyFilter() AND KeyOnlyFilter()"
BATCH = 1000
TIMEOUT_MS = 60_000


def _connect(host: str, port: int) -> happybase.Connection:
    return happybase.Connection(host, port, autoconnect=True, timeout=TIMEOUT_MS)


def _tables(connection: happybase.Connection, prefix: str) -> list[bytes]:
    return [n for n in connection.tables() if n.decode("utf-8", "replace").startswith(prefix)]


def _row_keys(table: happybase.Table) -> Iterator[bytes]:
    """Every row key of a table (key-only where the server can, else whole rows)."""
    try:
        keys = [key for key, _ in table.scan(filter=KEYS_ONLY, batch_size=BATCH)]
    except Exception:  # noqa: BLE001 - the double refuses HBase's key-only filters
        keys = [key for key, _ in table.scan(batch_size=BATCH)]
    return iter(keys)


def empty_tables(host: str, port: int, prefix: str) -> int:
    """Delete every row of the tables whose names start with ``prefix`` on the HBase at
    host:port, keeping the tables; how many tables. Errors are raised (the caller drops the
    tables instead)."""
    connection = _connect(host, port)
    try:
        names = _tables(connection, prefix)
        for name in names:
            table = connection.table(name)
            with table.batch(batch_size=BATCH) as batch:
                for key in _row_keys(table):
                    batch.delete(key)
        return len(names)
    finally:
        connection.close()


def count_rows(host: str, port: int, prefix: str) -> int:
    """How many rows the tables of ``prefix`` hold (for assertions)."""
    connection = _connect(host, port)
    try:
        return sum(
            1 for name in _tables(connection, prefix) for _ in _row_keys(connection.table(name))
        )
    finally:
        connection.close()


def drop_tables(host: str, port: int, prefix: str) -> int:
    """Disable and delete the tables whose names start with ``prefix`` from the HBase at
    host:port; how many. Best effort: an HBase gone meanwhile drops nothing."""
    try:
        connection = _connect(host, port)
    except Exception:  # noqa: BLE001 - cleanup must not fail a run
        return 0
    dropped = 0
    try:
        for name in _tables(connection, prefix):
            connection.delete_table(name, disable=True)
            dropped += 1
    except Exception:  # noqa: BLE001
        pass
    finally:
        connection.close()
    return dropped
