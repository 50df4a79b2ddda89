"""HMS 2.3 and HMS 3.x/4.x clients on one server, each answered in its own wire layouts.

Where HMS 3 changed a layout in place, a request is read in the layout its message shows, and a
reply is written in the layout the connection's client reads (both layouts of ``get_open_txns``
while a client has shown nothing; see ``metastore_server/server/generations.py``). Replies are
checked here on the raw bytes, as each generation's decoder would see them."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from thriftpy2.protocol import binary as pybin
from thriftpy2.protocol import compact
from thriftpy2.rpc import make_client as make_thrift_client
from thriftpy2.thrift import TApplicationException, TMessageType, TType
from thriftpy2.transport import TMemoryBuffer

from metastore_server.server.generations import ClientGeneration, shape_result
from metastore_server.thrift_api import hms, hms23
from metastore_server.wire.layouts import read_arguments, without_catalog_names

# --------------------------------------------------------------------------- helpers


class RawConnection:
    """A plain socket speaking the binary protocol: calls written by hand, replies parsed into
    field id -> (wire type, value), so that a test sees exactly what was sent."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=30)
        self.file = self.sock.makefile("rb")
        self.seqid = 0

    def call(self, api: str, args: Any | None = None) -> dict[int, tuple[int, Any]]:
        """Send ``api`` with ``args`` (a struct of the call's ``_args`` class) and answer the
        reply's result struct as raw fields."""
        self.seqid += 1
        buffer = TMemoryBuffer()
        pybin.write_message_begin(buffer, api, TMessageType.CALL, self.seqid)
        if args is None:
            pybin.write_field_stop(buffer)
        else:
            pybin.write_val(buffer, TType.STRUCT, args)
        self.sock.sendall(buffer.getvalue())
        name, msg_type, seqid = pybin.read_message_begin(self.file)
        assert (name, seqid) == (api, self.seqid)
        assert msg_type == TMessageType.REPLY
        return _raw_struct(self.file)

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def _raw_struct(stream: Any) -> dict[int, tuple[int, Any]]:
    out: dict[int, list[tuple[int, Any]]] = {}
    while True:
        ftype, fid = pybin.read_field_begin(stream)
        if ftype == TType.STOP:
            return out
        out.setdefault(fid, []).append((ftype, _raw_value(stream, ftype)))


def _raw_value(stream: Any, ttype: int) -> Any:
    if ttype == TType.STRUCT:
        return _raw_struct(stream)
    if ttype in (TType.LIST, TType.SET):
        etype, size = pybin.read_list_begin(stream)
        return [_raw_value(stream, etype) for _ in range(size)]
    if ttype == TType.MAP:
        ktype, vtype, size = pybin.read_map_begin(stream)
        return [(_raw_value(stream, ktype), _raw_value(stream, vtype)) for _ in range(size)]
    if ttype == TType.STRING:
        return pybin.read_val(stream, ttype, None, False)
    return pybin.read_val(stream, ttype)


def open_txns_layouts(reply: dict) -> list[int]:
    """The wire types under which a get_open_txns reply carries its transactions."""
    (answer,) = reply[0]
    return [wire for wire, _ in answer[1][2]]


# --------------------------------------------------------------------------- replies


def test_get_open_txns_in_both_layouts_until_the_client_shows_itself(start_server) -> None:
    server = start_server()
    conn = server.client()
    opened = conn.open_txns(hms.OpenTxnRequest(num_txns=3, user="u", hostname="h")).txn_ids
    conn.abort_txns(hms.AbortTxnsRequest(txn_ids=[opened[1]]))
    raw = RawConnection(server.host, server.port)
    try:
        reply = raw.call("get_open_txns")
        assert open_txns_layouts(reply) == [TType.SET, TType.LIST]
        fields = reply[0][0][1]
        assert [ids for _, ids in fields[2]] == [opened, opened]
        assert fields[4] == [(TType.STRING, b"\x02")]  # the second of three is aborted
        # a call only HMS 3+ has: from now on this connection gets HMS 3+'s layout alone
        raw.call("get_database_req", hms.ThriftHiveMetastore.get_database_req_args(
            request=hms.GetDatabaseRequest(name="default")))  # fmt: skip
        assert open_txns_layouts(raw.call("get_open_txns")) == [TType.LIST]
    finally:
        raw.close()


