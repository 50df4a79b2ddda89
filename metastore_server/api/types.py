"""The type calls (HMS 2.3's type registry): create, read, list and drop named types. See
``docs/hms-api.md#types``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class TypeCalls(Area):
    """Named types. Raises NoSuchObjectException (a missing type), AlreadyExistsException,
    InvalidObjectException and MetaException."""

    @thrift(rule=auth.admin_operation("CREATETYPE"))
    def create_type(self, type: hms.Type) -> bool:  # noqa: A002 (IDL name)
        """Record a type; AlreadyExistsException when one of that name exists."""
        return self.catalog.types.create(type)

    @thrift(rule=auth.OPEN)
    def get_type(self, name: str) -> hms.Type:
        """A type by name."""
        return self.catalog.types.get(name)

    @thrift(rule=auth.admin_operation("DROPTYPE"))
    def drop_type(self, type: str) -> bool:  # noqa: A002 (IDL name)
        """Drop a type by name; true even when there was none (as HMS 2.3)."""
        return self.catalog.types.drop(type)

    @thrift(rule=auth.OPEN)
    def get_type_all(self, name: str) -> dict[str, hms.Type]:
        """Not implemented in HMS 2.3: MetaException, as there."""
        return self.catalog.types.all(name)
