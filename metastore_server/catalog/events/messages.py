"""The notification events of metadata changes as HMS 3/4's DbNotificationListener writes them:
event types, ``NotificationEvent`` names and the JSON messages of HMS's ``JSON*Message``
classes (what Hive's ``JSONMessageDeserializer``, Hive replication, Impala, StarRocks and Doris
read), each a superset of HMS 2.3's message of the same type (2.3's reader ignores the fields it
does not know; INSERT keeps 2.3's ``partKeyVals``). Pure: builds events from Thrift objects;
``log.py`` stores them. Transaction, statistics and constraint events: ``txn_messages``,
``table_messages``.

Every message carries ``server`` and ``servicePrincipal`` (empty: no Kerberos) and a
``timestamp`` in seconds; booleans are the strings ``"true"``/``"false"`` and objects the text
of their Thrift JSON protocol encoding (``*Json`` fields, ``thrift_json``), as HMS writes them.
File lists of DDL events (``files``, ``partitionFiles``) are empty: this server does not list
data files.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from metastore_server.catalog.events import formats
from metastore_server.storage import deflating
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, from_bytes_into, shallow_copy, to_bytes
from metastore_server.wire.thrift_json import to_json

T = TypeVar("T")

#: The catalog of objects that name none (rows written before catalogs).
DEFAULT_CATALOG = "hive"
#: Largest payload an ADD_PARTITION event is given before its partitions are split over more
#: (its rendered message is about twice as long).
MAX_MESSAGE_BYTES = 1 << 20
#: The time of a change, first in the payload of the events that keep it (seconds).
_TIME = struct.Struct("!q")
#: The last frame of an ALTER_TABLE payload of a truncation (``isTruncateOp``).
_TRUNCATE = b"T"
#: The first byte of a deflated payload (a payload's first frame is far shorter than 4 GiB).
_DEFLATED = b"\xff"

CREATE_DATABASE = "CREATE_DATABASE"
ALTER_DATABASE = "ALTER_DATABASE"
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
RELOAD = "RELOAD"
CREATE_INDEX = "CREATE_INDEX"
DROP_INDEX = "DROP_INDEX"
ALTER_INDEX = "ALTER_INDEX"


@dataclass(frozen=True)
class Event:
    """An event before the log numbers it. ``payload``: what the message is rendered from when
    it is read, kept instead of the message where building it would slow the change down
    (``added_partitions``, ``alter_partition``); the message is then empty until
    :func:`render`. ``cat``: the catalog HMS records it under (None for the transaction events
    HMS writes without one)."""

    event_type: str
    db: str | None
    table: str | None
    message: str
    payload: bytes | None = None
    cat: str | None = DEFAULT_CATALOG

    def to_thrift(
        self, event_id: int, event_time: int, message_format: str = formats.JSON
    ) -> hms.NotificationEvent:
        """The event as clients receive it, its message in ``message_format``."""
        message = formats.encode(self.message, message_format) if self.payload is None else ""
        return hms.NotificationEvent(
            eventId=event_id,
            eventTime=event_time,
            eventType=self.event_type,
            dbName=self.db,
            tableName=self.table,
            message=message,
            messageFormat=message_format,
            catName=self.cat,
        )


def body(now: int, **fields: Any) -> str:
    """A message's JSON: ``server`` and ``servicePrincipal``, ``fields`` (None as null, as
    Jackson writes it) and the ``timestamp`` (seconds) unless ``fields`` place it."""
    message: dict[str, Any] = {"server": "", "servicePrincipal": "", **fields}
    message.setdefault("timestamp", now)
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def flag(value: bool) -> str:
    """A boolean as HMS's messages carry it (``Boolean.toString``)."""
    return "true" if value else "false"


def catalog_of(obj: Any) -> str:
    """The catalog of a table, partition, function or statistics (``catName``)."""
    return getattr(obj, "catName", None) or DEFAULT_CATALOG


def table_fields(table: hms.Table) -> dict[str, Any]:
    """The fields naming a table in HMS's table messages: db, table, type and the table."""
    return {"db": table.dbName, "table": table.tableName, "tableType": table.tableType,
            "tableObjJson": to_json(table)}  # fmt: skip


def key_values(table: hms.Table, values: Sequence[str]) -> dict[str, str]:
    """Partition key name -> value of one partition of ``table`` (HMS's keys in order)."""
    keys = [key.name for key in table.partitionKeys or []]
    return dict(zip(keys, values, strict=False))


