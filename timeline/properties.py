"""Timelines in a storage table's parameters, with Apache Lens's key names and formats.

For update period P (enum name, e.g. ``HOURLY``) and time partition column c:

* ``cube.storagetable.partition.timeline.cache.P.c.storage.class``: the timeline class, as a
  Lens class name; missing or unknown means EndsAndHoles, as in Lens.
* ``cube.storagetable.partition.timeline.cache.P.c.<prop>``: the implementation's properties
  (``PartitionTimeline.to_properties``), e.g. ``...HOURLY.dt.holes.size`` and ``...holes0``.
* ``cube.storagetable.partition.timeline.cache.present`` = ``true``: the timelines in the
  parameters are complete and can be trusted (anything else: rebuild from the partitions). This
  module reads it but never writes it; the caller sets it once every timeline is stored.
"""

from __future__ import annotations

from collections.abc import Mapping

from metastore_server.timeline.chunked import MAX_PARAM_LENGTH, decode_list, encode_list
from metastore_server.timeline.periods import UpdatePeriod
from metastore_server.timeline.timelines import (
    EndsAndHolesTimeline,
    PartitionTimeline,
    RangesTimeline,
    StoreAllTimeline,
)

__all__ = [
    "LENS_CLASS_NAMES",
    "MAX_PARAM_LENGTH",
    "PRESENT_KEY",
    "PREFIX",
    "TIME_PARTCOLS_KEY",
    "UPDATE_PERIOD_KEY",
    "class_key",
    "decode_list",
    "encode_list",
    "lens_class_name",
    "new_timeline",
    "timeline_from_table_properties",
    "timeline_key",
    "timeline_to_table_properties",
    "timeline_type",
    "timelines_present",
]

PREFIX = "cube.storagetable.partition.timeline.cache."
PRESENT_KEY = PREFIX + "present"
#: Storage table parameter: comma list of the time partition columns.
TIME_PARTCOLS_KEY = "cube.storagetable.time.partcols"
#: Partition parameter: the partition's update period (enum name).
UPDATE_PERIOD_KEY = "cube.storagetable.partition.update.period"

_LENS_PACKAGE = "org.apache.lens.cube.metadata.timeline."

#: Our timeline classes and the Lens classes they stand for.
LENS_CLASS_NAMES: Mapping[type[PartitionTimeline], str] = {
    EndsAndHolesTimeline: _LENS_PACKAGE + "EndsAndHolesPartitionTimeline",
    StoreAllTimeline: _LENS_PACKAGE + "StoreAllPartitionTimeline",
    RangesTimeline: _LENS_PACKAGE + "RangesPartitionTimeline",
}
_TYPES_BY_NAME = {name: kind for kind, name in LENS_CLASS_NAMES.items()}


def timeline_key(period: UpdatePeriod, column: str, prop: str) -> str:
    """The table parameter holding property ``prop`` of the (period, column) timeline."""
    return f"{PREFIX}{period.name}.{column}.{prop}"


def class_key(period: UpdatePeriod, column: str) -> str:
    """The table parameter naming the (period, column) timeline's class."""
    return timeline_key(period, column, "storage.class")


def lens_class_name(timeline_class: type[PartitionTimeline]) -> str:
    """The Lens class name of one of our timeline classes."""
    return LENS_CLASS_NAMES[timeline_class]


def timeline_type(class_name: str | None) -> type[PartitionTimeline]:
    """Our timeline class for a Lens class name (exact); EndsAndHoles when missing or unknown."""
    return _TYPES_BY_NAME.get(class_name or "", EndsAndHolesTimeline)


def new_timeline(
    storage_table: str, period: UpdatePeriod, column: str, table_props: Mapping[str, str]
) -> PartitionTimeline:
    """An empty timeline of the class the table's parameters ask for (for a rebuild)."""
    kind = timeline_type(table_props.get(class_key(period, column)))
    return kind(storage_table, period, column)


def timeline_to_table_properties(timeline: PartitionTimeline) -> dict[str, str]:
    """The table parameters storing ``timeline``: its class key and its prefixed properties."""
    period, column = timeline.period, timeline.column
    props = {class_key(period, column): lens_class_name(type(timeline))}
    for prop, value in timeline.to_properties().items():
        props[timeline_key(period, column, prop)] = value
    return props


def timeline_from_table_properties(
    storage_table: str, period: UpdatePeriod, column: str, table_props: Mapping[str, str]
) -> PartitionTimeline:
    """The (period, column) timeline stored in a table's parameters (ValueError if malformed)."""
    timeline = new_timeline(storage_table, period, column, table_props)
    prefix = timeline_key(period, column, "")
    own = {k[len(prefix) :]: v for k, v in table_props.items() if k.startswith(prefix)}
    timeline.load_properties(own)
    return timeline


def timelines_present(table_props: Mapping[str, str]) -> bool:
    """Whether the table's parameters say its timelines are stored (``present`` = true)."""
    return (table_props.get(PRESENT_KEY) or "").lower() == "true"
