"""Write ids of transactional tables over Thrift, as HMS 3+/4 hands them out and reads them
back: per table, per transaction, settled when the transaction commits or aborts, kept over a
restart and shared by servers on one store."""

from __future__ import annotations

import itertools
import threading

import pytest

from metastore_server.catalog.txn.valid_lists import NONE_OPEN
from metastore_server.thrift_api import hms

from .conftest import create_db, make_table

_tables = itertools.count()


@pytest.fixture()
def table() -> tuple[str, str]:
    return "wdb", f"t{next(_tables)}"


def open_txns(client, count: int = 1, **extra: object) -> list[int]:
    request = hms.OpenTxnRequest(num_txns=count, user="tester", hostname="host1", **extra)
    return client.open_txns(request).txn_ids


def allocate(client, db: str, name: str, *txn_ids: int) -> list[int]:
    request = hms.AllocateTableWriteIdsRequest(dbName=db, tableName=name, txnIds=list(txn_ids))
    return [t.writeId for t in client.allocate_table_write_ids(request).txnToWriteIds]


def snapshot(client) -> str:
    """The caller's ValidTxnList now, built from get_open_txns as Hive's client builds it."""
    answer = client.get_open_txns()
    bits = int.from_bytes(answer.abortedBits or b"", "little")
    aborted = [t for i, t in enumerate(answer.open_txns) if bits >> i & 1]
    opened = [t for t in answer.open_txns if t not in aborted]
    first = answer.min_open_txn if answer.min_open_txn is not None else 9223372036854775807
    return (f"{answer.txn_high_water_mark}:{first}:{','.join(map(str, opened))}:"
            f"{','.join(map(str, aborted))}")  # fmt: skip


def valid(client, full_name: str, txn_list: str | None = None) -> hms.TableValidWriteIds:
    request = hms.GetValidWriteIdsRequest(fullTableNames=[full_name], validTxnList=txn_list)
    return client.get_valid_write_ids(request).tblValidWriteIds[0]


def as_string(ids: hms.TableValidWriteIds) -> str:
    bits = int.from_bytes(ids.abortedBits or b"", "little")
    aborted = [w for i, w in enumerate(ids.invalidWriteIds) if bits >> i & 1]
    opened = [w for w in ids.invalidWriteIds if w not in aborted]
    min_open = NONE_OPEN if ids.minOpenWriteId is None else ids.minOpenWriteId
    listed = [",".join(str(w) for w in sorted(group)) for group in (opened, aborted)]
    return ":".join([ids.fullTableName, str(ids.writeIdHighWaterMark), str(min_open), *listed])


def test_write_ids_across_open_aborted_and_committed_transactions(client, table) -> None:
    db, name = table
    full = f"{db}.{name}"
    t1, t2, t3 = open_txns(client, 3)
    before = snapshot(client)
    assert [allocate(client, db, name, t)[0] for t in (t1, t2, t3)] == [1, 2, 3]
    client.abort_txn(hms.AbortTxnRequest(txnid=t2))
    client.commit_txn(hms.CommitTxnRequest(txnid=t1))
    # The snapshot taken before anything ended: all three invalid, 2 aborted since.
    assert as_string(valid(client, full, before)) == f"{full}:3:1:1,3:2"
    # Now: 1 committed, 2 aborted, 3 open.
    now = snapshot(client)
    assert as_string(valid(client, full, now)) == f"{full}:3:3:3:2"
    assert as_string(valid(client, full)) == f"{full}:3:3:3:2"  # no snapshot: as things are
    # A snapshot taken before t3 began sees write ids up to 2 only.
    assert as_string(valid(client, full, f"{t2}:{t2}:{t2}:")) == f"{full}:2:{2**63 - 1}::2"
    client.commit_txn(hms.CommitTxnRequest(txnid=t3))
    assert as_string(valid(client, full, snapshot(client))) == f"{full}:3:{2**63 - 1}::2"
    answer = valid(client, full, now)  # the older snapshot still sees 3 as open
    assert (answer.invalidWriteIds, answer.minOpenWriteId, answer.abortedBits) == (
        [2, 3], 3, b"\x01")  # fmt: skip


