"""Scheduled queries over a real socket: stored with HMS 4's names, uniqueness and errors,
handed out by polls one execution at a time, their progress recorded; kept across a restart and
shared by two server processes on one store. Never run here."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from metastore_server.catalog.registry.scheduled_queries import DEFAULT_TIMEOUT_S
from metastore_server.thrift_api import hms, make_client

from .conftest import clocked_catalog
from .test_concurrency import two_servers_on_one_store

EVERY_SECOND = "* * * * * ? *"
REQUEST = hms.ScheduledQueryMaintenanceRequestType
STATE = hms.QueryState


def query(name: str, ns: str = "ns1", schedule: str = EVERY_SECOND, enabled: bool = True):
    """A scheduled query of a namespace."""
    return hms.ScheduledQuery(
        scheduleKey=hms.ScheduledQueryKey(scheduleName=name, clusterNamespace=ns),
        enabled=enabled,
        schedule=schedule,
        user="alice",
        query="select 1",
    )


def maintain(client, kind: int, scheduled: hms.ScheduledQuery) -> None:
    client.scheduled_query_maintenance(
        hms.ScheduledQueryMaintenanceRequest(type=kind, scheduledQuery=scheduled)
    )


def poll(client, ns: str = "ns1") -> hms.ScheduledQueryPollResponse:
    return client.scheduled_query_poll(hms.ScheduledQueryPollRequest(clusterNamespace=ns))


def poll_due(client, ns: str = "ns1", within: float = 5.0) -> hms.ScheduledQueryPollResponse:
    """Poll until an execution is handed out (queries due every second)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        answer = poll(client, ns)
        if answer.executionId is not None:
            return answer
        time.sleep(0.2)
    raise AssertionError(f"nothing handed out in {ns} within {within}s")


def report(client, execution_id: int, state: int, error: str | None = None) -> None:
    client.scheduled_query_progress(
        hms.ScheduledQueryProgressInfo(
            scheduledExecutionId=execution_id,
            state=state,
            executorQueryId="hive_q1",
            errorMessage=error,
        )
    )


def test_create_get_alter_drop(client) -> None:
    before = int(time.time())
    maintain(client, REQUEST.CREATE, query("daily", schedule="0 30 2 * * ?"))
    stored = client.get_scheduled_query(query("daily").scheduleKey)
    assert (stored.query, stored.user, stored.enabled) == ("select 1", "alice", True)
    assert before < stored.nextExecution <= before + 86400
    assert time.gmtime(stored.nextExecution)[3:6] == (2, 30, 0)
    with pytest.raises(hms.AlreadyExistsException, match="daily already exists"):
        maintain(client, REQUEST.CREATE, query("daily"))
    # the same name in another namespace is another query
    maintain(client, REQUEST.CREATE, query("daily", ns="ns2", enabled=False))
    assert client.get_scheduled_query(query("daily", ns="ns2").scheduleKey).enabled is False
    change = hms.ScheduledQuery(scheduleKey=query("daily").scheduleKey, query="select 2")
    maintain(client, REQUEST.ALTER, change)
    altered = client.get_scheduled_query(query("daily").scheduleKey)
    assert (altered.query, altered.schedule, altered.user) == ("select 2", "0 30 2 * * ?", "alice")
    maintain(client, REQUEST.DROP, query("daily"))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_scheduled_query(query("daily").scheduleKey)
    with pytest.raises(hms.NoSuchObjectException):
        maintain(client, REQUEST.ALTER, query("daily"))
    with pytest.raises(hms.NoSuchObjectException):
        maintain(client, REQUEST.DROP, query("daily"))


@pytest.mark.parametrize(
    "schedule",
    ["", "0 * * * *", "0 0 12 * * *", "0 0 12 ? * ?", "0 0 12 L * ?", "0 0 25 * * ?",
     "0 0 12 ? * 2#1", "0 0 12 ? * FRI-MON"],
)  # fmt: skip
def test_schedules_outside_quartz_subset_are_refused(client, schedule: str) -> None:
    with pytest.raises(hms.InvalidInputException, match="Invalid schedule"):
        maintain(client, REQUEST.CREATE, query("bad", schedule=schedule))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_scheduled_query(query("bad").scheduleKey)


