"""The catalog and data connector calls (HMS 3+/4): catalogs created, read, listed, altered
and dropped; data connectors likewise (stored only). See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class CatalogCalls(Area):
    """Catalogs and data connectors. Raises NoSuchObjectException (a missing catalog or
    connector), AlreadyExistsException, InvalidObjectException (a bad name, no location),
    InvalidOperationException (dropping a catalog that holds databases, or a connector a
    database uses) and MetaException (dropping ``hive``)."""

    @thrift(since="3", rule=auth.event("CREATE_CATALOG"))
    def create_catalog(self, catalog: hms.CreateCatalogRequest) -> None:
        """Create a catalog."""
        self.catalog.catalogs.create(required(catalog, "Request").catalog)

    @thrift(since="3", rule=auth.OPEN)
    def get_catalog(self, catName: hms.GetCatalogRequest) -> hms.GetCatalogResponse:  # noqa: N803
        """A catalog; NoSuchObjectException when there is none."""
        found = self.catalog.catalogs.get(required(catName, "Request").name)
        return hms.GetCatalogResponse(catalog=found)

    @thrift(since="3", rule=auth.OPEN)
    def get_catalogs(self) -> hms.GetCatalogsResponse:
        """Every catalog's name, sorted."""
        return hms.GetCatalogsResponse(names=self.catalog.catalogs.names())

    @thrift(since="3", rule=auth.event("ALTER_CATALOG"))
    def alter_catalog(self, rqst: hms.AlterCatalogRequest) -> None:
        """Change a catalog's description or location."""
        request = required(rqst, "Request")
        self.catalog.catalogs.alter(request.name, request.newCat)

    @thrift(since="3", rule=auth.event("DROP_CATALOG"))
    def drop_catalog(self, catName: hms.DropCatalogRequest) -> None:  # noqa: N803
        """Drop a catalog without databases (never ``hive``)."""
        self.catalog.catalogs.drop(required(catName, "Request").name)

    @thrift(since="3", rule=auth.event("CREATE_DATACONNECTOR"))
    def create_dataconnector_req(self, connectorReq: hms.CreateDataConnectorRequest) -> None:  # noqa: N803
        """Record a data connector."""
        self.catalog.connectors.create(required(connectorReq, "Request").connector)

    @thrift(since="3", rule=auth.event("READ_DATACONNECTOR"))
    def get_dataconnector_req(self, request: hms.GetDataConnectorRequest) -> hms.DataConnector:
        """A data connector; NoSuchObjectException when there is none."""
        return self.catalog.connectors.get(required(request, "Request").connectorName)

    @thrift(since="3", rule=auth.OPEN)
    def get_dataconnectors(self) -> list[str]:
        """Every data connector's name, sorted."""
        return self.catalog.connectors.names()

    @thrift(since="3", rule=auth.event("ALTER_DATACONNECTOR"))
    def alter_dataconnector_req(self, alterReq: hms.AlterDataConnectorRequest) -> None:  # noqa: N803
        """Change a data connector's URL, description, parameters or owner."""
        request = required(alterReq, "Request")
        self.catalog.connectors.alter(request.connectorName, request.newConnector)

    @thrift(since="3", rule=auth.event("DROP_DATACONNECTOR"))
    def drop_dataconnector_req(self, dropDcReq: hms.DropDataConnectorRequest) -> None:  # noqa: N803
        """Drop a data connector no database uses; ``ifNotExists`` (HMS's name for "if it
        exists") makes a missing one no error."""
        request = required(dropDcReq, "Request")
        self.catalog.connectors.drop(request.connectorName, bool(request.ifNotExists))
