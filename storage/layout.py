"""Row layouts of the catalog objects on the storage port.

- ``dbs``: key ``db``; ``c:o`` the Database (Thrift binary), ``c:cat`` its catalog's name for
  the name listings (``DATABASE_CATALOG``)
- ``tbls``: key ``db \\x00 table``; ``c:o`` the Table, ``c:id`` its 8-byte table id, ``c:m``
  its type and comment for the name listings (``TABLE_META``)
- ``parts``: key ``table id`` + typed encoding of the values; ``c:o`` the Partition (without
  its database and table names), ``c:n`` its name ``k=v/...``, ``k:<i>`` value i encoded on its
  own (for server-side filters)
- ``funcs``: key ``db \\x00 function``; ``c:o`` the Function
- ``meta``: key ``counters``; ``c:table_id`` the last table id handed out. Key
  ``dependents \x00 db \x00 table``: one column ``c:d:<db.table>`` per table that depends on
  the table ``db.table`` (dependent tables), kept by name so that it outlives the base's row.
  Key ``claim \x00 <partition key>``: ``c:cl`` the writer creating that partition (HBase).
  Key ``locks``: every lock and transaction (``LOCKS_ROW``). Key ``compactions``: the
  compaction queue and history (``COMPACTIONS_ROW``; earlier versions: ``compaction \x00 <id>``).
  Keys ``indexes \x00 <table id>`` (a table's indexes), ``type \x00 <name>`` (a type),
  ``pevent \x00 ...`` (a partition event mark), ``property \x00 <namespace> \x00 <map key>``
  (a property map), ``uuid`` (the store's UUID), ``registry \x00 <kind> \x00 ...`` (a named
  object of one kind: catalogs, data connectors, and the stored-only objects of HMS 4:
  scheduled queries, stored procedures, ...): see their key functions. Key ``databases``:
  ``c:v`` a token written anew after every change of a ``dbs`` row (``DATABASES_VERSION``)

Partition keys start with the table's stable id, not its names: renaming a table rewrites one row,
dropping it deletes one key range. The encoded values keep byte order equal to value order
(``storage.codec``), so ranges over leading keys are key ranges. Names are stored lower-case;
``\\x00`` cannot occur in them (HMS names are word characters), so it separates components.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.planner.types import KeyKind
from metastore_server.storage.codec import (
    encode_id,
    encode_prefix,
    encode_value,
    encode_values,
    prefix_successor,
)
from metastore_server.storage.port import TableSpec

DATABASES = "dbs"
TABLES = "tbls"
PARTITIONS = "parts"
FUNCTIONS = "funcs"
META = "meta"

OBJECT = b"c:o"
NAME = b"c:n"
TABLE_ID = b"c:id"
#: On a database row: the name of its catalog (UTF-8; ``hive`` too, which the Database itself
#: leaves unnamed), so that the name listings decode no database. Written with the Database by
#: create and alter (a database never changes catalog); rows written before it existed lack it
#: (readers then take the catalog from the Database).
DATABASE_CATALOG = b"c:cat"
#: On a table row: what the name listings need of the table besides its name, so that they read
#: no definition: its type and comment as the fields 3 and 4 of a TableMeta (Thrift binary,
#: ending with the stop byte). Written with every definition (``c:o``) by create and alter;
#: rows written before it existed lack it (readers then take both from the definition).
TABLE_META = b"c:m"
#: On a table row: present once any partition of the table held a typed value in a
#: non-canonical spelling ("007" for 7); never removed (readers only rely on its absence).
SPELLINGS = b"c:sp"
#: On a table row: the row's version stamp, written with every change of a table that keeps
#: partition timelines (compare-and-set between server processes): an 8-byte big-endian counter
#: followed by an 8-byte digest of the ``c:o`` it was written with.
TIMELINE_VERSION = b"c:tlv"
#: On a table row that keeps timelines: present while a partition change and its timelines
#: are being written (on stores whose writers lock each other out). Found set by the next
#: change or load, it says the writer died between the two: the timelines are rebuilt.
TIMELINE_PENDING = b"c:tlp"
#: On a table row that keeps timelines, on stores whose writers do not lock each other out
#: (HBase): one column per server process writing a partition change and its timelines right
#: now, the prefix followed by the writer's id, holding the time it began (seconds since the
#: epoch, as text). A mark left longer than a lease says its writer died between the two.
TIMELINE_WRITER = b"c:tlw:"
#: In a claim row (``claim_key``, stores without atomic batches): the writer creating that
#: partition row right now and the time it began (``<writer> <seconds since the epoch>``).
CLAIM = b"c:cl"
_CLAIM_PREFIX = b"claim\x00"
#: In a base table's dependents row (``dependents_key``), one column per table that depends on
#: it (dependent tables): the prefix followed by ``db.table`` of the dependent. The row is keyed
#: by the base's name, not kept on its table row, so a base dropped and created again keeps its
#: dependents. A mark may be stale (the dependent was dropped, re-pointed, or its write never
#: landed): readers check the dependent itself.
DEPENDENT_MARK = b"c:d:"
_DEPENDENTS_PREFIX = b"dependents\x00"
#: In ``meta``: the row whose ``DATABASES_VERSION`` column (8 random bytes) is written anew after
#: each change of a database row, so that a server process keeping what it read of every
#: database (their locations) knows when to read them again.
DATABASES_VERSION_ROW = b"databases"
DATABASES_VERSION = b"c:v"
COUNTERS_ROW = b"counters"
NEXT_TABLE_ID = b"c:table_id"
#: In the counters row: the last compaction request id handed out.
NEXT_COMPACTION_ID = b"c:compaction_id"
NEXT_MASTER_KEY = b"c:master_key"
#: In the counters row: the last delegation-token sequence number handed out.
NEXT_TOKEN_SEQUENCE = b"c:token_sequence"
#: In the counters row: the last scheduled query execution id handed out.
NEXT_SCHEDULED_EXECUTION_ID = b"c:scheduled_execution_id"
#: In the counters row: the last runtime statistics sequence number handed out.
NEXT_RUNTIME_STAT = b"c:runtime_stat"
#: In ``meta``: the row of every lock and transaction, all in one value (JSON: the last lock
#: id handed out, the locks, the transactions), changed only by compare-and-set on it.
LOCKS_ROW = b"locks"
LOCK_STATE = b"c:s"
#: In ``meta``: the row of the compaction queue and its history, all in one value (JSON: the
#: last request id handed out, the requests, the compaction metrics), changed only by
#: compare-and-set on it (``catalog/txn/compactions.py``).
COMPACTIONS_ROW = b"compactions"
COMPACTION_STATE = b"c:s"
#: Rows of earlier versions (one per compaction request), read once into ``COMPACTIONS_ROW``.
_COMPACTION_PREFIX = b"compaction\x00"
#: In a statistics row (``stats_key``): one column per table column, the prefix followed by the
#: column's name, holding its ColumnStatisticsObj (Thrift binary); and when they were analyzed.
#: These are the statistics of the engine "hive" (the only ones before engines were told
#: apart, so rows stored then read as hive's); another engine's are under
#: ``ENGINE_STATS_PREFIX`` + engine + NUL + column, and its time under ``LAST_ANALYZED`` + ":"
#: + engine (``stats_column``, ``last_analyzed``).
STATS_PREFIX = b"c:s:"
ENGINE_STATS_PREFIX = b"c:e:"
LAST_ANALYZED = b"c:la"
#: The engine whose statistics keep the original columns.
HIVE_ENGINE = "hive"
_STATS_PREFIX = b"stats\x00"
_TOKEN_PREFIX = b"token\x00"
#: In a table's constraints row (``constraints_key``): one column per constraint, the prefix
#: followed by its name, holding its kind (P, F) and columns.
CONSTRAINT_PREFIX = b"c:k:"
_CONSTRAINTS_PREFIX = b"constraints\x00"
_MASTER_KEY_PREFIX = b"masterkey\x00"
#: In ``meta``: rows of keys the server signs with (the REST catalog's bearer tokens), one a
#: purpose, ``c:o`` holding the key; made once by the first process that needs it.
_SIGNING_KEY_PREFIX = b"signingkey\x00"
#: In ``meta``: rows of the REST catalog's kept replies (``idempotency_row``), one a caller's
#: ``Idempotency-Key``: ``c:o`` holds the entry, ``KEPT_UNTIL`` when it expires.
_IDEMPOTENCY_PREFIX = b"idempotency\x00"
#: In a kept reply's row: the second it expires at (ASCII digits), read alone by the sweep.
KEPT_UNTIL = b"c:e"
#: In ``meta``: the Iceberg metrics reports kept of a table (``metrics_report_key``), one a
#: report, ``c:o`` holding it; gone with the table (keyed by its stable id).
_METRICS_REPORT_PREFIX = b"metricsreport\x00"

TABLE_SPECS = (
    TableSpec(DATABASES, ("c",)),
    TableSpec(TABLES, ("c",), narrow=True),
    TableSpec(PARTITIONS, ("c", "k")),
    TableSpec(FUNCTIONS, ("c",)),
    TableSpec(META, ("c",), large_rows=True),  # events: every partition of an add
)

_SEPARATOR = b"\x00"


def database_key(db: str) -> bytes:
    """Row key of a database."""
    return db.encode("utf-8")


def table_key(db: str, table: str) -> bytes:
    """Row key of a table."""
    return db.encode("utf-8") + _SEPARATOR + table.encode("utf-8")


def function_key(db: str, function: str) -> bytes:
    """Row key of a function."""
    return db.encode("utf-8") + _SEPARATOR + function.encode("utf-8")


def stats_key(table_id: int, part_name: str) -> bytes:
    """Row key (in ``meta``) of a table's column statistics (``part_name`` ''), or of one of
    its partitions'."""
    return _STATS_PREFIX + encode_id(table_id) + b"\x00" + part_name.encode("utf-8")


