"""HMS's ``exchange_partition(s)``: partitions move from one table to another with the same
columns and partition keys, metadata and data together.

The partition spec names values for leading partition keys (``{ds: 2024-01-01}`` of
``(ds, hr)``); every source partition under it moves. Its directory under the source table
(``<source>/ds=2024-01-01``) is renamed to the same place under the destination table, and the
destination partitions take their default locations there (as HMS: a partition the source kept
elsewhere gets the default location, its data stays). All or nothing: the data moves first and
moves back when the metadata change fails; the partitions are added to the destination and
dropped from the source in the catalog's write lock, with the events HMS sends (one
ADD_PARTITION for the destination, one DROP_PARTITION per source partition).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.java_text import java_text
from metastore_server.thrift_api import hms

if TYPE_CHECKING:
    from metastore_server.catalog.core.context import CatalogContext
    from metastore_server.catalog.data.moves import Move
    from metastore_server.catalog.dependencies.store import Dependencies
    from metastore_server.catalog.objects.tables import TableRef, Tables
    from metastore_server.catalog.partitions.service import Partitions
    from metastore_server.catalog.reads.partition_reads import PartitionReads


class Catalog(Protocol):
    """The services an exchange works with (``facade.Catalog`` is one)."""

    ctx: CatalogContext
    tables: Tables
    partitions: Partitions
    partition_reads: PartitionReads
    dependencies: Dependencies


def exchange(
    catalog: Catalog,
    spec: Mapping[str, str] | None,
    source_db: str | None,
    source_table: str | None,
    dest_db: str | None,
    dest_table: str | None,
) -> Sequence[hms.Partition]:
    """Move the partitions of ``source`` under ``spec`` to ``dest``; the new partitions.
    MetaException (HMS's words) when an argument is missing, a table is missing, the tables
    differ, no partition matches, one exists in ``dest`` already, or the data cannot move."""
    if spec is None or None in (source_db, source_table, dest_db, dest_table):
        raise hms.MetaException(
            message="The DB and table name for the source and destination tables, and the "
            "partition specs must not be null."
        )
    ctx = catalog.ctx
    with ctx.write_lock:
        source, dest = _tables(catalog, source_db, source_table, dest_db, dest_table)
        prefix = _leading_values(source, spec)
        moving = catalog.partition_reads.list_ps(
            source.db, source.name, prefix + [""] * (len(source.key_names) - len(prefix))
        ).decode()
        if not moving:
            raise hms.MetaException(
                message=f"No partition is found with the values {java_text(dict(spec))} for the "
                f"table {source.name}"
            )
        _check_exchangeable(source, dest)
        moved = _moved(catalog, dest, moving)
        prefix_name = names.make_partition_name(source.key_names[: len(prefix)], prefix)
        subject = f"{dest.db}.{dest.name}"
        move = _plan_move(catalog, source, dest, prefix_name, subject)
        catalog.dependencies.guard_partition_drop(source, [p.values for p in moving])
        ctx.data.prepare(move, subject)
        try:
            added = _swap(catalog, source, dest, moving, moved)
        except BaseException:
            if move is not None:
                move.rollback()
            raise
        if move is not None:
            ctx.write_lock.after_commit(move.commit, undo=move.rollback)
    return added


def _tables(
    catalog: Catalog,
    source_db: str | None,
    source_table: str | None,
    dest_db: str | None,
    dest_table: str | None,
) -> tuple[TableRef, TableRef]:
    """The source and destination tables; MetaException when one is missing or they are
    the same."""
    dest = catalog.tables.find(names.normalize(dest_db), names.normalize(dest_table))
    if dest is None:
        raise hms.MetaException(message=f"The destination table {dest_db}.{dest_table} not found")
    source = catalog.tables.find(names.normalize(source_db), names.normalize(source_table))
    if source is None:
        raise hms.MetaException(message=f"The source table {source_db}.{source_table} not found")
    if (source.db, source.name) == (dest.db, dest.name):
        raise hms.MetaException(message="The source and destination tables are the same")
    return source, dest


def _check_exchangeable(source: TableRef, dest: TableRef) -> None:
    """MetaException unless both tables have the same columns and partition keys, and a
    location."""
    if not (_same(source.table.sd.cols, dest.table.sd.cols)
            and _same(source.table.partitionKeys, dest.table.partitionKeys)):  # fmt: skip
        raise hms.MetaException(
            message="The tables have different schemas. Their partitions cannot be exchanged."
        )
    for ref in (source, dest):
        if not ref.location:
            raise hms.MetaException(
                message=f"{ref.db}.{ref.name} has no location: its partitions cannot be "
                "exchanged"
            )


def _moved(catalog: Catalog, dest: TableRef, moving: list[hms.Partition]) -> list[hms.Partition]:
    """The partitions ``moving`` as partitions of ``dest``, at their default locations there;
    MetaException when ``dest`` has one already."""
    taken = set(catalog.partition_reads.list_names(dest.db, dest.name).decode())
    location = dest.location
    assert location is not None  # _check_exchangeable refused a table without one
    moved = []
    for partition in moving:
        name = names.make_partition_name(dest.key_names, partition.values)
        if name in taken:
            raise hms.MetaException(
                message=f"The partition {name} already exists in the table {dest.name}"
            )
        new = copy.deepcopy(partition)
        new.dbName, new.tableName, new.catName = dest.db, dest.name, None
        if new.sd is not None:
            new.sd.location = catalog.ctx.warehouse.child_location(location, name)
        moved.append(new)
    return moved


def _swap(
    catalog: Catalog,
    source: TableRef,
    dest: TableRef,
    moving: list[hms.Partition],
    moved: list[hms.Partition],
) -> Sequence[hms.Partition]:
    """Add ``moved`` to ``dest``, then drop ``moving`` from ``source`` (the added partitions
    are dropped again when that fails); the partitions added."""
    added = catalog.partitions.add(dest.db, dest.name, moved, count_stats=False)
    try:
        source_names = [names.make_partition_name(source.key_names, p.values) for p in moving]
        catalog.partitions.drop_by_names(source.db, source.name, source_names, False,
                                         if_exists=False)  # fmt: skip
    except BaseException:
        added_names = [names.make_partition_name(dest.key_names, p.values) for p in added]
        catalog.partitions.drop_by_names(dest.db, dest.name, added_names, False)
        raise
    return added


def _leading_values(ref: TableRef, spec: Mapping[str, str]) -> list[str]:
    """The spec's values of the table's leading partition keys; MetaException unless the
    spec names exactly some leading keys (at least one)."""
    given = {names.normalize(k): v for k, v in spec.items() if v}
    values = []
    for key in ref.key_names:
        if key not in given:
            break
        values.append(given.pop(key))
    if not values or given:
        raise hms.MetaException(
            message=f"The partition spec {java_text(dict(spec))} must give values for leading "
            f"partition keys of {ref.db}.{ref.name} {list(ref.key_names)}"
        )
    return values


def _same(one: list[hms.FieldSchema] | None, other: list[hms.FieldSchema] | None) -> bool:
    """HMS's column comparison: the same names and types in the same order."""
    def shape(columns: list[hms.FieldSchema] | None) -> list[tuple[str, str]]:
        return [(c.name.lower(), (c.type or "").lower()) for c in columns or []]

    return shape(one) == shape(other)


def _plan_move(
    catalog: Catalog, source: TableRef, dest: TableRef, prefix: str, subject: str
) -> Move | None:
    """The directory move of the exchange (None when there is no data to move or this server
    does not manage data); a refusal as MetaException (the call's declared exception)."""
    if not (source.location and dest.location):
        return None
    warehouse = catalog.ctx.warehouse
    try:
        return catalog.ctx.data.plan_move(
            warehouse.child_location(source.location, prefix),
            warehouse.child_location(dest.location, prefix),
            what=f"partitions {prefix} of {source.db}.{source.name}",
            subject=subject,
        )
    except hms.InvalidOperationException as exc:
        raise hms.MetaException(message=exc.message) from None
