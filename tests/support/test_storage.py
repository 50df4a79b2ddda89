"""Which store the integration servers of a run use, from ``METASTORE_TEST_STORAGE``:

* ``embedded`` (default): SQLite in each test's scratch directory;
* ``hbase-double``: the HBase backend against the HBase test double started for the run;
* ``hbase``: the HBase backend against a real HBase Thrift1 gateway, ``HBASE_THRIFT=host:port``.
  Table prefixes are the run's random token, then a counter, so that runs sharing one HBase
  never collide; the run's tables are dropped at its end. Without ``HBASE_THRIFT`` the
  integration tests are skipped, saying so.

Prefixes are leased (``lease_url``): a server that needs a store of its own gets a prefix no
running server uses, either an emptied one of an earlier server (its tables kept: a real HBase
takes about a second to create a table, and as long to drop one) or a new one. A leased prefix
marked ``own`` goes back to the pool once the last server on it stops (``server_started`` /
``server_stopped``): its tables are emptied (``hbase_cleanup.empty_tables``), or dropped if that
fails. So a run creates each table once per prefix, and has as many prefixes as servers run at
once, where it had one per server. Within ``deferred_release`` (each integration test) the
release waits for its end, so a test may stop a server and start another on the same store.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import secrets
from collections.abc import Iterator

from .hbase_cleanup import drop_tables, empty_tables

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
_free: dict[tuple[str, int], list[str]] = {}  # HBase address -> emptied prefixes to lease
#: Leases handed out, and how many of them were new prefixes (tables made anew).
leases = {"leased": 0, "new": 0}


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


def lease_url(host: str, port: int) -> str:
    """The storage URL of a store of its own for a server on the HBase at host:port: a prefix
    no running server uses, emptied (see the module docstring). Mark it ``own`` for it to go
    back to the pool when the server stops."""
    from .hbase_double import storage_url

    free = _free.get((host, port))
    leases["leased"] += 1
    leases["new"] += not free
    prefix = free.pop() if free else server_prefix()
    return storage_url(host, port, prefix=prefix)


def forget(host: str, port: int) -> None:
    """Forget the free prefixes of an HBase that is gone (a test's own double)."""
    _free.pop((host, port), None)


def real_hbase_url() -> str | None:
    """The storage URL of a new server on the real HBase (a leased table prefix), the run's
    tables to be dropped when the run ends; None without ``HBASE_THRIFT``."""
    address = real_hbase()
    if address is None:
        return None
    if not _cleanup_registered:
        _cleanup_registered.append(address)
        atexit.register(drop_run_tables, *address)
    return lease_url(*address)


@contextlib.contextmanager
def shared_hbase_url() -> Iterator[str]:
    """A storage URL for several server processes to share: a leased table prefix on the real
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
            recycle(url)
        return
    with running_double() as address:
        yield storage_url(*address)


def own(url: str) -> str:
    """Mark an ``hbase://`` store (its table prefix) as made for one server: emptied and
    leased again once no server runs on it any more (see the module docstring). Any other
    store is returned as it is."""
    if url.startswith("hbase:"):
        _owned.setdefault(url, 0)
    return url


def server_started(url: str) -> None:
    """A server now runs on ``url``."""
    if url in _owned:
        _owned[url] += 1


def server_stopped(url: str) -> None:
    """A server on ``url`` stopped: release the store's prefix if it was the last (unless
    releases are deferred)."""
    if url in _owned:
        _owned[url] -= 1
        if not _deferring[0]:
            release_unused()


@contextlib.contextmanager
def deferred_release() -> Iterator[None]:
    """Releases wait until the block ends (a test may restart a server on the same store)."""
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1
        if not _deferring[0]:
            release_unused()


def release_unused() -> int:
    """Empty the tables of every owned store no server runs on, and offer their prefixes to
    the next servers; how many tables."""
    emptied = 0
    for url, users in list(_owned.items()):
        if users <= 0:
            del _owned[url]
            emptied += recycle(url)
    return emptied


def recycle(url: str) -> int:
    """Empty the tables of an ``hbase://`` store URL's prefix and put the prefix back in the
    pool; when emptying fails, drop them instead (best effort). How many tables."""
    from metastore_server.storage.hbase import HBaseSettings

    settings = HBaseSettings.from_url(url)
    try:
        emptied = empty_tables(settings.host, settings.port, settings.prefix)
    except Exception:  # noqa: BLE001 - cleanup must not fail a run; a fresh prefix will do
        return drop_tables(settings.host, settings.port, settings.prefix)
    _free.setdefault((settings.host, settings.port), []).append(settings.prefix)
    return emptied


def drop_run_tables(host: str, port: int) -> int:
    """Drop this run's tables (those of ``RUN_PREFIX``) from the HBase at host:port; how many.
    Best effort: an HBase gone meanwhile drops nothing."""
    forget(host, port)
    return drop_tables(host, port, RUN_PREFIX)
