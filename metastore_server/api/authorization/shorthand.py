"""The rule builders the areas declare their methods' authorization rules with
(``@thrift(rule=auth...)``, ``auth`` being this module): the constructors and locators of
:mod:`.rules` and the shorthands of HMS's SQL-standard model below.

The metadata calls (databases, tables, partitions, statistics, constraints, indexes,
functions, types, views and our own table calls):

- reading a table (its definition, fields, partitions, statistics, constraints) needs SELECT on
  the table (HMS's read-table event, operation QUERY); listing names is open to all (SHOWTABLES,
  SHOWDATABASES need nothing, and SQL-standard authorization filters no listing);
- creating a table needs the ownership of its database (CREATETABLE; everyone owns ``default``);
- altering, truncating, dropping a table, changing its statistics, constraints or indexes
  needs its ownership; adding partitions INSERT, dropping them DELETE, altering them ownership;
- dropping a database needs its ownership, altering one the admin privilege (ALTERDATABASE);
  creating one only a user name (the owner);
- functions (CREATEFUNCTION, DROPFUNCTION) and types are the admin's.

The other calls:

- status, configuration reads, ``set_ugi``, transactions and locks (SQL-standard controls no
  lock or transaction operation), listings of catalogs, functions, procedures: open to all;
- the notification log (HMS's ``hive.metastore.event.db.notification.api.auth``, on by default),
  the token store, the compactor's and replication's own calls, runtime statistics, scheduled
  queries, properties: the admin's (HMS keeps them for its superusers);
- catalogs and the schema registry: the admin's, refused with HMS's metastore authorizer's words
  for those events; workload management: SQL-standard's administrator operations;
- the role and privilege calls: decided by :mod:`.grant_checks` (SQL-standard's rules);
- writes tied to one table (write ids, write notifications, dynamic partitions, compaction
  requests): INSERT on it, or its ownership to compact it; reads of its write state: SELECT.
"""

from __future__ import annotations

from typing import Any

from metastore_server.api.authorization.rules import (
    ADMIN,
    API,
    CUSTOM,
    DELETE,
    INSERT,
    NAMED,
    OPEN,
    OWNERSHIP,
    SELECT,
    Locator,
    Rule,
    admin_on_function,
    admin_operation,
    args,
    combined,
    each,
    event,
    field,
    full_names,
    named_fields,
    on_databases,
    on_tables,
    statistics,
    tables_of,
)

__all__ = [
    "ADMIN", "API", "COLUMN_TABLE", "CUSTOM", "DB_NAME", "DB_TABLE", "DELETE", "INSERT", "NAMED",
    "OPEN", "OWN", "OWNERSHIP", "PARTS", "READ", "REQ", "REQUEST", "RQST", "SELECT",
    "TABLE", "add_parts", "admin_on_function", "admin_operation", "alter", "alter_parts",
    "alter_table", "args", "combined", "create", "dependent", "drop", "drop_parts", "each",
    "event", "exchange", "field", "full_names", "function_name", "named_fields", "on_databases",
    "on_tables", "read", "stats", "statistics", "tables_of",
]  # fmt: skip

OWN = (OWNERSHIP,)
READ = (SELECT,)


def read(locate: Locator) -> Rule:
    """SELECT on the tables found (HMS's QUERY)."""
    return on_tables("QUERY", READ, locate)


def alter(locate: Locator, operation: str = "ALTERTABLE_ADDCOLS") -> Rule:
    """The ownership of the tables found."""
    return on_tables(operation, OWN, locate)


def _moved_into(db_arg: str, new_arg: str, *path: str) -> Any:
    """The database a table is moved into by an alter (renamed into another database): none
    when it stays where it is."""
    old = args(db_arg) if db_arg else field(new_arg)
    new = field(new_arg, *path)

    def locate(values: dict[str, Any]) -> list[tuple[str, str | None]]:
        before, after = old(values), new(values)
        if not after or not after[0][0] or (before and before[0][0] == after[0][0]):
            return []
        return [(after[0][0], None)]

    return locate


def alter_table(locate: Locator, db_arg: str, new_arg: str, *path: str) -> Rule:
    """The table's ownership, and the ownership of a database it is moved into (creating a
    table there)."""
    into = on_databases("", OWN, _moved_into(db_arg, new_arg, *path))
    return combined("ALTERTABLE_ADDCOLS", alter(locate), into)


def create(locate: Locator) -> Rule:
    """The ownership of the database a table is created in."""
    return on_databases("CREATETABLE", OWN, locate)


def drop(locate: Locator) -> Rule:
    """The ownership of the table dropped."""
    return on_tables("DROPTABLE", OWN, locate)


def add_parts(locate: Locator) -> Rule:
    """INSERT on the table partitions are added to."""
    return on_tables("ALTERTABLE_ADDPARTS", (INSERT,), locate)


def drop_parts(locate: Locator) -> Rule:
    """DELETE on the table partitions are dropped from."""
    return on_tables("ALTERTABLE_DROPPARTS", (DELETE,), locate)


def alter_parts(locate: Locator) -> Rule:
    """The ownership of the table whose partitions are altered."""
    return on_tables("ALTERPARTITION_FILEFORMAT", OWN, locate)


def stats(locate: Locator) -> Rule:
    """The ownership of the tables whose statistics change."""
    return on_tables("ALTERTABLE_UPDATETABLESTATS", OWN, locate)


#: Where the usual arguments and requests name a table.
DB_TABLE = args("dbname", "tbl_name")
DB_NAME = args("dbname", "name")
PARTS = args("db_name", "tbl_name")
COLUMN_TABLE = args("db_name", "table_name")
TABLE = field("tbl")
REQ = field("req")
REQUEST = field("request")


def exchange() -> Rule:
    """SELECT and DELETE on the source table, INSERT on the destination."""
    source = on_tables("", (SELECT, DELETE), args("source_db", "source_table_name"))
    target = on_tables("", (INSERT,), args("dest_db", "dest_table_name"))
    return combined("ALTERTABLE_EXCHANGEPARTITION", source, target)


def function_name(key: str) -> Any:
    """A function's name in argument ``key`` (a Function, or its name)."""

    def name(values: dict[str, Any]) -> str:
        value = values.get(key)
        text = getattr(value, "functionName", value)
        return str(text or "").strip().lower()

    return name


def dependent(operation: str, own: Rule) -> Rule:
    """``own``, and SELECT on the dependent table's base."""
    base = on_tables("", READ, named_fields("req", "baseDbName", "baseTblName"))
    return combined(operation, own, base)


#: The request argument of the transaction, compaction and event calls.
RQST = field("rqst")
