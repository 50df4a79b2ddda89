"""Which store the integration servers of a run use, from ``METASTORE_TEST_STORAGE``:

* ``embedded`` (default): SQLite in each test's scratch directory;
* ``hbase-double``: the HBase backend against the HBase test double started for the run;
* ``hbase``: the HBase backend against a real HBase Thrift1 gateway, ``HBASE_THRIFT=host:port``.
  Every server of the run gets its own table prefix (the run's random token, then a counter),
  so that runs sharing one HBase never collide; the run's tables are dropped at its end. Without
  ``HBASE_THRIFT`` the integration tests are skipped, saying so.

A server that made its own table prefix (``own``) has its tables dropped once the last server on
that store stops (``server_started`` / ``server_stopped``), so a run keeps only the tables of the
servers still running (a 1 GB HBase runs out of memory near 900 tables). Within
``deferred_drops`` (each integration test) the drops wait for its end, so a test may stop a
server and start another on the same store.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import secrets
from collections.abc import Iterator

KINDS = ("embedded", "hbase-double", "hbase")
SKIP_REASON = (
    "METASTORE_TEST_STORAGE=hbase needs HBASE_THRIFT=host:port naming an HBase Thrift1 gateway "
    "('hbase thrift start -p 9090', buffered transport, binary protocol)"
)

#: This run's table prefix stem: no two runs (or processes) share it.
RUN_PREFIX = f"it{secrets.token_hex(4)}_"
_servers = itertools.count()
_cleanup_registered: list[tuple[str, int]] = []
_owned: dict[str, int] = {}  # storage URL of an owned prefix -> servers running on it
_deferring = [0]


def kind() -> str:
    """The configured store kind; ValueError for an unknown one."""
    chosen = os.environ.get("METASTORE_TEST_STORAGE", "embedded")
    if chosen not in KINDS:
        raise ValueError(f"METASTORE_TEST_STORAGE must be one of {', '.join(KINDS)}: {chosen!r}")
    return chosen


def uses_hbase() -> bool:
    """Whether the servers run on the HBase backend (the double or a real HBase)."""
    return kind() != "embedded"


def real_hbase() -> tuple[str, int] | None:
    """(host, port) of ``HBASE_THRIFT``; None when unset. ValueError when malformed."""
    given = os.environ.get("HBASE_THRIFT", "").strip()
    if not given:
        return None
    host, _, port = given.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"HBASE_THRIFT must look like host:9090, not {given!r}")
    return host, int(port)


def server_prefix() -> str:
    """A table prefix no other server of any run uses."""
    return f"{RUN_PREFIX}{next(_servers)}_"


def real_hbase_url() -> str | None:
    """The storage URL of a new server on the real HBase (its own table prefix), the run's
    tables to be dropped when the run ends; None without ``HBASE_THRIFT``."""
    from .hbase_double import storage_url

    address = real_hbase()
    if address is None:
        return None
    if not _cleanup_registered:
        _cleanup_registered.append(address)
        atexit.register(drop_run_tables, *address)
    return storage_url(*address, prefix=server_prefix())


@contextlib.contextmanager
def shared_hbase_url() -> Iterator[str]:
    """A storage URL for several server processes to share: a new table prefix on the real
    HBase (METASTORE_TEST_STORAGE=hbase), else an HBase double started for the block."""
    from .hbase_double import running_double, storage_url

    if kind() == "hbase":
        url = real_hbase_url()
        if url is None:
            import pytest

            pytest.skip(SKIP_REASON)
        try:
            yield url
        finally:  # every server of the block is done with it
            drop_store_tables(url)
        return
    with running_double() as address:
        yield storage_url(*address)


def own(url: str) -> str:
    """Mark an ``hbase://`` store (its table prefix) as made for one server: its tables are
    dropped once no server runs on it any more (see the module docstring)."""
    _owned.setdefault(url, 0)
    return url


def server_started(url: str) -> None:
    """A server now runs on ``url``."""
    if url in _owned:
        _owned[url] += 1


def server_stopped(url: str) -> None:
    """A server on ``url`` stopped: drop the store's tables if it was the last (unless drops
    are deferred)."""
    if url in _owned:
        _owned[url] -= 1
        if not _deferring[0]:
            drop_released()


@contextlib.contextmanager
def deferred_drops() -> Iterator[None]:
    """Drops wait until the block ends (a test may restart a server on the same store)."""
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1
        if not _deferring[0]:
            drop_released()


def drop_released() -> int:
    """Drop the tables of every owned store no server runs on; how many tables."""
    dropped = 0
    for url, users in list(_owned.items()):
        if users <= 0:
            del _owned[url]
            dropped += drop_store_tables(url)
    return dropped


def drop_store_tables(url: str) -> int:
    """Drop the tables of an ``hbase://`` store URL's prefix (best effort); how many."""
    from metastore_server.storage.hbase import HBaseSettings

    settings = HBaseSettings.from_url(url)
    return drop_tables(settings.host, settings.port, settings.prefix)


def drop_run_tables(host: str, port: int) -> int:
    """Drop this run's tables (those of ``RUN_PREFIX``) from the HBase at host:port; how many.
    Best effort: an HBase gone meanwhile drops nothing."""
    return drop_tables(host, port, RUN_PREFIX)


def drop_tables(host: str, port: int, prefix: str) -> int:
    """Disable and delete the tables whose names start with ``prefix`` from the HBase at
    host:port; how many. Best effort: an HBase gone meanwhile drops nothing."""
    import happybase

    try:
        connection = happybase.Connection(host, port, autoconnect=True, timeout=30_000)
    except Exception:  # noqa: BLE001 - cleanup must not fail a run
        return 0
    dropped = 0
    try:
        for name in connection.tables():
            if name.decode("utf-8", "replace").startswith(prefix):
                connection.delete_table(name, disable=True)
                dropped += 1
    except Exception:  # noqa: BLE001
        pass
    finally:
        connection.close()
    return dropped
