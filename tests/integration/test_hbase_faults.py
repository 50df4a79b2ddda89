"""The metastore on the HBase backend when HBase misbehaves (against the HBase test double, which
stands in for a real HBase Thrift gateway): writes failing part-way, connections lost, HBase
absent at start."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hbase_double import HBaseDouble, storage_url

from metastore_server.server.app import build_server
from metastore_server.server.config import ServerConfig
from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table

pytestmark = pytest.mark.own_double


@pytest.fixture
def double() -> Iterator[HBaseDouble]:
    with HBaseDouble() as running:
        yield running


@pytest.fixture
def on_double(double: HBaseDouble, tmp_path: Path) -> Iterator[tuple[HBaseDouble, object]]:
    host, port = double.address
    server = RunningServer(tmp_path, storage=storage_url(host, port, prefix="faults_"))
    client = server.client()
    create_db(client, "fdb")
    client.create_table(make_table("fdb", "t", keys=[("ds", "string")]))
    yield double, client
    client.close()
    server.stop()


def test_add_partitions_failing_part_way_writes_none(on_double) -> None:
    double, client = on_double
    parts = [make_partition("fdb", "t", [f"2024-01-{d:02d}"]) for d in range(1, 11)]
    events = client.get_current_notificationEventId().eventId
    # The claim on adding to the table, the intent, then some of the rows; the rollback's
    # writes fail too while HBase refuses them.
    double.fail_writes_after(1 + 1 + 4)
    with pytest.raises(hms.MetaException) as caught:
        client.add_partitions(parts)
    message = caught.value.message
    assert re.search(r"Adding partitions of fdb\.t failed after [1-9] of 10 rows were written",
                     message)  # fmt: skip
    assert "the whole call is rolled back" in message
    double.heal()
    # The server's next call finishes the rollback first.
    assert client.get_partition_names("fdb", "t", -1) == []
    assert client.get_current_notificationEventId().eventId == events
    assert client.add_partitions(parts) == 10  # nothing is left to collide with
    assert len(client.get_partition_names("fdb", "t", -1)) == 10


def test_lost_hbase_connections_are_survived(on_double) -> None:
    double, client = on_double
    client.add_partition(make_partition("fdb", "t", ["2024-02-01"]))
    double.disconnect_all()
    # Reads are retried on a fresh connection.
    assert client.get_partition_names("fdb", "t", -1) == ["ds=2024-02-01"]
    # More drops than the store's tries (6): background calls (the add's intent row deleted
    # after its commit, say) may take some of them first, and the read must still run out.
    double.drop_connection(when="before", count=100)
    with pytest.raises(hms.MetaException):
        client.get_partitions("fdb", "t", -1)
    double.heal()
    assert [p.values for p in client.get_partitions("fdb", "t", -1)] == [["2024-02-01"]]


def test_hbase_absent_at_start_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the probe is closed
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        storage=storage_url("127.0.0.1", port, connect_retries=1, retry_backoff_ms=10),
        warehouse=str(tmp_path / "wh"),
    )
    with pytest.raises(Exception, match=f"127.0.0.1:{port}"):
        build_server(config)