def stats_range(table_id: int) -> tuple[bytes, bytes]:
    """[start, stop) of every statistics row of a table."""
    prefix = _STATS_PREFIX + encode_id(table_id) + b"\x00"
    return prefix, prefix_successor(prefix) or b""


def stats_column(column: str, engine: str = HIVE_ENGINE) -> bytes:
    """Column (in a statistics row) of one table column's statistics of ``engine``."""
    return stats_prefix(engine) + column.encode("utf-8")


def stats_prefix(engine: str = HIVE_ENGINE) -> bytes:
    """The prefix of the columns (in a statistics row) of ``engine``'s statistics."""
    if engine == HIVE_ENGINE:
        return STATS_PREFIX
    return ENGINE_STATS_PREFIX + engine.encode("utf-8") + _SEPARATOR


def is_stats_column(column: bytes) -> bool:
    """Whether a column of a statistics row holds some engine's statistics of a column."""
    return column.startswith(STATS_PREFIX) or column.startswith(ENGINE_STATS_PREFIX)


def last_analyzed(engine: str = HIVE_ENGINE) -> bytes:
    """Column (in a statistics row) of when ``engine``'s statistics were stored."""
    return LAST_ANALYZED if engine == HIVE_ENGINE else LAST_ANALYZED + b":" + engine.encode()