def test_the_same_transaction_gets_the_same_write_id(client, table) -> None:
    db, name = table
    first, second = open_txns(client, 2)
    assert allocate(client, db, name, first) == [1]
    assert allocate(client, db.upper(), name.upper(), first, second) == [1, 2]
    assert allocate(client, db, f"{name}_other", second) == [1]
    assert allocate(client, db, name, second) == [2]
    max_request = hms.MaxAllocatedTableWriteIdRequest(dbName=db, tableName=name)
    assert client.get_max_allocated_table_write_id(max_request).maxWriteId == 2
    client.abort_txns(hms.AbortTxnsRequest(txn_ids=[first, second]))


def test_a_transaction_that_is_not_open_gets_no_write_id(client, table) -> None:
    db, name = table
    (txnid,) = open_txns(client)
    client.abort_txn(hms.AbortTxnRequest(txnid=txnid))
    with pytest.raises(hms.TxnAbortedException) as aborted:
        allocate(client, db, name, txnid)
    assert aborted.value.message == f"Transaction txnid:{txnid} already aborted"
    with pytest.raises(hms.NoSuchTxnException) as unknown:
        allocate(client, db, name, 10**9)
    assert unknown.value.message == f"No such transaction txnid:{10**9}"
    max_request = hms.MaxAllocatedTableWriteIdRequest(dbName=db, tableName=name)
    assert client.get_max_allocated_table_write_id(max_request).maxWriteId == 0


def test_seeding_write_ids_and_transaction_ids(client, table) -> None:
    db, name = table
    client.seed_write_id(hms.SeedTableWriteIdsRequest(dbName=db, tableName=name, seedWriteId=10))
    (txnid,) = open_txns(client)
    assert allocate(client, db, name, txnid) == [10]
    with pytest.raises(hms.MetaException, match="Invalid write id seed 5"):
        client.seed_write_id(hms.SeedTableWriteIdsRequest(dbName=db, tableName=name,
                                                          seedWriteId=5))  # fmt: skip
    client.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    assert as_string(valid(client, f"{db}.{name}", snapshot(client))).split(":")[1] == "10"
    with pytest.raises(hms.MetaException, match=f"Invalid txnId seed {txnid}"):
        client.seed_txn_id(hms.SeedTxnIdRequest(seedTxnId=txnid))
    client.seed_txn_id(hms.SeedTxnIdRequest(seedTxnId=txnid + 100))
    assert open_txns(client) == [txnid + 100]
    client.abort_txn(hms.AbortTxnRequest(txnid=txnid + 100))


def test_open_txns_leaving_out_types(client) -> None:
    (read_only,) = open_txns(client, txn_type=hms.TxnType.READ_ONLY)
    (default,) = open_txns(client)
    everything = client.get_open_txns_req(hms.GetOpenTxnsRequest())
    assert {read_only, default} <= set(everything.open_txns)
    without = client.get_open_txns_req(
        hms.GetOpenTxnsRequest(excludeTxnTypes=[hms.TxnType.READ_ONLY])
    )
    assert default in without.open_txns and read_only not in without.open_txns
    client.abort_txns(hms.AbortTxnsRequest(txn_ids=[read_only, default]))


def test_latest_txnid_in_conflict(client, table) -> None:
    db, name = table
    mine, other, unrelated = open_txns(client, 3)
    allocate(client, db, name, mine)
    allocate(client, db, name, other)
    allocate(client, db, f"{name}_x", unrelated)
    assert client.get_latest_txnid_in_conflict(mine) == 0
    client.commit_txn(hms.CommitTxnRequest(txnid=other))
    client.commit_txn(hms.CommitTxnRequest(txnid=unrelated))
    assert client.get_latest_txnid_in_conflict(mine) == other
    client.commit_txn(hms.CommitTxnRequest(txnid=mine))


