"""Partition event marks (``markPartitionForEvent``, ``isPartitionMarkedForEvent``), as HMS 2.3
keeps them in PARTITION_EVENTS: the database and table names as sent, the partition's values in
key order joined by ``,`` (the partition need not exist), the event type, and when.

A mark is one ``meta`` row (``layout.partition_event_key``) holding its time; marking again
renews it. Like HMS's rows, marks are kept by name: they outlive a drop of their table. They
expire only when a cleaner would remove them: with ``hive.metastore.event.clean.freq`` above
zero, a mark older than ``hive.metastore.event.expiry.duration`` no longer counts (both 0s by
default in HMS 2.3: marks never expire).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import Tables
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.thrift_api import hms

CLEAN_FREQ_KEY = "hive.metastore.event.clean.freq"
EXPIRY_KEY = "hive.metastore.event.expiry.duration"
#: HiveConf time values: a number and a unit (seconds when none is given).
_TIME_VALUE = re.compile(r"\s*(-?\d+)\s*([a-z]*)\s*", re.IGNORECASE)
_UNIT_SECONDS = {
    "": 1.0, "ns": 1e-9, "nsec": 1e-9, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3,
    "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "hour": 3600.0,
    "d": 86400.0, "day": 86400.0,
}  # fmt: skip
_NULL_POINTER = "java.lang.NullPointerException"


def seconds_of(value: str | None) -> float:
    """Seconds in a HiveConf time value (``0s``, ``10m``, ``3600``); 0 when unreadable."""
    match = _TIME_VALUE.fullmatch(value or "")
    if match is None:
        return 0.0
    unit = match[2].lower()
    unit = unit[:-1] if unit.endswith("s") and unit[:-1] in _UNIT_SECONDS else unit
    return int(match[1]) * _UNIT_SECONDS.get(unit, 0.0)


def expiry_seconds(settings: Mapping[str, str]) -> float | None:
    """How long a mark counts under these settings (None: for ever)."""
    if seconds_of(settings.get(CLEAN_FREQ_KEY)) <= 0:
        return None
    return max(seconds_of(settings.get(EXPIRY_KEY)), 0.0)


class PartitionEvents:
    """HMS's partition event marks on the store."""

    def __init__(self, ctx: CatalogContext, tables: Tables) -> None:
        self._ctx = ctx
        self._tables = tables

    def _key(
        self, db: str, table: str, part_vals: Mapping[str, str] | None, event_type: int | None
    ) -> bytes:
        """The mark's row key, after HMS's checks of the table and the values."""
        ref = self._tables.find(names.normalize(db), names.normalize(table))
        if ref is None:
            raise hms.UnknownTableException(message=f"Table: {table} is not found.")
        if part_vals is None:
            raise hms.MetaException(message=_NULL_POINTER)
        keys = [k.name for k in ref.table.partitionKeys or []]
        if len(keys) != len(part_vals):
            raise hms.InvalidPartitionException(
                message=f"Number of partition columns in table: {len(keys)} doesn't match with "
                f"number of supplied partition values: {len(part_vals)}"
            )
        values = []
        for key in keys:
            if part_vals.get(key) is None:
                raise hms.InvalidPartitionException(
                    message=f"No value found for partition column: {key}"
                )
            values.append(part_vals[key])
        if event_type is None:
            raise hms.MetaException(message=_NULL_POINTER)
        return layout.partition_event_key(db, table, ",".join(values), event_type)

    def mark(
        self, db: str, table: str, part_vals: Mapping[str, str] | None, event_type: int | None
    ) -> None:
        """Record (or renew) a mark."""
        key = self._key(db, table, part_vals, event_type)
        now = str(int(time.time() * 1000)).encode()
        self._ctx.store.mutate([Put(layout.META, key, {layout.OBJECT: now})])

    def is_marked(
        self,
        db: str,
        table: str,
        part_vals: Mapping[str, str] | None,
        event_type: int | None,
        expiry_s: float | None = None,
    ) -> bool:
        """Whether the partition is marked (and the mark has not expired)."""
        key = self._key(db, table, part_vals, event_type)
        row = self._ctx.store.get(layout.META, key) or {}
        if layout.OBJECT not in row:
            return False
        if expiry_s is None:
            return True
        if int(row[layout.OBJECT]) >= (time.time() - expiry_s) * 1000:
            return True
        # What HMS's cleaner would do, unless the mark was renewed meanwhile.
        stale = Condition(layout.META, key, layout.OBJECT, row[layout.OBJECT])
        self._ctx.store.mutate([Delete(layout.META, key)], stale)
        return False