def constraints_key(table_id: int) -> bytes:
    """Row key (in ``meta``) of a table's primary and foreign keys."""
    return _CONSTRAINTS_PREFIX + encode_id(table_id)


def constraints_range() -> tuple[bytes, bytes]:
    """[start, stop) of the constraints rows of every table (in ``meta``)."""
    return _CONSTRAINTS_PREFIX, _CONSTRAINTS_PREFIX[:-1] + b"\x01"


def constraint_column(name: str) -> bytes:
    """Column (in a constraints row) of one constraint."""
    return CONSTRAINT_PREFIX + name.encode("utf-8")


#: In a table's indexes row (``indexes_key``): one column per index, the prefix followed by its
#: (lower-case) name, holding the Index (Thrift binary).
INDEX_PREFIX = b"c:i:"


def indexes_key(table_id: int) -> bytes:
    """Row key (in ``meta``) of the indexes on a table (HMS 2.3 indexes), by its stable id."""
    return b"indexes\x00" + encode_id(table_id)


def index_column(name: str) -> bytes:
    """Column (in an indexes row) of one index."""
    return INDEX_PREFIX + name.encode("utf-8")


def type_key(name: str) -> bytes:
    """Row key (in ``meta``) of a type (``create_type``); ``c:o`` holds it (Thrift binary)."""
    return b"type\x00" + name.encode("utf-8")


def partition_event_key(db: str, table: str, partition: str, event_type: int) -> bytes:
    """Row key (in ``meta``) of a partition's event mark (``markPartitionForEvent``), by the
    names as the client sent them (as HMS keeps them); ``c:o`` holds when, in ms, as text."""
    parts = (db, table, partition, str(event_type))
    return b"pevent\x00" + "\x00".join(parts).encode("utf-8")


