"""Timelines made from the partitions themselves: every timeline of a table rebuilt from all
its partitions (when the stored ones cannot be trusted: a writer died half-way, the parameters
are unreadable, or a client asked), and which timeline entries some partition still holds
(before an entry leaves its timeline). See ``docs/timelines.md``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import structlog

from metastore_server.catalog.objects.tables import TableRef
from metastore_server.catalog.reads.scan import (
    KeyRange,
    matching_rows,
    plan_ranges,
    values_of,
    whole_table,
)
from metastore_server.catalog.timelines.parameters import (
    TimelineKey,
    Timelines,
    stored_timeline_keys,
)
from metastore_server.catalog.timelines.time_columns import Columns, Entry, partition_entries
from metastore_server.planner.errors import FilterError
from metastore_server.planner.grammar import parse_filter
from metastore_server.planner.plan import plan_filter
from metastore_server.storage import layout
from metastore_server.storage.port import StoragePort
from metastore_server.thrift_api import hms
from metastore_server.timeline import TimePartition, new_timeline
from metastore_server.wire.serde import from_bytes

log = structlog.get_logger(__name__)

#: Values per filter when asking which partitions still hold some values.
_VALUES_PER_FILTER = 200


def rebuilt(
    store: StoragePort, ref: TableRef, columns: Columns, params: Mapping[str, str]
) -> Timelines:
    """Timelines built from every partition of the table (classes from ``params``; the
    timelines ``params`` hold keys of are kept, empty when no partition is theirs)."""
    found: dict[TimelineKey, list[TimePartition]] = defaultdict(list)
    count = 0
    for key, row in matching_rows(store, ref, whole_table(ref), (layout.OBJECT,)):
        count += 1
        partition = from_bytes(hms.Partition, row[layout.OBJECT])
        for period, column, part in partition_entries(
            columns, values_of(ref, key), partition.parameters
        ):
            found[(period, column)].append(part)
    timelines: Timelines = {}
    for period, column in stored_timeline_keys(params, columns) | set(found):
        timeline = new_timeline(ref.name, period, column, params)
        timeline.add_all(sorted(found.get((period, column), ()), key=lambda p: p.start))
        timelines[(period, column)] = timeline
    log.info(
        "timelines_rebuilt",
        db=ref.db,
        table=ref.name,
        partitions=count,
        timelines=len(timelines),
    )
    return timelines


def present_entries(
    store: StoragePort,
    ref: TableRef,
    columns: Columns,
    entries: set[Entry],
    values: dict[str, set[str]],
) -> set[Entry]:
    """The ``entries`` some partition of the table has now (``values``: raw values of the
    time columns to look for besides the entries' own)."""
    present: set[Entry] = set()
    for column in sorted({column for _, column, _ in entries}):
        wanted = sorted(
            values.get(column, set()) | {p.name for _, c, p in entries if c == column}
        )
        for start in range(0, len(wanted), _VALUES_PER_FILTER):
            chunk = wanted[start : start + _VALUES_PER_FILTER]
            rows = matching_rows(store, ref, _value_ranges(ref, column, chunk), (layout.OBJECT,))
            for key, row in rows:
                partition = from_bytes(hms.Partition, row[layout.OBJECT])
                found = partition_entries(columns, values_of(ref, key), partition.parameters)
                present |= found & entries
    return present


def _value_ranges(ref: TableRef, column: str, wanted: list[str]) -> list[KeyRange]:
    """Key ranges of the partitions whose ``column`` holds one of ``wanted`` (time
    partition names: digits, dashes and W, safe in a quoted filter literal)."""
    text = " or ".join(f'{column} = "{value}"' for value in wanted)
    try:
        return plan_ranges(ref, plan_filter(parse_filter(text), ref.key_types))
    except FilterError:
        index = ref.key_names.index(column)
        chosen = set(wanted)
        return whole_table(ref, lambda values: values[index] in chosen)
