"""The catalog: the services of each object kind, and the operations that span several."""

from __future__ import annotations

import copy

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.changes import DATABASE, DROP, TABLE, Change, WhenDropped
from metastore_server.catalog.core import metrics_reports
from metastore_server.catalog.core.context import WRITER_LEASE_S, CatalogContext
from metastore_server.catalog.core.listing_cache import DEFAULT_MAX_BYTES, ListingCache
from metastore_server.catalog.data.deletions import Deletion
from metastore_server.catalog.data.fast_stats import Context
from metastore_server.catalog.data.guard_index import NamedDirs, OtherTables
from metastore_server.catalog.data.moves import Move
from metastore_server.catalog.data.operations import DataOperations
from metastore_server.catalog.data.warehouse import Warehouse
from metastore_server.catalog.dependencies.store import AlterPlan, Dependencies
from metastore_server.catalog.dependencies.table_rules import DependentTableRules
from metastore_server.catalog.events import formats
from metastore_server.catalog.events.listener import NotificationListener
from metastore_server.catalog.events.log import DEFAULT_TTL_S as DEFAULT_EVENT_TTL_S
from metastore_server.catalog.objects import constraints, indexes
from metastore_server.catalog.objects.catalogs import Catalogs
from metastore_server.catalog.objects.connectors import DataConnectors
from metastore_server.catalog.objects.constraints import Constraints
from metastore_server.catalog.objects.databases import DEFAULT_DATABASE, Databases
from metastore_server.catalog.objects.functions import Functions
from metastore_server.catalog.objects.indexes import Indexes
from metastore_server.catalog.objects.partition_marks import PartitionEvents
from metastore_server.catalog.objects.properties import Properties
from metastore_server.catalog.objects.statistics import Statistics, StatisticsListener
from metastore_server.catalog.objects.table_outlines import KeptOutlines, Outlines
from metastore_server.catalog.objects.tables import (
    TableRef,
    Tables,
    must_purge,
    owns_data,
    target_exists,
)
from metastore_server.catalog.objects.types import TypeRegistry
from metastore_server.catalog.partitions.service import Partitions
from metastore_server.catalog.partitions.truncation import Truncation
from metastore_server.catalog.reads.partition_reads import PartitionReads
from metastore_server.catalog.registry.procedures import Procedures
from metastore_server.catalog.registry.replication_metrics import ReplicationMetrics
from metastore_server.catalog.registry.runtime_stats import RuntimeStats
from metastore_server.catalog.registry.scheduled_queries import ScheduledQueries
from metastore_server.catalog.registry.schemas import Schemas
from metastore_server.catalog.registry.wm_parts import PlanParts
from metastore_server.catalog.registry.wm_plans import ResourcePlans
from metastore_server.catalog.registry.wm_store import PlanStore
from metastore_server.catalog.security.grants import GrantsListener
from metastore_server.catalog.security.privileges import Security
from metastore_server.catalog.security.secrets import Secrets
from metastore_server.catalog.timelines.keeper import TimelineKeeper
from metastore_server.catalog.txn.compactions import Compactions
from metastore_server.catalog.txn.transactions import DEFAULT_TIMEOUT_S as DEFAULT_TXN_TIMEOUT_S
from metastore_server.catalog.txn.transactions import Transactions
from metastore_server.catalog.txn.write_ids import WriteIds
from metastore_server.catalog.views.materialized import MaterializedViews
from metastore_server.storage import layout
from metastore_server.storage.port import Put, StoragePort
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import deep_copy


