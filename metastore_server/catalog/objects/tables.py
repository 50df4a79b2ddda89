"""Tables: create, get, list, alter (incl. rename), drop, with HMS's rules and messages."""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import (
    ALTER,
    CREATE,
    TABLE,
    Change,
    TableChange,
    TableListeners,
    truncating,
)
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.fast_stats import Context, FastStats
from metastore_server.catalog.data.operations import DataOperations, MadeDirs
from metastore_server.catalog.objects import table_index, transactional
from metastore_server.catalog.objects.databases import Databases
from metastore_server.catalog.objects.table_checks import (
    check_column_types,
    check_partition_keys,
    refuse_code_properties,
    refuse_duplicate_columns,
    refuse_incompatible_types,
)
from metastore_server.planner.types import KeyKind, key_kind
from metastore_server.storage import layout, retrying
from metastore_server.storage.codec import encode_id
from metastore_server.storage.port import Condition, Delete, Put, Row
from metastore_server.storage.retrying import LOST, Lost
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import deep_copy, from_bytes, to_bytes

DDL_TIME = "transient_lastDdlTime"
MANAGED_TABLE = "MANAGED_TABLE"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
MATERIALIZED_VIEW = "MATERIALIZED_VIEW"
INDEX_TABLE = "INDEX_TABLE"
#: Table properties about dropped data: skip the trash (HMS's ``auto.purge``, and the
#: ``auth.purge`` spelling some documents give it); an external table's data goes too.
AUTO_PURGE = ("auto.purge", "auth.purge")
EXTERNAL_PURGE = "external.table.purge"
TABLE_TYPES = frozenset(
    {MANAGED_TABLE, EXTERNAL_TABLE, VIRTUAL_VIEW, MATERIALIZED_VIEW, INDEX_TABLE}
)
#: An alter's environment context may make it a compare-and-set on one table parameter
#: (HMS 4, the lock-free commit of Iceberg tables): the stored table's parameter of this key
#: must still hold this value, checked in the write that alters.
EXPECTED_KEY = "expected_parameter_key"
EXPECTED_VALUE = "expected_parameter_value"
_COUNTER_BYTES = 8


@dataclass(frozen=True)
class TableRef:
    """A stored table with what partition code needs: its id and typed partition keys."""

    db: str
    name: str
    table_id: int
    table: hms.Table
    #: Whether a partition ever held a non-canonical spelling of a typed value (layout.SPELLINGS).
    has_spellings: bool = False
    #: The row's version stamp (layout.TIMELINE_VERSION), None when it has none.
    stamp: bytes | None = None
    #: The stored encoding of ``table`` as read (for a compare-and-set on it).
    object_bytes: bytes | None = field(default=None, repr=False, compare=False)
    #: False when the stamp was not written with this definition: a write is in flight on a
    #: store without atomic batches (or its writer died half-way).
    settled: bool = True
    #: Whether a partition change of this table died before its timelines were stored
    #: (``layout.TIMELINE_PENDING``; or one is being written right now).
    timelines_pending: bool = False
    #: (writer, time it began) of the timeline writers marked on the row
    #: (``layout.TIMELINE_WRITER``: stores whose writers do not lock each other out).
    timeline_writers: tuple[tuple[str, float], ...] = ()

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


def owns_data(ref: TableRef) -> bool:
    """Whether dropping the table (or its partitions) deletes data: a managed table, or an
    external one with ``external.table.purge=true`` (HMS 3 and later); never a view."""
    return table_owns_data(ref.table)


def table_owns_data(table: hms.Table) -> bool:
    """``owns_data`` of a table definition."""
    if table.tableType in (VIRTUAL_VIEW, MATERIALIZED_VIEW):
        return False
    params = table.parameters or {}
    external = table.tableType == EXTERNAL_TABLE or params.get("EXTERNAL", "").upper() == "TRUE"
    return not external or params.get(EXTERNAL_PURGE, "").lower() == "true"


def must_purge(ref: TableRef) -> bool:
    """Whether the table's dropped data skips the trash whatever the call says
    (``auto.purge=true``, as HMS)."""
    params = ref.table.parameters or {}
    return any(params.get(name, "").lower() == "true" for name in AUTO_PURGE)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=8).digest()