def test_poll_hands_out_one_execution_until_it_ends(client) -> None:
    maintain(client, REQUEST.CREATE, query("often", ns="poll"))
    maintain(client, REQUEST.CREATE, query("off", ns="poll", enabled=False))
    first = poll_due(client, "poll")
    assert first.scheduleKey.scheduleName == "often"
    assert (first.query, first.user) == ("select 1", "alice")
    assert client.get_scheduled_query(first.scheduleKey).nextExecution > time.time() - 1
    time.sleep(1.2)  # due again, but still executing: not handed out
    assert poll(client, "poll").executionId is None
    assert poll(client, "other").executionId is None
    report(client, first.executionId, STATE.EXECUTING)
    assert poll(client, "poll").executionId is None
    report(client, first.executionId, STATE.FINISHED)
    with pytest.raises(hms.InvalidOperationException, match="already ended"):
        report(client, first.executionId, STATE.EXECUTING)
    with pytest.raises(hms.InvalidOperationException, match="invalid scheduledExecutionId"):
        report(client, first.executionId + 1000, STATE.EXECUTING)
    second = poll_due(client, "poll")
    assert second.executionId > first.executionId
    report(client, second.executionId, STATE.FAILED, "boom")
    third = poll_due(client, "poll")
    report(client, third.executionId, STATE.AUTO_DISABLED)
    assert client.get_scheduled_query(third.scheduleKey).enabled is False
    time.sleep(1.2)
    assert poll(client, "poll").executionId is None  # disabled, like "off"


def test_silent_execution_times_out(tmp_path: Path) -> None:
    catalog, clock = clocked_catalog(tmp_path, 1_700_000_000)
    queries = catalog.scheduled_queries
    queries.maintain(hms.ScheduledQueryMaintenanceRequest(REQUEST.CREATE, query("q", "t")))
    request = hms.ScheduledQueryPollRequest(clusterNamespace="t")
    assert queries.poll(request).executionId is None  # next execution is a second ahead
    clock[0] += 1
    first = queries.poll(request)
    assert first.executionId is not None
    clock[0] += DEFAULT_TIMEOUT_S - 1
    assert queries.poll(request).executionId is None  # still running
    clock[0] += 2
    second = queries.poll(request)
    assert second.executionId not in (None, first.executionId)
    assert queries.execution(first.executionId).state == STATE.TIMED_OUT
    assert queries.execution(second.executionId).state == STATE.INITED
    with pytest.raises(hms.InvalidOperationException):
        queries.progress(hms.ScheduledQueryProgressInfo(first.executionId, STATE.FINISHED, "x"))


def test_kept_across_restart(start_server) -> None:
    first = start_server()
    with contextlib.closing(first.client()) as connection:
        maintain(connection, REQUEST.CREATE, query("kept", ns="restart", schedule="0 0 * * * ?"))
    first.stop()
    second = start_server(storage=first.config.storage)
    with contextlib.closing(second.client()) as connection:
        kept = connection.get_scheduled_query(query("kept", ns="restart").scheduleKey)
    assert kept.schedule == "0 0 * * * ?"


def test_two_server_processes_share_queries_and_hand_out_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with contextlib.ExitStack() as stack:
        a, b = stack.enter_context(two_servers_on_one_store(tmp_path, monkeypatch))
        one = stack.enter_context(contextlib.closing(make_client(a.host, a.port)))
        two = stack.enter_context(contextlib.closing(make_client(b.host, b.port)))
        maintain(one, REQUEST.CREATE, query("shared", ns="two"))
        with pytest.raises(hms.AlreadyExistsException):
            maintain(two, REQUEST.CREATE, query("shared", ns="two"))
        handed = poll_due(two, "two")
        time.sleep(1.2)
        assert poll(one, "two").executionId is None
        report(one, handed.executionId, STATE.FINISHED)
        again = poll_due(one, "two")
        assert again.executionId > handed.executionId
