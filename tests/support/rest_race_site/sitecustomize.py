"""Test fault: in a server process started with this folder on PYTHONPATH and
``METASTORE_TEST_REST_RACE=<db>.<table>``, a multi-table transaction of the REST catalog,
just before it points that table at its new metadata file, has another writer (a plain
alter, taking no lock, as a writer that takes none) point the table at its previous metadata
file: the transaction's compare-and-set on that table loses, after it has moved the tables
before it."""

from __future__ import annotations

import os

_TARGET = os.environ.get("METASTORE_TEST_REST_RACE")

if _TARGET:
    from metastore_server.rest import transactions

    _original = transactions.swap

    def _raced_swap(calls, files, current, location, metadata, **options):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN003, ANN202
        table = current.hive
        if f"{table.dbName}.{table.tableName}" == _TARGET and options.get("discard", True):
            other = calls.get_table(table.dbName, table.tableName)
            params = dict(other.parameters)
            params["metadata_location"] = params["previous_metadata_location"]
            params["raced"] = "yes"
            other.parameters = params
            calls.alter_table(table.dbName, table.tableName, other)
        return _original(calls, files, current, location, metadata, **options)

    transactions.swap = _raced_swap  # type: ignore[assignment]
