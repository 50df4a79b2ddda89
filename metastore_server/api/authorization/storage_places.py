"""Where the objects a call touches keep their data, for ``--authorization storage``: the
location a request gives, else the existing object's (through the catalog), else the default
location the warehouse would give it. Each is a :class:`Need`: what the caller must be
allowed to do there.

An object a call names that does not exist gives no need: the call answers for it itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from metastore_server.catalog import Catalog, TableRef, names, partition_name, values_from_name
from metastore_server.thrift_api import hms

#: What a need asks: read the directory; write into the directory itself (a database's, to
#: put a table in it or take one out); create or change the object there (write into the
#: location's parent: the directory its entry is made or changed in); remove it (write into
#: the parent; a sticky parent: own one of them).
READ, WRITE, CHANGE, DELETE = "read", "write", "change", "delete"


@dataclass(frozen=True)
class Need:
    """One access the caller must have on one location."""

    access: str
    location: str
    #: What it is, for logs ("table db.t").
    what: str


def db_name(name: str | None) -> str:
    """A database argument without its ``@cat#`` prefix, as stored."""
    return names.split_catalog(name or "")[1]


class Places:
    """Locations of databases, tables and partitions, read from the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    # -- databases ---------------------------------------------------------------------------

    def database(self, name: str | None) -> hms.Database | None:
        """The database (None: none of that name)."""
        return self.catalog.databases.find(db_name(name))

    def database_needs(self, access: str, name: str | None) -> list[Need]:
        """``access`` on an existing database's directory."""
        database = self.database(name)
        if database is None or not database.locationUri:
            return []
        return [Need(access, database.locationUri, f"database {database.name}")]

    def new_database(self, name: str | None, location: str | None) -> list[Need]:
        """Writing where a new database's directory goes (given, or the warehouse's)."""
        db = names.normalize(db_name(name))
        if not db:
            return []
        where = location or self.catalog.ctx.warehouse.database_location(db)
        return [Need(CHANGE, where, f"database {db}")]

    # -- tables ------------------------------------------------------------------------------

    def table(self, db: str | None, name: str | None) -> TableRef | None:
        """The table (None: none of that name)."""
        return self.catalog.tables.find(db_name(db), names.normalize(name))

    def table_needs(self, access: str, db: str | None, name: str | None) -> list[Need]:
        """``access`` on an existing table's directory (a view has none)."""
        ref = self.table(db, name)
        return self.ref_needs(access, ref) if ref is not None else []

    @staticmethod
    def ref_needs(access: str, ref: TableRef) -> list[Need]:
        """``access`` on a table's directory."""
        if not ref.location:
            return []
        return [Need(access, ref.location, f"table {ref.db}.{ref.name}")]

    def new_table(self, table: hms.Table | None) -> list[Need]:
        """Creating a table: writing into its database's directory, and where its own goes
        (given, or the database's directory / its name; a view has none)."""
        if table is None:
            return []
        db, name = db_name(table.dbName), names.normalize(table.tableName)
        database = self.database(db)
        if database is None or not name:
            return []
        needs = self.database_needs(WRITE, db)
        location = table.sd.location if table.sd is not None else None
        is_view = table.tableType in ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
        if not location and not is_view and database.locationUri:
            location = self.catalog.ctx.warehouse.child_location(database.locationUri, name)
        if location:
            needs.append(Need(CHANGE, location, f"table {db}.{name}"))
        return needs

    def dropped_table(self, ref: TableRef) -> list[Need]:
        """Dropping a table: writing into its database's directory and removing its own
        (external tables too, as HMS's check of an external table's drop by default)."""
        return [*self.database_needs(WRITE, ref.db), *self.ref_needs(DELETE, ref)]

    def altered_table(self, db: str | None, name: str | None, new: hms.Table | None) -> list[Need]:
        """Altering a table: writing into its directory; a new location: writing there too;
        a rename into another name: writing into the target database's directory, and when
        the data moves (a table at its default location) removing the old directory and
        writing where the new one goes."""
        ref = self.table(db, name)
        if ref is None:
            return []
        needs = self.ref_needs(CHANGE, ref)
        if new is None:
            return needs
        new_location = new.sd.location if new.sd is not None else None
        if new_location and new_location != ref.location:
            needs.append(Need(CHANGE, new_location, f"table {ref.db}.{ref.name} (new location)"))
        new_db = names.normalize(db_name(new.dbName)) or ref.db
        new_name = names.normalize(new.tableName) or ref.name
        if (new_db, new_name) == (ref.db, ref.name):
            return needs
        needs.extend(self.database_needs(WRITE, new_db))
        target = self.database(new_db)
        if ref.location and target is not None and target.locationUri and not new_location:
            default = self.catalog.ctx.warehouse.child_location(target.locationUri, new_name)
            needs.append(Need(DELETE, ref.location, f"table {ref.db}.{ref.name}"))
            needs.append(Need(CHANGE, default, f"table {new_db}.{new_name}"))
        return needs

    def tables_of(self, db: str | None) -> list[TableRef]:
        """Every table of a database."""
        name = db_name(db)
        found = (self.catalog.tables.find(name, table) for table in self.catalog.tables.names(name))
        return [ref for ref in found if ref is not None]

    # -- partitions --------------------------------------------------------------------------

    def partition(self, ref: TableRef, values: Sequence[str] | None) -> hms.Partition | None:
        """The stored partition of ``values`` (None: none, or values that do not fit)."""
        if not values or len(values) != len(ref.key_names):
            return None
        try:
            return self.catalog.partition_reads.get(ref.db, ref.name, list(values))
        except (hms.NoSuchObjectException, hms.MetaException):
            return None

    def values_of(self, ref: TableRef, name: str | None) -> list[str] | None:
        """The values of a partition name (None: a name that does not fit the table)."""
        try:
            return values_from_name(ref, name or "")
        except (hms.NoSuchObjectException, hms.MetaException, ValueError):
            return None

    def default_partition(self, ref: TableRef, values: Sequence[str]) -> str | None:
        """Where a partition of ``values`` goes by default: its table's directory / its name."""
        if not ref.location or len(values) != len(ref.key_names):
            return None
        return self.catalog.ctx.warehouse.child_location(ref.location, partition_name(ref, values))

    def new_partitions(self, db: str | None, table: str | None,
                       parts: Iterable[hms.Partition | None]) -> list[Need]:  # fmt: skip
        """Adding partitions: writing where each one's directory goes (given, or default)."""
        needs: list[Need] = []
        for part in parts:
            if part is None:
                continue
            ref = self.table(db or part.dbName, table or part.tableName)
            if ref is None:
                continue
            location: str | None = part.sd.location if part.sd is not None else None
            location = location or self.default_partition(ref, part.values or [])
            if location:
                needs.append(Need(CHANGE, location, f"partition of {ref.db}.{ref.name}"))
        return needs

    def new_partition_by_values(self, db: str | None, table: str | None,
                                values: Sequence[str] | None) -> list[Need]:  # fmt: skip
        """Appending a partition by its values: writing where its directory goes."""
        ref = self.table(db, table)
        location = self.default_partition(ref, values or []) if ref is not None else None
        return (
            [Need(CHANGE, location, f"partition of {ref.db}.{ref.name}")]
            if location and ref
            else []
        )

    def new_partition_by_name(self, db: str | None, table: str | None,
                              name: str | None) -> list[Need]:  # fmt: skip
        """Appending a partition by its name."""
        ref = self.table(db, table)
        values = self.values_of(ref, name) if ref is not None else None
        return self.new_partition_by_values(db, table, values) if values else []

    def partition_needs(
        self, access: str, ref: TableRef, values: Sequence[str] | None
    ) -> list[Need]:
        """``access`` on an existing partition's directory."""
        part = self.partition(ref, values)
        location = part.sd.location if part is not None and part.sd is not None else None
        return [Need(access, location, f"partition of {ref.db}.{ref.name}")] if location else []

    def dropped_partitions(self, db: str | None, table: str | None,
                           values_list: Iterable[Sequence[str] | None]) -> list[Need]:  # fmt: skip
        """Dropping partitions: removing each one's directory."""
        ref = self.table(db, table)
        if ref is None:
            return []
        return [
            need for values in values_list for need in self.partition_needs(DELETE, ref, values)
        ]

    def altered_partitions(self, db: str | None, table: str | None,
                           parts: Iterable[hms.Partition | None]) -> list[Need]:  # fmt: skip
        """Altering partitions: writing into each one's directory, and into a new location."""
        needs: list[Need] = []
        for part in parts:
            ref = self.table(db or (part.dbName if part else None),
                             table or (part.tableName if part else None))  # fmt: skip
            if part is None or ref is None:
                continue
            needs.extend(self.partition_needs(CHANGE, ref, part.values))
            location = part.sd.location if part.sd is not None else None
            if location and all(need.location != location for need in needs):
                needs.append(
                    Need(CHANGE, location, f"partition of {ref.db}.{ref.name} (new location)")
                )
        return needs

    def renamed_partition(self, db: str | None, table: str | None, values: Sequence[str] | None,
                          new: hms.Partition | None) -> list[Need]:  # fmt: skip
        """Renaming a partition: removing its directory (its data moves) and writing where
        the new one goes (given, or the default for the new values)."""
        ref = self.table(db, table)
        if ref is None:
            return []
        needs = self.partition_needs(DELETE, ref, values)
        location = new.sd.location if new is not None and new.sd is not None else None
        old = needs[0].location if needs else None
        if new is not None and (not location or location == old):
            location = self.default_partition(ref, new.values or []) or location
        if location:
            needs.append(Need(CHANGE, location, f"partition of {ref.db}.{ref.name}"))
        return needs
