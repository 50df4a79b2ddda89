"""The locations a call names, for ``--authorization privileges`` (:mod:`.locations` decides
whether the caller may name them), declared on each Thrift method that creates, alters or drops
a database, table or partition as ``@thrift(locations=...)`` with the constants here: the
operation a refusal names and how its locations are found, or why it names none.

A table's, a partition's or a database's location given in its request (a table's also in
Spark's serde parameter ``path``), with where the server would put the object itself and where
it is now. A new table or database without one names its default location (whether anyone
else's data is there is checked too). A call naming an object that does not exist names nothing
here: the call answers for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from metastore_server.api.authorization.storage_places import db_name
from metastore_server.catalog import Catalog, TableRef, names, partition_name, partition_specs
from metastore_server.thrift_api import hms

#: The serde parameter Spark keeps a data source table's location in.
SPARK_PATH = "path"


@dataclass(frozen=True)
class Named:
    """A location a call gives an object."""

    location: str
    #: What it is given to, for logs ("table db.t").
    what: str
    #: Where the server would put the object itself (Spark and Hive send these).
    defaults: tuple[str, ...] = ()
    #: Where the object is now (an alter leaving it there changes nothing).
    current: tuple[str, ...] = ()
    #: Whether a default location is still checked for others' objects at or inside it (a
    #: table's, a database's; a partition's lies in its table's, checked when that was made).
    check_default: bool = True


class Lookup:
    """The catalog's objects for one call (each table read once)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._tables: dict[tuple[str, str], TableRef | None] = {}

    def database(self, name: str | None) -> hms.Database | None:
        """The database (None: none of that name)."""
        db = db_name(name)
        return self.catalog.databases.find(db) if db else None

    def table(self, db: str | None, name: str | None) -> TableRef | None:
        """The table (None: none of that name)."""
        key = (db_name(db), names.normalize(name or ""))
        if key not in self._tables:
            found = self.catalog.tables.find(*key) if all(key) else None
            self._tables[key] = found
        return self._tables[key]

    def child(self, parent: str | None, child: str) -> str | None:
        """``parent/child`` (None without a parent)."""
        return self.catalog.ctx.warehouse.child_location(parent, child) if parent else None

    def partition_default(self, ref: TableRef, values: Sequence[str] | None) -> str | None:
        """Where a partition of ``values`` goes by default (None: values that do not fit)."""
        if not values or len(values) != len(ref.key_names):
            return None
        return self.child(ref.location, partition_name(ref, values))

    def partition_location(self, ref: TableRef, values: Sequence[str] | None) -> str | None:
        """The stored partition's location (None: no such partition)."""
        if not values or len(values) != len(ref.key_names):
            return None
        try:
            part = self.catalog.partition_reads.get(ref.db, ref.name, list(values))
        except (hms.NoSuchObjectException, hms.MetaException):
            return None
        return part.sd.location if part.sd is not None else None


def _given(sd: hms.StorageDescriptor | None) -> str | None:
    return sd.location if sd is not None and sd.location else None


def _spark_path(sd: hms.StorageDescriptor | None) -> str | None:
    """Where Spark keeps a data source table's data it could not store as Hive's (serde
    parameter ``path``; then ``sd.location`` is a placeholder)."""
    serde = sd.serdeInfo if sd is not None else None
    path = (serde.parameters or {}).get(SPARK_PATH) if serde is not None else None
    return path if isinstance(path, str) and path else None


def _present(*locations: str | None) -> tuple[str, ...]:
    return tuple(location for location in locations if location)


# -- tables -------------------------------------------------------------------------------------


