"""The compaction queue over Thrift as a Hive compactor drives it: the Initiator queues
(``compact2``), a Worker takes a request (``find_next_compact2``) and reports on it, the Cleaner
finishes it; failures, refusals, aborts, the history's bounds, the compaction metrics; shared by
two servers on one store and kept across a restart. Nothing is ever compacted."""

from __future__ import annotations

import itertools
import threading

import pytest
from thriftpy2.thrift import TApplicationException

from metastore_server.thrift_api import hms

MAJOR, MINOR = hms.CompactionType.MAJOR, hms.CompactionType.MINOR
_names = itertools.count()


@pytest.fixture()
def db() -> str:
    """A database name of the test's own (also its workers' pool: the module's server is
    shared, and a worker only takes requests of its pool)."""
    return f"cq{next(_names)}"


def request(db: str, table: str = "t", part: str | None = None, type_: int = MAJOR,
            **extra: object) -> hms.CompactionRequest:  # fmt: skip
    extra.setdefault("poolName", db)
    return hms.CompactionRequest(dbname=db, tablename=table, partitionname=part, type=type_,
                                 runas="hive", **extra)  # fmt: skip


def take(client, pool: str, worker: str = "w1") -> hms.CompactionInfoStruct | None:
    found = client.find_next_compact2(
        hms.FindNextCompactRequest(workerId=worker, workerVersion="4.0.1", poolName=pool)
    )
    return found.ci


def shown(client, db: str, **filters: object) -> list[hms.ShowCompactResponseElement]:
    return client.show_compact(hms.ShowCompactRequest(dbName=db, **filters)).compacts


def state_of(client, compaction_id: int) -> str:
    (element,) = client.show_compact(hms.ShowCompactRequest(id=compaction_id)).compacts
    return element.state


def test_compaction_requests_are_recorded_and_shown(client, db: str) -> None:
    first = client.compact2(request(db, "T", "ds=1", initiatorId="init-1",
                                    initiatorVersion="4.0.1", numberOfBuckets=4,
                                    orderByClause="order by a"))  # fmt: skip
    assert (first.state, first.accepted) == ("initiated", True)
    again = client.compact2(request(db, "T", "ds=1"))
    assert (again.id, again.state, again.accepted) == (first.id, "initiated", False)
    client.compact(request(db, "t2", type_=MINOR))
    compacts = shown(client, db)
    assert [(c.tablename, c.partitionname, c.type, c.state) for c in compacts] == [
        ("t", "ds=1", MAJOR, "initiated"),
        ("t2", None, MINOR, "initiated"),
    ]
    # None has started: HMS leaves ``start`` unset until a worker takes it.
    assert [c.start for c in compacts] == [None, None]
    first_shown = compacts[0]
    assert (first_shown.initiatorId, first_shown.initiatorVersion, first_shown.poolName) == (
        "init-1", "4.0.1", db)  # fmt: skip
    assert first_shown.enqueueTime > 0 and first_shown.hadoopJobId == "None"
    taken = take(client, db)
    assert (taken.numberOfBuckets, taken.orderByClause) == (4, "order by a")


def test_one_compaction_request_waits_per_table_even_when_sent_at_once(running, db: str) -> None:
    accepted: list[bool] = []

    def ask() -> None:
        conn = running.client()
        try:
            accepted.append(conn.compact2(request(db, "busy", type_=MINOR)).accepted)
        finally:
            conn.close()

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(accepted) == [False] * 7 + [True]


def test_a_compaction_request_needs_a_type(client, db: str) -> None:
    with pytest.raises(TApplicationException, match="MAJOR, MINOR, REBALANCE"):
        client.compact2(hms.CompactionRequest(dbname=db, tablename="t"))
    assert shown(client, db) == []


def test_a_compactor_drives_a_request_from_initiated_to_succeeded(client, db: str) -> None:
    queued = client.compact2(request(db, "t", "ds=1"))
    ci = take(client, db, worker="host-7")
    assert (ci.id, ci.dbname, ci.tablename, ci.partitionname, ci.state, ci.workerId) == (
        queued.id, db, "t", "ds=1", "working", "host-7")  # fmt: skip
    assert take(client, db) is None  # handed out once
    ci.highestWriteId = 17
    client.update_compactor_state(ci, 42)
    client.set_hadoop_jobid("job_1", ci.id)
    (working,) = shown(client, db)
    assert (working.state, working.workerid, working.workerVersion, working.txnId,
            working.hightestWriteId, working.hadoopJobId) == (
        "working", "host-7", "4.0.1", 42, 17, "job_1")  # fmt: skip
    assert working.start >= working.enqueueTime
    with pytest.raises(hms.MetaException, match="'working', not 'ready for cleaning'"):
        client.mark_cleaned(ci)
    client.mark_compacted(ci)
    assert state_of(client, ci.id) == "ready for cleaning"
    with pytest.raises(hms.MetaException, match="is 'ready for cleaning', not 'working'"):
        client.mark_compacted(ci)
    client.mark_cleaned(ci)
    (done,) = shown(client, db)
    assert (done.state, done.endTime is not None, done.cleanerStart is not None) == (
        "succeeded", True, True)  # fmt: skip
    # The table or partition may be queued again once its request is finished.
    assert client.compact2(request(db, "t", "ds=1")).accepted


