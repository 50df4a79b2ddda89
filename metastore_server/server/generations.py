"""Each client generation its own wire shapes: HMS 2.3 clients and HMS 3.x/4.x clients on one
server, on one port.

Our IDL follows HMS 4. Where HMS 3 changed a layout in place (same field id, other meaning),
the 2.3 layout is declared in ``hive_metastore_2_3_wire.thrift`` and the server serves both:

* **Requests** (``add_dynamic_partitions``, ``fire_listener_event``): each message shows its
  layout on the wire (the wire type of a field both layouts require), so it is read raw and
  then built in the layout it fits (``wire/layouts.py``; declared ``decode="either_layout"``).
  Nothing is guessed.
* **Replies** (``get_open_txns``, ``get_partition_names``' exceptions, the catalog names HMS 4
  fills in answers and HMS 2.3.10 leaves empty): what a connection's
  client reads is learnt from its calls (:class:`ClientGeneration`): a call HMS 2.3 does not
  have, a catalog-prefixed name (``@hive#db``) or a catalog set in a request marks the client
  as HMS 3+ for the rest of the connection. Until then a ``get_open_txns`` answer on the binary
  protocol carries both layouts (the set under its field id, then the list: each generation
  skips the one it does not declare), so even a client that showed nothing decodes it; the
  other replies take the 2.3 layout. ``--hms-api 2.3|4`` fixes one generation for every
  connection instead.
"""

from __future__ import annotations

from typing import Any

from metastore_server.api.areas import named
from metastore_server.thrift_api import hms, hms23
from metastore_server.wire.layouts import convert, without_catalog_names

#: The choices of ``--hms-api``.
API_SETTINGS = ("auto", "2.3", "4")

#: The calls HMS 3.x/4.x have and HMS 2.3.10 has not (declared ``since="3"``): a client
#: making one is of the newer kind.
NEWER_METHODS = named(lambda declared: declared.since != "2.3")

#: The 2.3 calls whose answers carry catalog names HMS 4 fills and HMS 2.3.10 leaves unset
#: (declared ``catalog_named``).
CATALOG_NAMED_REPLIES = named(lambda declared: declared.catalog_named)


class ClientGeneration:
    """What one connection's client reads, as far as its calls have shown (see the module)."""

    __slots__ = ("setting", "newer")

    def __init__(self, setting: str = "auto") -> None:
        if setting not in API_SETTINGS:
            raise ValueError(f"hms api must be one of {', '.join(API_SETTINGS)}, not {setting!r}")
        self.setting = setting
        #: Whether the client is known to be of HMS 3.x/4.x.
        self.newer = setting == "4"

    @property
    def known(self) -> bool:
        """Whether the generation is settled (fixed by the setting, or shown by a call)."""
        return self.setting != "auto" or self.newer

    def observe(self, api: str, values: dict[str, Any]) -> None:
        """Learn from one call (its name and decoded arguments)."""
        if self.known:
            return
        if api in NEWER_METHODS or any(_newer_value(v) for v in values.values()):
            self.newer = True


def _newer_value(value: Any) -> bool:
    """Whether an argument is one only an HMS 3+ client sends: a catalog-prefixed name, or a
    request naming its catalog."""
    if isinstance(value, str):
        return value.startswith("@") and "#" in value
    if isinstance(value, hms.Table):
        return value.catName is not None  # HMS 3's id 17 (2.3.10's catName, id 16, is skipped)
    if isinstance(value, hms.Database):
        return value.catalogName is not None
    return getattr(value, "catName", None) is not None


def shape_result(api: str, result: Any, generation: ClientGeneration) -> Any:
    """The result to write for ``api`` to this connection's client: ``result`` itself unless
    its client reads 2.3's layout of it (see :func:`needs_both_layouts` for a client that has
    shown nothing)."""
    if generation.newer:
        return result
    if api in CATALOG_NAMED_REPLIES and result.success is not None:
        result.success = without_catalog_names(result.success)
    if api == "get_partition_names":
        legacy = hms23.HiveMetastore23Wire.get_partition_names_result(success=result.success)
        error = result.o2 or result.o1
        if error is not None:
            legacy.o2 = hms.MetaException(message=error.message)
        return legacy
    if api == "get_open_txns" and generation.known and result.success is not None:
        legacy = hms23.HiveMetastore23Wire.get_open_txns_result()
        legacy.success = convert(result.success, hms23.GetOpenTxnsResponse)
        return legacy
    return result


def needs_both_layouts(api: str, result: Any, generation: ClientGeneration, binary: bool) -> bool:
    """Whether this answer goes out in both generations' layouts (see the module)."""
    return (
        api == "get_open_txns"
        and binary
        and not generation.known
        and getattr(result, "success", None) is not None
    )