def new_table(look: Lookup, table: hms.Table | None) -> list[Named]:
    """A table's location: the one given, or the default the server gives it (``<database
    dir>/<name>``; under the database's managed location is a default too). A view without
    one has none."""
    database = look.database(table.dbName) if table is not None else None
    name = names.normalize(table.tableName or "") if table is not None else ""
    if table is None or database is None or not name:
        return []
    defaults = _present(look.child(database.locationUri, name),
                        look.child(database.managedLocationUri, name))  # fmt: skip
    location = _given(table.sd) or (defaults[0] if defaults and not _is_view(table) else None)
    what = f"table {database.name}.{name}"
    given = dict.fromkeys(_present(location, _spark_path(table.sd)))
    return [Named(where, what, defaults) for where in given]


def _is_view(table: hms.Table) -> bool:
    return table.tableType in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")


def altered_table(look: Lookup, db: str | None, name: str | None,
                  new: hms.Table | None) -> list[Named]:  # fmt: skip
    """A table given a new location (or Spark's ``path``), or renamed to one."""
    ref = look.table(db, name)
    if ref is None or new is None:
        return []
    current = _present(ref.location, _spark_path(ref.table.sd))
    given = [where for where in _present(_given(new.sd), _spark_path(new.sd))
             if where not in current]  # fmt: skip
    if not given:
        return []
    target = look.database(new.dbName or ref.db)
    new_name = names.normalize(new.tableName or "") or ref.name
    defaults = _present(look.child(target.locationUri, new_name)) if target is not None else ()
    return [Named(where, f"table {ref.db}.{ref.name}", defaults, current) for where in given]


def dependent_table(look: Lookup, req: hms.CreateDependentTableRequest | None) -> list[Named]:
    """A dependent table created at a location of its own."""
    if req is None or not req.location:
        return []
    sd = hms.StorageDescriptor(location=req.location)
    return new_table(look, hms.Table(dbName=req.dbName, tableName=req.tblName, sd=sd))


# -- partitions ---------------------------------------------------------------------------------


def _placed(look: Lookup, db: str | None, table: str | None,
            parts: Iterable[hms.Partition | None] | None,
            ) -> Iterator[tuple[hms.Partition, str, TableRef]]:  # fmt: skip
    """Each partition given a location of its own, with that location and its table (one
    whose table does not exist is left to the call, which refuses it)."""
    for part in parts or []:
        location = _given(part.sd) if part is not None else None
        if part is None or location is None:
            continue
        ref = look.table(db or part.dbName, table or part.tableName)
        if ref is not None:
            yield part, location, ref


def new_partitions(look: Lookup, db: str | None, table: str | None,
                   parts: Iterable[hms.Partition | None] | None) -> list[Named]:  # fmt: skip
    """Partitions added at locations of their own (their default: ``<table dir>/k=v/...``)."""
    found: list[Named] = []
    for part, location, ref in _placed(look, db, table, parts):
        default = look.partition_default(ref, part.values)
        if location == default:
            continue  # the common case, with nothing to look at
        found.append(Named(location, f"partition of {ref.db}.{ref.name}", _present(default),
                           check_default=False))  # fmt: skip
    return found


def spec_partitions(look: Lookup, specs: list[hms.PartitionSpec] | None) -> list[Named]:
    """The partitions of ``add_partitions_pspec``'s specs."""
    try:
        parts = partition_specs.partitions_of(specs or [])
    except partition_specs.UnusableSpec:
        return []  # the call refuses them
    return new_partitions(look, None, None, parts)


def altered_partitions(look: Lookup, db: str | None, table: str | None,
                       parts: Iterable[hms.Partition | None] | None,
                       old_values: Sequence[str] | None = None) -> list[Named]:  # fmt: skip
    """Partitions given new locations (``old_values``: a rename's partition, which then
    takes ``parts``' one set of values)."""
    found: list[Named] = []
    for part, location, ref in _placed(look, db, table, parts):
        defaults = _present(look.partition_default(ref, part.values),
                            look.partition_default(ref, old_values))  # fmt: skip
        if location in defaults:
            continue
        current = look.partition_location(ref, old_values or part.values)
        if current is None or location == current:
            continue  # no such partition (the call says so), or it stays where it is
        found.append(Named(location, f"partition of {ref.db}.{ref.name}", defaults,
                           (current,), check_default=False))  # fmt: skip
    return found