def test_a_failed_and_a_refused_compaction_end_in_the_history(client, db: str) -> None:
    client.compact2(request(db, "a"))
    client.compact2(request(db, "b"))
    failing = take(client, db)
    failing.errorMessage = "out of memory"
    client.mark_failed(failing)
    refused = take(client, db)
    refused.errorMessage = "not transactional"
    client.mark_refused(refused)
    assert [(c.tablename, c.state, c.errorMessage) for c in shown(client, db)] == [
        ("a", "failed", "out of memory"),
        ("b", "refused", "not transactional"),
    ]
    with pytest.raises(hms.MetaException, match="is 'failed'"):
        client.mark_failed(failing)
    with pytest.raises(hms.MetaException, match="No such compaction request id:987654321"):
        client.mark_compacted(hms.CompactionInfoStruct(id=987654321, dbname=db, tablename="a",
                                                       type=MAJOR))  # fmt: skip
    # The Initiator's failed attempt at a table (no request id) is kept as history.
    client.mark_failed(hms.CompactionInfoStruct(id=0, dbname=db, tablename="c", type=MINOR,
                                                state="did not initiate",
                                                errorMessage="no such table"))  # fmt: skip
    (attempt,) = shown(client, db, tbName="c")
    assert (attempt.state, attempt.errorMessage) == ("did not initiate", "no such table")


def test_abort_compactions_aborts_initiated_requests_only(client, db: str) -> None:
    waiting = client.compact2(request(db, "a")).id
    client.compact2(request(db, "b"))
    busy = take(client, db, worker="w").id  # the oldest: a
    assert busy == waiting
    other = client.compact2(request(db, "c")).id
    answer = client.abort_Compactions(
        hms.AbortCompactionRequest(compactionIds=[busy, other, 987654321])
    ).abortedcompacts
    assert {i: (e.status, e.message) for i, e in answer.items()} == {
        busy: ("Error", "Error while aborting compaction as compaction is in state-working"),
        other: ("Success", "Successfully aborted compaction"),
        987654321: ("Error", "No Such Compaction Id Available"),
    }
    assert state_of(client, other) == "aborted"
    assert take(client, db).tablename == "b"  # the aborted one is never handed out
    assert take(client, db) is None


def test_show_compact_filters(client, db: str) -> None:
    one = client.compact2(request(db, "t", "p=1")).id
    two = client.compact2(request(db, "t", "p=2", type_=MINOR, poolName="etl")).id
    three = client.compact2(request(db, "u")).id
    take(client, db)  # p=1 working

    def ids(**filters: object) -> list[int]:
        return [c.id for c in shown(client, db, **filters)]

    assert ids() == [one, two, three]
    assert ids(id=two) == [two]
    assert ids(poolName="etl") == [two]
    assert ids(tbName="T") == [one, two]
    assert ids(tbName="t", partName="p=2") == [two]
    assert ids(type=MINOR) == [two]
    assert ids(state="working") == ids(state="w") == [one]
    assert ids(state="initiated") == [two, three]
    assert ids(order="cq_id desc") == [three, two, one]
    assert ids(order="cq_id desc", limit=2) == [three, two]
    assert ids(limit=1) == [one]
    assert shown(client, db + "_none") == []


def test_workers_take_the_oldest_request_of_their_own_pool(client, db: str) -> None:
    first = client.compact2(request(db, "a")).id
    client.compact2(request(db, "b", poolName=db + "_etl"))
    third = client.compact2(request(db, "c")).id
    assert take(client, db).id == first
    assert take(client, db).id == third
    assert take(client, db) is None
    assert take(client, db + "_etl").tablename == "b"


def test_the_older_find_next_compact_serves_the_default_pool(start_server) -> None:
    client = start_server().client()
    client.compact2(hms.CompactionRequest(dbname="d", tablename="pooled", type=MAJOR,
                                          poolName="etl"))  # fmt: skip
    client.compact2(hms.CompactionRequest(dbname="d", tablename="plain", type=MAJOR))
    found = client.find_next_compact("old-worker").ci
    assert (found.tablename, found.workerId, found.state) == ("plain", "old-worker", "working")
    assert client.find_next_compact("old-worker").ci is None


def test_submit_for_cleanup_queues_a_request_ready_for_cleaning(client, db: str) -> None:
    assert client.submit_for_cleanup(request(db, "t", "p=1"), 30, 77) is True
    (queued,) = shown(client, db)
    assert (queued.state, queued.hightestWriteId, queued.txnId) == ("ready for cleaning", 30, 77)
    assert take(client, db) is None  # not for a worker: for the Cleaner
    client.mark_cleaned(hms.CompactionInfoStruct(id=queued.id, dbname=db, tablename="t",
                                                 type=MAJOR))  # fmt: skip
    assert state_of(client, queued.id) == "succeeded"


