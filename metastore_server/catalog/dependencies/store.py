"""Dependent tables on the store (docs/dependent-tables.md): resolution, reverse lookup, the
policies a base table's drops, renames and column changes obey, and the marks that make them cheap.
The rules are pure (``dependency_model``); this module reads the store and applies them.

* **Marks.** A row keyed by a base table's name holds one column per table that depends on it
  (``layout.dependents_key``): written, before what it protects, when a dependent is created,
  re-pointed or given a partition on another base; moved when it is renamed; removed when it is
  dropped. Keyed by name, it outlives the base's row: a base dropped (policy ``allow``) and
  created again keeps its dependents. A mark only says where to look. A dependent is *live* for
  a base when it exists and the base is its current one, or one of its partitions depends on
  the base. Dropping, renaming or altering a table without marks costs one point read more.
* **Base partition drop**, per live dependent's ``on.base.drop``: ``refuse`` (MetaException
  naming the dependent partition and the policy), ``allow`` (resolution stops listing the
  partition), ``mark_incomplete`` (the dependent partitions get ``metastore.dependent.incomplete``
  = ``true`` before the base partition goes: a crash in between errs towards a false alarm).
* **Base table drop**: as dropping all of its partitions; ``refuse`` also holds while the table
  is a dependent's current base (that dependent's next partition would have none). Dependents
  dropped by the same call (DROP DATABASE ... CASCADE) do not count.
* **Base rename**: refused while live dependents exist (their records name the base).
* **Across server processes**: each of these decisions, and every add of dependent partitions,
  holds the guard of the base tables involved (``dependency_guard``) on stores whose writers
  do not take turns (HBase).
* **Base column change**, per live dependent (the base is its current one, or any of its
  partitions stands on it), ``on.base.schema.change``: ``refuse`` (InvalidOperationException
  naming the dependent partitions) or ``propagate`` (the caller gives the dependent the new
  columns, which then go on to its own dependents), refused too when another base the dependent
  stands on has other columns (a dependent table has one schema).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.warehouse import local_path
from metastore_server.catalog.dependencies.guard import DependencyGuard
from metastore_server.catalog.dependencies.model import (
    DEPENDS_ON_KEY,
    INCOMPLETE_KEY,
    ON_BASE_DROP_KEY,
    ON_SCHEMA_CHANGE_KEY,
    Dependency,
    DependentSpec,
    DropPolicy,
    SchemaChangePolicy,
    TableName,
    filter_for,
    matches,
)
from metastore_server.catalog.dependencies.table_rules import (
    dependent_spec,
    dependents_of,
    mark_dependent,
    unmark_dependent,
)
from metastore_server.catalog.objects.tables import TableRef, Tables, column_types
from metastore_server.catalog.reads.scan import (
    LISTING_COLUMNS,
    NAME_COLUMNS,
    KeyRange,
    matching_rows,
    name_of,
    plan_ranges,
    values_of,
    whole_table,
)
from metastore_server.planner.errors import FilterError
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.plan import plan_filter
from metastore_server.storage import layout
from metastore_server.storage.port import Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, stored_partition_bytes


@dataclass(frozen=True)
class DependentPartition:
    """A partition of a dependent table with its dependency record (None: unreadable)."""

    name: str
    values: tuple[str, ...]
    key: bytes
    partition: hms.Partition
    record: str
    dependency: Dependency | None


@dataclass
class LiveDependent:
    """A table that depends on a given base: its partitions that depend on the base, and
    whether the base is its current one."""

    ref: TableRef
    spec: DependentSpec | None
    partitions: list[DependentPartition]
    current: bool

    @property
    def name(self) -> str:
        return f"{self.ref.db}.{self.ref.name}"

    @property
    def drop_policy(self) -> DropPolicy:
        """The table's drop policy; ``refuse`` when it no longer declares one (its partitions
        still record dependencies)."""
        return self.spec.on_base_drop if self.spec is not None else DropPolicy.REFUSE

    @property
    def schema_policy(self) -> SchemaChangePolicy:
        """The table's schema-change policy; ``refuse`` when it no longer declares one."""
        return self.spec.on_schema_change if self.spec is not None else SchemaChangePolicy.REFUSE


