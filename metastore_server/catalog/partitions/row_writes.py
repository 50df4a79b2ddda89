"""Writing partition rows: the columns of a partition's row, and a write of rows that marks
the table first when they hold non-canonical typed spellings, and says exactly which
partitions were changed when a store without atomic batches fails part-way.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.catalog.basics.serde import stored_partition_bytes
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.objects.tables import TableRef, Tables
from metastore_server.catalog.reads.partition_rows import partition_name
from metastore_server.catalog.reads.scan import KEY_ID_LENGTH, values_of
from metastore_server.thrift_api import hms
from storage import layout
from storage.codec import has_spelling
from storage.port import Condition, Delete, PartialWriteError, Put


def row_columns(
    ref: TableRef, partition: hms.Partition, values: Sequence[str]
) -> dict[bytes, bytes]:
    """The columns of a partition row."""
    return layout.partition_columns(
        stored_partition_bytes(partition), partition_name(ref, values), ref.kinds, values
    )


def write_rows(
    ctx: CatalogContext,
    tables: Tables,
    ref: TableRef,
    ops: Sequence[Put | Delete],
    action: str,
    conditions: list[Condition] | None = None,
) -> bool:
    """Apply partition changes if ``conditions`` hold (False when one does not); when a
    store without atomic batches fails part-way, a MetaException says exactly which
    partitions were changed and which were not (``action`` names the call in it)."""
    _mark_spellings_for(tables, ref, ops)
    try:
        return ctx.store.mutate(ops, conditions or None)
    except PartialWriteError as exc:
        landed = [partition_name(ref, values_of(ref, key)) for _, key in exc.applied]
        missed = [partition_name(ref, values_of(ref, key)) for _, key in exc.failed]
        raise hms.MetaException(
            message=(
                f"{action} of {ref.db}.{ref.name} failed part-way ({exc.__cause__ or exc}): "
                f"{len(landed)} of {len(landed) + len(missed)} done: "
                f"[{', '.join(landed)}]; not done: [{', '.join(missed)}]"
            )
        ) from exc


def _mark_spellings_for(tables: Tables, ref: TableRef, ops: Sequence[Put | Delete]) -> None:
    """Mark the table before partitions holding non-canonical typed spellings are written
    (readers that find no mark rely on there being none)."""
    if not ref.has_spellings and any(
        isinstance(op, Put)
        and op.table == layout.PARTITIONS
        and has_spelling(ref.kinds, op.key[KEY_ID_LENGTH:])
        for op in ops
    ):
        tables.mark_spellings(ref)
