"""The notification log as event followers read it (Impala's catalogd, StarRocks, Doris, Hive
replication): every event type HMS 3/4 write, named as they name them, each message decoded
with the fields and types of HMS's ``JSON*Message`` classes (Jackson: unknown fields ignored,
only declared fields read, a string is not read as a number) and each ``*ObjJson`` decoded with
a strict Thrift JSON protocol reader into its struct; the envelope names followers filter on;
Impala's COMMIT_TXN flow through ``get_all_write_event_info``; the gzip format."""

from __future__ import annotations

import json

from support.tjson import decode

from metastore_server.catalog.events import formats
from metastore_server.thrift_api import hms

from .conftest import create_db, make_partition, make_table

_COMMON = {"server": "!S", "servicePrincipal": "!S", "timestamp": "!L"}
_TABLE = {"db": "!S", "table": "!S", "tableType": "S"}
_LISTS = ("writeIds", "databases", "tables", "partitions", "tableObjs", "partitionObjs", "files")

#: Per event type, the fields of HMS's JSON message class and their kinds: S string, L long,
#: B boolean as "true"/"false", [..] list, {S} map of strings, T:Struct Thrift JSON of the
#: struct, PF HMS's PartitionFiles, E:Enum an enum's name; ``!`` where the followers need it.
SCHEMAS: dict[str, dict[str, str]] = {
    "CREATE_DATABASE": {"cat": "S", "db": "!S", "dbJson": "!T:Database"},
    "ALTER_DATABASE": {"db": "!S", "dbObjBeforeJson": "!T:Database",
                       "dbObjAfterJson": "!T:Database"},
    "DROP_DATABASE": {"cat": "S", "db": "!S", "dbJson": "!T:Database"},
    "CREATE_TABLE": {**_TABLE, "tableObjJson": "!T:Table", "files": "[S]"},
    "ALTER_TABLE": {**_TABLE, "tableObjBeforeJson": "!T:Table", "tableObjAfterJson": "!T:Table",
                    "isTruncateOp": "!B", "writeId": "L"},
    "DROP_TABLE": {**_TABLE, "tableObjJson": "!T:Table"},
    "ADD_PARTITION": {**_TABLE, "tableObjJson": "!T:Table", "partitions": "![{S}]",
                      "partitionListJson": "![T:Partition]", "partitionFiles": "PF"},
    "ALTER_PARTITION": {"cat": "S", **_TABLE, "tableObjJson": "!T:Table", "isTruncateOp": "!B",
                        "writeId": "L", "keyValues": "!{S}",
                        "partitionObjBeforeJson": "!T:Partition",
                        "partitionObjAfterJson": "!T:Partition"},
    "DROP_PARTITION": {"cat": "S", **_TABLE, "tableObjJson": "!T:Table", "partitions": "![{S}]"},
    "INSERT": {**_TABLE, "tableObjJson": "!T:Table", "ptnObjJson": "T:Partition",
               "replace": "!B", "files": "![S]", "partKeyVals": "{S}"},
    "RELOAD": {"db": "!S", "table": "!S", "tableObjJson": "!T:Table", "ptnObjJson": "T:Partition",
               "refreshEvent": "!B", "partitionListJson": "[T:Partition]"},
    "CREATE_FUNCTION": {"db": "!S", "functionObjJson": "!T:Function"},
    "DROP_FUNCTION": {"db": "!S", "functionName": "!S"},
    "OPEN_TXN": {"txnIds": "[L]", "fromTxnId": "!L", "toTxnId": "!L"},
    "COMMIT_TXN": {"txnid": "!L", "writeIds": "[L]", "databases": "[S]", "tables": "[S]",
                   "partitions": "[S]", "tableObjs": "[T:Table]",
                   "partitionObjs": "[T:Partition]", "files": "[S]"},
    "ABORT_TXN": {"txnid": "!L", "dbsUpdated": "[S]"},
    "ALLOC_WRITE_ID_EVENT": {"catName": "S", "dbName": "!S", "tableName": "!S",
                             "txnIdList": "![L]", "writeIdList": "![L]"},
    "ACID_WRITE_EVENT": {"txnid": "!L", "writeId": "!L", "database": "!S", "table": "!S",
                         "partition": "S", "tableObjJson": "!T:Table",
                         "partitionObjJson": "T:Partition", "files": "![S]"},
    "UPDATE_TBL_COL_STAT_EVENT": {"writeId": "L", "database": "!S",
                                  "colStatsJson": "!T:ColumnStatistics", "parameters": "{S}",
                                  "tableObjJson": "!T:Table"},
    "UPDATE_PART_COL_STAT_EVENT": {"writeId": "L", "database": "!S",
                                   "colStatsJson": "!T:ColumnStatistics", "parameters": "{S}",
                                   "partVals": "![S]", "tableObjJson": "!T:Table"},
    "DELETE_TBL_COL_STAT_EVENT": {"database": "!S", "colName": "S"},
    "DELETE_PART_COL_STAT_EVENT": {"catalog": "S", "database": "!S", "colName": "S",
                                   "partName": "!S", "partValues": "![S]"},
    "ADD_PRIMARYKEY": {"primaryKeyListJson": "![T:SQLPrimaryKey]"},
    "ADD_FOREIGNKEY": {"foreignKeyListJson": "![T:SQLForeignKey]"},
    "ADD_UNIQUECONSTRAINT": {"uniqueConstraintListJson": "![T:SQLUniqueConstraint]"},
    "ADD_NOTNULLCONSTRAINT": {"notNullConstraintListJson": "![T:SQLNotNullConstraint]"},
    "ADD_DEFAULTCONSTRAINT": {"defaultConstraintListJson": "![T:SQLDefaultConstraint]"},
    "ADD_CHECKCONSTRAINT": {"checkConstraintListJson": "![T:SQLCheckConstraint]"},
    "DROP_CONSTRAINT": {"catName": "S", "dbName": "!S", "tableName": "!S",
                        "constraintName": "!S"},
    "COMMIT_COMPACTION_EVENT": {"txnid": "!L", "compactionId": "!L", "type": "!E:CompactionType",
                                "dbname": "!S", "tableName": "!S", "partName": "S"},
}  # fmt: skip
#: Events HMS writes through its transactional listener, with no catalog.
TXN_EVENTS = {"OPEN_TXN", "COMMIT_TXN", "ABORT_TXN", "ALLOC_WRITE_ID_EVENT", "ACID_WRITE_EVENT",
              "COMMIT_COMPACTION_EVENT"}  # fmt: skip
