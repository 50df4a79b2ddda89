"""The notification events of HMS 2.3's DbNotificationListener: event types and the JSON
messages (format ``json-0.2``) that Hive's ``JSONMessageDeserializer``, Hive replication and
Impala read; and HMS 3/4's transaction events (OPEN_TXN, COMMIT_TXN, ABORT_TXN,
ALLOC_WRITE_ID, ACID_WRITE) with the fields of HMS's JSON message classes, and catalog and data
connector events (which HMS's listener does not record). Pure: builds events from Thrift objects
and values; ``log.py`` stores them.

Every message carries ``server`` and ``servicePrincipal`` (empty: no Kerberos) and a
``timestamp`` in seconds, and DDL messages a ``db``; objects travel as Thrift-JSON text
(``thrift_json``). File lists of DDL events (``files``, ``partitionFiles``) are empty: this
server does not list data files; ACID_WRITE and COMMIT_TXN list the files clients reported.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metastore_server.catalog.basics.serde import from_bytes, to_bytes
from metastore_server.catalog.events.thrift_json import to_json
from metastore_server.thrift_api import hms

MESSAGE_FORMAT = "json-0.2"
#: Largest payload an ADD_PARTITION event is given before its partitions are split over more
#: (its rendered message is about twice as long).
MAX_MESSAGE_BYTES = 1 << 20
#: The time of a change, first in the payload of the events that keep it (seconds).
_TIME = struct.Struct("!q")

CREATE_DATABASE = "CREATE_DATABASE"
DROP_DATABASE = "DROP_DATABASE"
CREATE_TABLE = "CREATE_TABLE"
ALTER_TABLE = "ALTER_TABLE"
DROP_TABLE = "DROP_TABLE"
ADD_PARTITION = "ADD_PARTITION"
ALTER_PARTITION = "ALTER_PARTITION"
DROP_PARTITION = "DROP_PARTITION"
CREATE_FUNCTION = "CREATE_FUNCTION"
DROP_FUNCTION = "DROP_FUNCTION"
INSERT = "INSERT"
CREATE_INDEX = "CREATE_INDEX"
DROP_INDEX = "DROP_INDEX"
ALTER_INDEX = "ALTER_INDEX"


@dataclass(frozen=True)
class Event:
    """An event before the log numbers it. ``payload``: what the message is rendered from when
    it is read, kept instead of the message where building it would slow the change down
    (``added_partitions``); the message is then empty until :func:`render`."""

    event_type: str
    db: str | None
    table: str | None
    message: str
    payload: bytes | None = None

    def to_thrift(self, event_id: int, event_time: int) -> hms.NotificationEvent:
        """The event as clients receive it."""
        return hms.NotificationEvent(
            eventId=event_id,
            eventTime=event_time,
            eventType=self.event_type,
            dbName=self.db,
            tableName=self.table,
            message=self.message,
            messageFormat=MESSAGE_FORMAT,
            catName="hive",
        )


def _message(db: str | None, now: int, **fields: Any) -> str:
    body: dict[str, Any] = {"server": "", "servicePrincipal": "", "db": db}
    body.update(fields)
    body.setdefault("timestamp", now)
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def key_values(table: hms.Table, values: Sequence[str]) -> dict[str, str]:
    """Partition key name -> value of one partition of ``table``."""
    keys = [key.name for key in table.partitionKeys or []]
    return dict(zip(keys, values, strict=False))


def create_database(database: hms.Database, now: int) -> Event:
    return Event(CREATE_DATABASE, database.name, None, _message(database.name, now))


def drop_database(database: hms.Database, now: int) -> Event:
    return Event(DROP_DATABASE, database.name, None, _message(database.name, now))


def create_table(table: hms.Table, now: int) -> Event:
    """Rendered when read (:func:`render`): the change pays an encoding of the table, not its
    JSON."""
    payload = _frame(_TIME.pack(now)) + _frame(to_bytes(table))
    return Event(CREATE_TABLE, table.dbName, table.tableName, "", payload)


def alter_table(before: hms.Table, after: hms.Table, now: int) -> Event:
    """HMS records the event under the table's name after the change (a rename's new name);
    its message names the table as it was before. Rendered when read, as ``create_table``."""
    payload = _frame(_TIME.pack(now)) + _frame(to_bytes(before)) + _frame(to_bytes(after))
    return Event(ALTER_TABLE, after.dbName, after.tableName, "", payload)


def _table_message(event_type: str, payload: bytes) -> str:
    """The message of a CREATE_TABLE or ALTER_TABLE event from its payload."""
    pieces = _unframe(payload)
    (now,) = _TIME.unpack(next(pieces))
    first = from_bytes(hms.Table, next(pieces))
    if event_type == CREATE_TABLE:
        return _message(first.dbName, now, table=first.tableName, tableObjJson=to_json(first),
                        timestamp=now, files=[])  # fmt: skip
    after = from_bytes(hms.Table, next(pieces))
    return _message(
        first.dbName, now, table=first.tableName,
        tableObjBeforeJson=to_json(first), tableObjAfterJson=to_json(after),
    )  # fmt: skip


def drop_table(table: hms.Table, now: int) -> Event:
    return Event(DROP_TABLE, table.dbName, table.tableName,
                 _message(table.dbName, now, table=table.tableName))  # fmt: skip


def added_partitions(table: hms.Table, stored: Iterable[bytes]) -> Iterator[Event]:
    """The ADD_PARTITION events of partitions added at once, from their stored bytes (Thrift
    binary without database and table names): the JSON message is rendered when the event is
    read (:func:`render`), so adding partitions pays a byte copy per partition, not an encoding.
    One event (as HMS) unless the payload would pass ``MAX_MESSAGE_BYTES``, then as many as keep
    each below it (an HBase cell holds 10 MB at most by default)."""
    head = _frame(to_bytes(table))
    chunk: list[bytes] = [head]
    size = len(head)
    for data in stored:
        framed = _frame(data)
        if len(chunk) > 1 and size + len(framed) > MAX_MESSAGE_BYTES:
            yield Event(ADD_PARTITION, table.dbName, table.tableName, "", b"".join(chunk))
            chunk, size = [head], len(head)
        chunk.append(framed)
        size += len(framed)
    if len(chunk) > 1:
        yield Event(ADD_PARTITION, table.dbName, table.tableName, "", b"".join(chunk))


def _frame(data: bytes) -> bytes:
    return struct.pack("!I", len(data)) + data


def _unframe(payload: bytes) -> Iterator[bytes]:
    at = 0
    while at < len(payload):
        (size,) = struct.unpack_from("!I", payload, at)
        yield payload[at + 4 : at + 4 + size]
        at += 4 + size


def render(event_type: str, payload: bytes, timestamp: int) -> str:
    """The JSON message of an event stored as a payload (see :func:`added_partitions`,
    :func:`create_table`, :func:`alter_table`; these keep the time of their change)."""
    if event_type in (CREATE_TABLE, ALTER_TABLE):
        return _table_message(event_type, payload)
    if event_type != ADD_PARTITION:
        raise ValueError(f"no payload rendering for {event_type}")
    pieces = _unframe(payload)
    table = from_bytes(hms.Table, next(pieces))
    parts = []
    for data in pieces:
        part = from_bytes(hms.Partition, data)
        part.dbName, part.tableName = table.dbName, table.tableName
        parts.append(part)
    return _message(
        table.dbName, timestamp, table=table.tableName, tableObjJson=to_json(table),
        timestamp=timestamp, partitions=[key_values(table, p.values or []) for p in parts],
        partitionListJson=[to_json(p) for p in parts], partitionFiles=[],
    )  # fmt: skip


def alter_partition(
    table: hms.Table, before: hms.Partition, after: hms.Partition, now: int
) -> Event:
    message = _message(
        table.dbName, now, table=table.tableName, tableObjJson=to_json(table), timestamp=now,
        keyValues=key_values(table, before.values or []),
        partitionObjBeforeJson=to_json(before), partitionObjAfterJson=to_json(after),
    )  # fmt: skip
    return Event(ALTER_PARTITION, table.dbName, table.tableName, message)


def drop_partition(table: hms.Table, partitions: Iterable[hms.Partition], now: int) -> Event:
    message = _message(
        table.dbName, now, table=table.tableName, tableObjJson=to_json(table), timestamp=now,
        partitions=[key_values(table, p.values or []) for p in partitions],
    )  # fmt: skip
    return Event(DROP_PARTITION, table.dbName, table.tableName, message)


def create_function(function: hms.Function, now: int) -> Event:
    message = _message(function.dbName, now, functionObjJson=to_json(function))
    return Event(CREATE_FUNCTION, function.dbName, None, message)


def drop_function(function: hms.Function, now: int) -> Event:
    message = _message(function.dbName, now, functionName=function.functionName)
    return Event(DROP_FUNCTION, function.dbName, None, message)


def insert(
    db: str, table: str, part_key_values: Mapping[str, str] | None, files: Iterable[str], now: int
) -> Event:
    """``files`` as HMS lists them: each file's URI, ``#checksum`` appended when known."""
    message = _message(db, now, table=table, timestamp=now, files=list(files),
                       partKeyVals=dict(part_key_values) if part_key_values else None)  # fmt: skip
    return Event(INSERT, db, table, message)


