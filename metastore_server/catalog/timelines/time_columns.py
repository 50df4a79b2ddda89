"""Which partition columns of a table are time columns, and which time partition each of a
partition's values is: the input of the partition timelines.

Two ways to opt a table in:

* Apache Lens's: ``cube.storagetable.time.partcols`` lists the time columns, and a partition
  counts only when its parameter ``cube.storagetable.partition.update.period`` names its update
  period (what Lens itself writes; partitions without it are not tracked).
* Ours, for writers that cannot set partition parameters (Spark SQL: ``ALTER TABLE ADD
  PARTITION``, dynamic-partition ``INSERT``, ``MSCK REPAIR`` all add partitions without any):
  the table property ``metastore.timeline.periods`` declares each time column's update period,
  ``ds:DAILY, hour:HOURLY``, or ``auto`` (``ds`` alone means ``ds:auto``): the finest period
  whose Lens format the value has (``2024-05-06`` is DAILY, ``2024-05`` MONTHLY,
  ``2024-05-06-07`` HOURLY). Every partition then counts, whoever added it. A partition's
  own update period parameter, when valid, still wins; a value that is not a name of the period
  (Lens's ``latest``, say) is left out, as with Lens's opt-in.

Set it with ``CREATE TABLE ... TBLPROPERTIES ('metastore.timeline.periods'='ds:DAILY')`` or
``ALTER TABLE ... SET TBLPROPERTIES``; an unknown period or a column that is not a partition
key is refused (InvalidObjectException on create, InvalidOperationException on alter).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from metastore_server.thrift_api import ErrorClass, hms
from metastore_server.timeline import (
    TIME_PARTCOLS_KEY,
    UPDATE_PERIOD_KEY,
    TimePartition,
    UpdatePeriod,
)

#: The table property declaring the update period of each time column (ours, not Lens's).
PERIODS_KEY = "metastore.timeline.periods"
#: The declared period that is inferred from each value's format.
AUTO = "auto"

#: One partition's membership of one timeline: (period, column, partition).
Entry = tuple[UpdatePeriod, str, TimePartition]


@dataclass(frozen=True)
class Columns:
    """The time columns of a table as (key index, lower-case name) in key order, and the update
    period declared for some of them (None: inferred from each value)."""

    keys: tuple[tuple[int, str], ...] = ()
    declared: tuple[tuple[str, UpdatePeriod | None], ...] = ()

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def declared_period(self, column: str) -> tuple[bool, UpdatePeriod | None]:
        """(whether ``column`` has a declared period, the period: None to infer it)."""
        for name, period in self.declared:
            if name == column:
                return True, period
        return False, None


def parse_declaration(text: str) -> dict[str, UpdatePeriod | None]:
    """``ds:DAILY, hour:auto, dt`` as {column: period or None (auto)}; ValueError naming the
    first entry that is not ``column[:PERIOD|auto]``."""
    declared: dict[str, UpdatePeriod | None] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        column, _, period_name = (part.strip() for part in item.partition(":"))
        if not column:
            raise ValueError(f"{item.strip()!r} names no column")
        if not period_name or period_name.lower() == AUTO:
            declared[column.lower()] = None
            continue
        period = UpdatePeriod.__members__.get(period_name.upper())
        if period is None:
            names = ", ".join(UpdatePeriod.__members__)
            raise ValueError(
                f"{item.strip()!r}: {period_name!r} is no update period (one of {names}, or auto)"
            )
        declared[column.lower()] = period
    return declared


def check_declaration(
    table: hms.Table, error: ErrorClass = hms.InvalidObjectException
) -> None:
    """``error`` (InvalidObjectException: create_table's; alter_table's is
    InvalidOperationException) when the table's ``metastore.timeline.periods`` cannot be read or
    names a column that is not one of its partition keys."""
    text = (table.parameters or {}).get(PERIODS_KEY)
    if text is None:
        return
    try:
        declared = parse_declaration(text)
    except ValueError as exc:
        raise error(message=f"{PERIODS_KEY}: {exc}") from None
    keys = {(fs.name or "").lower() for fs in table.partitionKeys or []}
    unknown = sorted(set(declared) - keys)
    if unknown:
        raise error(
            message=f"{PERIODS_KEY}: {', '.join(unknown)} is not a partition key of "
            f"{table.tableName} (its keys: {', '.join(sorted(keys)) or 'none'})"
        )


def time_columns(table: hms.Table) -> Columns:
    """The table's time columns, in key order; empty when it does not opt in. A declaration
    that cannot be read (stored before it was checked) declares nothing."""
    params = table.parameters or {}
    listed = params.get(TIME_PARTCOLS_KEY) or ""
    wanted = {name.strip().lower() for name in listed.split(",") if name.strip()}
    try:
        declared = parse_declaration(params.get(PERIODS_KEY) or "")
    except ValueError:
        declared = {}
    keys = [(fs.name or "").lower() for fs in table.partitionKeys or []]
    chosen = tuple(
        (index, key) for index, key in enumerate(keys) if key in wanted or key in declared
    )
    kept = tuple((key, declared[key]) for _, key in chosen if key in declared)
    return Columns(chosen, kept)


def inferred_period(value: str) -> UpdatePeriod | None:
    """The finest update period ``value`` is a partition name of (None: of none)."""
    for period in UpdatePeriod.by_weight():
        try:
            TimePartition.parse(period, value)
        except ValueError:
            continue
        return period
    return None


def partition_entries(
    columns: Columns, values: Sequence[str], params: Mapping[str, str] | None
) -> set[Entry]:
    """The timeline entries of one partition: each time column's value as a partition of the
    partition's own update period (its parameter) or else of the column's declared one."""
    name = (params or {}).get(UPDATE_PERIOD_KEY)
    own = UpdatePeriod.__members__.get(name.strip().upper()) if name else None
    entries = set()
    for index, column in columns:
        if index >= len(values):
            continue
        period = own
        if period is None:
            declared, period = columns.declared_period(column)
            if not declared:
                continue
            if period is None:
                period = inferred_period(values[index])
                if period is None:
                    continue
        try:
            entries.add((period, column, TimePartition.parse(period, values[index])))
        except ValueError:
            continue
    return entries

