"""HMS's checks of a table's definition on create and alter: a storage descriptor, column
types it knows, no column named twice, partition keys apart from the columns, and (while the
client disallows them) no incompatible column type changes. Messages are HMS's."""

from __future__ import annotations

from metastore_server.catalog.basics import code_properties, column_types
from metastore_server.thrift_api import ErrorClass, hms

#: Our refusal of a table without a storage descriptor (HMS fails on it: MetaException).
NO_STORAGE_DESCRIPTOR = "Table has no storage descriptor"


def duplicate_column_message(table: hms.Table, column: str) -> str:
    """Our refusal of a table naming a column twice (HMS's store refuses it: MetaException)."""
    return f"Table {table.dbName}.{table.tableName} names column {column} more than once"


def check_column_types(
    table: hms.Table, error: ErrorClass, *, partition_keys: bool = False
) -> None:
    """Refuse a definition without a storage descriptor (MetaException) or with a column type
    HMS does not know (``error``: ``Invalid column type: ...``), as HMS does before anything
    else; with ``partition_keys`` their types too (``Invalid partition column type: ...``)."""
    if table.sd is None:
        raise hms.MetaException(message=NO_STORAGE_DESCRIPTOR)
    invalid = column_types.invalid_type(table.sd.cols)
    if invalid is not None:
        raise error(message=f"Invalid column {invalid}")
    invalid = column_types.invalid_type(table.partitionKeys) if partition_keys else None
    if invalid is not None:
        raise error(message=f"Invalid partition column {invalid}")


def refuse_duplicate_columns(table: hms.Table) -> None:
    """MetaException (HMS's words) for a column name given twice (in any case)."""
    seen: set[str] = set()
    for column in (table.sd.cols if table.sd else None) or []:
        name = (column.name or "").lower()
        if name in seen:
            raise hms.MetaException(message=duplicate_column_message(table, name))
        seen.add(name)


def refuse_incompatible_types(current: hms.Table, new: hms.Table) -> None:
    """InvalidOperationException (HMS's words) naming the new columns whose type the old
    column at the same position does not convert to."""
    old_cols = current.sd.cols if current.sd else None
    found = column_types.incompatible_columns(old_cols, new.sd.cols if new.sd else None)
    if found:
        raise hms.InvalidOperationException(message=column_types.incompatible_message(found))


def check_partition_keys(table: hms.Table, error: ErrorClass) -> None:
    """``error`` for an empty partition key name or one a column has too; MetaException for
    one given twice (HMS's store refuses it)."""
    columns = [(c.name or "").lower() for c in (table.sd.cols if table.sd else None) or []]
    keys = [(k.name or "").lower() for k in table.partitionKeys or []]
    for key in keys:
        if not key:
            raise error(message="Partition column name cannot be empty")
        if key in columns:
            raise error(message=f"Partition column name {key} conflicts with table columns.")
    if len(set(keys)) != len(keys):
        raise hms.MetaException(message="Duplicate partition column names")


def refuse_code_properties(
    new: dict[str, str] | None, old: dict[str, str] | None, what: str, error: ErrorClass
) -> None:
    """``error`` when ``new`` sets a property naming code (``py-io-impl``, ``*.impl``) that
    ``old`` did not hold with that value (``code_properties``)."""
    keys = code_properties.keys_set(new, old)
    if keys:
        raise error(message=code_properties.refusal(keys, what))