def next_stamp(previous: bytes | None, data: bytes) -> bytes:
    """The stamp of a table row rewritten with definition ``data`` after ``previous``."""
    counter = int.from_bytes(previous[:_COUNTER_BYTES], "big") if previous else 0
    return ((counter + 1) % 2**64).to_bytes(_COUNTER_BYTES, "big") + _digest(data)


def stamp_settled(stamp: bytes | None, data: bytes) -> bool:
    """Whether ``stamp`` was written together with definition ``data`` (no stamp: yes)."""
    return stamp is None or stamp[_COUNTER_BYTES:] == _digest(data)


def row_condition(ref: TableRef) -> Condition:
    """The compare-and-set guard of a rewrite of ``ref``'s row: its stamp, or (no stamp yet)
    its definition as read, so that a row dropped meanwhile is never written back."""
    key = layout.table_key(ref.db, ref.name)
    if ref.stamp is not None:
        return Condition(layout.TABLES, key, layout.TIMELINE_VERSION, ref.stamp)
    return Condition(layout.TABLES, key, layout.OBJECT, ref.object_bytes)


def expected_parameter(context: Context) -> tuple[str, str] | None:
    """The (key, value) an alter's environment context expects the stored table's parameter
    to hold (``expected_parameter_key`` / ``expected_parameter_value``), None when it sets
    not both."""
    key = (context or {}).get(EXPECTED_KEY)
    value = (context or {}).get(EXPECTED_VALUE)
    return None if key is None or value is None else (key, value)


def refuse_unexpected(table: hms.Table, expected: tuple[str, str] | None) -> None:
    """MetaException (HMS 4's sense) when ``table``'s parameter is not the expected one."""
    if expected is None:
        return
    key, value = expected
    actual = (table.parameters or {}).get(key)
    if actual != value:
        raise hms.MetaException(
            message=(
                f"The table has been modified. The parameter value for key '{key}' is "
                f"'{actual}'. The expected was value was '{value}'"
            )
        )


def unable_to_create(uri: str, detail: str) -> Exception:
    """HMS's refusal of a table or partition whose directory cannot be made."""
    return hms.MetaException(message=f"{uri} is not a directory or unable to create one ({detail})")


def _check_owned_location(table: hms.Table, old: hms.Table, data: DataOperations) -> None:
    """An alter giving a table that owns its data a new location, or making a table own data
    at its location, is refused when that location is outside the data roots."""
    location = table.sd.location if table.sd else None
    old_location = old.sd.location if old.sd else None
    if location == old_location and table_owns_data(old):
        return

    def refuse(reason: str) -> Exception:
        return hms.InvalidOperationException(
            message=f"Alter Table operation for {old.dbName}.{old.tableName} failed: {reason}"
        )

    data.check_inside(location, refuse)


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
    """Drop the catalog name (HMS 3's id 17): only the default catalog holds tables."""
    table.catName = None


def column_types(table: hms.Table) -> list[tuple[str, str]]:
    """(name, type) of a table's data columns, lower-case, types without blanks."""
    columns = (table.sd.cols if table.sd else None) or []
    return [((c.name or "").lower(), (c.type or "").replace(" ", "").lower()) for c in columns]


