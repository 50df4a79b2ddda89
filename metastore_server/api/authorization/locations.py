"""Locations are owned, under ``--authorization privileges``: a call that gives a database, table
or partition a location of its own (:mod:`.location_finders` finds them) needs, besides what its
rule demands, one of:

- being an administrator (checked before any rule);
- the location the object has now, or the one the server would choose itself (a table's
  ``<database dir>/<name>``, a partition's ``<table dir>/k=v/...``, a database's
  ``<warehouse>/<name>.db``: Spark and Hive send these); a table's or a database's default only
  while no directory of an object the caller does not own is it or lies in it (looked at when
  something is there already; a partition's lies in its table's, judged when that was made);
- a location strictly inside the directory of an object the caller owns (a database, the
  ``default`` one's, the warehouse root, included: everyone owns it; a table) that neither is,
  lies in nor holds the directory of an object (a database, a table) the caller does not own.

Locations are compared as the data layer compares them: resolved by the file systems (``file:``
and a bare path alike, ``.``, ``..`` and doubled ``/`` resolved), local ones also with symbolic
links resolved; a location that differs once percent-decoded is judged both ways (a client that
decodes it must not reach another's directory either). A location no file system serves is
refused (whose it is cannot be told). The refusal is HMS's SQL-standard one (by
:mod:`.privileges`), naming the URI as an object of type ``LOCAL_URI`` (a local path) or
``DFS_URI`` with the privileges HMS demands there.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

import structlog

from metastore_server.api.authorization.callers import Caller, owns
from metastore_server.api.authorization.location_finders import Lookup, Named
from metastore_server.api.authorization.location_rules import LOCATION_RULES
from metastore_server.catalog import (
    DEFAULT_DATABASE,
    Catalog,
    FileSystemUnavailable,
    Guard,
    GuardIndex,
    Place,
    split_location,
)

log = structlog.get_logger(__name__)

#: What giving an object a location demands on it (HMS's SELECT, INSERT and DELETE, and the
#: URI's ownership), as HMS lists them.
DEMANDED = "[SELECT, INSERT, DELETE, OBJECT OWNERSHIP]"
#: Most refused locations one refusal lists.
LISTED = 10
DATABASE, TABLE = "database", "table"


def uri_type(location: str) -> str:
    """The kind of object HMS's refusals name a location as."""
    return "LOCAL_URI" if split_location(location)[0] in ("", "file") else "DFS_URI"


def normalised(location: str) -> str:
    """``location`` with ``.``, ``..`` and doubled ``/`` of its path resolved on every scheme
    (the file systems resolve them in local and HDFS paths only; Hadoop's ``Path`` on all)."""
    scheme, authority, path = split_location(location)
    if scheme in ("", "file") or not path.startswith("/"):
        return location
    clean = "/" + posixpath.normpath(path).lstrip("/")
    with_authority = location[len(scheme) + 1 :].startswith("//")
    return (f"{scheme}://{authority}" if with_authority else f"{scheme}:") + clean


def _exists(place: Place) -> bool:
    """Whether something is at ``place`` (True when that cannot be told)."""
    if place.is_local:
        return os.path.lexists(place.path)
    try:
        return bool(place.fs.exists(place.path))
    except Exception:  # noqa: BLE001 - a client's own error types too
        return True


@dataclass(frozen=True)
class Overlap:
    """An object whose directory overlaps a location."""

    kind: str
    name: str
    uri: str
    #: Whether its directory holds the location (strictly).
    holds: bool


