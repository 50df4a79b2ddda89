"""Dependent tables over Thrift (our extensions ``resolve_dependencies``, ``get_dependents``,
``create_dependent_table`` and ``alter_dependency``): requests checked, answers built from the
catalog's ``dependencies`` and the pure rules (``dependency_model``).

* A missing table: NoSuchObjectException ``db.t table not found`` (HMS's wording); a missing
  partition: NoSuchObjectException naming it.
* Resolving a table that is not dependent (and none of whose partitions records a dependency):
  MetaException saying which property makes one.
* Resolution is dynamic: the base partitions that match each dependent partition's spec now.
  With a completeness rule, each answer says which units of the rule's period its window
  expects and which are missing; a spec that names no window of the rule (``ds=latest``, or
  ``ds=1`` with an HOURLY rule) has ``completenessUnknown`` saying why instead.
* ``create_dependent_table`` and ``alter_dependency`` write through the same paths as
  ``create_table``, ``alter_table`` and ``alter_partitions``, so every check and policy holds.

See ``docs/dependent-tables.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, object_name, required
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.api.timelines import format_range
from metastore_server.catalog import (
    BASE_KEY,
    COMPLETENESS_COLUMNS_KEY,
    COMPLETENESS_PERIOD_KEY,
    DEPENDS_ON_KEY,
    EXTERNAL_TABLE,
    INCOMPLETE_KEY,
    MANAGED_TABLE,
    ON_BASE_DROP_KEY,
    ON_SCHEMA_CHANGE_KEY,
    Catalog,
    CompletenessRule,
    Dependency,
    DependentPartition,
    DependentSpec,
    TableName,
    TableRef,
    completeness,
    dependent_spec,
    matches,
    names,
    time_partition_of,
)
from metastore_server.thrift_api import hms

__all__ = ["DependencyCalls", "alter_dependency", "create_dependent_table", "dependents", "resolve"]


def _values(ref: TableRef, part_name: str) -> list[str]:
    """The values of a partition name of ``ref`` (keys in any order)."""
    spec = dict(names.parse_partition_name(part_name))
    missing = [k for k in ref.key_names if k not in spec]
    if missing:
        raise hms.MetaException(
            message=f"{part_name!r} is not a partition name of {ref.db}.{ref.name}: no value "
            f"for {missing[0]} (keys: {', '.join(ref.key_names)})"
        )
    return [spec[k] for k in ref.key_names]


def _exists(catalog: Catalog, ref: TableRef, values: Sequence[str]) -> bool:
    return catalog.partition_reads.exists(ref, values)


def _no_partition(ref: TableRef, part_name: str) -> hms.NoSuchObjectException:
    return hms.NoSuchObjectException(
        message=f"partition {part_name} of {ref.db}.{ref.name} not found"
    )


def _spec_of(catalog: Catalog, ref: TableRef) -> DependentSpec | None:
    return dependent_spec(ref.table)


def table_info(
    catalog: Catalog, ref: TableRef, parts: Sequence[DependentPartition]
) -> hms.DependentTableInfo:
    """What a dependent table declares, and every base its partitions depend on."""
    spec = _spec_of(catalog, ref)
    bases = {str(p.dependency.base) for p in parts if p.dependency is not None}
    if spec is not None:
        bases.add(str(spec.base))
    rule = spec.completeness if spec is not None else None
    return hms.DependentTableInfo(
        dbName=ref.db,
        tblName=ref.name,
        base=str(spec.base) if spec is not None else "",
        bases=sorted(bases),
        onBaseDrop=spec.on_base_drop.value if spec is not None else "",
        onBaseSchemaChange=spec.on_schema_change.value if spec is not None else "",
        completenessPeriod=rule.period.name if rule is not None else None,
        completenessColumns=list(rule.columns) if rule is not None else None,
    )


def _resolved(
    catalog: Catalog,
    part: DependentPartition,
    spec: DependentSpec | None,
    max_parts: int,
    bases: dict[TableName, TableRef | None],
) -> hms.ResolvedDependency:
    marked = (part.partition.parameters or {}).get(INCOMPLETE_KEY, "").lower() == "true"
    dependency = part.dependency
    if dependency is None:
        return hms.ResolvedDependency(
            partName=part.name, dependsOn=part.record, baseDbName="", baseTblName="",
            baseSpec="", baseExists=False, basePartNames=[], basePartCount=0,
            markedIncomplete=marked,
        )  # fmt: skip
    if dependency.base not in bases:
        bases[dependency.base] = catalog.tables.find(dependency.base_db, dependency.base_table)
    base = bases[dependency.base]
    found = catalog.dependencies.base_partitions(base, dependency) if base is not None else []
    shown = [name for name, _ in found]
    if max_parts >= 0:
        shown = shown[:max_parts]
    answer = hms.ResolvedDependency(
        partName=part.name,
        dependsOn=dependency.to_text(),
        baseDbName=dependency.base_db,
        baseTblName=dependency.base_table,
        baseSpec=dependency.partition_name(),
        baseExists=base is not None,
        basePartNames=shown,
        basePartCount=len(found),
        markedIncomplete=marked,
    )
    rule = spec.completeness if spec is not None else None
    if rule is not None and base is not None:
        try:
            answer.completeness = _completeness(rule, dependency, base, found)
        except ValueError as exc:
            answer.completenessUnknown = str(exc)
    return answer


def _completeness(
    rule: CompletenessRule,
    dependency: Dependency,
    base: TableRef,
    found: Sequence[tuple[str, list[str]]],
) -> hms.DependencyCompleteness:
    """The completeness of one dependent partition; ValueError saying why when its spec names
    no time window of the rule (``ds=latest``, or ``ds=1`` with an HOURLY rule)."""
    present = [time_partition_of(rule, values, base.key_types) for _, values in found]
    report = completeness(rule, dependency, [p for p in present if p is not None])
    start, end = format_range(report.window.start, report.window.end, rule.period)
    return hms.DependencyCompleteness(
        period=rule.period.name,
        window=report.window.name,
        startTime=start,
        endTime=end,
        expected=len(report.expected),
        missing=[p.name for p in report.missing],
        complete=report.complete,
    )


def resolve(
    catalog: Catalog, db: str, table: str, part_name: str | None, max_parts: int = -1
) -> hms.ResolveDependenciesResult:
    """A dependent table's declaration and its partitions' base partitions now (one
    partition's with ``part_name``)."""
    ref = catalog.tables.get(db, table)
    spec = _spec_of(catalog, ref)
    if part_name:
        values = _values(ref, part_name)
        one = catalog.dependencies.partition(ref, values)
        if one is None:
            if _exists(catalog, ref, values):
                raise hms.MetaException(
                    message=f"partition {part_name} of {db}.{table} depends on nothing (it has "
                    f"no parameter {DEPENDS_ON_KEY})"
                )
            raise _no_partition(ref, part_name)
        parts = [one]
        every = list(catalog.dependencies.partitions_of(ref)) if spec is not None else parts
    else:
        parts = every = list(catalog.dependencies.partitions_of(ref))
    if spec is None and not every:
        raise hms.MetaException(
            message=f"{db}.{table} is not a dependent table (table property {BASE_KEY} is not "
            "set and no partition records a dependency)"
        )
    bases: dict[TableName, TableRef | None] = {}
    resolved = [_resolved(catalog, p, spec, max_parts, bases) for p in parts]
    resolved.sort(key=lambda r: r.partName)
    return hms.ResolveDependenciesResult(table=table_info(catalog, ref, every), partitions=resolved)


def dependents(
    catalog: Catalog, db: str, table: str, part_name: str | None
) -> hms.GetDependentsResult:
    """The tables depending on a base table and their partitions depending on it (on one of
    its partitions with ``part_name``)."""
    base = catalog.tables.get(db, table)
    values = None
    if part_name:
        values = _values(base, part_name)
        if not _exists(catalog, base, values):
            raise _no_partition(base, part_name)
    live = catalog.dependencies.live_dependents(base)
    refs = []
    key_types = base.key_types
    for dependent in live:
        for part in dependent.partitions:
            assert part.dependency is not None
            if values is not None and not matches(part.dependency, values, key_types):
                continue
            refs.append(
                hms.DependentPartitionRef(
                    dbName=dependent.ref.db,
                    tblName=dependent.ref.name,
                    partName=part.name,
                    dependsOn=part.record,
                    markedIncomplete=(part.partition.parameters or {})
                    .get(INCOMPLETE_KEY, "")
                    .lower()
                    == "true",
                )
            )
    refs.sort(key=lambda r: (r.dbName, r.tblName, r.partName))
    return hms.GetDependentsResult(tables=sorted(d.name for d in live), partitions=refs)


def create_dependent_table(catalog: Catalog, req: hms.CreateDependentTableRequest) -> hms.Table:
    """Create a dependent table with its base's columns, storage format and first
    ``keyCount`` partition keys; the new table as stored."""
    db, name = object_name(req.dbName), object_name(req.tblName)
    base_db, base_name = object_name(req.baseDbName), object_name(req.baseTblName)
    if not db or not name or not base_db or not base_name:
        raise hms.MetaException(message="dbName, tblName, baseDbName and baseTblName are required")
    base = catalog.tables.find(base_db, base_name)
    where = f"dependent table {db}.{name}"
    if base is None:
        raise hms.InvalidObjectException(
            message=f"{where}: base table {base_db}.{base_name} does not exist"
        )
    key_count = 1 if req.keyCount is None else req.keyCount
    base_keys = base.table.partitionKeys or []
    if not 0 < key_count <= len(base_keys):
        raise hms.InvalidObjectException(
            message=f"{where}: keyCount {key_count} is not in 1..{len(base_keys)} (the base "
            f"{base_db}.{base_name} has {len(base_keys)} partition keys)"
        )
    params = {BASE_KEY: f"{base_db}.{base_name}"}
    optional = {
        ON_BASE_DROP_KEY: req.onBaseDrop,
        ON_SCHEMA_CHANGE_KEY: req.onBaseSchemaChange,
        COMPLETENESS_PERIOD_KEY: req.completenessPeriod,
        COMPLETENESS_COLUMNS_KEY: ",".join(req.completenessColumns)
        if req.completenessColumns
        else None,
    }
    params.update({k: v for k, v in optional.items() if v})
    external = req.external is None or req.external
    if external:
        params["EXTERNAL"] = "TRUE"
    sd = copy.deepcopy(base.table.sd) or hms.StorageDescriptor(cols=[], parameters={})
    sd.location = req.location or None
    table = hms.Table(
        dbName=db,
        tableName=name,
        owner=req.owner or base.table.owner,
        sd=sd,
        partitionKeys=copy.deepcopy(base_keys[:key_count]),
        parameters=params,
        tableType=EXTERNAL_TABLE if external else MANAGED_TABLE,
    )
    catalog.tables.create(table)
    return catalog.tables.get(db, name).table


def _move_default_location(
    catalog: Catalog, part: DependentPartition, moved: Dependency, updated: hms.Partition
) -> None:
    """A re-pointed partition at its old base's prefix location moves to the new base's."""
    old = part.dependency
    location = part.partition.sd.location if part.partition.sd else None
    if old is None or not location or updated.sd is None:
        return
    old_base = catalog.tables.find(old.base_db, old.base_table)
    new_base = catalog.tables.find(moved.base_db, moved.base_table)
    if old_base is None or new_base is None or not old_base.location or not new_base.location:
        return
    warehouse = catalog.ctx.warehouse
    if location == warehouse.child_location(old_base.location, old.partition_name()):
        updated.sd.location = warehouse.child_location(new_base.location, moved.partition_name())


def alter_dependency(
    catalog: Catalog, req: hms.AlterDependencyRequest
) -> hms.ResolveDependenciesResult:
    """Re-point a dependent table (new partitions depend on the new base) or, with
    ``partName``, one partition (on the same spec of the new base); the resolution after."""
    db, name = object_name(req.dbName), object_name(req.tblName)
    base_db, base_name = object_name(req.baseDbName), object_name(req.baseTblName)
    ref = catalog.tables.get(db, name)
    if not req.partName:
        table = copy.deepcopy(ref.table)
        table.parameters = dict(table.parameters or {})
        table.parameters[BASE_KEY] = f"{base_db}.{base_name}"
        catalog.alter_table(db, name, table, cascade=False)
        return resolve(catalog, db, name, None, max_parts=0)
    values = _values(ref, req.partName)
    part = catalog.dependencies.partition(ref, values)
    if part is None:
        if _exists(catalog, ref, values):
            raise hms.InvalidOperationException(
                message=f"partition {req.partName} of {db}.{name} depends on nothing; only a "
                "dependent partition can be re-pointed"
            )
        raise _no_partition(ref, req.partName)
    spec = (
        part.dependency.spec
        if part.dependency is not None
        else tuple(zip(ref.key_names, values, strict=True))
    )
    try:
        moved = Dependency(base_db, base_name, spec)
    except ValueError as exc:
        raise hms.InvalidOperationException(
            message=f"dependent table {db}.{name}: {exc}"
        ) from None
    updated = copy.deepcopy(part.partition)
    updated.parameters = dict(updated.parameters or {})
    updated.parameters[DEPENDS_ON_KEY] = moved.to_text()
    updated.parameters.pop(INCOMPLETE_KEY, None)
    _move_default_location(catalog, part, moved, updated)
    catalog.partitions.alter(db, name, [updated])
    return resolve(catalog, db, name, req.partName, max_parts=0)


class DependencyCalls(Area):
    """Dependent tables. Raises NoSuchObjectException (a missing table, partition or
    database, another catalog), AlreadyExistsException (a dependent table that exists),
    InvalidObjectException (a base that does not exist, a key count it does not have),
    InvalidOperationException (a re-pointing the rules refuse) and MetaException (no request,
    a table that is not dependent), as ``create_table``, ``alter_table`` and
    ``alter_partitions`` raise them too."""

    @thrift(rule=auth.read(auth.REQ))
    def resolve_dependencies(
        self, req: hms.ResolveDependenciesRequest
    ) -> hms.ResolveDependenciesResult:
        """A dependent table's partitions and the base partitions they stand for now
        (``metastore-server dependency describe``)."""
        req = required(req, "ResolveDependenciesRequest")
        max_parts = -1 if req.maxParts is None else req.maxParts
        db, table = self.database_in(catalog_field(req), req.dbName), object_name(req.tblName)
        return resolve(self.catalog, db, table, req.partName, max_parts)

    @thrift(rule=auth.read(auth.REQ))
    def get_dependents(self, req: hms.GetDependentsRequest) -> hms.GetDependentsResult:
        """The tables and partitions depending on a base table or partition
        (``metastore-server dependency dependents``)."""
        req = required(req, "GetDependentsRequest")
        db, table = self.database_in(catalog_field(req), req.dbName), object_name(req.tblName)
        return dependents(self.catalog, db, table, req.partName)

    @thrift(
        rule=auth.dependent("CREATETABLE", auth.create(auth.REQ)),
        storage=st.CREATE_DEPENDENT_TABLE,
        locations=loc.CREATE_DEPENDENT_TABLE,
    )
    def create_dependent_table(self, req: hms.CreateDependentTableRequest) -> hms.Table:
        """Declare a dependent table from its base (``metastore-server dependency create``)."""
        return create_dependent_table(self.catalog, required(req, "CreateDependentTableRequest"))

    @thrift(
        rule=auth.dependent("ALTERTABLE_ADDCOLS", auth.alter(auth.REQ)),
        storage=st.ALTER_DEPENDENCY,
        locations=loc.DEPENDENCY,
    )
    def alter_dependency(self, req: hms.AlterDependencyRequest) -> hms.ResolveDependenciesResult:
        """Re-point a dependent table or one of its partitions (``metastore-server dependency
        repoint``)."""
        return alter_dependency(self.catalog, required(req, "AlterDependencyRequest"))
