"""Timelines in a table's parameters, with Apache Lens's keys (``timeline.properties``):
which timelines the parameters hold, the parameters with new timelines or none, the timelines
read back from them; and new timelines from old with entries added and dropped. See
``docs/timelines.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence

import structlog

from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.timelines.time_columns import Columns, Entry
from metastore_server.timeline import (
    PREFIX,
    PRESENT_KEY,
    PartitionTimeline,
    UpdatePeriod,
    new_timeline,
    timeline_from_table_properties,
    timeline_to_table_properties,
    timelines_present,
)

log = structlog.get_logger(__name__)

#: A timeline's key: its update period and its time column.
TimelineKey = tuple[UpdatePeriod, str]
Timelines = dict[TimelineKey, PartitionTimeline]
#: A partition as the keeper sees it: its values and its parameters.
PartitionSpec = tuple[Sequence[str], Mapping[str, str] | None]


def _timeline_of(param: str, column_names: set[str]) -> TimelineKey | None:
    """The timeline a table parameter belongs to; None if it is not a timeline parameter of
    one of ``column_names`` (the presence flag is not one)."""
    if not param.startswith(PREFIX):
        return None
    period_name, _, rest = param[len(PREFIX) :].partition(".")
    column, _, prop = rest.partition(".")
    period = UpdatePeriod.__members__.get(period_name)
    if period is None or column not in column_names or not prop:
        return None
    return period, column


def stored_timeline_keys(params: Mapping[str, str], columns: Columns) -> set[TimelineKey]:
    """The timelines the parameters hold any key of (time columns only)."""
    names = {name for _, name in columns}
    found = (_timeline_of(param, names) for param in params)
    return {key for key in found if key is not None}


def with_timelines(
    params: Mapping[str, str], timelines: Mapping[TimelineKey, PartitionTimeline], columns: Columns
) -> dict[str, str]:
    """``params`` with every timeline parameter of the time columns replaced by those of
    ``timelines``, and the presence flag set."""
    names = {name for _, name in columns}
    result = {
        k: v for k, v in params.items() if k != PRESENT_KEY and _timeline_of(k, names) is None
    }
    for timeline in timelines.values():
        result.update(timeline_to_table_properties(timeline))
    result[PRESENT_KEY] = "true"
    return result


def without_timelines(params: Mapping[str, str]) -> dict[str, str]:
    """``params`` without any timeline parameter (the table no longer opts in)."""
    return {k: v for k, v in params.items() if not k.startswith(PREFIX)}


def forces_rebuild(params: Mapping[str, str]) -> bool:
    """Whether the parameters set the presence flag to something else than true."""
    flag = params.get(PRESENT_KEY)
    return flag is not None and flag.strip().lower() != "true"


def changed(
    base: Mapping[TimelineKey, PartitionTimeline],
    storage_table: str,
    params: Mapping[str, str],
    add: Iterable[Entry] = (),
    drop: Iterable[Entry] = (),
) -> Timelines:
    """New timelines: ``base`` with entries added and dropped. ``base`` is not changed (a
    timeline that changes is copied first), so cached timelines can be read without a lock."""
    result = dict(base)
    copied: set[TimelineKey] = set()

    def own(key: TimelineKey) -> PartitionTimeline:
        if key not in copied:
            current = result.get(key)
            result[key] = (
                copy.deepcopy(current)
                if current is not None
                else new_timeline(storage_table, key[0], key[1], params)
            )
            copied.add(key)
        return result[key]

    for period, column, partition in sorted(add, key=lambda e: e[2].start):
        own((period, column)).add(partition)
    for period, column, partition in drop:
        if (period, column) in result:
            own((period, column)).drop(partition)
    return result


def from_params(ref: TableRef, columns: Columns) -> Timelines | None:
    """The timelines stored in the parameters; None unless the presence flag says they are
    complete (or when they cannot be read)."""
    params = ref.table.parameters or {}
    if not timelines_present(params):
        return None
    try:
        return {
            (period, column): timeline_from_table_properties(ref.name, period, column, params)
            for period, column in stored_timeline_keys(params, columns)
        }
    except ValueError as exc:
        log.warning("timelines_unreadable", db=ref.db, table=ref.name, error=str(exc))
        return None
