"""Tables: create, get, list, alter (incl. rename), drop, with HMS's rules and messages."""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

from metastore_server.catalog import names
from metastore_server.catalog.context import CatalogContext
from metastore_server.catalog.databases import Databases
from metastore_server.catalog.serde import from_bytes, to_bytes
from metastore_server.thrift_api import hms
from planner.types import KeyKind, key_kind
from storage import layout
from storage.codec import encode_id
from storage.port import Condition, Delete, Put

DDL_TIME = "transient_lastDdlTime"
MANAGED_TABLE = "MANAGED_TABLE"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
MATERIALIZED_VIEW = "MATERIALIZED_VIEW"
INDEX_TABLE = "INDEX_TABLE"
TABLE_TYPES = frozenset(
    {MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW, MATERIALIZED_VIEW, INDEX_TABLE}
)


@dataclass(frozen=True)
class TableRef:
    """A stored table with what partition code needs: its id and typed partition keys."""

    db: str
    name: str
    table_id: int
    table: hms.Table
    #: Whether a partition ever held a non-canonical spelling of a typed value (layout.SPELLINGS).
    has_spellings: bool = False

    @functools.cached_property
    def key_names(self) -> list[str]:
        """Partition key names, lower-case, in order."""
        return [fs.name.lower() for fs in self.table.partitionKeys or []]

    @functools.cached_property
    def key_types(self) -> list[tuple[str, str]]:
        """(name, Hive type) of each partition key."""
        return [(fs.name.lower(), fs.type or "string") for fs in self.table.partitionKeys or []]

    @functools.cached_property
    def kinds(self) -> list[KeyKind]:
        """Comparison kind of each partition key."""
        return [key_kind(fs.type or "string") for fs in self.table.partitionKeys or []]

    @property
    def location(self) -> str | None:
        """The table's storage location, if it has one."""
        sd = self.table.sd
        return sd.location if sd is not None else None

    @property
    def is_external(self) -> bool:
        """External tables own no data: dropping them never deletes files."""
        params = self.table.parameters or {}
        return (self.table.tableType == EXTERNAL_TABLE) or (
            params.get("EXTERNAL", "").upper() == "TRUE"
        )


def _put_quick_stats(params: dict[str, str], stats: tuple[int, int] | None) -> None:
    """Set HMS's fast table statistics in ``params`` (nothing when they cannot be counted)."""
    if stats is not None:
        params["numFiles"], params["totalSize"] = str(stats[0]), str(stats[1])


def fill_storage_defaults(sd: hms.StorageDescriptor | None) -> None:
    """Fields HMS always returns set: empty skew info, storedAsSubDirectories false."""
    if sd is None:
        return
    if sd.skewedInfo is None:
        sd.skewedInfo = hms.SkewedInfo(
            skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}
        )
    if sd.storedAsSubDirectories is None:
        sd.storedAsSubDirectories = False


def _clear_catalog(table: hms.Table) -> None:
    """Drop the catalog name fields (2.3's id 16, 3.x's id 17): only the default catalog exists."""
    table.catName = None
    if hasattr(table, "catNameV3"):
        table.catNameV3 = None


def _lower_columns(columns: list[hms.FieldSchema] | None) -> list[hms.FieldSchema]:
    result = []
    for column in columns or []:
        copied = copy.copy(column)
        copied.name = (column.name or "").lower()
        result.append(copied)
    return result