#: Dependent partitions a message names before it counts the rest.
_NAMED_PARTITIONS = 3


def _standing(dependent: LiveDependent) -> str:
    """How a dependent stands on a base, for a message: as its current base, and/or by which
    of its partitions."""
    said = ["it is its current base"] if dependent.current else []
    if dependent.partitions:
        names = [p.name for p in dependent.partitions[:_NAMED_PARTITIONS]]
        more = len(dependent.partitions) - len(names)
        shown = ", ".join(names) + (f" and {more} more" if more > 0 else "")
        said.append(f"its partitions {shown} depend on it")
    return " and ".join(said)


@dataclass
class AlterPlan:
    """What an alter of a table means for dependencies, decided before it is written."""

    #: Dependents (of this base, current or through partitions) that take its new columns.
    propagate_to: list[TableRef] = field(default_factory=list)
    #: Bases whose marks name the table (a dependent being renamed): moved to the new name.
    marked_on: list[TableName] = field(default_factory=list)


def _table_name(ref: TableRef) -> TableName:
    return TableName(ref.db, ref.name)


def _directory(location: str | None) -> str:
    """A location without its trailing slash, a local one as its path (``file:/x`` is ``/x``)."""
    path = local_path(location)
    return str(path) if path is not None else (location or "").rstrip("/")