def target_exists(new_tbl: hms.Table, db: str, name: str) -> Exception:
    """HMS's refusal of a rename onto an existing table (the names as the client sent them)."""
    return hms.InvalidOperationException(
        message=f"new table {new_tbl.dbName or db}.{new_tbl.tableName or name} already exists"
    )


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
        #: Told of every creation and alteration, inside the change (``basics.changes``).
        self.listeners = TableListeners()
        self._stats = FastStats(ctx.data, autogather=ctx.stats_autogather)

    # -- reads -------------------------------------------------------------------------------

    def find(self, db: str, name: str) -> TableRef | None:
        """The table, or None."""
        return _ref_of(db, name, self._ctx.store.get(layout.TABLES, layout.table_key(db, name)))

    def find_settled(self, db: str, name: str) -> TableRef | None:
        """The table as ``find`` reads it, once no write of its row is in flight (a store
        without atomic batches lands a stamped row in two steps; read again after short
        pauses, ``retrying.SETTLING_ROW``, then taken as it is); to base a rewrite on."""
        ref: TableRef | None = None

        def attempt() -> TableRef | None | Lost:
            nonlocal ref
            ref = self.find(db, name)
            return ref if ref is None or ref.settled else LOST

        retrying.race(retrying.SETTLING_ROW, attempt)
        return ref

    def get(self, db: str, name: str) -> TableRef:
        """The table; NoSuchObjectException ``db.t table not found`` when missing."""
        ref = self.find(db, name)
        if ref is None:
            raise hms.NoSuchObjectException(message=f"{db}.{name} table not found")
        return ref

    def names(
        self, db: str, pattern: str | None = None, table_type: str | None = None
    ) -> list[str]:
        """Table names of a database matching an HMS pattern (and type), sorted: read from
        the rows' keys and index column (``table_index``), no definition decoded."""
        found, metas = self.listed(db, pattern)
        if table_type:
            return table_index.names_of_type(found, metas, table_type)
        return found

    def listed(self, db: str, pattern: str | None = None) -> tuple[list[str], list[bytes]]:
        """The names of the tables of a database matching an HMS pattern, sorted, and the
        index column (``layout.TABLE_META``) of each."""
        return table_index.matching(self._ctx, db, names.NamePattern(pattern))

    def every_table(self) -> Iterator[TableRef]:
        """Every table of every database (a database drop keeps what others hold)."""
        for key, row in self._ctx.store.scan(layout.TABLES):
            db_bytes, _, _ = key.partition(b"\x00")
            ref = _ref_of(db_bytes.decode("utf-8"), layout.name_from_child_key(key), row)
            if ref is not None:
                yield ref

    def stored_objects(self, db: str, table_names: list[str]) -> list[bytes]:
        """The stored definitions of the tables that exist among ``table_names``, in that order
        (duplicates once), as they are stored (Thrift binary)."""
        return table_index.stored_definitions(self._ctx, db, table_names or [])

    # -- writes ------------------------------------------------------------------------------

    def create(
        self, tbl: hms.Table, *, then: Callable[[], None] | None = None, context: Context = None
    ) -> None:
        """Create a table with HMS defaults (names lower-case, location, DDL time, fast
        statistics by the call's environment ``context``); ``then`` runs once the row is
        written, in the same change (when it fails, the table and its directory go too)."""
        if tbl is None:
            raise hms.InvalidObjectException(message="Table cannot be null")
        db = names.normalize(tbl.dbName)
        name = names.normalize(tbl.tableName)
        if not names.is_valid_name(name):
            raise hms.InvalidObjectException(message=f"{tbl.tableName} is not a valid object name")
        check_column_types(tbl, hms.InvalidObjectException, partition_keys=True)
        refuse_code_properties(tbl.parameters, None, f"Table {db}.{name}",
                               hms.InvalidObjectException)
        table = deep_copy(tbl)
        table.dbName, table.tableName = db, name
        _clear_catalog(table)
        check_partition_keys(table, hms.InvalidObjectException)
        table.parameters = transactional.on_create(table)
        table.sd.cols = _lower_columns(table.sd.cols)
        table.partitionKeys = _lower_columns(table.partitionKeys)
        change = TableChange(table, None, hms.InvalidObjectException)
        self.listeners.check_definition(change)
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
            refuse_duplicate_columns(table)
            self.listeners.check(change)
            self.listeners.before_write(change)
            made = self._make_directory(table, is_view, context)
            try:
                table_id = self._ctx.store.increment(
                    layout.META, layout.COUNTERS_ROW, layout.NEXT_TABLE_ID
                )
                key = layout.table_key(db, name)
                created = self._ctx.store.mutate(
                    [
                        Put(
                            layout.TABLES,
                            key,
                            {
                                layout.OBJECT: to_bytes(table),
                                layout.TABLE_ID: encode_id(table_id),
                                layout.TABLE_META: table_index.meta_column(table),
                            },
                        )
                    ],
                    Condition(layout.TABLES, key, layout.OBJECT, None),
                )
                if not created:
                    raise hms.AlreadyExistsException(message=f"Table {name} already exists")
                if then is not None:
                    then()
            except BaseException:
                self._ctx.data.undo(made)
                raise
            self._ctx.changes.announce(
                Change(TABLE, CREATE, after=table, when=now, table_id=table_id)
            )

    def _make_directory(self, table: hms.Table, is_view: bool, context: Context) -> MadeDirs:
        """A new table's fast statistics of files already there, then its directory: first,
        as in HMS (a table whose directory cannot be made is refused)."""
        self._stats.table_created(table, context)
        return self._ctx.data.make_dirs(
            [None if is_view else table.sd.location],
            unable_to_create,
            owned=table_owns_data(table),
        )

    def alter(
        self,
        db: str,
        name: str,
        new_tbl: hms.Table,
        *,
        context: Context = None,
        extra_ops: Sequence[Put | Delete] = (),
        check_types: bool = False,
    ) -> TableRef:
        """Replace a table's definition; a new db/name renames it (its data is the caller's).

        Partition keys cannot change. Returns the stored table. An unpartitioned table's fast
        statistics are counted again by HMS's rules (``data.fast_stats``; ``context`` is the
        call's environment context). The table listeners
        (``listeners``) may refuse or adjust the new definition; a stamped row
        (``layout.TIMELINE_VERSION``) is rewritten with a new stamp, compare-and-set on the old
        one, and read again when another process changed it. ``extra_ops`` are written with the
        row (partitions relocated by a rename). With ``check_types`` (HMS's
        ``hive.metastore.disallow.incompatible.col.type.changes``) a column may only change to
        a type its old one converts to (not checked for views). A ``context`` carrying
        ``expected_parameter_key``/``_value`` alters only while the stored parameter holds
        that value, compare-and-set on the row (MetaException otherwise).
        """
        if new_tbl is None:
            raise hms.InvalidOperationException(message="New table is invalid: null")
        new_name = names.normalize(new_tbl.tableName) or name
        if not names.is_valid_name(new_name):
            raise hms.InvalidOperationException(
                message=f"{new_tbl.tableName} is not a valid object name"
            )
        check_column_types(new_tbl, hms.InvalidOperationException)

        def attempt() -> TableRef | Lost:
            current = self.find_settled(db, name)
            if current is None:
                raise hms.InvalidOperationException(message=f"{db}.{name} table not found")
            if check_types and current.table.tableType != VIRTUAL_VIEW:
                refuse_incompatible_types(current.table, new_tbl)
            refuse_unexpected(current.table, expected_parameter(context))
            refuse_code_properties(new_tbl.parameters, current.table.parameters,
                                   f"Table {db}.{name}", hms.InvalidOperationException)
            stored = self._write_altered(current, new_tbl, context, extra_ops)
            if stored is None:
                return LOST  # another process changed the row: read it again
            self._ctx.changes.announce(Change(
                TABLE, ALTER, before=current.table, after=stored.table,
                when=self._ctx.now(), table_id=current.table_id,
                truncate=truncating(context),
            ))  # fmt: skip
            return stored

        with self._ctx.write_lock:
            altered = retrying.race(retrying.TABLE_ALTER, attempt)
            if altered is not LOST:
                return altered
            raise hms.MetaException(
                message=(
                    f"Can not alter table {db}.{name}: other server processes kept changing it "
                    f"({retrying.TABLE_ALTER_ATTEMPTS} attempts)"
                )
            )

    def _write_altered(
        self,
        current: TableRef,
        new_tbl: hms.Table,
        context: Context,
        extra_ops: Sequence[Put | Delete] = (),
    ) -> TableRef | None:
        """Store the new definition of ``current``; None when its stamp changed meanwhile."""
        db, name = current.db, current.name
        table = self._altered(current, new_tbl, context)
        new_db, new_name = table.dbName, table.tableName
        ops: list[Put | Delete] = []
        new_key = layout.table_key(new_db, new_name)
        renamed = (new_db, new_name) != (db, name)
        if renamed:
            if self._databases.find(new_db) is None:
                raise hms.InvalidOperationException(
                    message=(
                        f"Unable to change partition or table. Database {new_db} does not exist"
                    )
                )
            if self.find(new_db, new_name) is not None:
                raise target_exists(new_tbl, new_db, new_name)
        change = TableChange(table, current.table, hms.InvalidOperationException, current)
        self.listeners.before_write(change)
        data = to_bytes(table)
        # The new row first: on a store without atomic batches a failure in between then
        # leaves both names, never neither.
        columns = {layout.OBJECT: data, layout.TABLE_ID: encode_id(current.table_id),
                   layout.TABLE_META: table_index.meta_column(table)}  # fmt: skip
        if current.has_spellings:
            columns[layout.SPELLINGS] = b"1"
        stamp = None
        condition = None
        guarded = expected_parameter(context) is not None
        if current.stamp is not None or change.then or guarded:
            # A rename carries the stamp on: the counter goes on, the digest follows the row.
            if current.stamp is not None or change.then:
                stamp = columns[layout.TIMELINE_VERSION] = next_stamp(current.stamp, data)
            condition = row_condition(current)
        if renamed:
            condition = Condition(layout.TABLES, new_key, layout.OBJECT, None)
        ops.append(Put(layout.TABLES, new_key, columns))
        if renamed:
            ops.append(Delete(layout.TABLES, layout.table_key(db, name)))
        ops.extend(extra_ops)
        if not self._ctx.store.mutate(ops, condition):
            if renamed:
                raise target_exists(new_tbl, new_db, new_name)
            return None
        stored = TableRef(
            new_db,
            new_name,
            current.table_id,
            table,
            current.has_spellings,
            stamp=stamp,
            object_bytes=data,
        )
        for step in change.then:
            step(stored)
        return stored

    def _altered(self, current: TableRef, new_tbl: hms.Table, context: Context) -> hms.Table:
        """The new definition of ``current`` with HMS's rules applied (names, columns,
        defaults, DDL time, statistics)."""
        db, name = current.db, current.name
        new_db = names.normalize(new_tbl.dbName) or db
        new_name = names.normalize(new_tbl.tableName) or name
        table = deep_copy(new_tbl)
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
        check_partition_keys(table, hms.InvalidOperationException)
        refuse_duplicate_columns(table)
        table.parameters = transactional.on_alter(table, current.table)
        self.listeners.check(TableChange(table, current.table, hms.InvalidOperationException))
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
        if not is_view and table_owns_data(table):
            _check_owned_location(table, current.table, self._ctx.data)
        self._stats.table_altered(table, current.table, context)
        table.createTime = current.table.createTime
        return table

    def database_locations(self) -> list[str]:
        """The location of every database."""
        return self._databases.locations()

    def mark_spellings(self, ref: TableRef) -> None:
        """Record on the table row that a partition holds a non-canonical typed spelling."""
        self._ctx.store.mutate(
            [Put(layout.TABLES, layout.table_key(ref.db, ref.name), {layout.SPELLINGS: b"1"})]
        )

    def delete_row(self, ref: TableRef) -> None:
        """Remove the table row (the caller removes partitions and data), if it is still the
        table ``ref`` read: NoSuchObjectException when another server process dropped it
        meanwhile (and maybe created another under the name, which stays)."""
        key = layout.table_key(ref.db, ref.name)
        still = Condition(layout.TABLES, key, layout.TABLE_ID, encode_id(ref.table_id))
        if not self._ctx.store.mutate([Delete(layout.TABLES, key)], still):
            raise hms.NoSuchObjectException(message=f"{ref.db}.{ref.name} table not found")


def _ref_of(db: str, name: str, row: Row | None) -> TableRef | None:
    """The table of a stored table row, or None."""
    if row is None or layout.OBJECT not in row or layout.TABLE_ID not in row:
        return None  # absent, or (HBase: one row lands column by column) not whole yet
    data = row[layout.OBJECT]
    table_id = int.from_bytes(row[layout.TABLE_ID], "big")
    stamp = row.get(layout.TIMELINE_VERSION)
    return TableRef(
        db,
        name,
        table_id,
        from_bytes(hms.Table, data),
        layout.SPELLINGS in row,
        stamp=stamp,
        object_bytes=data,
        settled=stamp_settled(stamp, data),
        timelines_pending=layout.TIMELINE_PENDING in row,
        timeline_writers=layout.timeline_writers(row),
    )