def test_a_catalog_prefix_shows_a_newer_client(start_server) -> None:
    server = start_server()
    raw = RawConnection(server.host, server.port)
    try:
        raw.call("get_databases", hms.ThriftHiveMetastore.get_databases_args(pattern="@hive#"))
        assert open_txns_layouts(raw.call("get_open_txns")) == [TType.LIST]
    finally:
        raw.close()


@pytest.mark.parametrize(("setting", "layouts"), [("2.3", [TType.SET]), ("4", [TType.LIST])])
def test_hms_api_fixes_the_layout(start_server, setting: str, layouts: list[int]) -> None:
    server = start_server(hms_api=setting)
    raw = RawConnection(server.host, server.port)
    try:
        raw.call("get_database_req", hms.ThriftHiveMetastore.get_database_req_args(
            request=hms.GetDatabaseRequest(name="default")))  # fmt: skip
        assert open_txns_layouts(raw.call("get_open_txns")) == layouts
    finally:
        raw.close()


def test_both_generations_decode_the_first_answer(start_server) -> None:
    """thriftpy2 clients generated from each generation's layout read the same answer."""
    server = start_server()
    conn = server.client()
    opened = conn.open_txns(hms.OpenTxnRequest(num_txns=2, user="u", hostname="h")).txn_ids
    old = make_thrift_client(hms23.HiveMetastore23Wire, server.host, server.port, timeout=30000)
    new = make_thrift_client(hms.ThriftHiveMetastore, server.host, server.port, timeout=30000)
    try:
        assert sorted(old.get_open_txns().open_txns) == opened
        answer = new.get_open_txns()
        assert answer.open_txns == opened and answer.abortedBits == b""
    finally:
        old.close()
        new.close()


def test_get_partition_names_errors_in_each_layout(start_server) -> None:
    """2.3 declares get_partition_names' MetaException at id 1, HMS 3+ at id 2 (its id 1 is a
    NoSuchObjectException): each client finds the error where it looks."""
    server = start_server()
    args = hms.ThriftHiveMetastore.get_partition_names_args(db_name="g", tbl_name="nope",
                                                           max_parts=-1)  # fmt: skip
    raw = RawConnection(server.host, server.port)
    try:
        old = raw.call("get_partition_names", args)
        raw.call("get_database_req", hms.ThriftHiveMetastore.get_database_req_args(
            request=hms.GetDatabaseRequest(name="default")))  # fmt: skip
        new = raw.call("get_partition_names", args)
    finally:
        raw.close()
    # a missing table: HMS 3+'s NoSuchObjectException (id 1); 2.3 has only MetaException (id 1)
    assert list(old) == [1] and list(new) == [1]
    assert old[1] == new[1]  # the same message, in the struct each generation reads at id 1
    error = hms.MetaException(message="boom")
    result = hms.ThriftHiveMetastore.get_partition_names_result(o2=error)
    legacy = shape_result("get_partition_names", result, ClientGeneration())
    assert legacy.thrift_spec[1][1] == "o2"  # 2.3: its MetaException at id 1
    assert isinstance(legacy.o2, hms.MetaException) and legacy.o2.message == "boom"
    assert shape_result("get_partition_names", result, ClientGeneration("4")) is result


# --------------------------------------------------------------------------- requests


def _read(args_struct: Any, api: str, factory: Any) -> Any:
    """``args_struct`` encoded by ``factory``'s protocol and read back by the server's reader."""
    data = TMemoryBuffer()
    factory.get_protocol(data).write_struct(args_struct)
    target = getattr(hms.ThriftHiveMetastore, api + "_args")()
    read_arguments(api, target, factory.get_protocol(TMemoryBuffer(data.getvalue())))
    return target


