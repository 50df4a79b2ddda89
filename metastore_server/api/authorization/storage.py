"""``--authorization storage``: HMS's storage-based authorization. Creating, altering or
dropping a database, table or partition needs the caller's permission on the data's
directories, checked through the data layer (``catalog/data/permissions.py``):

- create: write on the parent of the object's directory (or its nearest existing ancestor);
  a table also needs write on its database's directory;
- alter: write on the parent of the object's directory (a new location: on its parent too; a
  rename that moves a table's data: removing the old directory, writing where the new goes);
- drop: removing the directory (write on its parent; a sticky parent: owning one of them); a
  table also needs write on its database's directory, and a cascading database drop each of
  its tables' removal;
- reads (``get_database``, ``get_table``): read on the directory, unless
  ``hive.security.metastore.authorization.auth.reads`` is false (HMS's default: true).

A refusal is HMS's MetaException with the file system's message; nothing of the call is
done. See ``docs/security.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from metastore_server.api.authorization.storage_places import (
    CHANGE,
    DELETE,
    READ,
    Need,
    Places,
)
from metastore_server.caller import Session
from metastore_server.catalog.data import permissions
from metastore_server.catalog.data.permissions import StoragePermissions
from metastore_server.catalog.facade import Catalog
from metastore_server.catalog.partitions import specs as partition_specs
from metastore_server.thrift_api import hms

log = structlog.get_logger(__name__)

#: HMS's switch of read checks, and its default.
AUTH_READS = "hive.security.metastore.authorization.auth.reads"

Rule = Callable[[Places, dict[str, Any]], list[Need]]


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


#: Each Thrift method that creates, alters or drops a database, table or partition, with
#: what it needs. A method listed nowhere here is not checked: ``tests/unit`` holds every
#: such method of the IDL to this table or to ``NOT_CHECKED``.
CHANGES: dict[str, Rule] = {
    # databases
    "create_database": lambda p, v: _create_database(p, v["database"]),
    "create_database_req": lambda p, v: _create_database_req(p, v["createDatabaseRequest"]),
    "alter_database": lambda p, v: _alter_database(p, v["dbname"], v["db"]),
    "alter_database_req": lambda p, v: _alter_database(
        p, getattr(v["alterDbReq"], "oldDbName", None), getattr(v["alterDbReq"], "newDb", None)
    ),
    "drop_database": lambda p, v: _drop_database(p, v["name"], v["cascade"]),
    "drop_database_req": lambda p, v: _drop_database(
        p, getattr(v["req"], "name", None), getattr(v["req"], "cascade", None)
    ),
    # tables
    "create_table": lambda p, v: p.new_table(v["tbl"]),
    "create_table_with_environment_context": lambda p, v: p.new_table(v["tbl"]),
    "create_table_with_constraints": lambda p, v: p.new_table(v["tbl"]),
    "create_table_req": lambda p, v: p.new_table(getattr(v["request"], "table", None)),
    "create_dependent_table": lambda p, v: _dependent_table(p, v["req"]),
    "add_index": lambda p, v: p.new_table(v["index_table"]),
    "alter_table": _alter_table,
    "alter_table_with_environment_context": _alter_table,
    "alter_table_with_cascade": _alter_table,
    "alter_table_req": lambda p, v: p.altered_table(
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "table", None),
    ),  # fmt: skip
    "alter_dependency": lambda p, v: p.table_needs(
        CHANGE, getattr(v["req"], "dbName", None), getattr(v["req"], "tblName", None)
    ),
    "drop_table": _drop_table_args,
    "drop_table_with_environment_context": _drop_table_args,
    "drop_table_req": lambda p, v: _drop_table(
        p, getattr(v["dropTableReq"], "dbName", None), getattr(v["dropTableReq"], "tableName", None)
    ),
    "drop_index_by_name": _drop_index,
    "truncate_table": lambda p, v: _truncate(p, v["dbName"], v["tableName"], v["partNames"]),
    "truncate_table_req": lambda p, v: _truncate(
        p,
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "partNames", None),
    ),  # fmt: skip
    # partitions
    "add_partition": lambda p, v: p.new_partitions(None, None, [v["new_part"]]),
    "add_partition_with_environment_context": lambda p, v: p.new_partitions(
        None, None, [v["new_part"]]
    ),
    "add_partitions": lambda p, v: p.new_partitions(None, None, v["new_parts"] or []),
    "add_partitions_req": lambda p, v: p.new_partitions(
        getattr(v["request"], "dbName", None),
        getattr(v["request"], "tblName", None),
        getattr(v["request"], "parts", None) or [],
    ),  # fmt: skip
    "add_partitions_pspec": lambda p, v: _add_partitions_pspec(p, v["new_parts"]),
    "append_partition": _append,
    "append_partition_with_environment_context": _append,
    "append_partition_by_name": _append_by_name,
    "append_partition_by_name_with_environment_context": _append_by_name,
    "append_partition_req": lambda p, v: _append_partition_req(p, v["appendPartitionsReq"]),
    "drop_partition": _drop_partition,
    "drop_partition_with_environment_context": _drop_partition,
    "drop_partition_by_name": _drop_partition_by_name,
    "drop_partition_by_name_with_environment_context": _drop_partition_by_name,
    "drop_partition_req": lambda p, v: _drop_partition_req(p, v["dropPartitionReq"]),
    "drop_partitions_req": lambda p, v: _drop_partitions_req(p, v["req"]),
    "alter_partition": _alter_partition,
    "alter_partition_with_environment_context": _alter_partition,
    "alter_partitions": _alter_partitions,
    "alter_partitions_with_environment_context": _alter_partitions,
    "alter_partitions_req": lambda p, v: p.altered_partitions(
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "partitions", None) or [],
    ),  # fmt: skip
    "rename_partition": lambda p, v: p.renamed_partition(
        v["db_name"], v["tbl_name"], v["part_vals"], v["new_part"]
    ),
    "rename_partition_req": lambda p, v: p.renamed_partition(
        getattr(v["req"], "dbName", None),
        getattr(v["req"], "tableName", None),
        getattr(v["req"], "partVals", None),
        getattr(v["req"], "newPart", None),
    ),  # fmt: skip
    "exchange_partition": _exchange,
    "exchange_partitions": _exchange,
}

#: Methods named like changes of databases, tables or partitions that change no data
#: location, with why (held to the IDL by ``tests/unit``).
NOT_CHECKED: dict[str, str] = {
    "alter_index": "changes an index's parameters only, not its index table",
    "add_dynamic_partitions": "records what an open transaction wrote; adds no partition",
}

#: The reads HMS checks when ``auth.reads`` is on (its pre-read events).
READS: dict[str, Rule] = {
    "get_database": lambda p, v: p.database_needs(READ, v["name"]),
    "get_database_req": lambda p, v: p.database_needs(READ, getattr(v["request"], "name", None)),
    "get_table": lambda p, v: p.table_needs(READ, v["dbname"], v["tbl_name"]),
    "get_table_req": lambda p, v: p.table_needs(
        READ, getattr(v["req"], "dbName", None), getattr(v["req"], "tblName", None)
    ),
}


class StorageAuthorizer:
    """Checks each change (and read, with ``auth.reads``) against the file system's
    permissions of the caller."""

    def __init__(self, catalog: Catalog, *, auth_reads: bool = True) -> None:
        self.places = Places(catalog)
        self.permissions = StoragePermissions(catalog.ctx.data.filesystems)
        self.rules: dict[str, Rule] = {**CHANGES, **(READS if auth_reads else {})}

    def needs(self, api: str, values: dict[str, Any]) -> list[Need] | None:
        """What call ``api`` needs (None: it is not checked)."""
        rule = self.rules.get(api)
        return None if rule is None else rule(self.places, values)

    def check(self, api: str, values: dict[str, Any], session: Session) -> None:
        """Refuse (MetaException) a call whose caller lacks a permission it needs."""
        needs = self.needs(api, values)
        if not needs:
            return
        if not session.user:
            raise hms.MetaException(
                message="storage-based authorization: the call is made as no user "
                "(authenticate, or name one with set_ugi)"
            )
        try:
            who = self.permissions.principal(session.user)
            for need in dict.fromkeys(needs):
                if need.access == DELETE:
                    self.permissions.check_delete(need.location, who)
                elif need.access == CHANGE:
                    self.permissions.check_change(need.location, who)
                else:
                    access = permissions.READ if need.access == READ else permissions.WRITE
                    self.permissions.check(need.location, who, access)
        except permissions.Refused as exc:
            log.info("storage_authorization_refused", method=api, user=session.user,
                     reason=str(exc))  # fmt: skip
            raise hms.MetaException(message=str(exc)) from None


def _flag(settings: dict[str, Any], key: str, default: bool) -> bool:
    values = settings.get("config_values") or {}
    text = str(values.get(key, "")).strip().lower()
    return default if not text else text == "true"


def build(catalog: Catalog, settings: dict[str, Any]) -> StorageAuthorizer:
    """The storage authorizer of a server (``config_values``: its configuration, for
    ``auth.reads``)."""
    # Directories made for a caller become the caller's, as HMS makes them as the caller.
    catalog.ctx.data.give_to_caller = True
    return StorageAuthorizer(catalog, auth_reads=_flag(settings, AUTH_READS, True))
