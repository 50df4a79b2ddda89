"""Grants as HMS stores them, one ``meta`` row each (``layout.grant_key``): the object granted
on (``Target``: the metastore; a database by name; a table, its partitions and its columns by
the table's stable id, so a rename carries them and a drop removes one key range), the
principal (``Principal``: a user, group, or a role by its id), and the stored row (``Grant``:
the privilege, the grantor, the grant option, the time). A grant on a partition records the
partition's creation time: once the partition is dropped (or dropped and added again) it is no
longer seen. The grants of dropped objects are removed here too (``forget_*``). See
``docs/security.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from metastore_server.catalog.basics import changes
from metastore_server.catalog.security.roles import (
    ROLE,
    RoleBook,
    check_principal_type,
    check_text,
    decode,
    encode,
)
from metastore_server.storage import layout
from metastore_server.storage.port import Delete, StoragePort
from metastore_server.thrift_api import hms

GLOBAL = hms.HiveObjectType.GLOBAL
DATABASE = hms.HiveObjectType.DATABASE
TABLE = hms.HiveObjectType.TABLE
PARTITION = hms.HiveObjectType.PARTITION
COLUMN = hms.HiveObjectType.COLUMN
#: How a grant, a revoke and a read treat an object that is not there.
GRANT, REVOKE, READ = "grant", "revoke", "read"


def forget_table_grants(store: StoragePort, table_id: int) -> None:
    """Remove a dropped table's grants (its partitions' and columns' too)."""
    _delete_range(store, layout.grant_range(layout.table_objects(table_id)))


#: Up to this many dropped partitions, their grants are looked up one partition at a time.
_FEW_PARTITIONS = 8


def forget_database_grants(store: StoragePort, db: str) -> None:
    """Remove a dropped database's grants."""
    _delete_range(store, layout.grant_range(layout.database_object(db)))


def forget_partition_grants(store: StoragePort, table_id: int, part_names: Iterable[str]) -> None:
    """Remove the grants of dropped partitions (their columns' too). Optional: a partition's
    grants are not seen once it is gone; this only frees their rows. A few partitions' are
    looked up each; for more, the table's partition grants are read once (usually none)."""
    prefix = layout.table_objects(table_id)
    names = {name.encode() for name in part_names}
    for kind in (b"p", b"c"):
        if len(names) <= _FEW_PARTITIONS:
            for name in names:
                _delete_range(store, layout.grant_range(prefix + kind + name + b"\x00"))
            continue
        start = len(layout.grant_range(prefix + kind)[0])
        keys = [key for key, _row in store.scan(layout.META, *layout.grant_range(prefix + kind),
                                                 columns=[layout.OBJECT])
                if key[start:key.find(b"\x00", start)] in names]  # fmt: skip
        if keys:
            store.mutate([Delete(layout.META, key) for key in keys])


def _delete_range(store: StoragePort, bounds: tuple[bytes, bytes]) -> None:
    keys = [key for key, _row in store.scan(layout.META, *bounds, columns=[layout.OBJECT])]
    if keys:
        store.mutate([Delete(layout.META, key) for key in keys])


@dataclass(frozen=True)
class Target:
    """The object of a grant. ``exists`` False: named, but not there (a revoke's message)."""

    kind: int
    db: str | None = None
    table: str | None = None
    table_id: int | None = None
    part_name: str | None = None
    part_values: tuple[str, ...] | None = None
    part_time: int | None = None
    column: str | None = None
    exists: bool = True

    def key(self) -> bytes:
        """The object part of its grants' keys."""
        if self.kind == GLOBAL:
            return layout.global_object()
        if self.kind == DATABASE:
            return layout.database_object(self.db or "")
        table_id = self.table_id or 0
        if self.kind == TABLE:
            return layout.table_object(table_id)
        if self.kind == PARTITION:
            return layout.partition_object(table_id, self.part_name or "")
        return layout.column_object(table_id, self.part_name or "", self.column or "")

    def record(self) -> dict[str, object]:
        """What a grant row keeps of its object (names of tables are looked up by id)."""
        return {"kind": self.kind, "db": self.db, "tid": self.table_id, "pn": self.part_name,
                "pv": list(self.part_values) if self.part_values is not None else None,
                "pt": self.part_time, "col": self.column}  # fmt: skip

    def ref(self) -> hms.HiveObjectRef:
        """The object as HMS reports it."""
        return hms.HiveObjectRef(
            objectType=self.kind, dbName=self.db, objectName=self.table,
            partValues=list(self.part_values) if self.part_values is not None else None,
            columnName=self.column,
        )  # fmt: skip

    def already(self, privilege: str, grantor: str | None) -> str:
        """HMS's message for a privilege granted twice by one grantor."""
        where = {GLOBAL: "", DATABASE: f" on database {self.db}",
                 TABLE: f" on table [{self.db},{self.table}]",
                 PARTITION: f" on partition [{self.db},{self.table},{self.part_name}]"}  # fmt: skip
        if self.kind == COLUMN:
            part = f",{self.part_name}" if self.part_name else ""
            return (f"{privilege} is already granted on column {self.column} "
                    f"[{self.db},{self.table}{part}] by {grantor}")  # fmt: skip
        return f"{privilege} is already granted{where[self.kind]} by {grantor}"

    def missing(self, privilege: str) -> str:
        """HMS's message for revoking a privilege that was not granted."""
        if self.kind == GLOBAL:
            return f"No user grant found for privileges {privilege}"
        if self.kind == DATABASE:
            return f"No database grant found for privileges {privilege} on database {self.db}"
        part = f", partition is {self.part_name}" if self.part_name else ""
        column = f", column name = {self.column}" if self.kind == COLUMN else ""
        return (f"No grant ({privilege}) found  on table {self.table}{part}{column}, "
                f"database is {self.db}")  # fmt: skip


