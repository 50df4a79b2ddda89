"""Materialized views for query rewriting, as HMS 4 keeps them: the creation metadata kept in
the view's table (HMS 4's Table field 16, which a 2.3.10 client skips), the views a rewrite may
use, whether a view is stale (updates, deletes or compactions of its sources outside its
snapshot), and the rebuild lock of one transaction at a time."""

from __future__ import annotations

from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.rpc import make_client as make_thrift_client

from metastore_server.thrift_api import hms, make_client

from .conftest import clocked_catalog, create_db, make_table
from .test_write_ids import open_txns, snapshot


def metadata(db: str, view: str, sources: set[str], valid: str = "") -> hms.CreationMetadata:
    return hms.CreationMetadata(catName="hive", dbName=db, tblName=view, tablesUsed=sources,
                                validTxnList=valid, materializationTime=1)  # fmt: skip


def view(db: str, name: str, sources: set[str], valid: str = "", rewrite: bool = True):
    return make_table(db, name, tableType="MATERIALIZED_VIEW", rewriteEnabled=rewrite,
                      viewOriginalText="select * from t", viewExpandedText="select * from t",
                      creationMetadata=metadata(db, name, sources, valid))  # fmt: skip


@pytest.fixture
def client(start_server):
    conn = start_server().client()
    create_db(conn, "mv")
    conn.create_table(
        make_table(
            "mv",
            "t",
            parameters={"transactional": "true", "transactional_properties": "insert_only"},
        )
    )
    yield conn
    conn.close()


def write(client, txnid: int, operation: int) -> None:
    """A transaction's write to mv.t, announced by its lock (as Hive and Trino do)."""
    client.lock(hms.LockRequest(
        component=[hms.LockComponent(type=hms.LockType.SHARED_WRITE, level=hms.LockLevel.TABLE,
                                     dbname="mv", tablename="t", operationType=operation,
                                     isAcid=True)],
        txnid=txnid, user="hive", hostname="h"))  # fmt: skip


def test_creation_metadata_is_kept_and_replaced(client) -> None:
    client.create_table(view("mv", "v", {"mv.t"}, "5:9223372036854775807::"))
    kept = client.get_table("mv", "v").creationMetadata
    assert (set(kept.tablesUsed), kept.validTxnList) == ({"mv.t"}, "5:9223372036854775807::")
    client.update_creation_metadata("hive", "mv", "v", metadata("mv", "v", {"mv.t"}, "9:9::"))
    assert client.get_table("mv", "v").creationMetadata.validTxnList == "9:9::"
    with pytest.raises(hms.MetaException, match="not a materialized view"):
        client.update_creation_metadata("hive", "mv", "t", metadata("mv", "t", set()))
    with pytest.raises(hms.MetaException, match="mv.nope table not found"):  # declared: Meta
        client.update_creation_metadata("hive", "mv", "nope", metadata("mv", "nope", set()))


def test_views_for_rewriting(client) -> None:
    client.create_table(view("mv", "v1", {"mv.t"}))
    client.create_table(view("mv", "v2", {"mv.t"}, rewrite=False))
    assert client.get_materialized_views_for_rewriting("mv") == ["v1"]
    every = client.get_all_materialized_view_objects_for_rewriting()
    assert [(v.dbName, v.tableName) for v in every] == [("mv", "v1")]