#: Events naming a database but no table.
DATABASE_EVENTS = {"CREATE_DATABASE", "ALTER_DATABASE", "DROP_DATABASE", "CREATE_FUNCTION",
                   "DROP_FUNCTION"}  # fmt: skip


def _is_kind(value: object, kind: str, where: str) -> object:
    """``value`` read as a field of ``kind`` reads it (AssertionError otherwise); decoded."""
    if kind.startswith("["):
        assert isinstance(value, list), f"{where}: {value!r} is not a list"
        return [_is_kind(item, kind[1:-1], f"{where}[{i}]") for i, item in enumerate(value)]
    if kind.startswith("T:"):
        if value is None:
            return None  # a list's null entry (a partition object of a table write)
        assert isinstance(value, str), f"{where}: {value!r} is not Thrift JSON text"
        return decode(value, getattr(hms, kind[2:]))
    if kind.startswith("E:"):
        assert value in getattr(hms, kind[2:])._NAMES_TO_VALUES, f"{where}: {value!r}"
        return value
    if kind == "S":
        assert isinstance(value, str), f"{where}: {value!r} is not a string"
    elif kind == "L":
        assert type(value) is int, f"{where}: {value!r} is not a number"
    elif kind == "B":
        assert value in ("true", "false"), f"{where}: {value!r} is not a boolean string"
    elif kind == "{S}":
        assert isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ), f"{where}: {value!r} is not a map of strings"
    elif kind == "PF":
        assert isinstance(value, list) and all(
            set(f) == {"partitionName", "files"} for f in value
        ), f"{where}: {value!r}"
    else:
        raise AssertionError(f"unknown kind {kind}")
    return value


