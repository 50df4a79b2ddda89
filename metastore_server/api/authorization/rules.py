"""What a call needs under ``--authorization privileges``: a :class:`Rule` per Thrift method,
built with the constructors here, and the locators that find the database and table a call
names in its arguments (by IDL name).

A rule's style says how it is decided and how a refusal reads (HMS's words for each):

- ``open``: anyone, the anonymous caller too (status, listings, transactions, locks);
- ``named``: any caller with a user name (creating a database: it needs an owner);
- ``privileges``: the :class:`Demand` s its locator makes (SELECT/INSERT/UPDATE/DELETE, object
  ownership, the admin privilege, on tables, databases, functions); refused as HMS's SQL-standard
  authorizer refuses (``Permission denied: Principal [...] does not have following privileges
  for operation OP [...]``);
- ``event``: the admin only, refused as HMS's metastore authorizer refuses the events it keeps
  for administrators (``Operation type OP not allowed for user:NAME``);
- ``admin_operation``: the admin only, as SQL-standard's administrator operations (workload
  management);
- ``api``: the admin only, refused as HMS refuses its notification API (``User NAME is not
  allowed to perform this API call``); also what a method without a rule gets (fail closed);
- ``custom``: the role and privilege calls, decided by :mod:`.grant_checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from metastore_server.catalog import names

SELECT, INSERT, UPDATE, DELETE = "SELECT", "INSERT", "UPDATE", "DELETE"
#: The privileges a grant may name (``ALL`` stands for the four).
GRANTABLE = (SELECT, INSERT, UPDATE, DELETE)
#: Being the object's owner (HMS's ``OBJECT OWNERSHIP``).
OWNERSHIP = "OBJECT OWNERSHIP"
#: Being an administrator (HMS's ``ADMIN PRIVILEGE``).
ADMIN = "ADMIN PRIVILEGE"
#: The kinds of object a demand is on, as HMS names them in its refusals.
TABLE, DATABASE, FUNCTION = "TABLE_OR_VIEW", "DATABASE", "FUNCTION"

#: A database and a table a call names (table None: the database itself).
Named = tuple[str, str | None]
#: Finds what a call names in its arguments.
Locator = Callable[[dict[str, Any]], list[Named]]


@dataclass(frozen=True)
class Demand:
    """Privileges a call needs on one object."""

    privileges: tuple[str, ...]
    kind: str
    db: str
    name: str | None = None

    def object_text(self) -> str:
        """The object as HMS's refusals name it (``Object [type=..., name=db.t]``)."""
        if self.kind == DATABASE:
            return f"Object [type={self.kind}, name={self.db}]"
        return f"Object [type={self.kind}, name={self.db or 'null'}.{self.name or 'null'}]"


@dataclass(frozen=True)
class Rule:
    """How one method is authorized."""

    style: str
    operation: str = ""
    demands: Callable[[dict[str, Any]], list[Demand]] | None = None


OPEN = Rule("open")
NAMED = Rule("named", "CREATEDATABASE")
API = Rule("api")
CUSTOM = Rule("custom")


def event(operation: str) -> Rule:
    """The admin only; refused naming HMS's pre-event ``operation``."""
    return Rule("event", operation)


def admin_operation(operation: str) -> Rule:
    """The admin only; refused as SQL-standard's administrator operation ``operation``."""
    return Rule("admin_operation", operation)


def on_tables(
    operation: str, privileges: Iterable[str], locate: Locator, *, optional: bool = False
) -> Rule:
    """``privileges`` on every table ``locate`` finds. A call naming no table is left to
    administrators (fail closed), unless the tables are ``optional`` (either side of a
    foreign key request)."""
    wanted = tuple(privileges)

    def demands(values: dict[str, Any]) -> list[Demand]:
        found = [(db, t) for db, t in locate(values) if t or not optional]
        if not found and not optional:
            found = [("", None)]
        return [Demand(wanted, TABLE, db, t) for db, t in found]

    return Rule("privileges", operation, demands)


def on_databases(operation: str, privileges: Iterable[str], locate: Locator) -> Rule:
    """``privileges`` on every database ``locate`` finds."""
    wanted = tuple(privileges)
    return Rule(
        "privileges",
        operation,
        lambda values: [Demand(wanted, DATABASE, db) for db, _ in locate(values)],
    )


def combined(operation: str, *parts: Rule) -> Rule:
    """The demands of several ``privileges`` rules together, under one operation."""

    def demands(values: dict[str, Any]) -> list[Demand]:
        return [d for part in parts if part.demands for d in part.demands(values)]

    return Rule("privileges", operation, demands)


def admin_on_function(
    operation: str, db_arg: Locator, function: Callable[[dict[str, Any]], str]
) -> Rule:
    """The admin privilege on a function's database and on the function (HMS's CREATEFUNCTION
    and DROPFUNCTION)."""

    def demands(values: dict[str, Any]) -> list[Demand]:
        found = db_arg(values)
        db = found[0][0] if found else ""
        return [Demand((ADMIN,), DATABASE, db), Demand((ADMIN,), FUNCTION, db, function(values))]

    return Rule("privileges", operation, demands)


