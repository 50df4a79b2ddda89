"""The notification events of HMS 2.3's DbNotificationListener: event types and the JSON
messages (format ``json-0.2``) that Hive's ``JSONMessageDeserializer``, Hive replication and
Impala read. Pure: builds events from Thrift objects; ``notifications.py`` stores them.

Every message carries ``server`` and ``servicePrincipal`` (empty: no Kerberos), ``db`` and a
``timestamp`` in seconds; objects travel as Thrift-JSON text (``thrift_json``). File lists
(``files``, ``partitionFiles``) are empty: this server does not list data files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metastore_server.catalog.thrift_json import to_json
from metastore_server.thrift_api import hms

MESSAGE_FORMAT = "json-0.2"
#: Largest message an ADD_PARTITION event is given before its partitions are split over more.
MAX_MESSAGE_BYTES = 1 << 20

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
    """An event before the log numbers it."""

    event_type: str
    db: str | None
    table: str | None
    message: str

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
    message = _message(table.dbName, now, table=table.tableName, tableObjJson=to_json(table),
                       timestamp=now, files=[])  # fmt: skip
    return Event(CREATE_TABLE, table.dbName, table.tableName, message)


def alter_table(before: hms.Table, after: hms.Table, now: int) -> Event:
    """HMS names the table by its name before the change (a rename's old name)."""
    message = _message(
        before.dbName, now, table=before.tableName,
        tableObjBeforeJson=to_json(before), tableObjAfterJson=to_json(after),
    )  # fmt: skip
    return Event(ALTER_TABLE, before.dbName, before.tableName, message)


def drop_table(table: hms.Table, now: int) -> Event:
    return Event(DROP_TABLE, table.dbName, table.tableName,
                 _message(table.dbName, now, table=table.tableName))  # fmt: skip


def add_partition(
    table: hms.Table, partitions: Iterable[hms.Partition], now: int
) -> Iterator[Event]:
    """The ADD_PARTITION events of partitions added at once, built as they are taken: one (as
    HMS) unless their messages would pass ``MAX_MESSAGE_BYTES``, then as many as keep each below
    it (an HBase cell holds 10 MB at most by default)."""
    table_json = to_json(table)
    values: list[dict[str, str]] = []
    objects: list[str] = []
    size = len(table_json)
    for part in partitions:
        text = to_json(part)
        if objects and size + len(text) > MAX_MESSAGE_BYTES:
            yield _added(table, table_json, values, objects, now)
            values, objects, size = [], [], len(table_json)
        values.append(key_values(table, part.values or []))
        objects.append(text)
        size += len(text)
    if objects:
        yield _added(table, table_json, values, objects, now)


def _added(
    table: hms.Table, table_json: str, values: list[dict[str, str]], objects: list[str], now: int
) -> Event:
    message = _message(
        table.dbName, now, table=table.tableName, tableObjJson=table_json, timestamp=now,
        partitions=values, partitionListJson=objects, partitionFiles=[],
    )  # fmt: skip
    return Event(ADD_PARTITION, table.dbName, table.tableName, message)


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