def create_index(index: hms.Index, now: int) -> Event:
    message = _message(index.dbName, now, indexObjJson=to_json(index))
    return Event(CREATE_INDEX, index.dbName, index.origTableName, message)


def drop_index(index: hms.Index, now: int) -> Event:
    message = _message(index.dbName, now, indexName=index.indexName,
                       origTableName=index.origTableName,
                       indexTableName=index.indexTableName)  # fmt: skip
    return Event(DROP_INDEX, index.dbName, index.origTableName, message)


def alter_index(before: hms.Index, after: hms.Index, now: int) -> Event:
    message = _message(before.dbName, now, beforeIndexObjJson=to_json(before),
                       afterIndexObjJson=to_json(after))  # fmt: skip
    return Event(ALTER_INDEX, before.dbName, before.origTableName, message)


# -- HMS 3/4's transaction, catalog and data connector events ---------------------------------

OPEN_TXN = "OPEN_TXN"
COMMIT_TXN = "COMMIT_TXN"
ABORT_TXN = "ABORT_TXN"
ALLOC_WRITE_ID = "ALLOC_WRITE_ID"
ACID_WRITE = "ACID_WRITE"
CREATE_CATALOG = "CREATE_CATALOG"
ALTER_CATALOG = "ALTER_CATALOG"
DROP_CATALOG = "DROP_CATALOG"
CREATE_DATACONNECTOR = "CREATE_DATACONNECTOR"
ALTER_DATACONNECTOR = "ALTER_DATACONNECTOR"
DROP_DATACONNECTOR = "DROP_DATACONNECTOR"