def _partition_of(table: hms.Table, partition: hms.Partition) -> hms.Partition:
    """``partition`` naming its database and table (stored partitions leave them out)."""
    if partition.dbName and partition.tableName:
        return partition
    named = shallow_copy(partition)
    named.dbName, named.tableName = table.dbName, table.tableName
    return named


# -- databases --------------------------------------------------------------------------------


def _database_event(event_type: str, database: hms.Database, now: int) -> Event:
    cat = database.catalogName or DEFAULT_CATALOG
    message = body(now, cat=cat, db=database.name, dbJson=to_json(database))
    return Event(event_type, database.name, None, message, cat=cat)


def create_database(database: hms.Database, now: int) -> Event:
    return _database_event(CREATE_DATABASE, database, now)


def drop_database(database: hms.Database, now: int) -> Event:
    return _database_event(DROP_DATABASE, database, now)


def alter_database(before: hms.Database, after: hms.Database, now: int) -> Event:
    """ALTER_DATABASE (HMS 3+; no ``cat`` field), recorded under the name before."""
    message = body(now, db=before.name, dbObjBeforeJson=to_json(before),
                   dbObjAfterJson=to_json(after))  # fmt: skip
    return Event(ALTER_DATABASE, before.name, None, message,
                 cat=before.catalogName or DEFAULT_CATALOG)  # fmt: skip


# -- tables -----------------------------------------------------------------------------------


def create_table(table: hms.Table, now: int) -> Event:
    """Rendered when read (:func:`render`): the change pays an encoding of the table, not its
    JSON."""
    payload = _frame(_TIME.pack(now)) + _frame(to_bytes(table))
    return Event(CREATE_TABLE, table.dbName, table.tableName, "", payload, catalog_of(table))


def alter_table(before: hms.Table, after: hms.Table, now: int, *, truncate: bool = False) -> Event:
    """HMS records the event under the table's name after the change (a rename's new name);
    its message names the table as it was before. Rendered when read, as ``create_table``;
    ``truncate``: a truncation's (``isTruncateOp``)."""
    payload = _frame(_TIME.pack(now)) + _frame(to_bytes(before)) + _frame(to_bytes(after))
    if truncate:
        payload += _frame(_TRUNCATE)
    return Event(ALTER_TABLE, after.dbName, after.tableName, "", payload, catalog_of(after))


def _table_message(event_type: str, payload: bytes) -> str:
    """The message of a CREATE_TABLE or ALTER_TABLE event from its payload."""
    pieces = _unframe(payload)
    (now,) = _TIME.unpack(next(pieces))
    first = from_bytes(hms.Table, next(pieces))
    if event_type == CREATE_TABLE:
        return body(now, **table_fields(first), files=[])
    after = from_bytes(hms.Table, next(pieces))
    truncate = next(pieces, b"") == _TRUNCATE
    write_id = after.writeId if after.writeId is not None else -1
    return body(
        now, db=first.dbName, table=first.tableName, tableType=first.tableType,
        tableObjBeforeJson=to_json(first), tableObjAfterJson=to_json(after),
        isTruncateOp=flag(truncate), writeId=write_id,
    )  # fmt: skip


def drop_table(table: hms.Table, now: int) -> Event:
    return Event(DROP_TABLE, table.dbName, table.tableName, body(now, **table_fields(table)),
                 cat=catalog_of(table))  # fmt: skip


# -- partitions -------------------------------------------------------------------------------


def added_partitions(table: hms.Table, stored: Iterable[bytes]) -> Iterator[Event]:
    """The ADD_PARTITION events of partitions added at once, from their stored bytes (Thrift
    binary without database and table names): the JSON message is rendered when the event is
    read (:func:`render`), so adding partitions pays a byte copy per partition, not an encoding.
    One event (as HMS) unless the payload would pass ``MAX_MESSAGE_BYTES``, then as many as keep
    each below it (an HBase cell holds 10 MB at most by default)."""
    head = _frame(to_bytes(table))
    chunk: list[bytes] = [head]
    size = len(head)
    cat = catalog_of(table)
    for data in stored:
        framed = _frame(data)
        if len(chunk) > 1 and size + len(framed) > MAX_MESSAGE_BYTES:
            yield Event(ADD_PARTITION, table.dbName, table.tableName, "", b"".join(chunk), cat)
            chunk, size = [head], len(head)
        chunk.append(framed)
        size += len(framed)
    if len(chunk) > 1:
        yield Event(ADD_PARTITION, table.dbName, table.tableName, "", b"".join(chunk), cat)