class LocationCheck:
    """Decides whether a caller may give objects the locations a call names."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def refused(self, api: str, values: dict[str, object], caller: Caller) -> (
        tuple[str, str] | None
    ):  # fmt: skip
        """(operation, the refused URIs as HMS lists them) when call ``api`` names a location
        ``caller`` may not give; None when it names none or may give them all."""
        rule = LOCATION_RULES.get(api)
        if rule is None:
            return None
        operation, find = rule
        named = find(Lookup(self.catalog), values)
        if not named:
            return None
        judge = Judge(self.catalog, caller)
        shown = list(dict.fromkeys(n.location for n in named if not judge.allowed(n, api)))
        if not shown:
            return None
        denied = [f"{DEMANDED} on Object [type={uri_type(loc)}, name={loc}]"
                  for loc in shown[:LISTED]]  # fmt: skip
        if len(shown) > LISTED:
            denied.append(f"... {len(shown) - LISTED} more")
        return operation, f"[{', '.join(denied)}]"


class Judge:
    """One call's decisions, each directory index and owner looked up once."""

    def __init__(self, catalog: Catalog, caller: Caller) -> None:
        self.catalog = catalog
        self.caller = caller
        self._indexes: list[tuple[str, GuardIndex, Sequence[str]]] | None = None
        self._owned: dict[tuple[str, str], bool] = {}

    def allowed(self, named: Named, api: str) -> bool:
        """Whether the caller may give ``named.location`` (logged with why when not)."""
        reason = self.refusal(named)
        if reason is None:
            return True
        log.info("location_refused", method=api, user=self.caller.user,
                 location=named.location, what=named.what, reason=reason)  # fmt: skip
        return False

    def refusal(self, named: Named) -> str | None:
        """Why the caller may not give ``named.location``; None when it may."""
        location = named.location
        if location in named.current or (location in named.defaults and not named.check_default):
            return None
        for variant in dict.fromkeys((location, unquote(location))):
            place = self.place(variant)
            if place is None:
                return "no file system serves it"
            if self._is_any(place, named.current):
                return None
            default = self._is_any(place, named.defaults)
            if default and not named.check_default:
                return None
            if default and not _exists(place):
                continue  # nothing is there yet, of anyone's (no directory index read)
            overlaps = self.overlaps(place, containers=not default)
            other = next((o for o in overlaps if not self.owns(o.kind, o.name)), None)
            if other is not None:
                return f"{other.kind} {other.name} ({other.uri}) is not the caller's"
            if not default and not any(o.holds and self.owns(o.kind, o.name) for o in overlaps):
                return "it lies in no directory of an object the caller owns"
        return None

    # -- places ------------------------------------------------------------------------------

    def place(self, location: str) -> Place | None:
        """The place of a location (None: no file system serves it)."""
        try:
            return self.catalog.ctx.data.filesystems.resolve(normalised(location))
        except FileSystemUnavailable:
            return None

    def _is_any(self, place: Place, locations: Sequence[str]) -> bool:
        for location in locations:
            other = self.place(location)
            if other is not None and other.same_as(place):
                return True
        return False

    def overlaps(self, place: Place, containers: bool) -> list[Overlap]:
        """The databases and tables whose directory is ``place`` or lies in it, and (with
        ``containers``) those whose directory holds it; by paths as written and real paths."""
        if self._indexes is None:
            db_index, db_names = self.catalog.database_dirs()
            table_index, table_names = self.catalog.table_dirs()
            self._indexes = [(DATABASE, db_index, db_names), (TABLE, table_index, table_names)]
        real = Guard.of(place).real
        found = []
        for kind, index, names in self._indexes:
            inside = set(index.held(place, real))
            holding = index.holding(place, real) if containers else set()
            for i in sorted(inside | holding):
                found.append(Overlap(kind, names[i], index.guards[i].place.uri, i not in inside))
        return found

    # -- owners ------------------------------------------------------------------------------

    def owns(self, kind: str, name: str) -> bool:
        """Whether the caller owns database or table (``db.table``) ``name``."""
        key = (kind, name)
        if key not in self._owned:
            self._owned[key] = self._owner_is_caller(kind, name)
        return self._owned[key]

    def _owner_is_caller(self, kind: str, name: str) -> bool:
        if kind == DATABASE:
            if name == DEFAULT_DATABASE:
                return True  # everyone's, in HMS's SQL-standard model
            database = self.catalog.databases.find(name)
            return database is not None and owns(
                self.caller, database.ownerName, database.ownerType
            )
        db, _, table = name.partition(".")
        ref = self.catalog.tables.find(db, table)
        return ref is not None and owns(self.caller, ref.table.owner, ref.table.ownerType)