def _bare(now: int, **fields: Any) -> str:
    """A message of HMS 3+ that names no database (no ``db`` field): transactions, catalogs."""
    body: dict[str, Any] = {"server": "", "servicePrincipal": "", **fields, "timestamp": now}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def open_txns(txn_ids: Sequence[int], now: int) -> Event:
    """One OPEN_TXN for transactions opened at once: HMS 4's ``fromTxnId``/``toTxnId`` and
    HMS 3's ``txnIds`` both (each reader takes the fields it knows)."""
    message = _bare(now, txnIds=list(txn_ids), fromTxnId=txn_ids[0], toTxnId=txn_ids[-1])
    return Event(OPEN_TXN, None, None, message)


def commit_txn(txnid: int, written: Sequence[Mapping[str, Any]], now: int) -> Event:
    """COMMIT_TXN; with HMS 4's lists of what the transaction wrote (one entry per write
    notification: write id, database, table, partition, files comma-joined) when it wrote."""
    lists: dict[str, Any] = {}
    if written:
        lists = {
            "writeIds": [w["writeId"] for w in written],
            "databases": [w["db"] for w in written],
            "tables": [w["table"] for w in written],
            "partitions": [w["partition"] for w in written],
            "files": [",".join(w["files"]) for w in written],
        }
    return Event(COMMIT_TXN, None, None, _bare(now, txnid=txnid, **lists))


def abort_txn(txnid: int, dbs_updated: Sequence[str], now: int) -> Event:
    """ABORT_TXN with HMS 4's ``dbsUpdated`` (the databases the transaction wrote)."""
    return Event(ABORT_TXN, None, None, _bare(now, txnid=txnid, dbsUpdated=list(dbs_updated)))


def alloc_write_id(db: str, table: str, allocated: Sequence[tuple[int, int]], now: int) -> Event:
    """ALLOC_WRITE_ID of the write ids newly allocated in a table ((txn id, write id) pairs)."""
    message = _bare(now, dbName=db, tableName=table, txnIdList=[t for t, _ in allocated],
                    writeIdList=[w for _, w in allocated])  # fmt: skip
    return Event(ALLOC_WRITE_ID, db, table, message)


def acid_write(
    txnid: int,
    write_id: int,
    db: str,
    table: str,
    partition: str | None,
    table_obj: hms.Table | None,
    files: Iterable[str],
    now: int,
) -> Event:
    """ACID_WRITE of one write notification; ``partitionObjJson`` is left null."""
    message = _bare(
        now, txnid=txnid, writeId=write_id, database=db, table=table, partition=partition,
        tableObjJson=to_json(table_obj) if table_obj is not None else None,
        partitionObjJson=None, files=list(files),
    )  # fmt: skip
    return Event(ACID_WRITE, db, table, message)


def create_catalog(catalog: hms.Catalog, now: int) -> Event:
    return Event(CREATE_CATALOG, None, None, _bare(now, catalog=catalog.name))


def alter_catalog(before: hms.Catalog, after: hms.Catalog, now: int) -> Event:
    message = _bare(now, catObjBeforeJson=to_json(before), catObjAfterJson=to_json(after))
    return Event(ALTER_CATALOG, None, None, message)


def drop_catalog(catalog: hms.Catalog, now: int) -> Event:
    return Event(DROP_CATALOG, None, None, _bare(now, catalog=catalog.name))


def create_connector(connector: hms.DataConnector, now: int) -> Event:
    """HMS defines no message for data connector events: ours, shaped as the catalogs'."""
    message = _bare(now, connector=connector.name, connectorObjJson=to_json(connector))
    return Event(CREATE_DATACONNECTOR, None, None, message)


def alter_connector(before: hms.DataConnector, after: hms.DataConnector, now: int) -> Event:
    message = _bare(now, connector=after.name, connectorObjBeforeJson=to_json(before),
                    connectorObjAfterJson=to_json(after))  # fmt: skip
    return Event(ALTER_DATACONNECTOR, None, None, message)


def drop_connector(connector: hms.DataConnector, now: int) -> Event:
    return Event(DROP_DATACONNECTOR, None, None, _bare(now, connector=connector.name))
