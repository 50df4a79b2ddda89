"""Data connectors (HMS 4): named descriptions of a remote data source (type, URL,
parameters, owner) that REMOTE databases name. Stored only: nothing here ever reaches the
remote source.

Each connector is one ``meta`` row of kind ``connector`` (``core.named_rows``) holding the
DataConnector (Thrift binary); names are lower-cased. Creating is a put on the row's absence,
altering and dropping a compare-and-set on the row as read, so two server processes never both
win.
"""

from __future__ import annotations

import copy

import structlog

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import SingleNameRows
from metastore_server.catalog.events import txn_messages as messages
from metastore_server.storage import layout
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes

_log = structlog.get_logger(__name__)


def _missing(name: str) -> hms.NoSuchObjectException:
    return hms.NoSuchObjectException(message=f"Dataconnector {name} does not exist")


class DataConnectors:
    """Data connector rows on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self._rows: SingleNameRows[hms.DataConnector] = SingleNameRows(
            ctx.store, "connector", hms.DataConnector
        )

    def find(self, name: str | None) -> hms.DataConnector | None:
        """The connector, or None."""
        return self._rows.find_name(name)

    def get(self, name: str | None) -> hms.DataConnector:
        """The connector; NoSuchObjectException when there is none."""
        connector = self.find(name)
        if connector is None:
            raise _missing(names.normalize(name))
        return connector

    def names(self) -> list[str]:
        """Every connector's name, sorted."""
        return self._rows.names()

    def create(self, connector: hms.DataConnector | None) -> None:
        """Record a connector: a valid name, a type and a URL are required."""
        given = None if connector is None else connector.name
        name = self._rows.new_name(given, "Dataconnector")
        assert connector is not None  # new_name refused a missing name
        if not connector.type:
            raise hms.InvalidObjectException(message="Dataconnector type cannot be empty")
        if not connector.url:
            raise hms.InvalidObjectException(message="Dataconnector URL cannot be empty")
        stored = copy.deepcopy(connector)
        stored.name = name
        stored.parameters = dict(stored.parameters or {})
        stored.createTime = stored.createTime or int(self._ctx.now())
        if stored.ownerName and stored.ownerType is None:
            stored.ownerType = hms.PrincipalType.USER
        with self._ctx.write_lock:  # the event in the same change (embedded), right after
            if not self._rows.create([name], stored):
                raise hms.AlreadyExistsException(message=f"Dataconnector {name} already exists")
            self._ctx.events.record([messages.create_connector(stored, self._ctx.now())])
        _log.info("dataconnector_created", connector=name, type=stored.type)

    def alter(self, name: str | None, new_connector: hms.DataConnector | None) -> None:
        """Change a connector's URL, description, parameters or owner (never its name or
        type, as HMS)."""
        if new_connector is None:
            raise hms.MetaException(message="New dataconnector cannot be null")
        name = names.normalize(name)
        was = self._rows.read_name(name)
        if was is None:
            raise _missing(name)
        current = was.obj
        if new_connector.name and names.normalize(new_connector.name) != name:
            raise hms.MetaException(message="Dataconnector name cannot be changed")
        updated = copy.deepcopy(current)
        for field in ("url", "description", "ownerName", "ownerType"):
            value = getattr(new_connector, field)
            if value is not None and value != "":
                setattr(updated, field, value)
        if new_connector.parameters is not None:
            updated.parameters = dict(new_connector.parameters)
        with self._ctx.write_lock:
            if not self._rows.replace(was, updated):
                raise hms.MetaException(message=f"Dataconnector {name} changed meanwhile, retry")
            self._ctx.events.record([messages.alter_connector(current, updated, self._ctx.now())])

    def drop(self, name: str | None, if_exists: bool) -> None:
        """Drop a connector no database uses (InvalidOperationException otherwise); a missing
        one is NoSuchObjectException unless ``if_exists``."""
        name = names.normalize(name)
        with self._ctx.write_lock:
            was = self._rows.read_name(name)
            if was is None:
                if if_exists:
                    return
                raise _missing(name)
            users = self.databases_using(name)
            if users:
                raise hms.InvalidOperationException(
                    message=f"Dataconnector {name} is in use by databases: {', '.join(users)}"
                )
            if not self._rows.delete(was):
                if not if_exists:
                    raise _missing(name)
                return
            self._ctx.events.record([messages.drop_connector(was.obj, self._ctx.now())])
        _log.info("dataconnector_dropped", connector=name)

    def databases_using(self, name: str) -> list[str]:
        """Names of the REMOTE databases naming the connector, sorted."""
        found = []
        for key, row in self._ctx.store.scan(layout.DATABASES):
            db = from_bytes(hms.Database, row[layout.OBJECT])
            if names.normalize(db.connector_name) == name:
                found.append(key.decode("utf-8"))
        return sorted(found)