_ROLE_PREFIX = b"role\x00"
_ROLE_MEMBER_PREFIX = b"rolemember\x00"
_GRANT_PREFIX = b"grant\x00"


def role_key(name: str) -> bytes:
    """Row key (in ``meta``) of a role; ``c:o`` holds its id, owner and creation time (JSON)."""
    return _ROLE_PREFIX + name.encode("utf-8")


def role_range() -> tuple[bytes, bytes]:
    """[start, stop) of the role rows."""
    return _ROLE_PREFIX, prefix_successor(_ROLE_PREFIX) or b""


def role_name(key: bytes) -> str:
    """The name of a role row."""
    return key[len(_ROLE_PREFIX) :].decode("utf-8")


def principal_part(principal_type: int, ident: str) -> bytes:
    """A principal in a membership or grant key: its type, then its name (a role: its id)."""
    return b"%d" % principal_type + ident.encode("utf-8")


def role_member_key(role_id: str, principal: bytes) -> bytes:
    """Row key (in ``meta``) of one principal's membership of a role (by the role's id);
    ``c:o`` holds the grant (JSON)."""
    return _ROLE_MEMBER_PREFIX + role_id.encode("utf-8") + b"\x00" + principal


def role_member_range(role_id: str | None = None) -> tuple[bytes, bytes]:
    """[start, stop) of the membership rows of one role (None: of every role)."""
    prefix = _ROLE_MEMBER_PREFIX + (role_id.encode("utf-8") + b"\x00" if role_id else b"")
    return prefix, prefix_successor(prefix) or b""


def global_object() -> bytes:
    """The object part of a grant key for the whole metastore."""
    return b"g\x00"


def database_object(db: str) -> bytes:
    """The object part of a grant key for a database."""
    return b"d" + db.encode("utf-8") + b"\x00"


def table_objects(table_id: int) -> bytes:
    """The prefix of every object part of a table's grants (the table, its partitions and
    columns), keyed by its stable id: a rename carries them, a drop removes one range."""
    return b"t" + encode_id(table_id)


def table_object(table_id: int) -> bytes:
    """The object part of a grant key for a table."""
    return table_objects(table_id) + b"t\x00"


def partition_object(table_id: int, part_name: str) -> bytes:
    """The object part of a grant key for a partition (by name)."""
    return table_objects(table_id) + b"p" + part_name.encode("utf-8") + b"\x00"


def column_object(table_id: int, part_name: str, column: str) -> bytes:
    """The object part of a grant key for a column of a table (``part_name`` '') or of one
    of its partitions."""
    return (table_objects(table_id) + b"c" + part_name.encode("utf-8") + b"\x00"
            + column.encode("utf-8") + b"\x00")  # fmt: skip


def grant_key(obj: bytes, principal: bytes, privilege: str, grantor: str) -> bytes:
    """Row key (in ``meta``) of one privilege granted on ``obj`` to ``principal`` by
    ``grantor`` (lower-cased: HMS tells grantors apart without case); ``c:o`` holds the grant
    (JSON)."""
    return (_GRANT_PREFIX + obj + principal + b"\x00" + privilege.encode("utf-8") + b"\x00"
            + grantor.lower().encode("utf-8"))  # fmt: skip


def grant_range(obj_prefix: bytes = b"") -> tuple[bytes, bytes]:
    """[start, stop) of the grant rows whose object part starts with ``obj_prefix`` (empty:
    every grant)."""
    prefix = _GRANT_PREFIX + obj_prefix
    return prefix, prefix_successor(prefix) or b""


def signing_key_row(purpose: str) -> bytes:
    """Row key (in ``meta``) of the signing key of ``purpose``; ``c:o`` holds it."""
    return _SIGNING_KEY_PREFIX + purpose.encode("utf-8")


def idempotency_row(digest: bytes) -> bytes:
    """Row key (in ``meta``) of a kept reply, by the digest of its caller and key."""
    return _IDEMPOTENCY_PREFIX + digest


def idempotency_range() -> tuple[bytes, bytes]:
    """[start, stop) of the kept replies' rows."""
    return _IDEMPOTENCY_PREFIX, prefix_successor(_IDEMPOTENCY_PREFIX) or b""


