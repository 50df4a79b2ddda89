"""Locks and transactions over Thrift, with HMS 2.3's rules and messages
(the outcomes below were observed on the reference HMS 2.3.10)."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from metastore_server.thrift_api import hms

SR, SW, EX = hms.LockType.SHARED_READ, hms.LockType.SHARED_WRITE, hms.LockType.EXCLUSIVE
ACQUIRED, WAITING = hms.LockState.ACQUIRED, hms.LockState.WAITING
_dbs = itertools.count()


def component(type_: int, db: str, table: str | None = None, part: str | None = None,
              **extra: object) -> hms.LockComponent:  # fmt: skip
    level = hms.LockLevel.PARTITION if part else (
        hms.LockLevel.TABLE if table else hms.LockLevel.DB)  # fmt: skip
    return hms.LockComponent(type=type_, level=level, dbname=db, tablename=table,
                             partitionname=part, **extra)  # fmt: skip


def lock(client, *components: hms.LockComponent, txnid: int | None = None) -> hms.LockResponse:
    return client.lock(hms.LockRequest(component=list(components), txnid=txnid, user="tester",
                                       hostname="host1", agentInfo="test-agent"))  # fmt: skip


def check(client, lockid: int) -> int:
    return client.check_lock(hms.CheckLockRequest(lockid=lockid)).state


@pytest.fixture()
def db() -> str:
    return f"lk{next(_dbs)}"


def test_exclusive_waits_for_exclusive_then_gets_it(client, db: str) -> None:
    first = lock(client, component(EX, db, "t1"))
    second = lock(client, component(EX, db, "t1"))
    assert (first.state, second.state) == (ACQUIRED, WAITING)
    assert second.lockid > first.lockid
    assert check(client, second.lockid) == WAITING
    client.unlock(hms.UnlockRequest(lockid=first.lockid))
    assert check(client, second.lockid) == ACQUIRED
    client.unlock(hms.UnlockRequest(lockid=second.lockid))


@pytest.mark.parametrize(
    ("held", "wanted", "state"),
    [
        ([component(EX, "D", "t1")], component(SR, "D", "t1"), WAITING),
        ([component(SR, "D")], component(EX, "D", "t1"), ACQUIRED),  # never in conflict
        ([component(SR, "D")], component(EX, "D"), WAITING),
        ([component(SR, "D")], component(EX, "D", "t1", "p=1"), WAITING),
        ([component(EX, "D", "t1", "p=1")], component(EX, "D", "t1", "p=2"), ACQUIRED),
        ([component(EX, "D", "t1", "p=1"), component(EX, "D", "t1", "p=2")],
         component(SR, "D", "t1"), WAITING),
        ([component(SW, "D", "t1")], component(SW, "D", "t1"), WAITING),
        ([component(SW, "D", "t1")], component(SR, "D", "t1"), ACQUIRED),
        ([component(SR, "D", "t1")], component(SW, "D", "t1"), ACQUIRED),
        ([component(EX, "D", "t1")], component(SR, "D", "t2"), ACQUIRED),
        ([component(EX, "D", "t1")], component(SR, "other", "t1"), ACQUIRED),
    ],
)  # fmt: skip
def test_compatibility(client, db: str, held, wanted, state) -> None:
    def mine(c: hms.LockComponent) -> hms.LockComponent:
        c.dbname = db if c.dbname == "D" else f"{db}_{c.dbname}"
        return c

    for c in held:
        assert lock(client, mine(c)).state == ACQUIRED
    assert lock(client, mine(wanted)).state == state


def test_a_waiting_exclusive_does_not_hold_up_a_later_read(client, db: str) -> None:
    assert lock(client, component(SR, db)).state == ACQUIRED
    assert lock(client, component(EX, db)).state == WAITING
    assert lock(client, component(SR, db, "t")).state == ACQUIRED
    assert lock(client, component(EX, db, "t2", "p=1")).state == WAITING  # behind the waiting EX


def test_a_request_is_granted_whole_or_not_at_all(client, db: str) -> None:
    blocker = lock(client, component(EX, db, "t1"))
    both = lock(client, component(SR, db, "t2"), component(EX, db, "t1"))
    assert both.state == WAITING
    shown = client.show_locks(hms.ShowLocksRequest(dbname=db)).locks
    mine = sorted((e.tablename, e.state, e.blockedByExtId) for e in shown
                  if e.lockid == both.lockid)  # fmt: skip
    assert mine == [("t1", WAITING, blocker.lockid), ("t2", WAITING, None)]
    assert lock(client, component(EX, db, "t2")).state == WAITING  # t2 counts as taken
    client.unlock(hms.UnlockRequest(lockid=blocker.lockid))
    assert check(client, both.lockid) == ACQUIRED


def test_show_locks_fields(client, db: str) -> None:
    before = int(time.time() * 1000)
    taken = lock(client, component(EX, db, "t1", "p=1"))
    (element,) = client.show_locks(hms.ShowLocksRequest(dbname=db, tablename="t1")).locks
    assert (element.lockid, element.dbname, element.tablename, element.partname) == (
        taken.lockid, db, "t1", "p=1")  # fmt: skip
    assert (element.state, element.type, element.txnid, element.user, element.hostname) == (
        ACQUIRED, EX, 0, "tester", "host1")  # fmt: skip
    assert element.agentInfo == "test-agent" and element.lockIdInternal == 1
    assert before <= element.lastheartbeat <= int(time.time() * 1000)
    assert element.acquiredat is not None
    assert client.show_locks(hms.ShowLocksRequest(dbname=db, tablename="other")).locks == []


def test_unknown_locks_and_transactions(client) -> None:
    with pytest.raises(hms.NoSuchLockException) as caught:
        client.check_lock(hms.CheckLockRequest(lockid=999999))
    assert caught.value.message == "No such lock lockid:999999"
    with pytest.raises(hms.NoSuchLockException) as caught:
        client.heartbeat(hms.HeartbeatRequest(lockid=999999))
    assert caught.value.message == "No such lock: lockid:999999"
    client.unlock(hms.UnlockRequest(lockid=999999))  # nothing to do, as HMS
    with pytest.raises(hms.NoSuchTxnException) as caught:
        client.commit_txn(hms.CommitTxnRequest(txnid=424242))
    assert caught.value.message == "No such transaction txnid:424242"
    with pytest.raises(hms.NoSuchTxnException):
        client.abort_txn(hms.AbortTxnRequest(txnid=424242))
    client.abort_txns(hms.AbortTxnsRequest(txn_ids=[424242]))  # unknown ids: ignored
    with pytest.raises(hms.NoSuchTxnException):
        lock(client, component(SR, "x", "t"), txnid=424242)


def test_transaction_lifecycle(client, db: str) -> None:
    opened = client.open_txns(hms.OpenTxnRequest(num_txns=3, user="u", hostname="h")).txn_ids
    assert opened == list(range(opened[0], opened[0] + 3))
    first, second, third = opened
    open_now = client.get_open_txns()
    assert {first, second, third} <= set(open_now.open_txns)
    assert open_now.txn_high_water_mark >= third and open_now.min_open_txn <= first
    held = lock(client, component(SW, db, "t"), txnid=first)
    assert held.state == ACQUIRED
    with pytest.raises(hms.TxnOpenException) as refused:
        client.unlock(hms.UnlockRequest(lockid=held.lockid))
    assert refused.value.message == (
        "Unlocking locks associated with transaction not permitted.  "
        f"lockid:{held.lockid} intLockId:1 txnid:{first} db:{db} table:t partition:null "
        "state:ACQUIRED type:SHARED_WRITE"
    )
    assert lock(client, component(SW, db, "t"), txnid=second).state == WAITING
    client.commit_txn(hms.CommitTxnRequest(txnid=first))  # its locks go with it
    assert [e.txnid for e in client.show_locks(hms.ShowLocksRequest(dbname=db)).locks] == [second]
    client.abort_txn(hms.AbortTxnRequest(txnid=second))
    assert client.show_locks(hms.ShowLocksRequest(dbname=db)).locks == []
    with pytest.raises(hms.TxnAbortedException) as caught:
        client.commit_txn(hms.CommitTxnRequest(txnid=second))
    assert caught.value.message == f"Transaction txnid:{second} already aborted"
    client.abort_txn(hms.AbortTxnRequest(txnid=second))  # again: nothing to do
    ranged = client.heartbeat_txn_range(hms.HeartbeatTxnRangeRequest(min=first, max=third))
    assert (set(ranged.aborted), set(ranged.nosuch)) == ({second}, {first})
    info = {t.id: t for t in client.get_open_txns_info().open_txns}
    assert info[third].state == hms.TxnState.OPEN and info[third].user == "u"
    assert info[second].state == hms.TxnState.ABORTED
    client.commit_txn(hms.CommitTxnRequest(txnid=third))
    assert client.open_txns(hms.OpenTxnRequest(num_txns=0, user="u", hostname="h")).txn_ids == []


def test_locks_and_transactions_expire_without_heartbeats(start_server, db: str) -> None:
    conn = start_server(txn_timeout=2.0).client()
    stale = lock(conn, component(EX, db, "t"))
    kept = lock(conn, component(EX, db, "t2"))
    (txnid,) = conn.open_txns(hms.OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids
    in_txn = lock(conn, component(SW, db, "t3"), txnid=txnid)
    for _ in range(10):
        time.sleep(0.3)
        conn.heartbeat(hms.HeartbeatRequest(lockid=kept.lockid))
    with pytest.raises(hms.NoSuchLockException):
        conn.check_lock(hms.CheckLockRequest(lockid=stale.lockid))
    assert lock(conn, component(EX, db, "t")).state == ACQUIRED  # the table is free again
    assert check(conn, kept.lockid) == ACQUIRED
    with pytest.raises(hms.TxnAbortedException):
        conn.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    with pytest.raises(hms.NoSuchLockException):
        conn.check_lock(hms.CheckLockRequest(lockid=in_txn.lockid))


def test_locks_hold_across_server_processes_on_one_store(start_server, db: str) -> None:
    """Threads of two servers sharing a store take turns on one exclusive lock."""
    first = start_server()
    second = start_server(storage=first.config.storage)
    inside: list[int] = []
    overlaps: list[str] = []
    done: list[int] = []

    def worker(server, number: int) -> None:
        conn = server.client()
        try:
            for _ in range(5):
                taken = lock(conn, component(EX, db, "shared"))
                while taken.state != ACQUIRED:
                    time.sleep(0.005)
                    taken = conn.check_lock(hms.CheckLockRequest(lockid=taken.lockid))
                inside.append(number)
                if len(inside) > 1:
                    overlaps.append(f"{inside} at once")
                time.sleep(0.002)
                inside.remove(number)
                conn.unlock(hms.UnlockRequest(lockid=taken.lockid))
                done.append(number)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(server, n))
               for n, server in enumerate([first, second] * 3)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert overlaps == []
    assert len(done) == 30


def test_transaction_ids_are_open_as_soon_as_they_are_counted(client, running) -> None:
    """Every id up to the high-water mark is either listed open or was ended: a reader never
    takes a transaction being opened for a committed one."""
    stop = threading.Event()
    wrong: list[str] = []

    def opener() -> None:
        conn = running.client()
        try:
            while not stop.is_set():
                conn.open_txns(hms.OpenTxnRequest(num_txns=20, user="u", hostname="h"))
        finally:
            conn.close()

    ended: set[int] = set()
    baseline = client.get_open_txns()
    ended |= set(range(1, baseline.txn_high_water_mark + 1)) - set(baseline.open_txns)
    threads = [threading.Thread(target=opener) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(40):
            seen = client.get_open_txns()
            missing = set(range(1, seen.txn_high_water_mark + 1)) - set(seen.open_txns) - ended
            if missing:
                wrong.append(f"hwm {seen.txn_high_water_mark}: {len(missing)} ids in limbo")
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert wrong == []
    with pytest.raises(Exception, match="Invalid input for number of txns: 1001"):
        client.open_txns(hms.OpenTxnRequest(num_txns=1001, user="u", hostname="h"))