def read_message(event: hms.NotificationEvent) -> dict[str, object]:
    """The event's message read as its type's JSON message class reads it, each field
    decoded (Thrift JSON into structs); AssertionError when a follower could not read it."""
    schema = SCHEMAS.get(event.eventType)
    assert schema is not None, f"{event.eventType} is not a type HMS writes"
    text = formats.decode(event.message, event.messageFormat)
    body = json.loads(text)
    read: dict[str, object] = {}
    for name, kind in {**_COMMON, **schema}.items():
        where = f"{event.eventType}.{name}"
        assert name in body, f"{where} missing from {sorted(body)}"
        value = body[name]
        if value is None:
            assert not kind.startswith("!"), f"{where} is null"
            read[name] = None
            continue
        read[name] = _is_kind(value, kind.lstrip("!"), where)
    return read


def check_envelope(event: hms.NotificationEvent) -> None:
    """The names followers filter on, as HMS's DbNotificationListener sets them."""
    kind = event.eventType
    if kind in TXN_EVENTS:
        assert event.catName is None, kind
    else:
        assert event.catName == "hive", kind
    if kind in ("OPEN_TXN", "COMMIT_TXN", "ABORT_TXN"):
        assert (event.dbName, event.tableName) == (None, None), kind
    elif kind in DATABASE_EVENTS:
        assert event.dbName and event.tableName is None, kind
    else:
        assert event.dbName and event.tableName, kind


def events_after(conn, last: int, most: int | None = None) -> list[hms.NotificationEvent]:
    return conn.get_next_notification(
        hms.NotificationEventRequest(lastEvent=last, maxEvents=most)
    ).events


def stats(db: str, table: str, part: str | None) -> hms.ColumnStatistics:
    """Statistics of column ``v`` (decimal bounds: binary in Thrift JSON)."""
    data = hms.ColumnStatisticsData(longStats=hms.LongColumnStatsData(
        lowValue=1, highValue=9, numNulls=0, numDVs=3))  # fmt: skip
    desc = hms.ColumnStatisticsDesc(isTblLevel=part is None, dbName=db, tableName=table,
                                    partName=part)  # fmt: skip
    return hms.ColumnStatistics(statsDesc=desc, statsObj=[
        hms.ColumnStatisticsObj(colName="v", colType="int", statsData=data)])  # fmt: skip


def fire(conn, db: str, table: str, **data: object) -> list[int]:
    values = data.pop("partitionVals", None)
    request = hms.FireEventRequest(successful=True, dbName=db, tableName=table,
                                   partitionVals=values, data=hms.FireEventRequestData(**data))
    return conn.fire_listener_event(request).eventIds


def insert_data(files: list[str], values: list[str] | None = None) -> hms.InsertEventRequestData:
    return hms.InsertEventRequestData(replace=False, filesAdded=files, partitionVal=values)


