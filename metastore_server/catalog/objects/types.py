"""Types (``create_type``, ``get_type``, ``drop_type``, ``get_type_all``), kept as HMS 2.3 keeps
them: a name (word characters, as written) with two optional type names and fields.

Each type is one ``meta`` row (``layout.type_key``) holding the Type (Thrift binary); creating
one is a put on the row's absence, so two server processes never both create it. HMS 2.3's own
quirks are kept: lookups trim the name, ``drop_type`` answers true whether or not the type was
there, and ``get_type_all`` is not implemented.
"""

from __future__ import annotations

import copy
import re

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Delete, Put
from metastore_server.thrift_api import hms
from metastore_server.wire.serde import from_bytes, to_bytes

#: HMS validates type names with ``[\w_]+`` and no configuration: ASCII word characters.
_TYPE_NAME = re.compile(r"[A-Za-z0-9_]+")
#: What HMS 2.3 answers for a missing name (a NullPointerException it wraps).
NULL_NAME = "java.lang.NullPointerException"


class TypeRegistry:
    """HMS's type calls on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx

    def create(self, new_type: hms.Type | None) -> bool:
        """Record a type; AlreadyExistsException when one of that name exists."""
        name = new_type.name if new_type is not None else None
        if new_type is None or name is None:
            raise hms.MetaException(message=NULL_NAME)
        if _TYPE_NAME.fullmatch(name) is None:
            raise hms.InvalidObjectException(message="Invalid type name")
        stored = copy.copy(new_type)
        stored.fields = list(new_type.fields or [])
        key = layout.type_key(name)
        put = Put(layout.META, key, {layout.OBJECT: to_bytes(stored)})
        if not self._ctx.store.mutate([put], Condition(layout.META, key, layout.OBJECT, None)):
            raise hms.AlreadyExistsException(message=f"Type {name} already exists")
        return True

    def get(self, name: str | None) -> hms.Type:
        """The type; NoSuchObjectException ``Type "x" not found.`` when there is none."""
        if name is None:
            raise hms.MetaException(message=NULL_NAME)
        row = self._ctx.store.get(layout.META, layout.type_key(name.strip())) or {}
        if layout.OBJECT not in row:
            raise hms.NoSuchObjectException(message=f'Type "{name}" not found.')
        return from_bytes(hms.Type, row[layout.OBJECT])

    def drop(self, name: str | None) -> bool:
        """Remove a type; true even when there was none (as HMS 2.3)."""
        if name is None:
            raise hms.MetaException(message=NULL_NAME)
        self._ctx.store.mutate([Delete(layout.META, layout.type_key(name.strip()))])
        return True

    @staticmethod
    def all(name: str | None) -> dict[str, hms.Type]:
        """HMS 2.3 does not implement ``get_type_all``."""
        raise hms.MetaException(message="Not yet implemented")