def _frame(data: bytes) -> bytes:
    return struct.pack("!I", len(data)) + data


def _unframe(payload: bytes) -> Iterator[bytes]:
    at = 0
    while at < len(payload):
        (size,) = struct.unpack_from("!I", payload, at)
        yield payload[at + 4 : at + 4 + size]
        at += 4 + size


def stored_payload(payload: bytes) -> bytes:
    """A payload as the log keeps it: deflated where that pays (``storage.deflating``), behind a
    byte no frame begins with. An ADD_PARTITION's partitions are much alike (a thousand of them
    deflate to a fiftieth), an ALTER_PARTITION's two partitions too (to about a quarter)."""
    packed = deflating.deflated(payload)
    return payload if packed is None else _DEFLATED + packed


def render(event_type: str, payload: bytes, timestamp: int) -> str:
    """The JSON message of an event stored as a payload (see :func:`added_partitions`;
    :func:`create_table`, :func:`alter_table`, :func:`alter_partition` and :func:`drop_partition`
    keep the time of their change), as it is or as :func:`stored_payload` kept it."""
    if payload[:1] == _DEFLATED:
        payload = deflating.inflated(payload[1:])
    if event_type in (CREATE_TABLE, ALTER_TABLE):
        return _table_message(event_type, payload)
    if event_type == ALTER_PARTITION:
        return _alter_partition_message(payload)
    if event_type == DROP_PARTITION:
        return _drop_partition_message(payload)
    if event_type != ADD_PARTITION:
        raise ValueError(f"no payload rendering for {event_type}")
    pieces = _unframe(payload)
    table = from_bytes(hms.Table, next(pieces))
    parts = [_partition_of(table, from_bytes(hms.Partition, data)) for data in pieces]
    return body(
        timestamp, **table_fields(table), timestamp=timestamp,
        partitions=[key_values(table, p.values or []) for p in parts],
        partitionListJson=[to_json(p) for p in parts], partitionFiles=[],
    )  # fmt: skip


def alter_partition(
    table: hms.Table, before: hms.Partition, after: hms.Partition, now: int,
    *, truncate: bool = False, table_data: bytes | None = None,
) -> Event:  # fmt: skip
    """ALTER_PARTITION of one partition (``keyValues`` of its values before the change),
    rendered when read (:func:`render`): the change pays an encoding of each partition, not
    its JSON. ``table_data``: the table's encoding, when made once for many events."""
    payload = b"".join((
        _frame(_TIME.pack(now)), _frame(table_data or to_bytes(table)),
        _frame(to_bytes(before)), _frame(to_bytes(after)), _frame(_TRUNCATE) if truncate else b"",
    ))  # fmt: skip
    return Event(ALTER_PARTITION, table.dbName, table.tableName, "", payload, catalog_of(table))


def _as_encoded(cls: type[T], data: bytes) -> T:
    """The struct ``data`` encodes, each field it leaves out None (not the IDL's default, e.g.
    a partition's ``writeId`` -1): as it was when encoded, so that its JSON is the same."""
    fields = {name: None for name, _ in cls.default_spec}  # type: ignore[attr-defined]
    return from_bytes_into(lambda: cls(**fields), data)


def _alter_partition_message(payload: bytes) -> str:
    """The message of an ALTER_PARTITION event from its payload (:func:`alter_partition`)."""
    pieces = _unframe(payload)
    (now,) = _TIME.unpack(next(pieces))
    table = _as_encoded(hms.Table, next(pieces))
    before = _as_encoded(hms.Partition, next(pieces))
    after = _as_encoded(hms.Partition, next(pieces))
    truncate = next(pieces, b"") == _TRUNCATE
    return body(
        now, cat=catalog_of(table), **table_fields(table), isTruncateOp=flag(truncate),
        timestamp=now, writeId=after.writeId if after.writeId is not None else -1,
        keyValues=key_values(table, before.values or []),
        partitionObjBeforeJson=to_json(_partition_of(table, before)),
        partitionObjAfterJson=to_json(_partition_of(table, after)),
    )  # fmt: skip