def metadata_changes(conn) -> None:  # noqa: PLR0915 - one change of each kind
    """Databases, tables, partitions, functions, inserts, statistics and constraints."""
    create_db(conn, "ev")
    database = conn.get_database("ev")
    database.parameters = {"team": "data"}
    conn.alter_database("ev", database)
    conn.create_table(make_table("ev", "t", keys=[("ds", "string")]))
    conn.add_partitions([make_partition("ev", "t", ["1"]), make_partition("ev", "t", ["2"])])
    part = conn.get_partition("ev", "t", ["1"])
    part.parameters["k"] = "v"
    conn.alter_partition("ev", "t", part)
    table = conn.get_table("ev", "t")
    table.parameters["k"] = "v"
    conn.alter_table("ev", "t", table)
    conn.create_table(make_table("ev", "flat"))
    fire(conn, "ev", "flat", insertData=insert_data(["file:/w/flat/f0"]))
    fire(conn, "ev", "t", partitionVals=["1"], insertData=hms.InsertEventRequestData(
        filesAdded=["file:/w/t/ds=1/f1"], filesAddedChecksum=["c1"]))  # fmt: skip
    fire(conn, "ev", "t", insertDatas=[insert_data(["a"], ["1"]), insert_data(["b"], ["2"])])
    fire(conn, "ev", "t", partitionVals=["2"], refreshEvent=True)
    conn.update_table_column_statistics(stats("ev", "t", None))
    conn.update_partition_column_statistics(stats("ev", "t", "ds=1"))
    conn.delete_partition_column_statistics("ev", "t", "ds=1", "v", None)
    conn.delete_table_column_statistics("ev", "t", "v", None)
    conn.create_function(hms.Function(
        functionName="f", dbName="ev", className="com.example.F", ownerName="o",
        ownerType=hms.PrincipalType.USER, functionType=hms.FunctionType.JAVA, resourceUris=[],
    ))  # fmt: skip
    conn.drop_function("ev", "f")
    conn.create_table_with_constraints(
        make_table("ev", "keyed", columns=[("id", "int"), ("v", "int")]),
        [hms.SQLPrimaryKey(table_db="ev", table_name="keyed", column_name="id", key_seq=1,
                           pk_name="pk_keyed")], [])  # fmt: skip
    child = make_table("ev", "child", columns=[("ref", "int"), ("n", "string"), ("m", "int")])
    conn.create_table(child)
    conn.add_foreign_key(hms.AddForeignKeyRequest(foreignKeyCols=[hms.SQLForeignKey(
        pktable_db="ev", pktable_name="keyed", pkcolumn_name="id", fktable_db="ev",
        fktable_name="child", fkcolumn_name="ref", key_seq=1, fk_name="fk_child")]))  # fmt: skip
    conn.add_unique_constraint(hms.AddUniqueConstraintRequest(uniqueConstraintCols=[
        hms.SQLUniqueConstraint(table_db="ev", table_name="child", column_name="n", key_seq=1,
                                uk_name="uk_n")]))  # fmt: skip
    conn.add_not_null_constraint(hms.AddNotNullConstraintRequest(notNullConstraintCols=[
        hms.SQLNotNullConstraint(table_db="ev", table_name="child", column_name="n",
                                 nn_name="nn_n")]))  # fmt: skip
    conn.add_default_constraint(hms.AddDefaultConstraintRequest(defaultConstraintCols=[
        hms.SQLDefaultConstraint(table_db="ev", table_name="child", column_name="m",
                                 default_value="0", dc_name="dc_m")]))  # fmt: skip
    conn.add_check_constraint(hms.AddCheckConstraintRequest(checkConstraintCols=[
        hms.SQLCheckConstraint(table_db="ev", table_name="child", column_name="m",
                               check_expression="m > 0", dc_name="cc_m")]))  # fmt: skip
    conn.drop_constraint(hms.DropConstraintRequest(dbname="ev", tablename="child",
                                                   constraintname="uk_n"))  # fmt: skip
    conn.truncate_table("ev", "flat", None)
    conn.truncate_table("ev", "t", ["ds=2"])