def test_updates_and_deletes_outside_the_snapshot_make_a_view_stale(client) -> None:
    before = snapshot(client)
    (insert,) = open_txns(client)
    write(client, insert, hms.DataOperationType.INSERT)
    client.commit_txn(hms.CommitTxnRequest(txnid=insert))
    stale = client.get_materialization_invalidation_info(metadata("mv", "v", {"mv.t"}), before)
    assert not stale.sourceTablesUpdateDeleteModified  # inserts alone: incremental rebuild
    (update,) = open_txns(client)
    write(client, update, hms.DataOperationType.UPDATE)
    during = snapshot(client)
    client.commit_txn(hms.CommitTxnRequest(txnid=update))
    after = snapshot(client)
    for valid, modified in [(before, True), (during, True), (after, False)]:
        info = client.get_materialization_invalidation_info(metadata("mv", "v", {"mv.t"}), valid)
        assert info.sourceTablesUpdateDeleteModified is modified, valid
        assert info.sourceTablesCompacted is False
    other = client.get_materialization_invalidation_info(metadata("mv", "v", {"mv.x"}), before)
    assert not other.sourceTablesUpdateDeleteModified
    with pytest.raises(hms.MetaException, match="Invalid validTxnList"):
        client.get_materialization_invalidation_info(metadata("mv", "v", {"mv.t"}), "x:y")


def test_a_compaction_outside_the_snapshot_makes_a_view_stale(client) -> None:
    before = snapshot(client)
    client.compact2(hms.CompactionRequest(dbname="mv", tablename="t",
                                          type=hms.CompactionType.MAJOR))  # fmt: skip
    work = client.find_next_compact2(hms.FindNextCompactRequest(workerId="w1")).ci
    (compactor,) = open_txns(client)
    client.update_compactor_state(work, compactor)
    client.mark_compacted(work)
    client.commit_txn(hms.CommitTxnRequest(txnid=compactor))
    info = client.get_materialization_invalidation_info(metadata("mv", "v", {"mv.t"}), before)
    assert info.sourceTablesCompacted is True
    later = client.get_materialization_invalidation_info(
        metadata("mv", "v", {"mv.t"}), snapshot(client)
    )
    assert later.sourceTablesCompacted is False


def test_one_rebuild_at_a_time_across_servers_and_a_restart(start_server) -> None:
    first = start_server()
    second = start_server(storage=first.config.storage)
    one, two = first.client(), second.client()
    (a,) = open_txns(one)
    (b,) = open_txns(two)
    assert one.get_lock_materialization_rebuild("mv", "v", a).state == hms.LockState.ACQUIRED
    assert two.get_lock_materialization_rebuild("mv", "v", b).state == (
        hms.LockState.NOT_ACQUIRED)  # fmt: skip
    assert one.heartbeat_lock_materialization_rebuild("mv", "v", a) is True
    assert two.heartbeat_lock_materialization_rebuild("mv", "v", b) is False
    one.close()
    first.stop()
    third = start_server(storage=first.config.storage)
    three = third.client()
    assert three.heartbeat_lock_materialization_rebuild("mv", "v", a) is True  # kept
    three.commit_txn(hms.CommitTxnRequest(txnid=a))  # the lock goes with its transaction
    assert two.get_lock_materialization_rebuild("mv", "v", b).state == hms.LockState.ACQUIRED
    two.close()
    three.close()


def test_the_rebuild_lock_is_taken_without_checking_the_transaction(client) -> None:
    """As HMS's TxnHandler: a transaction it does not know takes the lock (lockid = the
    transaction); any standing lock of the view, its own included, is NOT_ACQUIRED; a heartbeat
    is true only for the transaction holding it."""
    taken = client.get_lock_materialization_rebuild("mv", "w", 424242)
    assert (taken.lockid, taken.state) == (424242, hms.LockState.ACQUIRED)
    again = client.get_lock_materialization_rebuild("mv", "w", 424242)
    assert (again.lockid, again.state) == (424242, hms.LockState.NOT_ACQUIRED)
    (mine,) = open_txns(client)
    other = client.get_lock_materialization_rebuild("mv", "w", mine)
    assert (other.lockid, other.state) == (mine, hms.LockState.NOT_ACQUIRED)
    assert client.heartbeat_lock_materialization_rebuild("mv", "w", 424242) is True
    assert client.heartbeat_lock_materialization_rebuild("mv", "w", mine) is False
    assert client.heartbeat_lock_materialization_rebuild("mv", "other", 424242) is False
    assert client.get_lock_materialization_rebuild("mv", "x", mine).state == (
        hms.LockState.ACQUIRED)  # fmt: skip
    client.abort_txn(hms.AbortTxnRequest(txnid=mine))  # an ended transaction's lock goes
    assert client.heartbeat_lock_materialization_rebuild("mv", "x", mine) is False
    assert client.get_lock_materialization_rebuild("mv", "x", 7).state == hms.LockState.ACQUIRED