# -- databases ----------------------------------------------------------------------------------


def new_database(look: Lookup, name: str | None, location: str | None,
                 managed: str | None) -> list[Named]:  # fmt: skip
    """A database's location (given, or its default: ``<warehouse>/<name>.db``), and a
    managed location given."""
    db = names.normalize(db_name(name))
    if not db:
        return []
    default = look.catalog.ctx.warehouse.database_location(db)
    given = _present(location or default, managed)
    return [Named(where, f"database {db}", (default,)) for where in dict.fromkeys(given)]


def altered_database(look: Lookup, name: str | None, new: hms.Database | None) -> list[Named]:
    """A database given a new location (or managed location)."""
    current = look.database(name)
    if current is None or new is None:
        return []
    now = _present(current.locationUri, current.managedLocationUri)
    default = look.catalog.ctx.warehouse.database_location(current.name)
    given = _present(new.locationUri, new.managedLocationUri)
    return [Named(loc, f"database {current.name}", (default,), now) for loc in given
            if loc not in now]  # fmt: skip


# -- the calls ----------------------------------------------------------------------------------

#: Finds the locations a call names in its arguments (by IDL name).
Finder = Callable[[Lookup, dict[str, Any]], list[Named]]


def _attr(value: Any, name: str) -> Any:
    return getattr(value, name, None)


def _create_table(arg: str, *path: str) -> Finder:
    def find(look: Lookup, v: dict[str, Any]) -> list[Named]:
        table = v.get(arg)
        for step in path:
            table = _attr(table, step)
        return new_table(look, table)

    return find


def _alter_table(look: Lookup, v: dict[str, Any]) -> list[Named]:
    return altered_table(look, v.get("dbname"), v.get("tbl_name"), v.get("new_tbl"))


def _alter_table_req(look: Lookup, v: dict[str, Any]) -> list[Named]:
    req = v.get("req")
    return altered_table(look, _attr(req, "dbName"), _attr(req, "tableName"), _attr(req, "table"))


def _add_one(look: Lookup, v: dict[str, Any]) -> list[Named]:
    return new_partitions(look, None, None, [v.get("new_part")])


def _add_many(look: Lookup, v: dict[str, Any]) -> list[Named]:
    return new_partitions(look, None, None, v.get("new_parts"))


def _add_req(look: Lookup, v: dict[str, Any]) -> list[Named]:
    req = v.get("request")
    return new_partitions(look, _attr(req, "dbName"), _attr(req, "tblName"), _attr(req, "parts"))


def _alter_one(look: Lookup, v: dict[str, Any]) -> list[Named]:
    return altered_partitions(look, v.get("db_name"), v.get("tbl_name"), [v.get("new_part")])


def _alter_many(look: Lookup, v: dict[str, Any]) -> list[Named]:
    return altered_partitions(look, v.get("db_name"), v.get("tbl_name"), v.get("new_parts"))


def _alter_req(look: Lookup, v: dict[str, Any]) -> list[Named]:
    req = v.get("req")
    return altered_partitions(look, _attr(req, "dbName"), _attr(req, "tableName"),
                              _attr(req, "partitions"))  # fmt: skip


def _rename(look: Lookup, v: dict[str, Any]) -> list[Named]:
    return altered_partitions(look, v.get("db_name"), v.get("tbl_name"), [v.get("new_part")],
                              v.get("part_vals") or [])  # fmt: skip


def _rename_req(look: Lookup, v: dict[str, Any]) -> list[Named]:
    req = v.get("req")
    return altered_partitions(look, _attr(req, "dbName"), _attr(req, "tableName"),
                              [_attr(req, "newPart")], _attr(req, "partVals") or [])  # fmt: skip


def _create_database(look: Lookup, v: dict[str, Any]) -> list[Named]:
    db = v.get("database")
    return new_database(look, _attr(db, "name"), _attr(db, "locationUri"),
                        _attr(db, "managedLocationUri"))  # fmt: skip