@dataclass(frozen=True)
class Grant:
    """A stored grant."""

    key: bytes
    raw: bytes
    target: Target
    principal: str
    principal_type: int
    principal_uid: str | None
    privilege: str
    grantor: str | None
    grantor_type: int | None
    option: bool
    time: int

    @classmethod
    def parse(cls, key: bytes, raw: bytes) -> Grant:
        r = decode(raw)
        values = r.get("pv")
        target = Target(
            kind=int(r["kind"]), db=r.get("db"), table_id=r.get("tid"),
            part_name=r.get("pn"), part_values=tuple(values) if values is not None else None,
            part_time=r.get("pt"), column=r.get("col"),
        )  # fmt: skip
        return cls(
            key=key, raw=raw, target=target, principal=str(r["principal"]),
            principal_type=int(r["type"]), principal_uid=r.get("puid"),
            privilege=str(r["privilege"]), grantor=r.get("grantor"),
            grantor_type=r.get("grantor_type"), option=bool(r.get("option")),
            time=int(r.get("time") or 0),
        )  # fmt: skip

    def info(self) -> hms.PrivilegeGrantInfo:
        """What was granted, by whom, when."""
        return hms.PrivilegeGrantInfo(privilege=self.privilege, createTime=self.time,
                                      grantor=self.grantor, grantorType=self.grantor_type,
                                      grantOption=self.option)  # fmt: skip

    def without_option(self) -> bytes:
        """The row value once the grant option is taken away."""
        record = decode(self.raw)
        record["option"] = False
        return encode(record)


@dataclass(frozen=True)
class Principal:
    """A user, group or role as a grant names it (``part``: as keys hold it; None for a role
    that does not exist)."""

    name: str
    type: int
    uid: str | None
    part: bytes | None

    @classmethod
    def of(cls, name: str | None, principal_type: int | None, book: RoleBook) -> Principal:
        name = check_text(name, "Principal name")
        principal_type = check_principal_type(principal_type)
        role = book.get(name) if principal_type == ROLE else None
        return cls(name, principal_type, role.uid if role else None,
                   book.principal_part(name, principal_type))  # fmt: skip

    def holds(self, grant: Grant) -> bool:
        """Whether ``grant`` was made to this principal."""
        if grant.principal_type != self.type:
            return False
        return grant.principal_uid == self.uid if self.type == ROLE else (
            grant.principal == self.name)  # fmt: skip



class GrantsListener:
    """Frees the grant rows of dropped objects (``basics.changes``): a database's, a table's
    (its partitions' and columns' too), dropped partitions'."""

    def __init__(self, store: StoragePort) -> None:
        self._store = store

    def changed(self, change: changes.Change) -> None:
        """Forget the grants of what ``change`` dropped."""
        if change.action != changes.DROP:
            return
        if change.kind == changes.DATABASE:
            forget_database_grants(self._store, change.before.name)
        elif change.kind == changes.TABLE and change.table_id is not None:
            forget_table_grants(self._store, change.table_id)
        elif isinstance(change, changes.PartitionChange):
            forget_partition_grants(self._store, change.table.table_id,
                                    change.names(change.removed))  # fmt: skip
