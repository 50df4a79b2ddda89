"""What a call's audit line says of it besides its outcome: the database and table its
arguments name, and how many rows its answer holds. See ``docs/operations.md``."""

from __future__ import annotations

from collections.abc import Mapping

from metastore_server.catalog import EncodedNames, EncodedPartitions, EncodedStructs

_DB_ARGUMENTS = ("db_name", "dbname", "dbName")
_TABLE_ARGUMENTS = ("tbl_name", "table_name", "tblName")
_DB_FIELDS = ("dbName", "db_name")
_TABLE_FIELDS = ("tblName", "tableName", "tbl_name")
_LIST_FIELDS = ("partitions", "partitionValues", "names", "functions")


def result_size(result: object) -> int | None:
    """Rows in a call's result, for the audit line."""
    if result is None:
        return None
    if isinstance(result, EncodedStructs):  # a struct holding the list counts one, as before
        return len(result) if result.within is None else 1
    if isinstance(result, list | tuple | dict | EncodedPartitions | EncodedNames):
        return len(result)
    for attr in _LIST_FIELDS:
        value = getattr(result, attr, None)
        if isinstance(value, list):
            return len(value)
    return 1


def _last_text(args: Mapping[str, object], keys: tuple[str, ...]) -> str | None:
    """The text argument of the last of ``keys`` that names one."""
    found = None
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            found = value
    return found


def _first_field(value: object, fields: tuple[str, ...]) -> str | None:
    """The first of a struct's ``fields`` that holds text."""
    for field in fields:
        text = getattr(value, field, None)
        if isinstance(text, str):
            return text
    return None


def split_audit_target(args: Mapping[str, object]) -> tuple[str | None, str | None]:
    """(db, table) named by a call's arguments, for the audit line: plain arguments first,
    then the fields of a request struct."""
    db = _last_text(args, _DB_ARGUMENTS)
    table = _last_text(args, _TABLE_ARGUMENTS)
    for value in args.values():
        if db is None:
            db = _first_field(value, _DB_FIELDS)
        if table is None:
            table = _first_field(value, _TABLE_FIELDS)
    return db, table
