"""get_partitions_by_expr and get_partition_names_req over a real socket: filter text in Hive's
display form or MSCK's form is answered exactly; bytes only Hive can read get every partition
with hasUnknownPartitions set."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

DB = "xdb"
VALUES = [
    ["2024-01-01", "1"],
    ["2024-01-01", "2"],
    ["2024-01-02", "1"],
    ["a/b", "3"],
]


@pytest.fixture(scope="module", autouse=True)
def table(running) -> None:
    connection = running.client()
    create_db(connection, DB)
    connection.create_table(make_table(DB, "t", keys=[("ds", "string"), ("hr", "int")]))
    connection.add_partitions([make_partition(DB, "t", values) for values in VALUES])
    connection.close()


def by_expr(client, expr: bytes) -> tuple[list[list[str]], bool]:
    request = hms.PartitionsByExprRequest(dbName=DB, tblName="t", expr=expr, maxParts=-1)
    result = client.get_partitions_by_expr(request)
    return [p.values for p in result.partitions], result.hasUnknownPartitions


def test_display_form_is_exact(client) -> None:
    found = by_expr(client, b"((ds = '2024-01-01') and (hr > 1))")
    assert found == ([["2024-01-01", "2"]], False)


def test_like_in_display_form_is_sql_like(client) -> None:
    found = by_expr(client, b"(ds like '2024-01-0_')")
    assert found == ([["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"]], False)


def test_msck_form_lists_escaped_names(client) -> None:
    found = by_expr(client, b"(ds='a%2Fb' AND hr='3') OR (ds='2024-01-02' AND hr='1')")
    assert found == ([["2024-01-02", "1"], ["a/b", "3"]], False)


def test_unreadable_expression_gives_all_partitions_flagged_unknown(client) -> None:
    kryo_like = b"\x01\x00org.apache.hadoop.hive.ql.plan.ExprNodeGenericFuncDesc\x01\x02\x03"
    values, unknown = by_expr(client, kryo_like)
    assert unknown is True
    assert sorted(values) == sorted(VALUES)
    values, unknown = by_expr(client, b"(UDFToString(hr) = '1')")
    assert unknown is True and len(values) == len(VALUES)


def test_partition_names_req_reads_expressions_too(client) -> None:
    request = hms.PartitionsByExprRequest(
        dbName=DB, tblName="t", expr=b"(hr = 1)", maxParts=-1
    )
    assert client.get_partition_names_req(request) == [
        "ds=2024-01-01/hr=1",
        "ds=2024-01-02/hr=1",
    ]