def test_a_lock_of_an_unknown_transaction_goes_when_its_heartbeats_stop(tmp_path: Path) -> None:
    catalog, _clock = clocked_catalog(tmp_path, 1_000)
    now = [1_000_000]
    txns = catalog.transactions
    txns.clock = lambda: now[0]
    timeout_ms = int(txns.timeout_s * 1000)
    views = catalog.views
    assert views.lock_rebuild("mv", "w", 99).state == hms.LockState.ACQUIRED
    now[0] += timeout_ms - 1
    assert views.heartbeat_rebuild("mv", "w", 99) is True  # renewed: stands a timeout more
    now[0] += timeout_ms - 1
    assert views.lock_rebuild("mv", "w", 5).state == hms.LockState.NOT_ACQUIRED
    now[0] += 1
    assert views.heartbeat_rebuild("mv", "w", 99) is False
    assert views.lock_rebuild("mv", "w", 5).state == hms.LockState.ACQUIRED
    catalog.close()


_HMS_2_3_10_TABLE = """
struct Table {
    1: string tableName,
    2: string dbName,
    12: string tableType,
    16: optional string catName,
}
service ThriftHiveMetastore {
    Table get_table(1: string dbname, 2: string tbl_name)
}
"""


def test_a_2_3_10_client_reads_a_view_without_its_metadata(start_server, tmp_path: Path) -> None:
    """HMS 2.3.10 declares Table field 16 a string (catName); the view's metadata there, a
    struct, is skipped by such a client, which reads the rest."""
    idl = tmp_path / "hms2310_table.thrift"
    idl.write_text(_HMS_2_3_10_TABLE)
    old = thriftpy2.load(str(idl), module_name="hms2310_table_thrift")
    server = start_server()
    conn = server.client()
    create_db(conn, "mv")
    conn.create_table(view("mv", "v", {"mv.t"}))
    conn.close()
    client = make_thrift_client(old.ThriftHiveMetastore, server.host, server.port, timeout=30000)
    try:
        table = client.get_table("mv", "v")
    finally:
        client.close()
    assert (table.tableName, table.tableType, table.catName) == ("v", "MATERIALIZED_VIEW", None)


def test_a_view_naming_its_source_tables_over_the_compact_protocol(start_server) -> None:
    """A Table holds Tables (a view's source tables): read, checked as text and written back
    on the protocol that checks every string (compact), and a bad string deep inside refused."""
    server = start_server(protocol="compact")
    conn = make_client(server.host, server.port, compact=True)
    try:
        create_db(conn, "mv")
        source = hms.SourceTable(table=make_table("mv", "t"), insertedCount=1, updatedCount=0,
                                 deletedCount=0)  # fmt: skip
        mv = view("mv", "v", {"mv.t"})
        mv.creationMetadata.sourceTables = [source]
        conn.create_table(mv)
        kept = conn.get_table("mv", "v").creationMetadata.sourceTables
        assert [s.table.tableName for s in kept] == ["t"]
        bad = view("mv", "w", {"mv.t"})
        bad.creationMetadata.sourceTables = [hms.SourceTable(
            table=hms.Table(tableName=b"\xff\xfe"), insertedCount=0, updatedCount=0,
            deletedCount=0)]  # fmt: skip
        with pytest.raises(hms.InvalidObjectException, match="not valid UTF-8"):
            conn.create_table(bad)
    finally:
        conn.close()
