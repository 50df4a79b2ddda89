"""Writing partition rows: the columns of a partition's row, and a write of rows that marks
the table first when they hold non-canonical typed spellings, and names the call when a store
without atomic batches fails part-way (its transaction then rolls the whole call back).
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.reads.partition_rows import partition_name
from metastore_server.catalog.reads.scan import KEY_ID_LENGTH
from metastore_server.storage import layout
from metastore_server.storage.codec import has_spelling
from metastore_server.storage.port import Condition, Delete, PartialWriteError, Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import stored_partition_bytes


def row_columns(
    ref: TableRef, partition: hms.Partition, values: Sequence[str], name: str | None = None
) -> dict[bytes, bytes]:
    """The columns of a partition row (``name``: its name, when already made)."""
    return layout.partition_columns(
        stored_partition_bytes(partition),
        partition_name(ref, values) if name is None else name,
        ref.kinds,
        values,
    )


def write_rows(
    ctx: CatalogContext,
    tables: Tables,
    ref: TableRef,
    ops: Sequence[Put | Delete],
    action: str,
    conditions: list[Condition] | None = None,
    spelled: bool | None = None,
) -> bool:
    """Apply partition changes if ``conditions`` hold (False when one does not); when a
    store without atomic batches fails part-way, a MetaException names the call (``action``)
    and says none of it is kept: the write lock's transaction rolls the call back.
    ``spelled``: whether a row key put holds a non-canonical spelling, when known."""
    _mark_spellings_for(tables, ref, ops, spelled)
    try:
        return ctx.store.mutate(ops, conditions or None)
    except PartialWriteError as exc:
        raise hms.MetaException(
            message=(
                f"{action} of {ref.db}.{ref.name} failed after {len(exc.applied)} of "
                f"{len(exc.applied) + len(exc.failed)} rows were written "
                f"({exc.__cause__ or exc}); the whole call is rolled back"
            )
        ) from exc


def _mark_spellings_for(
    tables: Tables, ref: TableRef, ops: Sequence[Put | Delete], spelled: bool | None = None
) -> None:
    """Mark the table before partitions holding non-canonical typed spellings are written
    (readers that find no mark rely on there being none)."""
    if spelled is not None:
        if spelled and not ref.has_spellings:
            tables.mark_spellings(ref)
        return
    if not ref.has_spellings and any(
        isinstance(op, Put)
        and op.table == layout.PARTITIONS
        and has_spelling(ref.kinds, op.key[KEY_ID_LENGTH:])
        for op in ops
    ):
        tables.mark_spellings(ref)