def test_the_write_notification_log(client, table) -> None:
    db, name = table
    db = f"{db}_log"
    create_db(client, db)
    client.create_table(make_table(db, name, keys=[("ds", "string"), ("hr", "int")]))
    (txnid,) = open_txns(client)
    (write_id,) = allocate(client, db, name, txnid)

    def note(files: list[str], part: list[str] | None = None) -> hms.WriteNotificationLogRequest:
        return hms.WriteNotificationLogRequest(
            txnId=txnid, writeId=write_id, db=db, table=name, partitionVals=part,
            fileInfo=hms.InsertEventRequestData(filesAdded=files))  # fmt: skip

    client.add_write_notification_log(note(["f1"]))
    client.add_write_notification_log(note(["f1", "f2"]))
    client.add_write_notification_log_in_batch(hms.WriteNotificationLogBatchRequest(
        catalog="hive", db=db, table=name, requestList=[note(["p1"], ["2024", "1"])]))  # fmt: skip
    infos = client.get_all_write_event_info(hms.GetAllWriteEventInfoRequest(txnId=txnid))
    got = sorted((i.partition or "", i.writeId, i.database, i.table, i.files) for i in infos)
    assert got == [("", write_id, db, name, "f1,f2"), ("ds=2024/hr=1", write_id, db, name, "p1")]
    other = hms.GetAllWriteEventInfoRequest(txnId=txnid, dbName=db, tableName="nope")
    assert client.get_all_write_event_info(other) == []
    client.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    unknown = note(["u1"], ["a", "b"])
    unknown.table = "no_such_table"
    client.add_write_notification_log(unknown)
    wanted = hms.GetAllWriteEventInfoRequest(txnId=txnid, tableName="No_Such_Table")
    assert [i.partition for i in client.get_all_write_event_info(wanted)] == ["a/b"]


def test_trino_acid_insert(client, table) -> None:
    """Trino's insert into a transactional table: open, allocate, lock, dynamic partitions
    (HMS 3's layout, with the write id), commit; the write is then valid."""
    db, name = table
    (txnid,) = open_txns(client)
    (write_id,) = allocate(client, db, name, txnid)
    lock = client.lock(hms.LockRequest(
        component=[hms.LockComponent(type=hms.LockType.SHARED_READ, level=hms.LockLevel.TABLE,
                                     dbname=db, tablename=name,
                                     operationType=hms.DataOperationType.INSERT,
                                     isAcid=True)],
        txnid=txnid, user="trino", hostname="host1"))  # fmt: skip
    assert lock.state == hms.LockState.ACQUIRED
    assert as_string(valid(client, f"{db}.{name}", snapshot(client))) == (
        f"{db}.{name}:{write_id}:{write_id}:{write_id}:")  # fmt: skip
    client.add_dynamic_partitions(hms.AddDynamicPartitions(
        txnid=txnid, writeid=write_id, dbname=db, tablename=name, partitionnames=["p=1"],
        operationType=hms.DataOperationType.INSERT))  # fmt: skip
    client.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    answer = valid(client, f"{db}.{name}", snapshot(client))
    assert (answer.writeIdHighWaterMark, answer.invalidWriteIds) == (write_id, [])
    assert client.show_locks(hms.ShowLocksRequest(dbname=db, tablename=name)).locks == []


def test_two_servers_allocate_distinct_ids_and_a_restart_keeps_them(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    got: list[int] = []

    def take(server) -> None:
        conn = server.client()
        for _ in range(10):
            (txnid,) = open_txns(conn)
            got.extend(allocate(conn, "shared", "t", txnid))
            conn.commit_txn(hms.CommitTxnRequest(txnid=txnid))
        conn.close()

    threads = [threading.Thread(target=take, args=(s,)) for s in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == list(range(1, 21))
    conn = second.client()
    (aborted,) = open_txns(conn)
    allocate(conn, "shared", "t", aborted)
    conn.abort_txn(hms.AbortTxnRequest(txnid=aborted))
    (pending,) = open_txns(conn)
    allocate(conn, "shared", "t", pending)
    conn.close()
    first.stop()
    second.stop()
    third = start_server(storage=first.config.storage)
    conn = third.client()
    max_request = hms.MaxAllocatedTableWriteIdRequest(dbName="shared", tableName="t")
    assert conn.get_max_allocated_table_write_id(max_request).maxWriteId == 22
    assert as_string(valid(conn, "shared.t", snapshot(conn))) == "shared.t:22:22:22:21"
    assert allocate(conn, "shared", "t", pending) == [22]
    conn.close()