# -- locators ---------------------------------------------------------------------------------

#: Attribute names requests use for a database and a table.
DB_FIELDS = ("dbName", "dbname", "db_name", "database", "db", "table_db")
TABLE_FIELDS = ("tblName", "tableName", "tbl_name", "tablename", "table_name", "tbName", "table")


def database_name(text: Any) -> str:
    """A database argument as stored: without its ``@cat#`` prefix, trimmed, lower-case."""
    return names.split_catalog(text)[1] if isinstance(text, str) else ""


def table_name(text: Any) -> str | None:
    """A table argument as stored (None when there is none)."""
    return names.normalize(text) or None if isinstance(text, str) else None


def args(db: str, table: str | None = None) -> Locator:
    """The database (and table) named by top-level arguments."""

    def locate(values: dict[str, Any]) -> list[Named]:
        return [(database_name(values.get(db)), table_name(values.get(table)) if table else None)]

    return locate


def _first(obj: Any, fields: tuple[str, ...]) -> Any:
    for name in fields:
        value = getattr(obj, name, None)
        if isinstance(value, str):
            return value
    return None


def named_by(obj: Any) -> Named | None:
    """The database and table a request or object names (by its usual field names)."""
    if obj is None:
        return None
    return database_name(_first(obj, DB_FIELDS)), table_name(_first(obj, TABLE_FIELDS))


def _follow(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = getattr(obj, step, None) if obj is not None else None
    return obj


def field(arg: str, *path: str) -> Locator:
    """The database and table named by argument ``arg`` (a request or object), or by the
    object reached from it through ``path``."""

    def locate(values: dict[str, Any]) -> list[Named]:
        found = named_by(_follow(values.get(arg), path))
        return [found] if found is not None else []

    return locate


def each(arg: str, *path: str) -> Locator:
    """The databases and tables named by the items of a list (argument ``arg``, or the list
    reached from it through ``path``): partitions, constraint columns, statistics."""

    def locate(values: dict[str, Any]) -> list[Named]:
        items = _follow(values.get(arg), path) or []
        found = {named_by(item) for item in items if item is not None}
        return sorted((n for n in found if n is not None), key=_order)

    return locate


def statistics(arg: str, listed: bool = False) -> Locator:
    """The tables of column statistics (``ColumnStatistics.statsDesc``), or of a list of them
    (a ``SetPartitionsStatsRequest``'s ``colStats``)."""

    def locate(values: dict[str, Any]) -> list[Named]:
        value = values.get(arg)
        stats = (getattr(value, "colStats", None) or []) if listed else [value]
        found = {named_by(getattr(s, "statsDesc", None)) for s in stats if s is not None}
        return sorted((n for n in found if n is not None), key=_order)

    return locate


def full_names(arg: str, attribute: str) -> Locator:
    """The tables of ``db.table`` names (``GetValidWriteIdsRequest.fullTableNames``)."""

    def locate(values: dict[str, Any]) -> list[Named]:
        found = []
        for text in getattr(values.get(arg), attribute, None) or []:
            db, _, table = str(text).partition(".")
            found.append((database_name(db), table_name(table)))
        return found

    return locate


def tables_of(arg: str, db_attribute: str, tables_attribute: str) -> Locator:
    """One database and a list of its tables in a request."""

    def locate(values: dict[str, Any]) -> list[Named]:
        request = values.get(arg)
        db = database_name(getattr(request, db_attribute, None))
        return [(db, table_name(t)) for t in getattr(request, tables_attribute, None) or []]

    return locate


def named_fields(
    arg: str, db_attribute: str, table_attribute: str = "", *, listed: bool = False,
    path: tuple[str, ...] = (),
) -> Locator:  # fmt: skip
    """The database (and table) in fields of other names (a foreign key's ``fktable_db``, an
    index's ``origTableName``), of argument ``arg`` (or what ``path`` reaches from it), or of
    each item of that list (``listed``)."""

    def locate(values: dict[str, Any]) -> list[Named]:
        value = _follow(values.get(arg), path)
        items = (value or []) if listed else [value]
        found = {
            (
                database_name(getattr(i, db_attribute, None)),
                table_name(getattr(i, table_attribute, None)),
            )
            for i in items
            if i is not None
        }
        return sorted(found, key=_order)

    return locate


def _order(named: Named) -> tuple[str, str]:
    return named[0], named[1] or ""


def expand(privilege: str | None) -> list[str]:
    """The privileges a grant's text names (comma-separated; ``ALL`` is all four)."""
    found: list[str] = []
    for part in (privilege or "").split(","):
        name = part.strip().upper()
        if name == "ALL":
            found.extend(GRANTABLE)
        elif name:
            found.append(name)
    return found