class Dependencies:
    """Dependent tables' reads and the base-side policies (see the module docstring)."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables
        #: Held on the bases a policy decides for, across server processes on HBase.
        self.guard = DependencyGuard(ctx)

    # -- reads ------------------------------------------------------------------------------

    def partitions_of(self, ref: TableRef) -> Iterator[DependentPartition]:
        """The partitions of ``ref`` that record a dependency, in key order."""
        rows = matching_rows(self._ctx.store, ref, whole_table(ref), LISTING_COLUMNS)
        for key, row in rows:
            found = self._dependent_partition(ref, key, row)
            if found is not None:
                yield found

    def partition(self, ref: TableRef, values: Sequence[str]) -> DependentPartition | None:
        """One partition of ``ref`` with its record; None when it is absent or records none."""
        key = layout.partition_key(ref.table_id, ref.kinds, values)
        row = self._ctx.store.get(layout.PARTITIONS, key)
        return None if row is None else self._dependent_partition(ref, key, row)

    @staticmethod
    def _dependent_partition(
        ref: TableRef, key: bytes, row: dict[bytes, bytes]
    ) -> DependentPartition | None:
        partition = from_bytes(hms.Partition, row[layout.OBJECT])
        record = (partition.parameters or {}).get(DEPENDS_ON_KEY)
        if record is None:
            return None
        partition.dbName, partition.tableName = ref.db, ref.name
        try:
            dependency: Dependency | None = Dependency.parse(record)
        except ValueError:
            dependency = None
        return DependentPartition(
            name_of(ref, key, row),
            tuple(values_of(ref, key)),
            key,
            partition,
            record,
            dependency,
        )

    def bases_of(self, ref: TableRef) -> list[TableName]:
        """Every base ``ref`` depends on: its current one and its partitions' (sorted)."""
        found: set[TableName] = set()
        spec = dependent_spec(ref.table)
        if spec is None:
            return []
        found.add(spec.base)
        for part in self.partitions_of(ref):
            if part.dependency is not None:
                found.add(part.dependency.base)
        return sorted(found, key=str)

    def live_dependents(self, base: TableRef) -> list[LiveDependent]:
        """The tables that depend on ``base`` now (its marks, each checked), sorted by name."""
        base_name = _table_name(base)
        found = []
        for marked in dependents_of(self._ctx.store, base.db, base.name):
            try:
                name = TableName.parse(marked)
            except ValueError:
                continue
            ref = self._tables.find(name.db, name.table)
            if ref is None or (ref.db, ref.name) == (base.db, base.name):
                continue
            spec = dependent_spec(ref.table)
            parts = [
                p
                for p in self.partitions_of(ref)
                if p.dependency is not None and p.dependency.base == base_name
            ]
            current = spec is not None and spec.base == base_name
            if current or parts:
                found.append(LiveDependent(ref, spec, parts, current))
        return found

    def base_partitions(
        self, base: TableRef, dependency: Dependency
    ) -> list[tuple[str, list[str]]]:
        """(name, values) of the partitions of ``base`` that ``dependency`` stands for now,
        sorted by name. A spec key the base does not have matches nothing."""
        if any(key not in base.key_names for key, _ in dependency.spec):
            return []
        ranges: list[KeyRange]
        try:
            plan = plan_filter(parse_filter(filter_for(dependency)), base.key_types)
            ranges = plan_ranges(base, plan)
        except (ValueError, FilterError):
            key_types = base.key_types
            ranges = whole_table(base, lambda values: matches(dependency, values, key_types))
        rows = matching_rows(self._ctx.store, base, ranges, NAME_COLUMNS)
        return sorted((name_of(base, key, row), values_of(base, key)) for key, row in rows)

    # -- policies ---------------------------------------------------------------------------

    def guard_partition_drop(
        self,
        base: TableRef,
        dropped: Sequence[Sequence[str]],
        kept: Sequence[str] | None = None,
    ) -> None:
        """Apply the drop policies of ``base``'s dependents to dropping the partitions with
        ``dropped`` values (a rename: ``kept`` are the new values, and a dependency that still
        matches them loses nothing). Raises for ``refuse``; marks ``mark_incomplete`` partitions."""
        if not dropped:
            return
        self.guard.hold([_table_name(base)])
        key_types = base.key_types
        to_mark: list[tuple[TableRef, list[DependentPartition]]] = []
        for live in self.live_dependents(base):
            hit = []
            for part in live.partitions:
                assert part.dependency is not None
                if kept is not None and matches(part.dependency, kept, key_types):
                    continue
                lost = [v for v in dropped if matches(part.dependency, v, key_types)]
                if lost:
                    hit.append((part, lost[0]))
            if not hit:
                continue
            if live.drop_policy is DropPolicy.REFUSE:
                part, values = hit[0]
                gone = names.make_partition_name(base.key_names, values)
                raise hms.MetaException(
                    message=(
                        f"Cannot drop partition {gone} of table {base.db}.{base.name}: dependent "
                        f"partition {live.name}@{part.name} depends on it ({ON_BASE_DROP_KEY}="
                        f"refuse on {live.name}); drop or re-point the dependent partition, or "
                        f"set the policy to allow or mark_incomplete"
                    )
                )
            if live.drop_policy is DropPolicy.MARK_INCOMPLETE:
                to_mark.append((live.ref, [part for part, _ in hit]))
        for ref, parts in to_mark:
            self._mark_incomplete(ref, parts)

    def guard_table_drop(self, base: TableRef, dropping: frozenset[str] = frozenset()) -> None:
        """Apply the drop policies of ``base``'s dependents (other than the ``db.table`` names
        in ``dropping``) to dropping the whole table."""
        self.guard.hold([_table_name(base)])
        to_mark = []
        for live in self.live_dependents(base):
            if live.name in dropping:
                continue
            if live.drop_policy is DropPolicy.REFUSE:
                why = (
                    f"its partition {live.partitions[0].name} depends on "
                    f"{live.partitions[0].dependency}"
                    if live.partitions
                    else "it is its current base"
                )
                raise hms.MetaException(
                    message=(
                        f"Cannot drop table {base.db}.{base.name}: dependent table {live.name} "
                        f"depends on it ({why}; {ON_BASE_DROP_KEY}=refuse on {live.name}); drop "
                        f"or re-point the dependent, or set the policy to allow or "
                        f"mark_incomplete"
                    )
                )
            if live.drop_policy is DropPolicy.MARK_INCOMPLETE and live.partitions:
                to_mark.append((live.ref, live.partitions))
        for ref, parts in to_mark:
            self._mark_incomplete(ref, parts)

    def _mark_incomplete(self, ref: TableRef, parts: Sequence[DependentPartition]) -> None:
        ops: list[Put] = []
        for part in parts:
            params = dict(part.partition.parameters or {})
            if params.get(INCOMPLETE_KEY) == "true":
                continue
            params[INCOMPLETE_KEY] = "true"
            marked = copy.copy(part.partition)
            marked.parameters = params
            ops.append(
                Put(layout.PARTITIONS, part.key, {layout.OBJECT: stored_partition_bytes(marked)})
            )
        if ops:
            self._ctx.store.mutate(ops)

    def plan_alter(self, current: TableRef, new_tbl: hms.Table) -> AlterPlan:
        """Check an alter of ``current`` against its dependents (a rename of a base is refused,
        a column change obeys each dependent's ``on.base.schema.change``) and say what follows
        it; InvalidOperationException when refused."""
        plan = AlterPlan()
        new_db = names.normalize(new_tbl.dbName) or current.db
        new_name = names.normalize(new_tbl.tableName) or current.name
        renamed = (new_db, new_name) != (current.db, current.name)
        if renamed:
            plan.marked_on = self.bases_of(current)
        columns_changed = new_tbl.sd is not None and column_types(new_tbl) != column_types(
            current.table
        )
        if not (renamed or columns_changed):
            return plan
        self.guard.hold([_table_name(current)])
        live = self.live_dependents(current)
        if renamed and live:
            shown = ", ".join(d.name for d in live)
            raise hms.InvalidOperationException(
                message=(
                    f"Cannot rename table {current.db}.{current.name}: dependent tables depend "
                    f"on it ({shown}); re-point or drop them first"
                )
            )
        if columns_changed:
            new_columns = column_types(new_tbl)
            for dependent in live:
                self._check_schema_change(current, new_columns, dependent)
                plan.propagate_to.append(dependent.ref)
        return plan

    def _check_schema_change(
        self, base: TableRef, new_columns: list[tuple[str, str]], dependent: LiveDependent
    ) -> None:
        """InvalidOperationException unless ``dependent`` (current base or not) may take the
        base's new columns: its policy is ``propagate`` and every other base it stands on
        already has them (a dependent table has one schema)."""
        what = f"Cannot change the columns of table {base.db}.{base.name}"
        stands = _standing(dependent)
        if dependent.schema_policy is SchemaChangePolicy.REFUSE:
            raise hms.InvalidOperationException(
                message=(
                    f"{what}: dependent table {dependent.name} has them ({stands}; "
                    f"{ON_SCHEMA_CHANGE_KEY}=refuse on {dependent.name}); set the policy to "
                    f"propagate, or re-point or drop the dependent partitions first"
                )
            )
        for other in self.bases_of(dependent.ref):
            if (other.db, other.table) == (base.db, base.name):
                continue
            found = self._tables.find(other.db, other.table)
            if found is None or column_types(found.table) == new_columns:
                continue
            raise hms.InvalidOperationException(
                message=(
                    f"{what}: dependent table {dependent.name} ({stands}) also stands on "
                    f"{other}, whose columns would then differ from its own; a dependent table "
                    f"has one schema: re-point or drop its partitions on one of the bases first"
                )
            )

    def finish_alter(self, plan: AlterPlan, current: TableRef, stored: TableRef) -> None:
        """Move a renamed dependent's marks to its new name."""
        old, new = _table_name(current), _table_name(stored)
        if old == new:
            return
        for base in plan.marked_on:
            unmark_dependent(self._ctx.store, base, old)
            mark_dependent(self._ctx.store, base, new)

    def shares_data_with_bases(self, ref: TableRef, bases: Sequence[TableName]) -> bool:
        """Whether ``ref``'s directory is, holds or lies in the directory of one of ``bases``
        (then dropping ``ref`` must not delete it: the data is the base's)."""
        mine = _directory(ref.location)
        if not mine:
            return False
        for name in bases:
            base = self._tables.find(name.db, name.table)
            theirs = _directory(base.location) if base is not None else ""
            if theirs and (
                mine == theirs or mine.startswith(theirs + "/") or theirs.startswith(mine + "/")
            ):
                return True
        return False

    def forget(self, ref: TableRef, bases: Sequence[TableName]) -> None:
        """Remove a dropped dependent's marks from its bases."""
        for base in bases:
            unmark_dependent(self._ctx.store, base, _table_name(ref))