PROTOCOLS = [pybin.TBinaryProtocolFactory(), compact.TCompactProtocolFactory()]


@pytest.mark.parametrize("factory", PROTOCOLS, ids=["binary", "compact"])
def test_add_dynamic_partitions_is_read_in_the_layout_it_came_in(factory: Any) -> None:
    old = hms23.HiveMetastore23Wire.add_dynamic_partitions_args(rqst=hms23.AddDynamicPartitions(
        txnid=7, dbname="d", tablename="t", partitionnames=["ds=1", "ds=2"],
        operationType=hms.DataOperationType.INSERT))  # fmt: skip
    new = hms.ThriftHiveMetastore.add_dynamic_partitions_args(rqst=hms.AddDynamicPartitions(
        txnid=7, writeid=3, dbname="d", tablename="t", partitionnames=["ds=1", "ds=2"],
        operationType=hms.DataOperationType.INSERT))  # fmt: skip
    from_old = _read(old, "add_dynamic_partitions", factory).rqst
    from_new = _read(new, "add_dynamic_partitions", factory).rqst
    assert from_new == new.rqst
    assert from_old == hms.AddDynamicPartitions(
        txnid=7, dbname="d", tablename="t", partitionnames=["ds=1", "ds=2"],
        operationType=hms.DataOperationType.INSERT)  # fmt: skip


@pytest.mark.parametrize("factory", PROTOCOLS, ids=["binary", "compact"])
def test_insert_event_data_is_read_in_the_layout_it_came_in(factory: Any) -> None:
    def request(insert: Any) -> Any:
        data = hms.FireEventRequestData(insertData=insert)
        return hms.ThriftHiveMetastore.fire_listener_event_args(
            rqst=hms.FireEventRequest(successful=True, data=data, dbName="d", tableName="t")
        )

    old = request(hms23.InsertEventRequestData(filesAdded=["f1", "f2"],
                                               filesAddedChecksum=["c1", "c2"]))  # fmt: skip
    new = request(
        hms.InsertEventRequestData(
            replace=True, filesAdded=["f1"], filesAddedChecksum=["c1"], partitionVal=["1"]
        )
    )
    got_old = _read(old, "fire_listener_event", factory).rqst.data.insertData
    got_new = _read(new, "fire_listener_event", factory).rqst.data.insertData
    assert got_old == hms.InsertEventRequestData(filesAdded=["f1", "f2"],
                                                 filesAddedChecksum=["c1", "c2"])  # fmt: skip
    assert got_new == new.rqst.data.insertData


def test_a_2_3_add_dynamic_partitions_call_is_served(start_server) -> None:
    """A 2.3 client's call (dbname at field 2) is recorded as such: read in HMS 3's layout,
    its operation type would be missing and the call refused."""
    server = start_server()
    conn = server.client()
    txn = conn.open_txns(hms.OpenTxnRequest(num_txns=1, user="u", hostname="h")).txn_ids[0]
    old = make_thrift_client(hms23.HiveMetastore23Wire, server.host, server.port, timeout=30000)
    try:
        old.add_dynamic_partitions(hms23.AddDynamicPartitions(
            txnid=txn, dbname="d", tablename="t", partitionnames=["ds=1"],
            operationType=hms23.DataOperationType.INSERT))  # fmt: skip
        with pytest.raises(TApplicationException):  # UNSET: refused as HMS refuses it
            old.add_dynamic_partitions(hms23.AddDynamicPartitions(
                txnid=txn, dbname="d", tablename="t", partitionnames=["ds=1"]))  # fmt: skip
    finally:
        old.close()


def test_generation_setting_is_checked() -> None:
    with pytest.raises(ValueError, match="auto, 2.3, 4"):
        ClientGeneration("3")
    generation = ClientGeneration()
    generation.observe("get_table", {"dbname": "d", "tbl_name": "t"})
    assert not generation.known
    generation.observe("get_table_req", {"req": hms.GetTableRequest(dbName="d", tblName="t",
                                                                    catName="hive")})  # fmt: skip
    assert generation.newer


