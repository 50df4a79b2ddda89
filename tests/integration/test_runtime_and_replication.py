"""Runtime statistics and replication metrics over a real socket: stored as HMS 4 keeps them and
read back by its rules (newest first up to a weight; records by execution id, policy or dump
id)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from metastore_server.catalog.registry.runtime_stats import DEFAULT_MAX_AGE_S
from metastore_server.thrift_api import hms

from .conftest import clocked_catalog


def stats_request(max_weight: int, max_create_time: int = 0) -> hms.GetRuntimeStatsRequest:
    return hms.GetRuntimeStatsRequest(maxWeight=max_weight, maxCreateTime=max_create_time)


def test_runtime_stats_newest_first_up_to_a_weight(start_server) -> None:
    server = start_server()
    client = server.client()
    before = int(time.time())
    for weight, payload in ((5, b"a"), (3, b"b\x00\xff"), (4, b"c")):
        client.add_runtime_stats(hms.RuntimeStat(createTime=1, weight=weight, payload=payload))
    everything = client.get_runtime_stats(stats_request(100))
    assert [s.payload for s in everything] == [b"c", b"b\x00\xff", b"a"]
    assert all(s.createTime >= before for s in everything)  # stamped by the server
    # stats are added while the total stays under the weight: 4, then 3 reaches 7 >= 6
    assert [s.payload for s in client.get_runtime_stats(stats_request(6))] == [b"c", b"b\x00\xff"]
    assert [s.payload for s in client.get_runtime_stats(stats_request(4))] == [b"c"]
    assert client.get_runtime_stats(stats_request(0)) == []
    assert client.get_runtime_stats(stats_request(100, before)) == []  # none created before
    assert len(client.get_runtime_stats(stats_request(100, before + 3600))) == 3
    client.close()


def test_runtime_stats_past_their_age_are_dropped(tmp_path: Path) -> None:
    catalog, clock = clocked_catalog(tmp_path, 1_000_000)
    stats = catalog.runtime_stats
    stats.add(hms.RuntimeStat(weight=1, payload=b"old"))
    clock[0] += DEFAULT_MAX_AGE_S
    stats.add(hms.RuntimeStat(weight=1, payload=b"aging"))
    assert [s.payload for s in stats.get(stats_request(10))] == [b"aging", b"old"]
    clock[0] += 1
    stats.add(hms.RuntimeStat(weight=1, payload=b"new"))
    assert [s.payload for s in stats.get(stats_request(10))] == [b"new", b"aging"]


def metric(execution: int, policy: str, dump: int, **fields: str) -> hms.ReplicationMetrics:
    return hms.ReplicationMetrics(
        scheduledExecutionId=execution, policy=policy, dumpExecutionId=dump, **fields
    )


def by(client, **request: object) -> list[hms.ReplicationMetrics]:
    rqst = hms.GetReplicationMetricsRequest(**request)
    return client.get_replication_metrics(rqst).replicationMetricList


def test_replication_metrics_by_execution_policy_and_dump(client) -> None:
    client.add_replication_metrics(
        hms.ReplicationMetricList(
            replicationMetricList=[
                metric(1, "repl_a", 10, metadata="m1", progress="p1"),
                metric(2, "repl_a", 10, metadata="m2"),
                metric(3, "repl_b", 11, messageFormat="json-0.2"),
            ]
        )
    )
    assert [(m.policy, m.metadata, m.progress) for m in by(client, scheduledExecutionId=1)] == [
        ("repl_a", "m1", "p1")
    ]
    assert [m.scheduledExecutionId for m in by(client, policy="repl_a")] == [2, 1]
    assert [m.scheduledExecutionId for m in by(client, dumpExecutionId=11)] == [3]
    assert by(client, scheduledExecutionId=99) == []
    assert by(client) == []
    # a record of a known execution id is updated: only the fields sent change
    update = hms.ReplicationMetrics(scheduledExecutionId=1, policy="x", dumpExecutionId=0,
                                    progress="p2")  # fmt: skip
    client.add_replication_metrics(hms.ReplicationMetricList(replicationMetricList=[update]))
    (one,) = by(client, scheduledExecutionId=1)
    assert (one.policy, one.dumpExecutionId, one.metadata, one.progress) == (
        "repl_a",
        10,
        "m1",
        "p2",
    )


def test_a_new_replication_metric_needs_its_policy(client) -> None:
    unnamed = hms.ReplicationMetrics(scheduledExecutionId=50, dumpExecutionId=1)
    with pytest.raises(hms.MetaException, match="policy"):
        client.add_replication_metrics(hms.ReplicationMetricList(replicationMetricList=[unnamed]))
    assert by(client, scheduledExecutionId=50) == []
