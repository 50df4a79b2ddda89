"""The dependency record a dependent table's partition carries (``DEPENDS_ON_KEY`` in its
parameters): checked when a partition is added or altered with one, kept when an alter leaves
it out, and the base tables marked before the rows that depend on them are written. A
partition with a record holds its base's data, never its own. See
``docs/dependent-tables.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from metastore_server.catalog.dependencies.model import (
    DEPENDS_ON_KEY,
    Dependency,
    DependentSpec,
    TableName,
    check_columns,
    dependency_for,
)
from metastore_server.catalog.dependencies.table_rules import mark_dependent
from metastore_server.catalog.objects.tables import TableRef, Tables, column_types
from metastore_server.storage.port import StoragePort
from metastore_server.thrift_api import ErrorClass, hms

#: A stored partition holding these bytes may record a dependency (a cheap first test).
DEPENDENCY_MARK = DEPENDS_ON_KEY.encode("utf-8")


def partition_owns_data(partition: hms.Partition) -> bool:
    """Whether dropping a partition may delete its directory: not a dependent partition's,
    whose data is its base's."""
    return DEPENDS_ON_KEY not in (partition.parameters or {})


def checked_dependency(
    tables: Tables,
    ref: TableRef,
    given: str | None,
    values: Sequence[str],
    spec: DependentSpec | None,
    error: ErrorClass,
) -> tuple[Dependency, TableRef]:
    """The dependency a dependent partition records (``given`` by the client, else on the
    table's current base), checked: readable, on an existing base, on its keys. ``error``
    (``dependent table db.t: ...``) otherwise. Returns it with the base table."""
    where = f"dependent table {ref.db}.{ref.name}"
    try:
        if given is not None:
            dependency = Dependency.parse(given)
        elif spec is not None:
            dependency = dependency_for(values, ref.key_names, spec.base)
        else:
            raise ValueError("the table declares no base")
    except ValueError as exc:
        raise error(message=f"{where}: {exc}") from None
    base = tables.find(dependency.base_db, dependency.base_table)
    if base is None:
        raise error(message=f"{where}: base table {dependency.base} does not exist")
    if (base.db, base.name) == (ref.db, ref.name):
        raise error(message=f"{where}: a partition cannot depend on its own table")
    _check_base_keys(ref, dependency, base, error)
    try:
        check_columns(column_types(ref.table), column_types(base.table))
    except ValueError as exc:
        raise error(message=f"{where}: cannot depend on {dependency.base}: {exc}") from None
    return dependency, base


def _check_base_keys(
    ref: TableRef, dependency: Dependency, base: TableRef, error: ErrorClass
) -> None:
    """``error`` unless the dependency fixes leading partition keys of its base, in order."""
    where = f"dependent table {ref.db}.{ref.name}"
    unknown = [k for k, _ in dependency.spec if k not in base.key_names]
    if unknown:
        raise error(
            message=(
                f"{where}: {dependency} names {unknown[0]!r}, which is not a partition key "
                f"of {dependency.base} ({', '.join(base.key_names)})"
            )
        )
    spec_keys = [k for k, _ in dependency.spec]
    if spec_keys != base.key_names[: len(spec_keys)]:
        leading = ", ".join(base.key_names[: len(spec_keys)])
        raise error(
            message=(
                f"{where}: {dependency} must fix leading partition keys of "
                f"{dependency.base} ({leading}), in order"
            )
        )


def keep_dependency(
    tables: Tables,
    ref: TableRef,
    old: hms.Partition,
    updated: hms.Partition,
    values: Sequence[str],
    marks: set[TableName],
) -> None:
    """A dependent partition keeps its dependency record when an alter leaves it out (a
    partition whose data is its base's must never look like one owning its directory); a
    changed record (re-pointing the partition) is checked (InvalidOperationException), and
    its base goes in ``marks``."""
    before = (old.parameters or {}).get(DEPENDS_ON_KEY)
    params = updated.parameters
    after = params.get(DEPENDS_ON_KEY)
    if after is None:
        if before is not None:
            params[DEPENDS_ON_KEY] = before
        return
    if after == before:
        return
    dependency, _ = checked_dependency(
        tables, ref, after, values, None, hms.InvalidOperationException
    )
    params[DEPENDS_ON_KEY] = dependency.to_text()
    marks.add(dependency.base)


def mark_bases(store: StoragePort, ref: TableRef, bases: Iterable[TableName]) -> None:
    """Mark each base as having ``ref`` among its dependents; before the rows that depend on
    them are written, so that a mark may be stale but is never missing."""
    for base in bases:
        mark_dependent(store, base, TableName(ref.db, ref.name))
