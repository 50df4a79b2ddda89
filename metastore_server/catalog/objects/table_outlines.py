"""Table outlines: what a database drop needs of every table of the store (its location, whether
it owns its data, whether it has partition keys), decoded without the rest of each definition,
each distinct stored definition once per process."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from thriftpy2.thrift import TPayload, TType

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import table_owns_data
from metastore_server.storage import layout
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes


class _Skipped(TPayload):
    """A struct whose fields are all skipped (a partition key: only its presence counts)."""

    thrift_spec: ClassVar[dict[int, tuple[Any, ...]]] = {}
    default_spec: ClassVar[list[tuple[str, Any]]] = []


class _Storage(TPayload):
    thrift_spec = {2: (TType.STRING, "location", False)}
    default_spec = [("location", None)]


class _Outline(TPayload):
    """A Table's ``sd.location``, ``partitionKeys``, ``parameters`` and ``tableType``."""

    thrift_spec = {
        7: (TType.STRUCT, "sd", _Storage, False),
        8: (TType.LIST, "partitionKeys", (TType.STRUCT, _Skipped), False),
        9: (TType.MAP, "parameters", (TType.STRING, TType.STRING), False),
        12: (TType.STRING, "tableType", False),
    }
    default_spec = [
        ("sd", None),
        ("partitionKeys", None),
        ("parameters", None),
        ("tableType", None),
    ]


@dataclass(frozen=True, slots=True)
class TableOutline:
    """One table as a database drop sees it."""

    db: str
    name: str
    location: str | None
    #: ``tables.table_owns_data`` of its definition.
    owns_data: bool
    partitioned: bool


#: Decoded (location, owns data, partitioned) by stored definition; bounded by the size of the
#: definitions it holds, cleared when full.
_DECODED: dict[bytes, tuple[str | None, bool, bool]] = {}
_DECODED_MAX_BYTES = 8 << 20
_decoded_bytes = 0


def _decoded(stored: bytes) -> tuple[str | None, bool, bool]:
    global _decoded_bytes
    found = _DECODED.get(stored)
    if found is None:
        try:
            # The fields table_owns_data reads, named as hms.Table's.
            outline = cast(hms.Table, from_bytes(_Outline, stored))
        except Exception:  # noqa: BLE001 - what the partial decoder cannot read, the full one can
            outline = from_bytes(hms.Table, stored)
        sd = getattr(outline, "sd", None)
        location = sd.location if sd is not None else None
        found = (location, table_owns_data(outline), bool(outline.partitionKeys))
        if _decoded_bytes + len(stored) > _DECODED_MAX_BYTES:
            _DECODED.clear()
            _decoded_bytes = 0
        _DECODED[stored] = found
        _decoded_bytes += len(stored)
    return found


def _outline(key: bytes, stored: bytes | None, table_id: bytes | None) -> TableOutline | None:
    """The outline of a table row; None for a row without a definition and a table id."""
    if stored is None or table_id is None:
        return None
    db, _, _ = key.partition(b"\x00")
    location, owns, partitioned = _decoded(stored)
    # A database's name once for all its tables (outlines are kept for every table).
    return TableOutline(
        sys.intern(db.decode("utf-8")), layout.name_from_child_key(key), location, owns,
        partitioned,
    )  # fmt: skip


def _keyed_outlines(ctx: CatalogContext) -> Iterator[tuple[bytes, TableOutline]]:
    columns = (layout.OBJECT, layout.TABLE_ID)
    scan_columns = ctx.capabilities.scan_columns
    if scan_columns is not None:
        rows, _read, _lacking = scan_columns(layout.TABLES, b"", None, columns)
        pairs = [(key, stored, table_id) for stored, table_id, key in rows]
    else:
        pairs = [
            (key, row.get(layout.OBJECT), row.get(layout.TABLE_ID))
            for key, row in ctx.store.scan(layout.TABLES, columns=list(columns))
        ]
    for key, stored, table_id in pairs:
        if key is None:
            continue
        outline = _outline(key, stored, table_id)
        if outline is not None:
            yield key, outline


def every_outline(ctx: CatalogContext) -> Iterator[TableOutline]:
    """Every table of every database of the store, outlined, in key order (rows without a
    definition and a table id, not whole yet, are passed over as ``Tables.every_table`` does)."""
    for _key, outline in _keyed_outlines(ctx):
        yield outline


@dataclass(frozen=True)
class Outlines:
    """Every table's outline in key order, with what a drop reads of all of them."""

    every: list[TableOutline]
    #: The location of each, in the same order.
    locations: tuple[str | None, ...]
    #: Those with partition keys, in the same order.
    partitioned: list[TableOutline]

    @classmethod
    def of(cls, every: list[TableOutline]) -> Outlines:
        """The outlines ``every`` with their locations and partitioned ones."""
        return cls(every, tuple(o.location for o in every), [o for o in every if o.partitioned])


class KeptOutlines:
    """Every table's outline, kept between calls on a store that logs the changes of its table
    rows (``storage.port.ChangedKeys``): each call reads only the rows changed since the last
    (every row when the log cannot tell); on other stores every row each call."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self._lock = threading.Lock()
        self._position: tuple[int, bytes] | None = None
        self._by_key: dict[bytes, TableOutline] = {}
        #: The outlines in key order; None when to be sorted again.
        self._ordered: Outlines | None = Outlines.of([])

    def outlines(self) -> Outlines:
        """What ``every_outline`` gives now (shared between calls: not to be changed)."""
        changed_keys = self._ctx.capabilities.changed_keys
        if changed_keys is None:
            return Outlines.of(list(every_outline(self._ctx)))
        with self._lock:
            # The position first: rows changed after it are read again next time.
            position, keys = changed_keys(layout.TABLES, self._position)
            if keys is None:
                self._by_key = dict(_keyed_outlines(self._ctx))
                self._ordered = None
            elif keys:
                self._read_again(keys)
            self._position = position
            if self._ordered is None:
                self._ordered = Outlines.of([self._by_key[key] for key in sorted(self._by_key)])
            return self._ordered

    def _read_again(self, keys: list[bytes]) -> None:
        found = dict(self._ctx.store.get_many(layout.TABLES, keys))
        for key in keys:
            row = found.get(key)
            outline = None if row is None else _outline(key, row.get(layout.OBJECT),
                                                         row.get(layout.TABLE_ID))  # fmt: skip
            if outline is None:
                self._by_key.pop(key, None)
            else:
                self._by_key[key] = outline
        self._ordered = None
