"""Partition timelines: which time partitions a storage table has, per update period and time
column, kept in memory and persisted in the table's parameters in Apache Lens's format.

Pure: no I/O and no imports from the rest of the project.

* ``UpdatePeriod`` (``timeline.periods``): granularities, names, calendar arithmetic.
* ``TimePartition``, ``TimePartitionRange`` (``timeline.partitions``).
* ``PartitionTimeline`` and ``StoreAllTimeline``, ``EndsAndHolesTimeline``, ``RangesTimeline``
  (``timeline.timelines``).
* The Lens property codec (``timeline.properties``; chunked lists in ``timeline.chunked``).
* ``cover_range``, ``StorageTimelines``, ``Cover``, ``CoverPart`` (``timeline.cover``): the
  partitions of a fact's storage tables that best cover a time range.
"""

from metastore_server.timeline.cover import Cover, CoverPart, StorageTimelines, cover_range
from metastore_server.timeline.partitions import TimePartition, TimePartitionRange
from metastore_server.timeline.periods import UpdatePeriod
from metastore_server.timeline.properties import (
    LENS_CLASS_NAMES,
    MAX_PARAM_LENGTH,
    PREFIX,
    PRESENT_KEY,
    TIME_PARTCOLS_KEY,
    UPDATE_PERIOD_KEY,
    class_key,
    decode_list,
    encode_list,
    lens_class_name,
    new_timeline,
    timeline_from_table_properties,
    timeline_key,
    timeline_to_table_properties,
    timeline_type,
    timelines_present,
)
from metastore_server.timeline.timelines import (
    EndsAndHolesTimeline,
    PartitionTimeline,
    RangesTimeline,
    StoreAllTimeline,
)

__all__ = [
    "LENS_CLASS_NAMES",
    "MAX_PARAM_LENGTH",
    "PREFIX",
    "PRESENT_KEY",
    "TIME_PARTCOLS_KEY",
    "UPDATE_PERIOD_KEY",
    "Cover",
    "CoverPart",
    "EndsAndHolesTimeline",
    "PartitionTimeline",
    "RangesTimeline",
    "StorageTimelines",
    "StoreAllTimeline",
    "TimePartition",
    "TimePartitionRange",
    "UpdatePeriod",
    "class_key",
    "cover_range",
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