def metrics_report_key(table_id: int, stamp: bytes) -> bytes:
    """Row key (in ``meta``) of one kept metrics report of a table; ``stamp`` orders them."""
    return _METRICS_REPORT_PREFIX + encode_id(table_id) + b"\x00" + stamp


def metrics_report_range(table_id: int) -> tuple[bytes, bytes]:
    """[start, stop) of a table's kept metrics reports."""
    prefix = _METRICS_REPORT_PREFIX + encode_id(table_id) + b"\x00"
    return prefix, prefix_successor(prefix) or b""


def token_key(identifier: str) -> bytes:
    """Row key (in ``meta``) of a delegation token; ``c:o`` holds it."""
    return _TOKEN_PREFIX + identifier.encode("utf-8")


def token_range() -> tuple[bytes, bytes]:
    """[start, stop) of the delegation token rows."""
    return _TOKEN_PREFIX, prefix_successor(_TOKEN_PREFIX) or b""


def token_identifier(key: bytes) -> str:
    """The identifier of a token row."""
    return key[len(_TOKEN_PREFIX) :].decode("utf-8")


def master_key_key(number: int) -> bytes:
    """Row key (in ``meta``) of a master key; ``c:o`` holds it."""
    return _MASTER_KEY_PREFIX + b"%020d" % number


def master_key_range() -> tuple[bytes, bytes]:
    """[start, stop) of the master key rows."""
    return _MASTER_KEY_PREFIX, prefix_successor(_MASTER_KEY_PREFIX) or b""


def compaction_range() -> tuple[bytes, bytes]:
    """[start, stop) of the compaction request rows."""
    stop = prefix_successor(_COMPACTION_PREFIX)
    assert stop is not None  # the prefix ends in a byte below 0xFF
    return _COMPACTION_PREFIX, stop


def compaction_id(key: bytes) -> int:
    """The id of a compaction request row."""
    return int(key[len(_COMPACTION_PREFIX) :])


def children_range(db: str) -> tuple[bytes, bytes]:
    """[start, stop) of the table or function rows of one database."""
    start = db.encode("utf-8") + _SEPARATOR
    return start, db.encode("utf-8") + b"\x01"


def dependents_key(db: str, table: str) -> bytes:
    """Row key (in ``meta``) of the marks of the tables depending on ``db.table``."""
    return _DEPENDENTS_PREFIX + table_key(db, table)


def dependent_mark(db: str, table: str) -> bytes:
    """The column marking, in a base table's dependents row, that ``db.table`` depends on it."""
    return DEPENDENT_MARK + f"{db}.{table}".encode()


def marked_dependents(row: dict[bytes, bytes]) -> tuple[str, ...]:
    """``db.table`` of every dependent marked in a dependents row, sorted."""
    size = len(DEPENDENT_MARK)
    return tuple(sorted(c[size:].decode("utf-8") for c in row if c.startswith(DEPENDENT_MARK)))


def claim_key(partition_key: bytes) -> bytes:
    """Row key (in ``meta``) of the claim on creating the partition row ``partition_key`` (or
    on what ``adding_key`` and ``dependents_key`` name)."""
    return _CLAIM_PREFIX + partition_key


def adding_key(table_id: int) -> bytes:
    """What a claim on adding partitions to table ``table_id`` claims (``claim_key`` of it):
    never a partition row key, which starts with the table id."""
    return b"adding\x00" + encode_id(table_id)


def timeline_writer_mark(writer: str) -> bytes:
    """The column of writer ``writer``'s mark (``TIMELINE_WRITER``)."""
    return TIMELINE_WRITER + writer.encode()


def timeline_writers(row: dict[bytes, bytes]) -> tuple[tuple[str, float], ...]:
    """(writer, time it began) of every timeline writer mark on a table row, sorted."""
    size = len(TIMELINE_WRITER)
    marks = []
    for column, value in row.items():
        if column.startswith(TIMELINE_WRITER):
            try:
                began = float(value)
            except ValueError:
                began = 0.0  # unreadable: as old as can be
            marks.append((column[size:].decode("utf-8", "replace"), began))
    return tuple(sorted(marks))


def name_from_child_key(key: bytes) -> str:
    """The table or function name of a ``db \\x00 name`` row key."""
    return key.split(_SEPARATOR, 1)[1].decode("utf-8")


def partition_key(table_id: int, kinds: Sequence[KeyKind], values: Sequence[str]) -> bytes:
    """Row key of a partition: table id, then the typed encoding of all its values."""
    return encode_id(table_id) + encode_values(kinds, values)


