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
    with pytest.raises(hms.MetaException) as caught:
        limited.get_partitions("ldb", "t", -1)
    assert caught.value.message.startswith(
        "Number of partitions scanned (=4) on table 't' exceeds limit (=3)."
    )
    with pytest.raises(hms.MetaException, match="exceeds limit"):
        limited.get_partitions_by_filter("ldb", "t", 'ds = "2024-01-01"', -1)


def test_requests_within_the_limit_are_served(limited) -> None:
    assert len(limited.get_partitions("ldb", "t", 2)) == 2
    parts = limited.get_partitions_by_filter("ldb", "t", "hr = 0", -1)
    assert [p.values for p in parts] == [["2024-01-01", "0"], ["2024-01-02", "0"]]
    # Names and counts are not partitions: the limit does not apply to them.
    assert len(limited.get_partition_names("ldb", "t", -1)) == 6
    assert limited.get_num_partitions_by_filter("ldb", "t", 'ds = "2024-01-01"') == 5


def test_the_limit_is_visible_to_clients(limited) -> None:
    assert limited.get_config_value("hive.metastore.limit.partition.request", "-1") == "3"