def _create_database_req(look: Lookup, v: dict[str, Any]) -> list[Named]:
    req = v.get("createDatabaseRequest")
    return new_database(look, _attr(req, "databaseName"), _attr(req, "locationUri"),
                        _attr(req, "managedLocationUri"))  # fmt: skip


def _alter_database_req(look: Lookup, v: dict[str, Any]) -> list[Named]:
    req = v.get("alterDbReq")
    return altered_database(look, _attr(req, "oldDbName"), _attr(req, "newDb"))


@dataclass(frozen=True)
class LocationRule:
    """What one Thrift method names: locations (found by ``find``, refused as ``operation``),
    or none (with why)."""

    #: The operation a refusal names (HMS's); empty: it names no location.
    operation: str = ""
    #: Finds the locations it names (None: it names none).
    find: Finder | None = None
    #: Why a method creating, altering or dropping objects names no location.
    why: str = ""

    def __post_init__(self) -> None:
        if bool(self.operation) != (self.find is not None) or bool(self.why) == bool(self.find):
            raise ValueError(f"a location rule {self.operation!r} with why {self.why!r}")


def gives(operation: str, find: Finder) -> LocationRule:
    """A method that can give objects locations of the caller's choosing."""
    return LocationRule(operation, find)


def names_none(why: str) -> LocationRule:
    """A method creating, altering or dropping objects that gives none a location."""
    return LocationRule(why=why)


_ADD, _ALTER_PART = "ALTERTABLE_ADDPARTS", "ALTERPARTITION_LOCATION"

# -- what each method names (declared by the methods: ``locations=loc.NAME``) ------------------

CREATE_DATABASE = gives("CREATEDATABASE", _create_database)
CREATE_DATABASE_REQ = gives("CREATEDATABASE", _create_database_req)
ALTER_DATABASE = gives(
    "ALTERDATABASE_LOCATION", lambda k, v: altered_database(k, v.get("dbname"), v.get("db"))
)
ALTER_DATABASE_REQ = gives("ALTERDATABASE_LOCATION", _alter_database_req)
CREATE_TABLE = gives("CREATETABLE", _create_table("tbl"))
CREATE_TABLE_REQ = gives("CREATETABLE", _create_table("request", "table"))
CREATE_DEPENDENT_TABLE = gives("CREATETABLE", lambda k, v: dependent_table(k, v.get("req")))
ADD_INDEX = gives("CREATEINDEX", _create_table("index_table"))
ALTER_TABLE = gives("ALTERTABLE_LOCATION", _alter_table)
ALTER_TABLE_REQ = gives("ALTERTABLE_LOCATION", _alter_table_req)
ADD_PARTITION = gives(_ADD, _add_one)
ADD_PARTITIONS = gives(_ADD, _add_many)
ADD_PARTITIONS_REQ = gives(_ADD, _add_req)
ADD_PARTITIONS_PSPEC = gives(_ADD, lambda k, v: spec_partitions(k, v.get("new_parts")))
ALTER_PARTITION = gives(_ALTER_PART, _alter_one)
ALTER_PARTITIONS = gives(_ALTER_PART, _alter_many)
ALTER_PARTITIONS_REQ = gives(_ALTER_PART, _alter_req)
RENAME_PARTITION = gives(_ALTER_PART, _rename)
RENAME_PARTITION_REQ = gives(_ALTER_PART, _rename_req)

#: ``append_partition`` (the others of its kind: :data:`SERVER_PLACES`).
APPEND_PARTITION = names_none("the server places the partition (its default location)")
SERVER_PLACES = names_none("the server places the partition")
EXCHANGED = names_none("partitions move to their default locations in the target table")
DEPENDENCY = names_none("a dependent partition points at its base's data, which it never owns")
TRUNCATED = names_none("empties the table where it is")
NO_LOCATION = names_none("names no location")
