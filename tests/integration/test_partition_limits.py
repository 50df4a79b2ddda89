"""The per-request partition limit (HMS's hive.metastore.limit.partition.request)."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

from .conftest import RunningServer, create_db, make_partition, make_table


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    server = RunningServer(tmp_path_factory.mktemp("limited"), partition_request_limit=3)
    client = server.client()
    create_db(client, "ldb")
    client.create_table(make_table("ldb", "t", keys=[("ds", "string"), ("hr", "int")]))
    client.add_partitions(
        [make_partition("ldb", "t", ["2024-01-01", str(hr)]) for hr in range(5)]
        + [make_partition("ldb", "t", ["2024-01-02", "0"])]
    )
    yield client
    client.close()
    server.stop()


def test_listing_more_than_the_limit_fails_with_hms_message(limited) -> None:
    # As HMS: the message names how many partitions match (6 in all, 5 for the filter), read
    # from the store or from the listing cache a names listing fills.
    for _ in range(2):
        with pytest.raises(hms.MetaException) as caught:
            limited.get_partitions("ldb", "t", -1)
        assert caught.value.message == (
            "Number of partitions scanned (=6) on table 't' exceeds limit (=3). This is "
            "controlled on the metastore server by hive.metastore.limit.partition.request."
        )
        with pytest.raises(hms.MetaException, match=r"scanned \(=5\) on table 't' exceeds"):
            limited.get_partitions_by_filter("ldb", "t", 'ds = "2024-01-01"', -1)
        assert len(limited.get_partition_names("ldb", "t", -1)) == 6


def test_requests_within_the_limit_are_served(limited) -> None:
    assert len(limited.get_partitions("ldb", "t", 2)) == 2
    parts = limited.get_partitions_by_filter("ldb", "t", "hr = 0", -1)
    assert [p.values for p in parts] == [["2024-01-01", "0"], ["2024-01-02", "0"]]
    # Names and counts are not partitions: the limit does not apply to them.
    assert len(limited.get_partition_names("ldb", "t", -1)) == 6
    assert limited.get_num_partitions_by_filter("ldb", "t", 'ds = "2024-01-01"') == 5


def test_the_limit_is_visible_to_clients(limited) -> None:
    assert limited.get_config_value("hive.metastore.limit.partition.request", "-1") == "3"


#: Every call that returns partitions (HMS's list for hive.metastore.limit.partition.request,
#: with the request-struct forms), each asking for all 6 partitions of ldb.t.
EVERY_PARTITION_CALL = {
    "get_partitions": lambda c: c.get_partitions("ldb", "t", -1),
    "get_partitions_with_auth": lambda c: c.get_partitions_with_auth("ldb", "t", -1, "u", []),
    "get_partitions_req": lambda c: c.get_partitions_req(
        hms.PartitionsRequest(dbName="ldb", tblName="t", maxParts=-1)
    ),
    "get_partitions_ps": lambda c: c.get_partitions_ps("ldb", "t", ["", ""], -1),
    "get_partitions_ps_with_auth": lambda c: c.get_partitions_ps_with_auth(
        "ldb", "t", ["", ""], -1, "u", []
    ),
    "get_partitions_ps_with_auth_req": lambda c: c.get_partitions_ps_with_auth_req(
        hms.GetPartitionsPsWithAuthRequest(
            dbName="ldb", tblName="t", partVals=["", ""], maxParts=-1
        )
    ),
    "get_partitions_by_filter": lambda c: c.get_partitions_by_filter("ldb", "t", "hr >= 0", -1),
    "get_partitions_by_filter_req": lambda c: c.get_partitions_by_filter_req(
        hms.GetPartitionsByFilterRequest(dbName="ldb", tblName="t", filter="hr >= 0", maxParts=-1)
    ),
    "get_partitions_by_names": lambda c: c.get_partitions_by_names(
        "ldb", "t", [f"ds=2024-01-01/hr={h}" for h in range(5)]
    ),
    "get_partitions_by_names_req": lambda c: c.get_partitions_by_names_req(
        hms.GetPartitionsByNamesRequest(
            db_name="ldb", tbl_name="t", names=[f"ds=2024-01-01/hr={h}" for h in range(5)]
        )
    ),
    "get_partitions_by_expr": lambda c: c.get_partitions_by_expr(
        hms.PartitionsByExprRequest(dbName="ldb", tblName="t", expr=b"\x00garbage", maxParts=-1)
    ),
}


@pytest.mark.parametrize("call", sorted(EVERY_PARTITION_CALL))
def test_every_call_returning_partitions_is_limited(limited, call: str) -> None:
    with pytest.raises(hms.MetaException) as caught:
        EVERY_PARTITION_CALL[call](limited)
    assert "exceeds limit (=3)" in caught.value.message
    assert limited.get_all_databases()  # the connection goes on