class Catalog:
    """Databases, tables, partitions and functions of one store, with HMS semantics."""

    def __init__(
        self,
        store: StoragePort,
        warehouse: Warehouse,
        *,
        partition_request_limit: int = -1,
        listing_cache_bytes: int = DEFAULT_MAX_BYTES,
        writer_lease_s: float = WRITER_LEASE_S,
        data: DataOperations | None = None,
        txn_timeout_s: float = DEFAULT_TXN_TIMEOUT_S,
        event_ttl_s: float = DEFAULT_EVENT_TTL_S,
        notification_log: bool = True,
        event_messages: str = "json",
        stats_autogather: bool = True,
    ) -> None:
        store.ensure_tables(layout.TABLE_SPECS)
        self.ctx = CatalogContext(
            store=store,
            warehouse=warehouse,
            data=data or DataOperations(protected=[warehouse.root_uri]),
            partition_request_limit=partition_request_limit,
            listing_cache=ListingCache(listing_cache_bytes),
            writer_lease_s=writer_lease_s,
            event_ttl_s=event_ttl_s,
            notification_log=notification_log,
            event_message_format=formats.SETTINGS[event_messages],
            stats_autogather=stats_autogather,
        )
        self.catalogs = Catalogs(self.ctx)
        self.connectors = DataConnectors(self.ctx)
        self.properties = Properties(self.ctx)
        self.databases = Databases(self.ctx, self.catalogs, self.connectors)
        self.tables = Tables(self.ctx, self.databases)
        self.timelines = TimelineKeeper(self.ctx, self.tables)
        self.dependencies = Dependencies(self.ctx, self.tables)
        self.partition_reads = PartitionReads(self.ctx, self.tables)
        self.partitions = Partitions(self.ctx, self.tables, self.dependencies)
        self.truncation = Truncation(
            self.ctx, self.databases, self.tables, self.partitions, self.partition_reads
        )
        self.functions = Functions(self.ctx, self.databases)
        self.transactions = Transactions(self.ctx, txn_timeout_s)
        self.compactions = Compactions(self.ctx)
        self.write_ids = WriteIds(self.transactions, self.tables)
        self.views = MaterializedViews(self.tables, self.transactions, self.compactions)
        self.statistics = Statistics(self.ctx, self.tables)
        self.secrets = Secrets(self.ctx)
        self.constraints = Constraints(self.ctx, self.tables)
        self.indexes = Indexes(self.ctx, self.tables)
        self.types = TypeRegistry(self.ctx)
        self.scheduled_queries = ScheduledQueries(self.ctx)
        self.procedures = Procedures(self.ctx, self.databases)
        self.runtime_stats = RuntimeStats(self.ctx)
        self.replication_metrics = ReplicationMetrics(self.ctx)
        plan_store = PlanStore(self.ctx)
        self.resource_plans = ResourcePlans(self.ctx, plan_store)
        self.plan_parts = PlanParts(plan_store)
        self.schemas = Schemas(self.ctx, self.databases)
        self.partition_events = PartitionEvents(self.ctx, self.tables)
        self.security = Security(self.ctx, self.databases, self.tables, self.partition_reads)
        self._outlines = KeptOutlines(self.ctx)
        self._listen()
        self.catalogs.ensure_default()
        self.databases.ensure_default()
        self.security.ensure_builtin()

    def _listen(self) -> None:
        """Register every listener of changes (``basics.changes``), in the order they hear
        them: of a table about to be created or altered, the timelines (their declaration and
        parameters) and the dependent-table rules; around each partition write, the
        timelines; of written changes, the rows that hang on a changed object, and the
        notification events last."""
        store, changes = self.ctx.store, self.ctx.changes
        self.tables.listeners.register(self.timelines)
        self.tables.listeners.register(DependentTableRules(store, self.tables))
        changes.register_around(self.timelines)
        changes.register(StatisticsListener(store))
        changes.register(WhenDropped(TABLE, lambda tid: constraints.forget_table(store, tid)))
        changes.register(GrantsListener(store))
        changes.register(WhenDropped(TABLE, lambda tid: indexes.forget_table(store, tid)))
        changes.register(WhenDropped(TABLE, lambda t: metrics_reports.forget_table(store, t)))
        changes.register(self.timelines)
        changes.register(NotificationListener(self.ctx.events))

    def drop_table(
        self,
        db: str,
        name: str,
        delete_data: bool,
        dropping: frozenset[str] = frozenset(),
        *,
        purge: bool = False,
        index_drop: bool = False,
    ) -> None:
        """Drop a table and its partitions; a table that owns its data (managed, or
        ``external.table.purge``) loses its directory and its partitions' directories outside
        it when asked, once the metadata is gone (to the trash unless ``purge``). The drop
        policies of tables depending on it apply (other than those in ``dropping``, the
        ``db.table`` names one call drops together). Its indexes go with it, their index
        tables with their data (as HMS); an index table itself is dropped only with its index
        (``index_drop``)."""
        with self.ctx.write_lock:
            ref = self.tables.get(db, name)
            if not index_drop:
                indexes.refuse_index_table(ref)
            self.dependencies.guard_table_drop(ref, dropping)
            index_tables = self.indexes.index_tables(ref)
            gone = frozenset(f"{r.db}.{r.name}" for r in (ref, *index_tables))
            deletions = self._plan_table_data(ref, delete_data, purge, gone)
            for index_ref in index_tables:
                deletions.extend(self._plan_table_data(index_ref, True, purge, gone))
            self._drop_table_rows(ref)
            for index_ref in index_tables:
                self._drop_table_rows(index_ref)
            self.ctx.data.reserve(deletions)
            self.ctx.delete_after_commit(deletions)

    def truncate_table(self, db: str, name: str, part_names: list[str] | None) -> None:
        """Delete a managed table's data (or its named partitions'), keep its metadata and
        reset its basic statistics (``partitions/truncation.py``)."""
        self.truncation.truncate(db, name, part_names)

    def _drop_table_rows(self, ref: TableRef) -> None:
        bases = self.dependencies.bases_of(ref)
        self.tables.delete_row(ref)
        self.partitions.drop_all(ref)
        self.dependencies.forget(ref, bases)
        self.ctx.changes.announce(
            Change(TABLE, DROP, before=ref.table, when=self.ctx.now(), table_id=ref.table_id)
        )

    def _plan_table_data(
        self, ref: TableRef, delete_data: bool, purge: bool, gone: frozenset[str] = frozenset()
    ) -> list[Deletion | None]:
        """What dropping ``ref`` deletes, checked before anything changes (MetaException
        ``Table metadata not deleted since ...`` when it cannot be deleted); other tables'
        directories than those ``gone`` (``db.table``) stay when ``other_tables`` is set."""
        if not (delete_data and owns_data(ref) and self.ctx.data.enabled):
            return []

        def refuse(reason: str) -> Exception:
            return hms.MetaException(message=f"Table metadata not deleted since {reason}")

        purge = purge or must_purge(ref)
        guards = self.ctx.data.guard_index(self.databases.locations())
        deletions = self.partitions.plan_outside_deletions(ref, purge, refuse, guards)
        # A dependent's directory that is, holds or lies in a base's holds the base's data.
        if not self.dependencies.shares_data_with_bases(ref, self.dependencies.bases_of(ref)):
            deletions.append(
                self.ctx.data.plan_delete(
                    ref.location,
                    what=f"table {ref.db}.{ref.name}",
                    purge=purge,
                    refuse=refuse,
                    guards=guards,
                )
            )
        if self.ctx.data.other_tables is not None:
            self.ctx.data.other_tables.keep(deletions, gone or {f"{ref.db}.{ref.name}"})
        return deletions

    def keep_other_tables(self) -> None:
        """Have drops (and truncations) leave every other table's directory standing
        (``--authorization privileges``: locations are owned)."""
        self.ctx.data.other_tables = OtherTables(self.table_dirs)

    def table_dirs(self) -> NamedDirs:
        """Every table's directory (those a file system serves), indexed by path and real
        path, and the ``db.table`` at each position."""
        data = self.ctx.data
        located = [(f"{o.db}.{o.name}", o.location) for o in self._outlines.outlines().every
                   if data.find_place(o.location) is not None]  # fmt: skip
        index = data.guard_index([loc for _, loc in located], kind="every table")
        return index, [name for name, _ in located]

    def database_dirs(self) -> NamedDirs:
        """Every database's directory, indexed as ``table_dirs``, and the database at each
        position."""
        data = self.ctx.data
        located = [(db, loc) for db, loc in self.databases.located().items()
                   if data.find_place(loc) is not None]  # fmt: skip
        index = data.guard_index([loc for _, loc in located], kind="databases by name")
        return index, [db for db, _ in located]

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        """Drop a database; a non-empty one only with ``cascade``. With ``delete_data`` its
        tables' data goes as each table's drop deletes it, then its directory, except what
        tables that stay (external ones, other databases') have inside it."""
        if name == DEFAULT_DATABASE:
            raise hms.MetaException(message="Can not drop default database")
        with self.ctx.write_lock:
            database = self.databases.get(name)
            table_names = self.tables.names(name)
            function_names = self.functions.names(name)
            if (table_names or function_names) and not cascade:
                raise hms.InvalidOperationException(
                    message=f"Database {name} is not empty. One or more tables exist."
                    if table_names
                    else f"Database {name} is not empty. One or more functions exist."
                )
            dropping = frozenset(f"{name}.{table}" for table in table_names)
            refs = [self.tables.get(name, table) for table in table_names]
            deletions: list[Deletion | None] = []
            gone = frozenset(f"{ref.db}.{ref.name}" for ref in refs)
            # Every policy and every deletion is checked before anything is dropped.
            for ref in refs:
                self.dependencies.guard_table_drop(ref, dropping)
                deletions.extend(self._plan_table_data(ref, delete_data, False, gone))
            if delete_data:
                deletions.append(self._plan_database_data(database, refs))
            for ref in refs:
                self._drop_table_rows(ref)
            for function in function_names:
                self.functions.drop(name, function)
            self.databases.delete_row(name)
            self.ctx.changes.announce(Change(DATABASE, DROP, before=database, when=self.ctx.now()))
            self.ctx.data.reserve(deletions)
            self.ctx.delete_after_commit(deletions)

    def _plan_database_data(
        self, database: hms.Database, dropped: list[TableRef]
    ) -> Deletion | None:
        """The database's directory, keeping what tables that stay have inside it."""
        data = self.ctx.data
        if not data.enabled:
            return None

        def refuse(reason: str) -> Exception:
            return hms.MetaException(message=f"Database not dropped since {reason}")

        others = [loc for db, loc in self.databases.located().items() if db != database.name]
        deletion = data.plan_delete(
            database.locationUri,
            what=f"database {database.name}",
            purge=False,
            refuse=refuse,
            guards=data.guard_index(others, kind="other databases"),
        )
        if deletion is None or deletion.kept is not None:
            return deletion
        dropped_names = {(ref.db, ref.name) for ref in dropped}
        # Outlined, not decoded: every table of the store is looked at (kept between drops,
        # only the rows changed since read again, where the store logs them).
        outlines = self._outlines.outlines()
        if dropped_names:
            staying = Outlines.of(
                [o for o in outlines.every if (o.db, o.name) not in dropped_names]
            )
        else:
            staying = outlines
        leaving = [ref for ref in dropped if not owns_data(ref)]
        locations = staying.locations + tuple(ref.location for ref in leaving)
        data.keep_inside(deletion, data.guard_index(locations, kind="tables"))
        # Their partitions placed outside their own directories but inside this one stay too
        # (partitions of tables elsewhere are not looked at: that would read every partition).
        db_place = deletion.place
        keepers: list[TableRef | None] = []
        for outline in staying.partitioned:
            place = data.find_place(outline.location)
            if place is not None and (db_place.contains(place) or not outline.owns_data):
                keepers.append(self.tables.find(outline.db, outline.name))
        for ref in leaving:
            place = data.find_place(ref.location)
            if place is not None and (db_place.contains(place) or not owns_data(ref)):
                keepers.append(ref)
        for keeper in keepers:
            if keeper is not None:
                data.keep_inside(deletion, self.partitions.locations_outside(keeper))
        return deletion

    def alter_table(
        self,
        db: str,
        name: str,
        new_tbl: hms.Table,
        cascade: bool,
        *,
        context: Context = None,
        check_types: bool = True,
    ) -> None:
        """Alter (or rename) a table; ``cascade`` pushes the new columns to all partitions;
        ``context`` is the call's environment context (``DO_NOT_UPDATE_STATS``...);
        ``check_types`` refuses incompatible column type changes (HMS's default)."""
        move = None
        with self.ctx.write_lock:
            current = self.tables.find(db, name)
            plan = self.dependencies.plan_alter(current, new_tbl) if current is not None else None
            # Every dependent down the chain is checked before anything is written: a refusal
            # anywhere leaves the base unchanged.
            inherit = self._propagation(plan, new_tbl) if plan is not None else []
            relocated: list[Put] = []
            if current is not None:
                self._refuse_existing_target(current, new_tbl)
                new_tbl, move, relocated = self._rename_data(current, new_tbl)
            subject = f"{db}.{name}"
            self.ctx.data.prepare(move, subject)
            try:
                ref = self.tables.alter(
                    db,
                    name,
                    new_tbl,
                    context=context,
                    extra_ops=relocated,
                    check_types=check_types,
                )
                if cascade and ref.table.sd is not None:
                    self.partitions.propagate_columns(ref, ref.table.sd.cols)
                if plan is not None and current is not None:
                    self.dependencies.finish_alter(plan, current, ref)
                for dependent, inherited in inherit:  # base columns go on to its dependents
                    self.tables.alter(dependent.db, dependent.name, inherited)
            except BaseException:
                # The metadata change is one transaction (embedded store): none of it stays.
                if move is not None:
                    move.rollback()
                raise
            if move is not None:
                self.ctx.write_lock.after_commit(move.commit, undo=move.rollback)

    def _refuse_existing_target(self, current: TableRef, new_tbl: hms.Table) -> None:
        """A rename onto an existing table is refused before any data is looked at (HMS)."""
        if new_tbl is None:
            return
        new_db = names.normalize(new_tbl.dbName) or current.db
        new_name = names.normalize(new_tbl.tableName) or current.name
        renamed = (new_db, new_name) != (current.db, current.name)
        if renamed and self.tables.find(new_db, new_name) is not None:
            raise target_exists(new_tbl, new_db, new_name)

    def _rename_data(
        self, current: TableRef, new_tbl: hms.Table
    ) -> tuple[hms.Table, Move | None, list[Put]]:
        """HMS's rename of a table that owns its data at its default location (its database's
        directory / its name) and keeps it: the directory moves to the new name's default
        location, its partitions' locations inside it follow. Returns the definition to store,
        the move (None: no data to move) and the partition rows to rewrite."""
        new_db = names.normalize(new_tbl.dbName) or current.db
        new_name = names.normalize(new_tbl.tableName) or current.name
        old_location = current.location
        if (
            (new_db, new_name) == (current.db, current.name)
            or not self.ctx.data.enabled
            or not owns_data(current)
            or not old_location
            or (new_tbl.sd is not None and new_tbl.sd.location not in (None, "", old_location))
            or not self._at_default_location(current)
        ):
            return new_tbl, None, []
        target_db = self.databases.find(new_db)
        if target_db is None or not target_db.locationUri:
            return new_tbl, None, []  # the rename itself says the database is missing
        new_location = self.ctx.warehouse.child_location(target_db.locationUri, new_name)
        subject = f"{new_db}.{new_name}"
        move = self.ctx.data.plan_move(
            old_location, new_location, what=f"table {current.db}.{current.name}", subject=subject
        )
        renamed = deep_copy(new_tbl)
        if renamed.sd is None:
            renamed.sd = deep_copy(current.table.sd)
        renamed.sd.location = new_location
        relocated = self.partitions.relocation_ops(current, old_location, new_location)
        return renamed, move, relocated

    def _at_default_location(self, ref: TableRef) -> bool:
        """Whether a table lies at its database's directory / its name (HMS treats one
        created elsewhere as external for a rename)."""
        database = self.databases.find(ref.db)
        data = self.ctx.data
        db_place = data.find_place(database.locationUri if database else None)
        place = data.find_place(ref.location)
        if db_place is None or place is None or not db_place.same_filesystem(place):
            return False
        expected = db_place.path.rstrip("/") + "/" + ref.name
        return place.path.rstrip("/").lower() == expected.lower()

    def _propagation(self, plan: AlterPlan, new_tbl: hms.Table) -> list[tuple[TableRef, hms.Table]]:
        """The dependents (breadth first, each once) that take new columns from an alter
        planned as ``plan``, with their new definitions; raises when any of them refuses."""
        steps: list[tuple[TableRef, hms.Table]] = []
        seen: set[tuple[str, str]] = set()
        pending = [(plan, new_tbl)]
        while pending:
            step, table = pending.pop(0)
            for dependent in step.propagate_to:
                if (dependent.db, dependent.name) in seen:
                    continue
                seen.add((dependent.db, dependent.name))
                inherited = copy.deepcopy(dependent.table)
                inherited.sd.cols = copy.deepcopy(table.sd.cols)
                steps.append((dependent, inherited))
                pending.append((self.dependencies.plan_alter(dependent, inherited), inherited))
        return steps

    def close(self) -> None:
        """Close the store."""
        self.ctx.store.close()