def drop_partition(
    table: hms.Table, partitions: Iterable[hms.Partition], now: int,
    *, table_data: bytes | None = None,
) -> Event:  # fmt: skip
    """DROP_PARTITION of ``partitions``, rendered when read (:func:`render`): the change
    pays the partitions' values, not a JSON of the table for each (HMS writes one event a
    partition); ``table_data`` as for :func:`alter_partition`."""
    values = [_frame(_values_bytes(p.values or [])) for p in partitions]
    payload = b"".join((_frame(_TIME.pack(now)), _frame(table_data or to_bytes(table)), *values))
    return Event(DROP_PARTITION, table.dbName, table.tableName, "", payload, catalog_of(table))


def _values_bytes(values: Sequence[str]) -> bytes:
    """A partition's values, each framed (a value may hold any character)."""
    return b"".join(_frame(value.encode("utf-8")) for value in values)


def _drop_partition_message(payload: bytes) -> str:
    """The message of a DROP_PARTITION event from its payload (:func:`drop_partition`)."""
    pieces = _unframe(payload)
    (now,) = _TIME.unpack(next(pieces))
    table = _as_encoded(hms.Table, next(pieces))
    partitions = [
        key_values(table, [value.decode("utf-8") for value in _unframe(framed)])
        for framed in pieces
    ]
    return body(
        now, cat=catalog_of(table), **table_fields(table), timestamp=now, partitions=partitions,
    )  # fmt: skip


# -- functions, inserts, reloads --------------------------------------------------------------


def create_function(function: hms.Function, now: int) -> Event:
    message = body(now, db=function.dbName, functionObjJson=to_json(function))
    return Event(CREATE_FUNCTION, function.dbName, None, message, cat=catalog_of(function))


def drop_function(function: hms.Function, now: int) -> Event:
    message = body(now, db=function.dbName, functionName=function.functionName)
    return Event(DROP_FUNCTION, function.dbName, None, message, cat=catalog_of(function))


def insert(
    table: hms.Table,
    partition: hms.Partition | None,
    files: Iterable[str],
    now: int,
    *,
    replace: bool = True,
) -> Event:
    """INSERT into a table or one of its partitions (fired by a client): HMS 3+'s message
    (``tableObjJson``, ``ptnObjJson``, ``replace``) with 2.3's ``partKeyVals``; ``files`` as HMS
    lists them, each file's URI with ``#checksum`` appended when known."""
    part_key_values = key_values(table, partition.values or []) if partition else None
    message = body(
        now, **table_fields(table),
        ptnObjJson=to_json(_partition_of(table, partition)) if partition else None,
        timestamp=now, replace=flag(replace), files=list(files), partKeyVals=part_key_values,
    )  # fmt: skip
    return Event(INSERT, table.dbName, table.tableName, message, cat=catalog_of(table))


def reload(table: hms.Table, partition: hms.Partition | None, refresh: bool, now: int) -> Event:
    """RELOAD (HMS 4, fired by Impala for a refresh, ``refreshEvent`` "true", or an
    invalidate) of a table or of one of its partitions (``ptnObjJson``; ``partitionListJson``
    is for HMS's batches, null here)."""
    message = body(
        now, db=table.dbName, table=table.tableName, tableObjJson=to_json(table),
        ptnObjJson=to_json(_partition_of(table, partition)) if partition else None,
        refreshEvent=flag(refresh), partitionListJson=None,
    )  # fmt: skip
    return Event(RELOAD, table.dbName, table.tableName, message, cat=catalog_of(table))


# -- HMS 2.3's index events -------------------------------------------------------------------


def create_index(index: hms.Index, now: int) -> Event:
    message = body(now, db=index.dbName, indexObjJson=to_json(index))
    return Event(CREATE_INDEX, index.dbName, index.origTableName, message)


def drop_index(index: hms.Index, now: int) -> Event:
    message = body(now, db=index.dbName, indexName=index.indexName,
                   origTableName=index.origTableName,
                   indexTableName=index.indexTableName)  # fmt: skip
    return Event(DROP_INDEX, index.dbName, index.origTableName, message)


def alter_index(before: hms.Index, after: hms.Index, now: int) -> Event:
    message = body(now, db=before.dbName, beforeIndexObjJson=to_json(before),
                   afterIndexObjJson=to_json(after))  # fmt: skip
    return Event(ALTER_INDEX, before.dbName, before.origTableName, message)