def partition_prefix(table_id: int, kinds: Sequence[KeyKind], values: Sequence[str]) -> bytes:
    """Key prefix shared by the partitions whose leading values are ``values`` (as values: on
    an int or date key every spelling of the value)."""
    return encode_id(table_id) + encode_prefix(kinds, values)


def prefix_range(prefix: bytes) -> tuple[bytes, bytes | None]:
    """[start, stop) of every key that starts with ``prefix``."""
    return prefix, prefix_successor(prefix)


def partition_range(table_id: int) -> tuple[bytes, bytes | None]:
    """[start, stop) of every partition of a table."""
    return prefix_range(encode_id(table_id))


def value_column(index: int) -> bytes:
    """Column holding the encoded value of partition key ``index`` (for server-side filters)."""
    return b"k:%d" % index


def partition_columns(
    partition_bytes: bytes, name: str, kinds: Sequence[KeyKind], values: Sequence[str]
) -> dict[bytes, bytes]:
    """All columns of a partition row."""
    columns = {OBJECT: partition_bytes, NAME: name.encode("utf-8")}
    for index, (kind, value) in enumerate(zip(kinds, values, strict=True)):
        columns[value_column(index)] = encode_value(kind, value)
    return columns


_EVENT_PREFIX = b"event\x00"
#: In an event row: present from its creation on, kept when the event expires.
EVENT_MARK = b"c:e"
#: In an event row: what its message is rendered from when read (``event_messages.render``).
EVENT_PAYLOAD = b"c:p"


def event_key(event_id: int) -> bytes:
    """Row key (in ``meta``) of notification event ``event_id``; ``c:o`` holds the event
    (Thrift binary). Keys sort in id order."""
    return _EVENT_PREFIX + event_id.to_bytes(8, "big")


def event_range() -> tuple[bytes, bytes]:
    """[start, stop) of the notification event rows."""
    return _EVENT_PREFIX, prefix_successor(_EVENT_PREFIX) or b""


def event_id(key: bytes) -> int:
    """The id of a notification event row."""
    return int.from_bytes(key[len(_EVENT_PREFIX) :], "big")


_PROPERTY_PREFIX = b"property\x00"
#: In ``meta``: the row of the store's UUID (``get_metastore_db_uuid``), in ``c:o`` as text.
UUID_ROW = b"uuid"
#: In a property map row (``property_key``): one column per property, the prefix followed by
#: the property's name, holding its value (UTF-8).
PROPERTY_COLUMN_PREFIX = b"c:p:"


def property_key(namespace: str, map_key: str) -> bytes:
    """Row key (in ``meta``) of one property map of a namespace (``set_properties``)."""
    return _PROPERTY_PREFIX + namespace.encode("utf-8") + _SEPARATOR + map_key.encode("utf-8")


def property_range(namespace: str, map_prefix: str = "") -> tuple[bytes, bytes]:
    """[start, stop) of the property maps of a namespace whose key starts with ``map_prefix``."""
    start = _PROPERTY_PREFIX + namespace.encode("utf-8") + _SEPARATOR + map_prefix.encode()
    return start, prefix_successor(start) or b""


def property_map_key(key: bytes) -> str:
    """The map key of a property map row."""
    return key.split(_SEPARATOR, 2)[2].decode("utf-8")


_REGISTRY_PREFIX = b"registry\x00"


def registry_key(kind: str, parts: Sequence[str]) -> bytes:
    """Row key (in ``meta``) of a stored-only object of one kind, named by ``parts`` (each part
    without ``\\x00``); ``c:o`` holds it."""
    return _REGISTRY_PREFIX + _SEPARATOR.join(p.encode("utf-8") for p in (kind, *parts))


def registry_range(kind: str, parts: Sequence[str] = ()) -> tuple[bytes, bytes | None]:
    """[start, stop) of the objects of one kind whose names start with the whole ``parts``."""
    return prefix_range(registry_key(kind, parts) + _SEPARATOR)


def registry_parts(kind: str, key: bytes) -> tuple[str, ...]:
    """The name parts of a registry row key of ``kind``."""
    start = registry_key(kind, ()) + _SEPARATOR
    return tuple(p.decode("utf-8") for p in key[len(start) :].split(_SEPARATOR))