def transactions(conn) -> int:
    """Transactions writing a table and a partition, an abort, and a compactor's commit; the
    id of the writing transaction."""
    (txnid, other) = conn.open_txns(hms.OpenTxnRequest(num_txns=2, user="u", hostname="h")).txn_ids
    (allocated,) = conn.allocate_table_write_ids(hms.AllocateTableWriteIdsRequest(
        dbName="ev", tableName="t", txnIds=[txnid])).txnToWriteIds  # fmt: skip
    for values, files in ((["1"], ["p1"]), (None, ["t1"])):
        conn.add_write_notification_log(hms.WriteNotificationLogRequest(
            txnId=txnid, writeId=allocated.writeId, db="ev", table="t", partitionVals=values,
            fileInfo=hms.InsertEventRequestData(filesAdded=files)))  # fmt: skip
    conn.commit_txn(hms.CommitTxnRequest(txnid=txnid))
    conn.abort_txn(hms.AbortTxnRequest(txnid=other))
    conn.compact2(hms.CompactionRequest(dbname="ev", tablename="t", partitionname="ds=1",
                                        type=hms.CompactionType.MINOR, poolName="evpool"))
    ci = conn.find_next_compact2(hms.FindNextCompactRequest(
        workerId="w", workerVersion="4.0.1", poolName="evpool")).ci  # fmt: skip
    (compactor,) = conn.open_txns(hms.OpenTxnRequest(
        num_txns=1, user="u", hostname="h", txn_type=hms.TxnType.COMPACTION)).txn_ids
    conn.update_compactor_state(ci, compactor)
    conn.mark_compacted(ci)
    conn.commit_txn(hms.CommitTxnRequest(txnid=compactor))
    return txnid


def drops(conn) -> None:
    conn.drop_partition("ev", "t", ["2"], True)
    for table in ("child", "keyed", "flat", "t"):
        conn.drop_table("ev", table, True)
    conn.drop_database("ev", True, True)


def test_every_event_type_as_followers_read_it(start_server) -> None:
    conn = start_server().client()
    start = conn.get_current_notificationEventId().eventId
    metadata_changes(conn)
    transactions(conn)
    drops(conn)
    events = events_after(conn, start)
    assert [e.eventId for e in events] == list(range(start + 1, start + 1 + len(events)))
    assert {e.eventType for e in events} == set(SCHEMAS)  # every type HMS 3/4 write
    read = []
    for event in events:
        assert event.messageFormat == "json-0.2"
        check_envelope(event)
        read.append((event, read_message(event)))
    types = [e.eventType for e in events]
    # A table created with keys: its CREATE_TABLE, then its ADD_PRIMARYKEY (HMS's order).
    keyed = types.index("ADD_PRIMARYKEY")
    assert types[keyed - 1] == "CREATE_TABLE" and events[keyed - 1].tableName == "keyed"
    by_type: dict[str, list[dict]] = {}
    for event, message in read:
        by_type.setdefault(event.eventType, []).append(message)
    check_objects(by_type)


