"""The listings of a database's tables read from the table rows' keys and their index column
(``layout.TABLE_META``: type and comment), never from the tables' definitions.

``get_all_tables``, ``get_tables``, ``get_tables_by_type`` and ``get_table_meta`` of a
database of 200,000 tables would otherwise decode 200,000 definitions. Here one narrow scan
reads the keys (the names) and the index column of the rows in name order; a pattern's
literal start narrows the scan to its key ranges (``names.NamePattern``) and the usual
patterns are matched as globs. ``get_table_meta`` answers each table as its names written as
Thrift fields followed by the index column as it is stored (``EncodedStructs``), and
``get_table_objects_by_name`` the stored definitions as they are. A row written before the
index column existed is answered from its definition, as before.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import cast

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.thrift_api import hms
from metastore_server.wire.encoded import string_field
from metastore_server.wire.serde import from_bytes, to_bytes

_STRING, _STOP = 11, 0
_FIELD = struct.Struct("!bhi")
_TYPE_FIELD = 3
#: TableMeta's fields of the names.
_DB_FIELD, _NAME_FIELD = 1, 2
_LISTED_COLUMNS = (layout.TABLE_META, layout.TABLE_ID)


def meta_column(table: hms.Table) -> bytes:
    """The index column of a table row (``layout.TABLE_META``): the TableMeta fields of the
    table besides its names and catalog (type, comment), Thrift binary."""
    comment = (table.parameters or {}).get("comment")
    return to_bytes(hms.TableMeta(tableType=table.tableType or "", comments=comment))


def meta_type(meta: bytes) -> str:
    """The table type held in an index column."""
    pos = 0
    while pos < len(meta) and meta[pos] != _STOP:
        ttype, field_id, size = _FIELD.unpack_from(meta, pos)
        if ttype != _STRING:  # not written by meta_column: read it the long way
            return from_bytes(hms.TableMeta, meta).tableType or ""
        if field_id == _TYPE_FIELD:
            return meta[pos + _FIELD.size : pos + _FIELD.size + size].decode("utf-8")
        pos += _FIELD.size + size
    return ""


def matching(
    ctx: CatalogContext, db: str, pattern: names.NamePattern
) -> tuple[list[str], list[bytes]]:
    """The names of the tables of ``db`` that match ``pattern``, in name order, and the index
    column of each: read from the rows' keys and index columns, handled a listing at a time
    (one decode of all the names, one pass of the pattern) rather than a row at a time."""
    base, whole_stop = layout.children_range(db)
    prefixes = pattern.prefixes()
    if prefixes is None:
        ranges: Sequence[tuple[bytes, bytes | None]] = [(base, whole_stop)]
    else:  # sorted, none a prefix of another: disjoint ranges in key order
        ranges = [layout.prefix_range(base + start.encode("utf-8")) for start in prefixes]
    rows: list[tuple[bytes | None, ...]] = []
    for start, stop in ranges:
        rows += _index_rows(ctx, start, stop or whole_stop)
    if not rows:
        return [], []
    # Every key starts with ``base`` (which ends with NUL, which no name holds): the names are
    # the pieces of the joined keys split on it.
    joined = b"".join(cast(list[bytes], [row[-1] for row in rows]))  # (each row's key)
    metas = [row[0] for row in rows]
    del rows  # the tuples (and the table ids in them) go before the names are made
    found = joined.decode("utf-8").split(base.decode("utf-8"))
    del found[0]
    if not pattern.everything or not names.all_plain(found):
        chosen = pattern.select(found)
        if len(chosen) < len(found):
            found = [found[i] for i in chosen]
            metas = [metas[i] for i in chosen]
    if None in metas:
        return _with_definitions(ctx, db, found, metas)
    return found, cast(list[bytes], metas)  # (none is None)


def _with_definitions(
    ctx: CatalogContext, db: str, found: list[str], metas: list[bytes | None]
) -> tuple[list[str], list[bytes]]:
    """``found`` and ``metas``, the index column of a row written before it existed taken from
    its definition; a row that holds none left out."""
    kept_names, kept_metas = [], []
    for name, meta in zip(found, metas, strict=True):
        if meta is None:
            meta = _meta_from_definition(ctx, layout.table_key(db, name))
            if meta is None:
                continue
        kept_names.append(name)
        kept_metas.append(meta)
    return kept_names, kept_metas


def names_of_type(found: list[str], metas: list[bytes], table_type: str) -> list[str]:
    """The names (of ``matching``) of the tables of type ``table_type``: an index column
    written by ``meta_column`` starts with its type field, compared whole."""
    typed = string_field(_TYPE_FIELD, table_type)
    head = typed[:3]
    return [
        name
        for name, meta in zip(found, metas, strict=True)
        if meta.startswith(typed) or (not meta.startswith(head) and meta_type(meta) == table_type)
    ]


def _index_rows(ctx: CatalogContext, start: bytes, stop: bytes) -> list[tuple[bytes | None, ...]]:
    """A tuple per row in ``[start, stop)`` that holds the index column or a table id, in key
    order: the index column (or None) first, the key last."""
    scan_columns = ctx.capabilities.scan_columns
    if scan_columns is not None:
        # The index column alone, unless a row lacks it (written before it existed, or a row
        # of marks alone): then with the table id, which every table row holds.
        rows, read, _lacking = scan_columns(layout.TABLES, start, stop, _LISTED_COLUMNS[:1])
        if read == len(rows):
            return rows
        rows, _read, _lacking = scan_columns(layout.TABLES, start, stop, _LISTED_COLUMNS)
        return rows
    return [
        (row.get(layout.TABLE_META), key)
        for key, row in ctx.store.scan(layout.TABLES, start, stop, columns=_LISTED_COLUMNS)
    ]


def _meta_from_definition(ctx: CatalogContext, key: bytes) -> bytes | None:
    """The index column of a row written before it existed, from its definition (None: the
    row holds none)."""
    row = ctx.store.get(layout.TABLES, key)
    if row is None or layout.OBJECT not in row:
        return None
    return meta_column(from_bytes(hms.Table, row[layout.OBJECT]))


def table_meta_blobs(db: str, found: list[str], metas: list[bytes]) -> list[bytes]:
    """A whole TableMeta (Thrift binary, without its catalog name) of each listed table (of
    ``matching``)."""
    head = string_field(_DB_FIELD, db)
    pack = _FIELD.pack
    out = []
    for name, meta in zip(found, metas, strict=True):
        data = name.encode("utf-8")
        out.append(b"".join((head, pack(_STRING, _NAME_FIELD, len(data)), data, meta)))
    return out


def stored_definitions(ctx: CatalogContext, db: str, wanted: Sequence[str]) -> list[bytes]:
    """The stored definitions (``c:o``) of the tables of ``db`` named in ``wanted`` that exist,
    in that order, each once: read in one batch, never decoded."""
    keys = list(dict.fromkeys(layout.table_key(db, names.normalize(raw)) for raw in wanted))
    found = []
    for _key, row in ctx.store.get_many(layout.TABLES, keys):
        if layout.OBJECT in row and layout.TABLE_ID in row:  # as ``Tables.find`` reads a row
            found.append(row[layout.OBJECT])
    return found
