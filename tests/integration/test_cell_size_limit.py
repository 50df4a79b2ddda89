"""A table or partition whose stored object is larger than the largest cell HBase takes
(hbase.client.keyvalue.maxsize, 10,485,760 bytes by default): on the HBase backend the call is a
MetaException naming the HBase table, column and size, and nothing of it is stored; on the
embedded store the same calls work."""

from __future__ import annotations

import secrets

import pytest

from metastore_server.thrift_api import hms

from .conftest import ON_HBASE, create_db, make_partition, make_table

DB = "cells"
#: A parameter value that alone is over HBase's default cell limit (random: no codec shrinks it).
HUGE = secrets.token_hex(5_400_000)


@pytest.fixture(scope="module")
def conn(running):  # noqa: ANN001, ANN201 - a thriftpy2 client
    client = running.client()
    create_db(client, DB)
    yield client
    client.close()


def _refused(error: hms.MetaException) -> None:
    message = error.message
    assert "HBase cannot store a cell of" in message, message
    assert "10,485,760" in message and "column " in message and "_" in message


def test_a_table_over_the_cell_limit(conn) -> None:  # noqa: ANN001
    table = make_table(DB, "big_table", parameters={"huge": HUGE})
    if ON_HBASE:
        with pytest.raises(hms.MetaException) as refused:
            conn.create_table(table)
        _refused(refused.value)
        with pytest.raises(hms.NoSuchObjectException):
            conn.get_table(DB, "big_table")
        assert "big_table" not in conn.get_all_tables(DB)
    else:
        conn.create_table(table)
        assert conn.get_table(DB, "big_table").parameters["huge"] == HUGE


def test_a_partition_over_the_cell_limit(conn) -> None:  # noqa: ANN001
    conn.create_table(make_table(DB, "parted", keys=[("dt", "string")]))
    partition = make_partition(DB, "parted", ["2024-01-01"])
    partition.parameters = {"huge": HUGE}
    if ON_HBASE:
        with pytest.raises(hms.MetaException) as refused:
            conn.add_partition(partition)
        _refused(refused.value)
        assert conn.get_partition_names(DB, "parted", -1) == []
    else:
        conn.add_partition(partition)
        got = conn.get_partition(DB, "parted", ["2024-01-01"])
        assert got.parameters["huge"] == HUGE
    conn.add_partition(make_partition(DB, "parted", ["2024-01-02"]))  # others still go in
    assert "dt=2024-01-02" in conn.get_partition_names(DB, "parted", -1)
