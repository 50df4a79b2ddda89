"""The store's identity and HMS 4's property store: ``get_metastore_db_uuid``,
``get_properties``, ``set_properties``. See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class PropertyCalls(Area):
    """The store UUID and property maps. Raises MetaException (no namespace, a malformed
    property name, a predicate outside the supported subset)."""

    @thrift(since="3", rule=auth.OPEN)
    def get_metastore_db_uuid(self) -> str:
        """The store's UUID: made once, the same for every server process on the store."""
        return self.catalog.properties.uuid()

    @thrift(since="3", rule=auth.API)
    def get_properties(self, req: hms.PropertyGetRequest) -> hms.PropertyGetResponse:
        """The property maps of a namespace whose key starts with ``mapPrefix``, filtered by
        ``mapPredicate`` and projected onto ``mapSelection``."""
        request = required(req, "Request")
        found = self.catalog.properties.get(
            request.nameSpace, request.mapPrefix, request.mapPredicate, request.mapSelection
        )
        return hms.PropertyGetResponse(properties=found)

    @thrift(since="3", rule=auth.API)
    def set_properties(self, req: hms.PropertySetRequest) -> bool:
        """Set properties (``<map key>.<property>`` -> value) of a namespace."""
        request = required(req, "Request")
        return self.catalog.properties.set(request.nameSpace, request.propertyMap)