def check_objects(by_type: dict[str, list[dict]]) -> None:  # noqa: PLR0915
    """What the decoded objects say (the structs the followers build from them)."""
    assert by_type["CREATE_DATABASE"][0]["dbJson"].name == "ev"
    assert by_type["ALTER_DATABASE"][0]["dbObjAfterJson"].parameters == {"team": "data"}
    assert by_type["DROP_DATABASE"][0]["dbJson"].name == "ev"
    created = by_type["CREATE_TABLE"][0]["tableObjJson"]
    assert (created.dbName, created.tableName) == ("ev", "t")
    assert [k.name for k in created.partitionKeys] == ["ds"]
    added = by_type["ADD_PARTITION"][0]
    assert [p.values for p in added["partitionListJson"]] == [["1"], ["2"]]
    assert {p.dbName for p in added["partitionListJson"]} == {"ev"}
    altered = by_type["ALTER_PARTITION"][0]
    assert altered["partitionObjAfterJson"].parameters["k"] == "v"
    assert altered["isTruncateOp"] == "false" and altered["keyValues"] == {"ds": "1"}
    truncated_partition = by_type["ALTER_PARTITION"][-1]
    assert truncated_partition["isTruncateOp"] == "true"
    assert truncated_partition["partitionObjAfterJson"].values == ["2"]
    alters = by_type["ALTER_TABLE"]
    assert alters[0]["tableObjAfterJson"].parameters["k"] == "v"
    assert alters[0]["isTruncateOp"] == "false"
    assert [a["isTruncateOp"] for a in alters if a["table"] == "flat"] == ["true"]
    flat, part, first, second = by_type["INSERT"]
    assert flat["ptnObjJson"] is None and flat["tableObjJson"].tableName == "flat"
    assert flat["replace"] == "false" and flat["files"] == ["file:/w/flat/f0"]
    assert part["ptnObjJson"].values == ["1"] and part["partKeyVals"] == {"ds": "1"}
    assert part["replace"] == "true" and part["files"] == ["file:/w/t/ds=1/f1#c1"]
    assert [first["ptnObjJson"].values, second["ptnObjJson"].values] == [["1"], ["2"]]
    reload = by_type["RELOAD"][0]
    assert reload["refreshEvent"] == "true" and reload["ptnObjJson"].values == ["2"]
    table_stats = by_type["UPDATE_TBL_COL_STAT_EVENT"][0]["colStatsJson"]
    assert table_stats.statsDesc.isTblLevel and table_stats.statsObj[0].colName == "v"
    part_stats = by_type["UPDATE_PART_COL_STAT_EVENT"][0]
    assert part_stats["partVals"] == ["1"] and part_stats["parameters"]["k"] == "v"
    assert part_stats["colStatsJson"].statsDesc.partName == "ds=1"
    deleted = by_type["DELETE_PART_COL_STAT_EVENT"][0]
    assert (deleted["partName"], deleted["partValues"], deleted["colName"]) == (
        "ds=1", ["1"], "v")  # fmt: skip
    assert by_type["DELETE_TBL_COL_STAT_EVENT"][0]["colName"] == "v"
    assert by_type["CREATE_FUNCTION"][0]["functionObjJson"].className == "com.example.F"
    (key,) = by_type["ADD_PRIMARYKEY"][0]["primaryKeyListJson"]
    assert (key.table_name, key.column_name, key.pk_name) == ("keyed", "id", "pk_keyed")
    (foreign,) = by_type["ADD_FOREIGNKEY"][0]["foreignKeyListJson"]
    assert (foreign.fktable_name, foreign.pktable_name) == ("child", "keyed")
    (check,) = by_type["ADD_CHECKCONSTRAINT"][0]["checkConstraintListJson"]
    assert check.check_expression == "m > 0"
    assert by_type["DROP_CONSTRAINT"][0]["constraintName"] == "uk_n"
    check_transaction_messages(by_type)


def check_transaction_messages(by_type: dict[str, list[dict]]) -> None:
    opened = by_type["OPEN_TXN"][0]
    assert opened["txnIds"] == list(range(opened["fromTxnId"], opened["toTxnId"] + 1))
    alloc = by_type["ALLOC_WRITE_ID_EVENT"][0]
    assert len(alloc["txnIdList"]) == len(alloc["writeIdList"]) == 1
    part_write, table_write = by_type["ACID_WRITE_EVENT"]
    assert part_write["partition"] == "ds=1" and part_write["partitionObjJson"].values == ["1"]
    assert table_write["partition"] is None and table_write["partitionObjJson"] is None
    assert table_write["tableObjJson"].tableName == "t"
    commits = by_type["COMMIT_TXN"]
    assert all(commit[name] is None for commit in commits for name in _LISTS)
    compaction = by_type["COMMIT_COMPACTION_EVENT"][0]
    assert (compaction["type"], compaction["dbname"], compaction["tableName"],
            compaction["partName"]) == ("MINOR", "ev", "t", "ds=1")  # fmt: skip
    assert compaction["txnid"] == commits[-1]["txnid"]  # right after its COMMIT_TXN


