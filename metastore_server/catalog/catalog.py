"""The catalog: the services of each object kind, and the operations that span several."""

from __future__ import annotations

import copy

from metastore_server.catalog.context import WRITER_LEASE_S, CatalogContext
from metastore_server.catalog.databases import DEFAULT_DATABASE, Databases
from metastore_server.catalog.dependencies import AlterPlan, Dependencies
from metastore_server.catalog.functions import Functions
from metastore_server.catalog.listing_cache import DEFAULT_MAX_BYTES, ListingCache
from metastore_server.catalog.partitions import Partitions
from metastore_server.catalog.tables import VIRTUAL_VIEW, TableRef, Tables
from metastore_server.catalog.timelines import TimelineKeeper
from metastore_server.catalog.warehouse import Warehouse
from metastore_server.thrift_api import hms
from storage import layout
from storage.port import StoragePort


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
    ) -> None:
        store.ensure_tables(layout.TABLE_SPECS)
        self.ctx = CatalogContext(
            store=store,
            warehouse=warehouse,
            partition_request_limit=partition_request_limit,
            listing_cache=ListingCache(listing_cache_bytes),
            writer_lease_s=writer_lease_s,
        )
        self.databases = Databases(self.ctx)
        self.tables = Tables(self.ctx, self.databases)
        self.timelines = TimelineKeeper(self.ctx, self.tables)
        self.dependencies = Dependencies(self.ctx, self.tables)
        self.partitions = Partitions(self.ctx, self.tables, self.timelines, self.dependencies)
        self.functions = Functions(self.ctx, self.databases)
        self.databases.ensure_default()

    def drop_table(
        self, db: str, name: str, delete_data: bool, dropping: frozenset[str] = frozenset()
    ) -> None:
        """Drop a table and its partitions; managed data is deleted when asked. The drop
        policies of tables depending on it apply (other than those in ``dropping``, the
        ``db.table`` names one call drops together)."""
        with self.ctx.write_lock:
            ref = self.tables.get(db, name)
            self.dependencies.guard_table_drop(ref, dropping)
            bases = self.dependencies.bases_of(ref)
            delete_files = delete_data and not ref.is_external
            # A dependent's directory that is, holds or lies in a base's holds the base's data.
            keep_dir = self.dependencies.shares_data_with_bases(ref, bases)
            self.tables.delete_row(ref)
            self.partitions.drop_all(ref, delete_files)
            self.dependencies.forget(ref, bases)
        if delete_files and not keep_dir and ref.table.tableType != VIRTUAL_VIEW:
            self.ctx.warehouse.delete_dir(ref.location)

    def drop_database(self, name: str, delete_data: bool, cascade: bool) -> None:
        """Drop a database; a non-empty one only with ``cascade``."""
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
            for table in table_names:  # every policy is checked before anything is dropped
                self.dependencies.guard_table_drop(self.tables.get(name, table), dropping)
            for table in table_names:
                self.drop_table(name, table, delete_data, dropping)
            for function in function_names:
                self.functions.drop(name, function)
            self.databases.delete_row(name)
        if delete_data:
            self.ctx.warehouse.delete_dir(database.locationUri)

    def alter_table(
        self, db: str, name: str, new_tbl: hms.Table, cascade: bool, *, update_stats: bool = True
    ) -> None:
        """Alter (or rename) a table; ``cascade`` pushes the new columns to all partitions."""
        with self.ctx.write_lock:
            current = self.tables.find(db, name)
            plan = self.dependencies.plan_alter(current, new_tbl) if current is not None else None
            # Every dependent down the chain is checked before anything is written: a refusal
            # anywhere leaves the base unchanged.
            inherit = self._propagation(plan, new_tbl) if plan is not None else []
            ref = self.tables.alter(
                db, name, new_tbl, update_stats=update_stats, hook=self.timelines
            )
            if cascade and ref.table.sd is not None:
                self.partitions.propagate_columns(ref, ref.table.sd.cols)
            if plan is not None and current is not None:
                self.dependencies.finish_alter(plan, current, ref)
            for dependent, inherited in inherit:  # base columns go on to its dependents
                self.tables.alter(dependent.db, dependent.name, inherited, hook=self.timelines)

    def _propagation(
        self, plan: AlterPlan, new_tbl: hms.Table
    ) -> list[tuple[TableRef, hms.Table]]:
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