def _run_to(client, db: str, table: str, part: str | None, *, clean: bool) -> int:
    """Queue a request and drive it to 'ready for cleaning' (and 'succeeded' if ``clean``)."""
    client.compact2(request(db, table, part))
    ci = take(client, db)
    client.mark_compacted(ci)
    if clean:
        client.mark_cleaned(ci)
    return ci.id


def test_latest_committed_compaction_info_per_partition(client, db: str) -> None:
    old_p1 = _run_to(client, db, "t", "p=1", clean=True)
    p1 = _run_to(client, db, "t", "p=1", clean=False)
    p2 = _run_to(client, db, "t", "p=2", clean=True)
    _run_to(client, db, "other", None, clean=True)
    client.compact2(request(db, "t", "p=3"))  # initiated: not committed

    def latest(**extra: object) -> list[tuple[int, str, str]]:
        answer = client.get_latest_committed_compaction_info(
            hms.GetLatestCommittedCompactionInfoRequest(dbname=db, tablename="t", **extra)
        )
        return [(c.id, c.partitionname, c.state) for c in answer.compactions]

    assert latest() == [(p1, "p=1", "ready for cleaning"), (p2, "p=2", "succeeded")]
    assert latest(partitionnames=["p=2"]) == [(p2, "p=2", "succeeded")]
    assert latest(lastCompactionId=p1) == [(p2, "p=2", "succeeded")]
    assert old_p1 < p1


def test_the_history_keeps_the_newest_three_succeeded_per_partition(client, db: str) -> None:
    ids = [_run_to(client, db, "t", "p=1", clean=True) for _ in range(5)]
    other = _run_to(client, db, "t", "p=2", clean=True)
    assert [c.id for c in shown(client, db)] == [*ids[2:], other]


def test_compaction_metrics_are_stored_by_version(client, db: str) -> None:
    def metric(value: int, version: int) -> hms.CompactionMetricsDataStruct:
        return hms.CompactionMetricsDataStruct(
            dbname=db, tblname="t", partitionname="p=1",
            type=hms.CompactionMetricsMetricType.NUM_DELTAS, metricvalue=value,
            version=version, threshold=10,
        )  # fmt: skip

    assert client.update_compaction_metrics_data(metric(12, 0)) is True  # stored: version 1
    assert client.update_compaction_metrics_data(metric(13, 0)) is False  # stale version
    assert client.update_compaction_metrics_data(metric(13, 1)) is True  # now version 2
    assert client.update_compaction_metrics_data(metric(14, 1)) is False
    client.remove_compaction_metrics_data(
        hms.CompactionMetricsDataRequest(dbName=db, tblName="t", partitionName="p=1",
                                         type=hms.CompactionMetricsMetricType.NUM_DELTAS)
    )  # fmt: skip
    assert client.update_compaction_metrics_data(metric(14, 5)) is True  # none stored any more
    assert client.update_compaction_metrics_data(metric(3, 1)) is True  # under threshold: gone
    assert client.update_compaction_metrics_data(metric(15, 9)) is True


def test_the_queue_is_shared_by_two_servers_and_kept_across_a_restart(start_server) -> None:
    """One server queues, threads of another (and of the first) take each request exactly
    once; after both stop, a new server on the store carries on where they left off."""
    first = start_server()
    second = start_server(storage=first.config.storage)
    initiator = first.client()
    queued = {initiator.compact2(hms.CompactionRequest(dbname="d", tablename=f"t{i}",
                                                       type=MAJOR)).id
              for i in range(12)}  # fmt: skip
    taken: list[int] = []

    def worker(server, name: str) -> None:
        conn = server.client()
        try:
            while ci := conn.find_next_compact2(hms.FindNextCompactRequest(workerId=name)).ci:
                taken.append(ci.id)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(server, f"{n}"))
               for n, server in enumerate([second, second, first])]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(taken) == sorted(queued)
    one = min(queued)
    second.client().mark_compacted(hms.CompactionInfoStruct(id=one, dbname="d", tablename="t",
                                                            type=MAJOR))  # fmt: skip
    first.stop()
    second.stop()
    restarted = start_server(storage=first.config.storage).client()
    states = {c.id: c.state for c in restarted.show_compact(hms.ShowCompactRequest()).compacts}
    assert states == {i: "ready for cleaning" if i == one else "working" for i in queued}
    restarted.mark_cleaned(hms.CompactionInfoStruct(id=one, dbname="d", tablename="t",
                                                    type=MAJOR))  # fmt: skip
    assert state_of(restarted, one) == "succeeded"
    fresh = restarted.compact2(hms.CompactionRequest(dbname="d", tablename="new", type=MAJOR))
    assert fresh.id > max(queued)  # ids go on from the store's, not from a restart's