def test_impala_follows_a_transaction_through_its_write_events(start_server) -> None:
    """Impala's catalogd: the current id, then pages of events from the last one seen (ids
    contiguous); on COMMIT_TXN, what the transaction wrote from ``get_all_write_event_info``
    appended to the message's lists (``addWriteEventInfo``), the table and partition objects
    decoded from them."""
    conn = start_server().client()
    create_db(conn, "ev")
    conn.create_table(make_table("ev", "t", keys=[("ds", "string")]))
    conn.add_partitions([make_partition("ev", "t", ["1"])])
    last = conn.get_current_notificationEventId().eventId
    txnid = transactions(conn)
    seen: list[hms.NotificationEvent] = []
    while page := events_after(conn, last, 3):
        assert [e.eventId for e in page] == list(range(last + 1, last + 1 + len(page)))
        seen.extend(page)
        last = page[-1].eventId
    assert last == conn.get_current_notificationEventId().eventId
    (commit,) = [e for e in seen if e.eventType == "COMMIT_TXN"
                 and read_message(e)["txnid"] == txnid]  # fmt: skip
    message = json.loads(commit.message)
    infos = conn.get_all_write_event_info(hms.GetAllWriteEventInfoRequest(txnId=txnid))
    for info in infos:  # JSONCommitTxnMessage.addWriteEventInfo
        for name, value in (("databases", info.database), ("tables", info.table),
                            ("writeIds", info.writeId), ("partitions", info.partition),
                            ("tableObjs", info.tableObj), ("partitionObjs", info.partitionObj),
                            ("files", info.files)):  # fmt: skip
            message[name] = (message[name] or []) + [value]
    assert len(message["writeIds"]) == 2
    for i, write_id in enumerate(message["writeIds"]):
        table = decode(message["tableObjs"][i], hms.Table)
        assert (table.dbName, table.tableName) == ("ev", "t")
        assert [k.name for k in table.partitionKeys] == ["ds"]
        assert write_id == infos[0].writeId
    objects = dict(zip(message["partitions"], message["partitionObjs"], strict=True))
    assert objects[None] is None  # the table-level write
    assert decode(objects["ds=1"], hms.Partition).values == ["1"]
    files = dict(zip(message["partitions"], message["files"], strict=True))
    assert files == {"ds=1": "p1", None: "t1"}


def test_write_event_info_objects_and_filters(start_server) -> None:
    conn = start_server().client()
    create_db(conn, "ev")
    conn.create_table(make_table("ev", "t", keys=[("ds", "string")]))
    conn.add_partitions([make_partition("ev", "t", ["1"])])
    txnid = transactions(conn)
    unknown = hms.GetAllWriteEventInfoRequest(txnId=txnid + 1000)
    assert conn.get_all_write_event_info(unknown) == []
    for db, table in (("*", "*"), ("EV", "T"), (None, None)):
        request = hms.GetAllWriteEventInfoRequest(txnId=txnid, dbName=db, tableName=table)
        infos = {i.partition: i for i in conn.get_all_write_event_info(request)}
        assert {name: i.files for name, i in infos.items()} == {"ds=1": "p1", None: "t1"}
        assert all(decode(i.tableObj, hms.Table).tableName == "t" for i in infos.values())
        assert decode(infos["ds=1"].partitionObj, hms.Partition).values == ["1"]
        assert infos[None].partitionObj is None
    other = hms.GetAllWriteEventInfoRequest(txnId=txnid, dbName="ev", tableName="nope")
    assert conn.get_all_write_event_info(other) == []


def test_gzip_messages_for_the_readers_that_ask(start_server) -> None:
    """``--event-messages gzip``: HMS's GzipJSONMessageEncoder format (the JSON, gzipped,
    Base64), for events rendered when read too; ``json`` (the default) plain."""
    conn = start_server(event_messages="gzip").client()
    create_db(conn, "ev")
    conn.create_table(make_table("ev", "t", keys=[("ds", "string")]))
    conn.add_partitions([make_partition("ev", "t", ["1"])])
    events = events_after(conn, 0)
    assert [e.eventType for e in events] == ["CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION"]
    for event in events:
        assert event.messageFormat == "gzip(json-2.0)"
        assert not event.message.startswith("{")
        read_message(event)
    factory = conn.get_config_value("hive.metastore.event.message.factory", "")
    assert factory.endswith("gzip.GzipJSONMessageEncoder")
    plain = start_server().client()
    assert plain.get_config_value("hive.metastore.event.message.factory", "").endswith(
        "json.JSONMessageEncoder")  # fmt: skip
