"""The store's own identity and HMS 4's generic property store.

``uuid``: made once per store (a put on the absence of ``layout.UUID_ROW``, so two server
processes starting together agree on the first one written) and never changed.

Properties: per namespace, maps of properties keyed by a map key. ``set_properties`` takes
``<map key>.<property>`` keys (split at the last dot) and values; ``get_properties`` selects the
maps of a namespace whose key starts with a prefix, optionally filtered by a predicate and
projected onto chosen properties. Each map is one ``meta`` row (``layout.property_key``), one
column per property. The predicate language is a small subset of HMS's: comparisons
``name == 'text'`` / ``name != 'text'`` joined by ``&&``; anything else is refused.
"""

from __future__ import annotations

import re
import uuid

import structlog

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.storage import layout
from metastore_server.storage.port import Condition, Put
from metastore_server.thrift_api import hms

_log = structlog.get_logger(__name__)

_COMPARISON = re.compile(
    r"\s*([A-Za-z_][\w.]*)\s*(==|!=)\s*(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")\s*"
)
_FORBIDDEN = ("\x00",)


def _check_name(text: str | None, what: str) -> str:
    """A namespace or map key as given; MetaException for an empty one or one holding NUL."""
    if not text:
        raise hms.MetaException(message=f"{what} cannot be empty")
    if any(ch in text for ch in _FORBIDDEN):
        raise hms.MetaException(message=f"{what} {text!r} holds a NUL character")
    return text


def parse_predicate(predicate: str | None) -> list[tuple[str, bool, str]]:
    """The comparisons of a predicate as (property, equal?, value); MetaException for one
    outside the supported subset. None or blank: no condition."""
    if predicate is None or not predicate.strip():
        return []
    comparisons = []
    for term in predicate.split("&&"):
        match = _COMPARISON.fullmatch(term)
        if match is None:
            raise hms.MetaException(
                message=f"Unsupported property predicate: {predicate!r} (supported: "
                "name == 'value' and name != 'value' joined by &&)"
            )
        literal = match.group(3) if match.group(3) is not None else match.group(4)
        value = re.sub(r"\\(.)", r"\1", literal)
        comparisons.append((match.group(1), match.group(2) == "==", value))
    return comparisons


def _holds(properties: dict[str, str], comparisons: list[tuple[str, bool, str]]) -> bool:
    return all((properties.get(name) == value) == equal for name, equal, value in comparisons)


class Properties:
    """The store UUID and the property maps on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx

    def uuid(self) -> str:
        """The store's UUID, made on first use."""
        row = self._ctx.store.get(layout.META, layout.UUID_ROW)
        if row is None:
            made = str(uuid.uuid4()).encode("utf-8")
            put = Put(layout.META, layout.UUID_ROW, {layout.OBJECT: made})
            absent = Condition(layout.META, layout.UUID_ROW, layout.OBJECT, None)
            if self._ctx.store.mutate([put], absent):
                _log.info("metastore_uuid_made", uuid=made.decode("utf-8"))
                return made.decode("utf-8")
            row = self._ctx.store.get(layout.META, layout.UUID_ROW) or {}
        return row[layout.OBJECT].decode("utf-8")

    def set(self, namespace: str | None, values: dict[str, str] | None) -> bool:
        """Set properties given as ``<map key>.<property>`` -> value; true when done."""
        namespace = _check_name(namespace, "Property namespace")
        by_map: dict[str, dict[bytes, bytes]] = {}
        for full_name, value in (values or {}).items():
            map_key, dot, prop = (full_name or "").rpartition(".")
            if not dot or not map_key or not prop:
                raise hms.MetaException(
                    message=f"Property name {full_name!r} is not <map key>.<property>"
                )
            _check_name(map_key, "Property map key")
            column = layout.PROPERTY_COLUMN_PREFIX + _check_name(prop, "Property").encode()
            by_map.setdefault(map_key, {})[column] = (value or "").encode("utf-8")
        ops = [
            Put(layout.META, layout.property_key(namespace, map_key), columns)
            for map_key, columns in sorted(by_map.items())
        ]
        if ops:
            self._ctx.store.mutate(ops)
        return True

    def get(
        self,
        namespace: str | None,
        map_prefix: str | None,
        predicate: str | None = None,
        selection: list[str] | None = None,
    ) -> dict[str, dict[str, str]]:
        """The maps of a namespace whose key starts with ``map_prefix`` (none: every map) and
        that satisfy ``predicate``, each with the properties in ``selection`` (none: all)."""
        namespace = _check_name(namespace, "Property namespace")
        comparisons = parse_predicate(predicate)
        start, stop = layout.property_range(namespace, map_prefix or "")
        prefix_length = len(layout.PROPERTY_COLUMN_PREFIX)
        found: dict[str, dict[str, str]] = {}
        for key, row in self._ctx.store.scan(layout.META, start, stop):
            properties = {
                column[prefix_length:].decode("utf-8"): value.decode("utf-8")
                for column, value in row.items()
                if column.startswith(layout.PROPERTY_COLUMN_PREFIX)
            }
            if not _holds(properties, comparisons):
                continue
            if selection:
                properties = {k: v for k, v in properties.items() if k in selection}
            found[layout.property_map_key(key)] = properties
        return found