def test_a_newer_client_start_then_2_3_calls_on_the_same_connection(start_server) -> None:
    """Hive 3/4's and Impala's first calls, then the 2.3 calls such clients still make (and
    get_open_txns), on one connection: every answer decodes, in HMS 3+'s layouts."""
    server = start_server()
    conn = server.client()
    conn.create_database(hms.Database(name="gen", description="", parameters={}))
    conn.create_table(hms.Table(tableName="t", dbName="gen", tableType="EXTERNAL_TABLE",
                                sd=hms.StorageDescriptor(cols=[]), partitionKeys=[
                                    hms.FieldSchema(name="ds", type="string")],
                                parameters={"EXTERNAL": "TRUE"}))  # fmt: skip
    assert "gen" in conn.get_databases("@hive#")  # Hive 3/4 at start
    assert conn.get_dataconnectors() == []  # Impala's catalogd at start
    raw = RawConnection(server.host, server.port)
    try:
        raw.call("get_databases", hms.ThriftHiveMetastore.get_databases_args(pattern="@hive#"))
        table = raw.call("get_table", hms.ThriftHiveMetastore.get_table_args(
            dbname="gen", tbl_name="t"))  # fmt: skip
        assert table[0][0][1][1] == [(TType.STRING, b"t")]
        names = raw.call("get_partition_names", hms.ThriftHiveMetastore.get_partition_names_args(
            db_name="gen", tbl_name="t", max_parts=-1))  # fmt: skip
        assert names == {0: [(TType.LIST, [])]}
        assert open_txns_layouts(raw.call("get_open_txns")) == [TType.LIST]
    finally:
        raw.close()
    assert conn.get_table("gen", "t").tableName == "t"
    assert conn.get_table_objects_by_name("gen", ["t"])[0].tableName == "t"
    assert conn.get_open_txns().open_txns == []


def test_catalog_names_in_answers_follow_the_client_generation(start_server) -> None:
    """HMS 4 names the catalog of every database, table, partition and function it answers;
    HMS 2.3.10 (which declares most of those fields) leaves them unset: each client gets its
    own generation's answer."""
    server = start_server()
    old, new = server.client(), server.client()
    try:
        new.get_catalogs()  # a call only HMS 3+ clients make
        for conn, expected in ((old, None), (new, "hive")):
            assert conn.get_database("default").catalogName == expected
            if expected is None:
                conn.create_function(hms.Function(
                    functionName="f", dbName="default", className="C", ownerName="o",
                    ownerType=hms.PrincipalType.USER, functionType=hms.FunctionType.JAVA,
                    resourceUris=[]))  # fmt: skip
            assert conn.get_function("default", "f").catName == expected
    finally:
        old.close()
        new.close()


def test_catalog_names_are_unset_in_a_copy_and_required_ones_kept() -> None:
    """What a 2.3 client is answered: optional catalog names unset, also deep inside (a view's
    source tables); a required one (CreationMetadata.catName) kept; the answer given untouched
    (it may be a cached object other clients are answered with)."""
    source = hms.SourceTable(table=hms.Table(tableName="s", catName="hive"), insertedCount=0,
                             updatedCount=0, deletedCount=0)  # fmt: skip
    view = hms.Table(tableName="v", catName="hive", sd=hms.StorageDescriptor(location="x"),
                     creationMetadata=hms.CreationMetadata(
                         catName="hive", dbName="d", tblName="v", tablesUsed={"d.s"},
                         sourceTables=[source]))  # fmt: skip
    old = without_catalog_names([view])[0]
    assert (old.catName, old.creationMetadata.sourceTables[0].table.catName) == (None, None)
    assert old.creationMetadata.catName == "hive"
    assert old.sd is view.sd  # nothing to unset there: not copied
    assert (view.catName, source.table.catName) == ("hive", "hive")
