"""HMS 3/4's transaction, write id and compaction events, with the fields of HMS's JSON message
classes and HMS's type names (``ALLOC_WRITE_ID_EVENT``, ``ACID_WRITE_EVENT``,
``COMMIT_COMPACTION_EVENT``); and catalog and data connector events (which HMS's listener does
not record). HMS writes the transaction events through its transactional listener with no
catalog (``NotificationEvent.catName`` unset). Pure, as ``messages``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from metastore_server.catalog.events.messages import DEFAULT_CATALOG, Event, body
from metastore_server.thrift_api import hms
from metastore_server.wire.thrift_json import to_json

OPEN_TXN = "OPEN_TXN"
COMMIT_TXN = "COMMIT_TXN"
ABORT_TXN = "ABORT_TXN"
ALLOC_WRITE_ID = "ALLOC_WRITE_ID_EVENT"
ACID_WRITE = "ACID_WRITE_EVENT"
COMMIT_COMPACTION = "COMMIT_COMPACTION_EVENT"
CREATE_CATALOG = "CREATE_CATALOG"
ALTER_CATALOG = "ALTER_CATALOG"
DROP_CATALOG = "DROP_CATALOG"
CREATE_DATACONNECTOR = "CREATE_DATACONNECTOR"
ALTER_DATACONNECTOR = "ALTER_DATACONNECTOR"
DROP_DATACONNECTOR = "DROP_DATACONNECTOR"

#: The lists a COMMIT_TXN message declares: HMS writes them null, and readers fill them from
#: ``get_all_write_event_info`` (``addWriteEventInfo`` appends to a list already there).
_COMMIT_LISTS = ("writeIds", "databases", "tables", "partitions", "tableObjs",
                 "partitionObjs", "files")  # fmt: skip


def open_txns(txn_ids: Sequence[int], now: int) -> Event:
    """One OPEN_TXN for transactions opened at once: HMS 4's ``fromTxnId``/``toTxnId`` and
    HMS 3's ``txnIds`` both (each reader takes the fields it knows)."""
    message = body(now, txnIds=list(txn_ids), fromTxnId=txn_ids[0], toTxnId=txn_ids[-1])
    return Event(OPEN_TXN, None, None, message, cat=None)


def commit_txn(txnid: int, now: int) -> Event:
    """COMMIT_TXN as HMS writes it: the transaction alone (what it wrote is read with
    ``get_all_write_event_info``)."""
    lists = dict.fromkeys(_COMMIT_LISTS)
    return Event(COMMIT_TXN, None, None, body(now, txnid=txnid, **lists), cat=None)


def abort_txn(txnid: int, dbs_updated: Sequence[str], now: int) -> Event:
    """ABORT_TXN with HMS 4's ``dbsUpdated`` (the databases the transaction wrote)."""
    message = body(now, txnid=txnid, dbsUpdated=list(dbs_updated))
    return Event(ABORT_TXN, None, None, message, cat=None)


def alloc_write_id(db: str, table: str, allocated: Sequence[tuple[int, int]], now: int) -> Event:
    """ALLOC_WRITE_ID_EVENT of the write ids newly allocated in a table ((txn id, write id)
    pairs, as two lists of one length)."""
    message = body(now, catName=DEFAULT_CATALOG, dbName=db, tableName=table,
                   txnIdList=[t for t, _ in allocated],
                   writeIdList=[w for _, w in allocated])  # fmt: skip
    return Event(ALLOC_WRITE_ID, db, table, message, cat=None)


def acid_write(
    txnid: int,
    write_id: int,
    db: str,
    table: str,
    partition: str | None,
    objects: tuple[str | None, str | None],
    files: Iterable[str],
    now: int,
) -> Event:
    """ACID_WRITE_EVENT of one write notification; ``objects``: the Thrift JSON of the table
    and of the partition written (each None when unknown), as the write notification row keeps
    them for ``get_all_write_event_info``."""
    table_obj, partition_obj = objects
    message = body(
        now, txnid=txnid, writeId=write_id, database=db, table=table, partition=partition,
        tableObjJson=table_obj, partitionObjJson=partition_obj, files=list(files),
    )  # fmt: skip
    return Event(ACID_WRITE, db, table, message, cat=None)


def commit_compaction(
    txnid: int, compaction_id: int, kind: int, where: tuple[str, str, str | None], now: int
) -> Event:
    """COMMIT_COMPACTION_EVENT: the compactor's transaction committed (after its COMMIT_TXN);
    ``kind`` a CompactionType (written by name, as Jackson writes an enum)."""
    db, table, part = where
    message = body(
        now, txnid=txnid, compactionId=compaction_id,
        type=hms.CompactionType._VALUES_TO_NAMES.get(kind, str(kind)),
        dbname=db, tableName=table, partName=part,
    )  # fmt: skip
    return Event(COMMIT_COMPACTION, db, table, message, cat=None)


# -- catalogs and data connectors (not recorded by HMS's listener) ---------------------------


def create_catalog(catalog: hms.Catalog, now: int) -> Event:
    return Event(CREATE_CATALOG, None, None, body(now, catalog=catalog.name), cat=None)


def alter_catalog(before: hms.Catalog, after: hms.Catalog, now: int) -> Event:
    message = body(now, catObjBeforeJson=to_json(before), catObjAfterJson=to_json(after))
    return Event(ALTER_CATALOG, None, None, message, cat=None)


def drop_catalog(catalog: hms.Catalog, now: int) -> Event:
    return Event(DROP_CATALOG, None, None, body(now, catalog=catalog.name), cat=None)


def create_connector(connector: hms.DataConnector, now: int) -> Event:
    """HMS defines no message for data connector events: ours, shaped as the catalogs'."""
    message = body(now, connector=connector.name, connectorObjJson=to_json(connector))
    return Event(CREATE_DATACONNECTOR, None, None, message, cat=None)


def alter_connector(before: hms.DataConnector, after: hms.DataConnector, now: int) -> Event:
    message = body(now, connector=after.name, connectorObjBeforeJson=to_json(before),
                   connectorObjAfterJson=to_json(after))  # fmt: skip
    return Event(ALTER_DATACONNECTOR, None, None, message, cat=None)


def drop_connector(connector: hms.DataConnector, now: int) -> Event:
    return Event(DROP_DATACONNECTOR, None, None, body(now, connector=connector.name), cat=None)
