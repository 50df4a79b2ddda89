"""What each Thrift method needs under ``--authorization storage`` (HMS's storage-based
authorization), declared on the method as ``@thrift(storage=...)`` with the constants here:
a change (checked always), a read (checked with ``auth.reads``) or a method named like a
change that changes no data location (with why). :mod:`.storage` checks what they name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from metastore_server.api.authorization.storage_places import (
    CHANGE,
    DELETE,
    READ,
    Need,
    Places,
)
from metastore_server.catalog import partition_specs
from metastore_server.thrift_api import hms

#: What a call needs, from the objects' places and its arguments (by IDL name).
Rule = Callable[[Places, dict[str, Any]], list[Need]]

#: The classes of method: checked always, checked with ``auth.reads``, never checked.
KINDS = ("changes", "reads", "not_checked")


@dataclass(frozen=True)
class StorageCheck:
    """How the storage authorizer treats one Thrift method."""

    #: One of :data:`KINDS`.
    kind: str
    #: What it needs (None: not checked).
    rule: Rule | None = None
    #: Why a method named like a change is not checked.
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS or (self.rule is None) != (self.kind == "not_checked"):
            raise ValueError(f"a storage check of kind {self.kind!r} with rule {self.rule!r}")


def changes(rule: Rule) -> StorageCheck:
    """A method creating, altering or dropping a database, table or partition."""
    return StorageCheck("changes", rule)


def reads(rule: Rule) -> StorageCheck:
    """A read HMS checks when ``auth.reads`` is on (its pre-read events)."""
    return StorageCheck("reads", rule)


def not_checked(why: str) -> StorageCheck:
    """A method named like a change that changes no data location."""
    return StorageCheck("not_checked", why=why)


def _drop_database(places: Places, name: str | None, cascade: bool | None) -> list[Need]:
    needs = places.database_needs(DELETE, name)
    if needs and cascade:
        for ref in places.tables_of(name):
            needs.extend(places.ref_needs(DELETE, ref))
    return needs


def _alter_database(places: Places, name: str | None, new: hms.Database | None) -> list[Need]:
    needs = places.database_needs(CHANGE, name)
    old = {need.location for need in needs}
    for location in (new.locationUri, new.managedLocationUri) if new is not None else ():
        if location and location not in old:
            needs.append(Need(CHANGE, location, f"database {name} (new location)"))
    return needs


def _drop_table(places: Places, db: str | None, name: str | None) -> list[Need]:
    ref = places.table(db, name)
    return places.dropped_table(ref) if ref is not None else []


def _drop_index(places: Places, v: dict[str, Any]) -> list[Need]:
    try:
        index_db, index_table = places.catalog.indexes.index_table_of(
            v["db_name"], v["tbl_name"], v["index_name"]
        )
    except (hms.NoSuchObjectException, hms.MetaException):
        return []
    return _drop_table(places, index_db, index_table)


def _truncate(
    places: Places, db: str | None, name: str | None, parts: list[str] | None
) -> list[Need]:
    ref = places.table(db, name)
    if ref is None:
        return []
    if not parts:
        return places.ref_needs(CHANGE, ref)
    found = (places.values_of(ref, part) for part in parts)
    return [
        need for values in found if values for need in places.partition_needs(CHANGE, ref, values)
    ]


def _drop_partitions_req(places: Places, req: hms.DropPartitionsRequest | None) -> list[Need]:
    if req is None or req.parts is None:
        return []
    if req.parts.names is None and req.parts.exprs:
        raise hms.MetaException(
            message="storage-based authorization cannot check partitions chosen by expression"
        )
    ref = places.table(req.dbName, req.tblName)
    if ref is None:
        return []
    values = [places.values_of(ref, name) for name in req.parts.names or []]
    return places.dropped_partitions(req.dbName, req.tblName, values)


def _drop_partition_req(places: Places, req: hms.DropPartitionRequest | None) -> list[Need]:
    if req is None:
        return []
    ref = places.table(req.dbName, req.tblName)
    if ref is None:
        return []
    values = req.partVals or places.values_of(ref, req.partName)
    return places.dropped_partitions(req.dbName, req.tblName, [values])


def _drop_partition_by_name(places: Places, v: dict[str, Any]) -> list[Need]:
    ref = places.table(v["db_name"], v["tbl_name"])
    if ref is None:
        return []
    return places.dropped_partitions(
        v["db_name"], v["tbl_name"], [places.values_of(ref, v["part_name"])]
    )


def _add_partitions_pspec(places: Places, specs: list[hms.PartitionSpec] | None) -> list[Need]:
    try:
        parts = partition_specs.partitions_of(specs or [])
    except partition_specs.UnusableSpec:
        return []  # the call refuses it
    return places.new_partitions(None, None, parts)


def _append_partition_req(places: Places, req: hms.AppendPartitionsRequest | None) -> list[Need]:
    if req is None:
        return []
    if req.partVals:
        return places.new_partition_by_values(req.dbName, req.tableName, req.partVals)
    return places.new_partition_by_name(req.dbName, req.tableName, req.name)


def _exchange(places: Places, v: dict[str, Any]) -> list[Need]:
    """Partitions leave the source table's directory for the destination's: writing into
    both."""
    return [
        *places.table_needs(CHANGE, v["source_db"], v["source_table_name"]),
        *places.table_needs(CHANGE, v["dest_db"], v["dest_table_name"]),
    ]


def _dependent_table(places: Places, req: hms.CreateDependentTableRequest | None) -> list[Need]:
    if req is None:
        return []
    sd = hms.StorageDescriptor(location=req.location)
    return places.new_table(hms.Table(dbName=req.dbName, tableName=req.tblName, sd=sd))


def _new_database(places: Places, name: str, location: str | None,
                  managed: str | None) -> list[Need]:  # fmt: skip
    needs = places.new_database(name, location)
    if managed:
        needs.extend(places.new_database(name, managed))
    return needs


def _create_database_req(places: Places, req: hms.CreateDatabaseRequest | None) -> list[Need]:
    if req is None:
        return []
    return _new_database(places, req.databaseName, req.locationUri, req.managedLocationUri)


def _create_database(places: Places, db: hms.Database | None) -> list[Need]:
    if db is None:
        return []
    return _new_database(places, db.name, db.locationUri, db.managedLocationUri)


def _alter_partitions(places: Places, v: dict[str, Any]) -> list[Need]:
    return places.altered_partitions(v["db_name"], v["tbl_name"], v["new_parts"] or [])


def _alter_table(places: Places, v: dict[str, Any]) -> list[Need]:
    return places.altered_table(v["dbname"], v["tbl_name"], v["new_tbl"])


def _drop_table_args(places: Places, v: dict[str, Any]) -> list[Need]:
    return _drop_table(places, v["dbname"], v["name"])


def _drop_partition(places: Places, v: dict[str, Any]) -> list[Need]:
    return places.dropped_partitions(v["db_name"], v["tbl_name"], [v["part_vals"]])


def _append(places: Places, v: dict[str, Any]) -> list[Need]:
    return places.new_partition_by_values(v["db_name"], v["tbl_name"], v["part_vals"])


def _append_by_name(places: Places, v: dict[str, Any]) -> list[Need]:
    return places.new_partition_by_name(v["db_name"], v["tbl_name"], v["part_name"])


def _alter_partition(places: Places, v: dict[str, Any]) -> list[Need]:
    return places.altered_partitions(v["db_name"], v["tbl_name"], [v["new_part"]])


# -- what each class of method needs (declared by the methods: ``storage=st.NAME``) -----------

CREATE_DATABASE = changes(lambda p, v: _create_database(p, v["database"]))

CREATE_DATABASE_REQ = changes(lambda p, v: _create_database_req(p, v["createDatabaseRequest"]))

ALTER_DATABASE = changes(lambda p, v: _alter_database(p, v["dbname"], v["db"]))

ALTER_DATABASE_REQ = changes(
    lambda p, v: _alter_database(
        p, getattr(v["alterDbReq"], "oldDbName", None), getattr(v["alterDbReq"], "newDb", None)
    )
)

DROP_DATABASE = changes(lambda p, v: _drop_database(p, v["name"], v["cascade"]))

DROP_DATABASE_REQ = changes(
    lambda p, v: _drop_database(
        p, getattr(v["req"], "name", None), getattr(v["req"], "cascade", None)
    )
)

CREATE_TABLE = changes(lambda p, v: p.new_table(v["tbl"]))

CREATE_TABLE_REQ = changes(lambda p, v: p.new_table(getattr(v["request"], "table", None)))

CREATE_DEPENDENT_TABLE = changes(lambda p, v: _dependent_table(p, v["req"]))

ADD_INDEX = changes(lambda p, v: p.new_table(v["index_table"]))

ALTER_TABLE = changes(_alter_table)

ALTER_TABLE_REQ = changes(
    lambda p, v: p.altered_table(
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "table", None),
    )
)

ALTER_DEPENDENCY = changes(
    lambda p, v: p.table_needs(
        CHANGE, getattr(v["req"], "dbName", None), getattr(v["req"], "tblName", None)
    )
)

DROP_TABLE = changes(_drop_table_args)

DROP_TABLE_REQ = changes(
    lambda p, v: _drop_table(
        p, getattr(v["dropTableReq"], "dbName", None), getattr(v["dropTableReq"], "tableName", None)
    )
)

DROP_INDEX_BY_NAME = changes(_drop_index)

TRUNCATE_TABLE = changes(lambda p, v: _truncate(p, v["dbName"], v["tableName"], v["partNames"]))

TRUNCATE_TABLE_REQ = changes(
    lambda p, v: _truncate(
        p,
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "partNames", None),
    )
)

ADD_PARTITION = changes(lambda p, v: p.new_partitions(None, None, [v["new_part"]]))

ADD_PARTITIONS = changes(lambda p, v: p.new_partitions(None, None, v["new_parts"] or []))

ADD_PARTITIONS_REQ = changes(
    lambda p, v: p.new_partitions(
        getattr(v["request"], "dbName", None),
        getattr(v["request"], "tblName", None),
        getattr(v["request"], "parts", None) or [],
    )
)

ADD_PARTITIONS_PSPEC = changes(lambda p, v: _add_partitions_pspec(p, v["new_parts"]))

APPEND_PARTITION = changes(_append)

APPEND_PARTITION_BY_NAME = changes(_append_by_name)

APPEND_PARTITION_REQ = changes(lambda p, v: _append_partition_req(p, v["appendPartitionsReq"]))

DROP_PARTITION = changes(_drop_partition)

DROP_PARTITION_BY_NAME = changes(_drop_partition_by_name)

DROP_PARTITION_REQ = changes(lambda p, v: _drop_partition_req(p, v["dropPartitionReq"]))

DROP_PARTITIONS_REQ = changes(lambda p, v: _drop_partitions_req(p, v["req"]))

ALTER_PARTITION = changes(_alter_partition)

ALTER_PARTITIONS = changes(_alter_partitions)

ALTER_PARTITIONS_REQ = changes(
    lambda p, v: p.altered_partitions(
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "partitions", None) or [],
    )
)

RENAME_PARTITION = changes(
    lambda p, v: p.renamed_partition(v["db_name"], v["tbl_name"], v["part_vals"], v["new_part"])
)

RENAME_PARTITION_REQ = changes(
    lambda p, v: p.renamed_partition(
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "partVals", None),
        getattr(v["req"], "newPart", None),
    )
)

EXCHANGE_PARTITION = changes(_exchange)

GET_DATABASE = reads(lambda p, v: p.database_needs(READ, v["name"]))

GET_DATABASE_REQ = reads(lambda p, v: p.database_needs(READ, getattr(v["request"], "name", None)))

GET_TABLE = reads(lambda p, v: p.table_needs(READ, v["dbname"], v["tbl_name"]))

GET_TABLE_REQ = reads(
    lambda p, v: p.table_needs(
        READ, getattr(v["req"], "dbName", None), getattr(v["req"], "tblName", None)
    )
)