class Tables:
    """Table rows on the store."""

    def __init__(self, ctx: CatalogContext, databases: Databases) -> None:
        self._ctx = ctx
        self._databases = databases

    # -- reads -------------------------------------------------------------------------------

    def find(self, db: str, name: str) -> TableRef | None:
        """The table, or None."""
        row = self._ctx.store.get(layout.TABLES, layout.table_key(db, name))
        if row is None or layout.OBJECT not in row or layout.TABLE_ID not in row:
            return None  # absent, or (HBase: one row lands column by column) not whole yet
        table = from_bytes(hms.Table, row[layout.OBJECT])
        table_id = int.from_bytes(row[layout.TABLE_ID], "big")
        return TableRef(db, name, table_id, table, layout.SPELLINGS in row)

    def get(self, db: str, name: str) -> TableRef:
        """The table; NoSuchObjectException ``db.t table not found`` when missing."""
        ref = self.find(db, name)
        if ref is None:
            raise hms.NoSuchObjectException(message=f"{db}.{name} table not found")
        return ref

    def names(
        self, db: str, pattern: str | None = None, table_type: str | None = None
    ) -> list[str]:
        """Table names of a database matching an HMS pattern (and type), sorted."""
        regex = names.pattern_to_regex(pattern)
        start, stop = layout.children_range(db)
        found = []
        for key, row in self._ctx.store.scan(layout.TABLES, start, stop):
            name = layout.name_from_child_key(key)
            if not regex.fullmatch(name):
                continue
            if table_type:
                table = from_bytes(hms.Table, row[layout.OBJECT])
                if (table.tableType or "") != table_type:
                    continue
            found.append(name)
        return sorted(found)

    def objects(self, db: str, table_names: list[str]) -> list[hms.Table]:
        """The tables that exist among ``table_names``, in that order (duplicates once)."""
        seen: set[str] = set()
        result = []
        for raw in table_names or []:
            name = names.normalize(raw)
            if name in seen:
                continue
            seen.add(name)
            ref = self.find(db, name)
            if ref is not None:
                result.append(ref.table)
        return result

    # -- writes ------------------------------------------------------------------------------

    def create(self, tbl: hms.Table) -> None:
        """Create a table with HMS defaults (names lower-case, location, DDL time)."""
        if tbl is None:
            raise hms.InvalidObjectException(message="Table cannot be null")
        db = names.normalize(tbl.dbName)
        name = names.normalize(tbl.tableName)
        if not names.is_valid_name(name):
            raise hms.InvalidObjectException(message=f"{tbl.tableName} is not a valid object name")
        table = copy.deepcopy(tbl)
        table.dbName, table.tableName = db, name
        _clear_catalog(table)
        self._validate_columns(table)
        if table.sd is None:
            table.sd = hms.StorageDescriptor(cols=[], parameters={})
        table.sd.cols = _lower_columns(table.sd.cols)
        table.partitionKeys = _lower_columns(table.partitionKeys)
        fill_storage_defaults(table.sd)
        if table.rewriteEnabled is None:
            table.rewriteEnabled = False
        params = dict(table.parameters or {})
        if not table.tableType:
            external = params.get("EXTERNAL", "").upper() == "TRUE"
            table.tableType = EXTERNAL_TABLE if external else MANAGED_TABLE
        now = self._ctx.now()
        table.createTime = table.createTime or now
        params.setdefault(DDL_TIME, str(now))
        table.parameters = params
        with self._ctx.write_lock:
            database = self._databases.find(db)
            if database is None:
                raise hms.InvalidObjectException(message=db)
            is_view = table.tableType in (VIRTUAL_VIEW, MATERIALIZED_VIEW)
            if not table.sd.location and not is_view:
                table.sd.location = self._ctx.warehouse.child_location(database.locationUri, name)
            if self.find(db, name) is not None:
                raise hms.AlreadyExistsException(message=f"Table {name} already exists")
            table_id = self._ctx.store.increment(
                layout.META, layout.COUNTERS_ROW, layout.NEXT_TABLE_ID
            )
            key = layout.table_key(db, name)
            created = self._ctx.store.mutate(
                [
                    Put(
                        layout.TABLES,
                        key,
                        {layout.OBJECT: to_bytes(table), layout.TABLE_ID: encode_id(table_id)},
                    )
                ],
                Condition(layout.TABLES, key, layout.OBJECT, None),
            )
            if not created:
                raise hms.AlreadyExistsException(message=f"Table {name} already exists")
        if not is_view:
            self._ctx.warehouse.make_dirs(table.sd.location)

    def alter(
        self, db: str, name: str, new_tbl: hms.Table, *, update_stats: bool = True
    ) -> TableRef:
        """Replace a table's definition; a new db/name renames it (metadata only).

        Partition keys cannot change. Returns the stored table. With ``update_stats`` (HMS does
        it unless the client says DO_NOT_UPDATE_STATS) an unpartitioned table's ``numFiles``
        and ``totalSize`` are counted again from its directory.
        """
        if new_tbl is None:
            raise hms.InvalidOperationException(message="New table is invalid: null")
        with self._ctx.write_lock:
            current = self.find(db, name)
            if current is None:
                raise hms.InvalidOperationException(message=f"{db}.{name} table not found")
            new_db = names.normalize(new_tbl.dbName) or db
            new_name = names.normalize(new_tbl.tableName) or name
            if not names.is_valid_name(new_name):
                raise hms.InvalidOperationException(
                    message=f"new table name {new_tbl.tableName} is not a valid object name"
                )
            table = copy.deepcopy(new_tbl)
            table.dbName, table.tableName = new_db, new_name
            _clear_catalog(table)
            if table.sd is not None:
                table.sd.cols = _lower_columns(table.sd.cols)
            fill_storage_defaults(table.sd)
            if table.rewriteEnabled is None:
                table.rewriteEnabled = False
            table.partitionKeys = _lower_columns(table.partitionKeys)
            old_keys = [(fs.name, fs.type) for fs in current.table.partitionKeys or []]
            new_keys = [(fs.name, fs.type) for fs in table.partitionKeys or []]
            if old_keys != new_keys:
                raise hms.InvalidOperationException(message="partition keys can not be changed.")
            self._validate_columns(table, error=hms.InvalidOperationException)
            params = dict(table.parameters or {})
            if not params.get(DDL_TIME):
                params[DDL_TIME] = str(self._ctx.now())
            table.parameters = params
            if not table.tableType:
                table.tableType = current.table.tableType
            is_view = table.tableType in (VIRTUAL_VIEW, MATERIALIZED_VIEW)
            if not is_view and (table.sd is None or not table.sd.location):
                raise hms.MetaException(
                    message=f"Can not alter table {db}.{name}: its new definition has no location"
                )
            if update_stats and not is_view and not table.partitionKeys:
                _put_quick_stats(params, self._ctx.warehouse.quick_stats(table.sd.location))
            table.createTime = current.table.createTime
            ops: list[Put | Delete] = []
            new_key = layout.table_key(new_db, new_name)
            condition = None
            if (new_db, new_name) != (db, name):
                if self._databases.find(new_db) is None:
                    raise hms.InvalidOperationException(
                        message=(
                            f"Unable to change partition or table. Database {new_db} does not exist"
                        )
                    )
                if self.find(new_db, new_name) is not None:
                    raise hms.InvalidOperationException(
                        message=f"new table {new_db}.{new_name} already exists"
                    )
                condition = Condition(layout.TABLES, new_key, layout.OBJECT, None)
            # The new row first: on a store without atomic batches a failure in between then
            # leaves both names, never neither.
            columns = {layout.OBJECT: to_bytes(table), layout.TABLE_ID: encode_id(current.table_id)}
            if current.has_spellings:
                columns[layout.SPELLINGS] = b"1"
            ops.append(Put(layout.TABLES, new_key, columns))
            if condition is not None:
                ops.append(Delete(layout.TABLES, layout.table_key(db, name)))
            if not self._ctx.store.mutate(ops, condition):
                raise hms.InvalidOperationException(
                    message=f"new table {new_db}.{new_name} already exists"
                )
            return TableRef(new_db, new_name, current.table_id, table, current.has_spellings)

    def mark_spellings(self, ref: TableRef) -> None:
        """Record on the table row that a partition holds a non-canonical typed spelling."""
        self._ctx.store.mutate(
            [Put(layout.TABLES, layout.table_key(ref.db, ref.name), {layout.SPELLINGS: b"1"})]
        )

    def delete_row(self, ref: TableRef) -> None:
        """Remove the table row (the caller removes partitions and data)."""
        self._ctx.store.mutate([Delete(layout.TABLES, layout.table_key(ref.db, ref.name))])

    @staticmethod
    def _validate_columns(
        table: hms.Table, error: type[Exception] = hms.InvalidObjectException
    ) -> None:
        columns = [(c.name or "").lower() for c in (table.sd.cols if table.sd else None) or []]
        keys = [(k.name or "").lower() for k in table.partitionKeys or []]
        for key in keys:
            if not key:
                raise error(message="Partition column name cannot be empty")
            if key in columns:
                raise error(message=f"Partition column name {key} conflicts with table columns.")
        if len(set(keys)) != len(keys):
            raise error(message="Duplicate partition column names")
