"""Read committed through the API on HBase (issue 52): a client of one server polls while a
call of another server process is in flight on the same HBase, between two of its writes, and
then fails there (rolled back): it never sees a partial or uncommitted state, though the rows
have landed; once the call is made again and commits, it sees all of it.

On the HBase double, which shows each row as it lands (as HBase does): these tests fail on a
store whose readers read rows as they land.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from metastore_server.storage import layout
from support.hbase_double import HBaseDouble
from support.our_server import OurServer

from metastore_server.thrift_api import hms, make_client

from .conftest import create_db, make_partition, make_table

pytestmark = pytest.mark.own_double

PREFIX = "rc_"
PARTITIONS = 600


@pytest.fixture()
def double() -> Iterator[HBaseDouble]:
    with HBaseDouble() as running:
        yield running


@pytest.fixture()
def two(double: HBaseDouble, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """Clients of two server processes on one HBase: a writer's and a reader's."""
    servers = []
    for name in ("writer", "reader"):
        server = OurServer(tmp_path / name, extra_args=["--workers", "1"],
                           storage=double.url(prefix=PREFIX))  # fmt: skip
        server.start()
        servers.append(server)
    clients = [make_client("127.0.0.1", s.port, timeout_ms=120_000) for s in servers]
    yield clients[0], clients[1]
    for server in servers:
        server.stop()


def _landed(double: HBaseDouble) -> int:
    """Partition rows as HBase holds them, committed or not."""
    return len(double.rows((PREFIX + layout.PARTITIONS).encode()))


def _seen(reader: Any) -> dict[str, Any]:
    """What a client sees of the table: its partitions every way it may ask, and the events."""
    names = reader.get_partition_names("db", "t", -1)
    return {
        "names": len(names),
        "partitions": len(reader.get_partitions("db", "t", -1)),
        "by filter": reader.get_num_partitions_by_filter("db", "t", "ds >= ''"),
        "events": reader.get_current_notificationEventId().eventId,
    }


def test_a_reader_never_sees_an_add_cut_short_nor_its_rollback(double, two) -> None:
    writer, reader = two
    create_db(writer, "db")
    writer.create_table(make_table("db", "t", keys=[("ds", "string")]))
    parts = [make_partition("db", "t", [f"d{n:04d}"]) for n in range(PARTITIONS)]
    before = _seen(reader)
    # The claim on adding to the table, the intent, then half the partition rows land; then
    # HBase refuses every write, the writer's rollback included: the rows stay, uncommitted.
    double.fail_writes_after(1 + 1 + PARTITIONS // 2)
    with pytest.raises(hms.MetaException, match="the whole call is rolled back"):
        writer.add_partitions(parts)
    assert 0 < _landed(double) < PARTITIONS  # half the partition rows are in HBase...
    assert _seen(reader) == before  # ...and no reader sees them
    double.heal()
    assert _seen(writer) == before  # (the writer's next call finishes its rollback first)
    assert _landed(double) == 0 and _seen(reader) == before
    assert writer.add_partitions(parts) == PARTITIONS  # nothing left in its way
    after = _seen(reader)
    assert after["names"] == after["partitions"] == after["by filter"] == PARTITIONS
    assert after["events"] > before["events"]


def test_a_reader_never_sees_a_drop_cut_short(double, two) -> None:
    writer, reader = two
    create_db(writer, "db")
    writer.create_table(make_table("db", "t", keys=[("ds", "string")]))
    writer.add_partitions([make_partition("db", "t", [f"d{n:04d}"]) for n in range(PARTITIONS)])
    before = _seen(reader)
    double.fail_writes_after(1 + 1 + PARTITIONS // 2)
    with pytest.raises(hms.MetaException):
        writer.drop_table("db", "t", True)
    assert _landed(double) < PARTITIONS  # partition rows are gone from HBase...
    assert _seen(reader) == before  # ...and the reader sees the table whole
    assert "t" in reader.get_tables("db", "*")
    double.heal()
    assert _seen(writer) == before
    writer.drop_table("db", "t", True)
    with pytest.raises(hms.NoSuchObjectException):
        reader.get_table("db", "t")
