"""The locations each Thrift method names, for ``--authorization privileges``, by method name:
derived from the methods' declarations (``@thrift(locations=...)``, built with
:mod:`.location_finders`, which also finds them); :mod:`.locations` decides whether the caller
may name them.
"""

from __future__ import annotations

from metastore_server.api.areas import DECLARED
from metastore_server.api.authorization.location_finders import Finder

#: Each Thrift method that can give a database, table or partition a location: the operation
#: a refusal names (HMS's), and how its locations are found. ``tests/unit`` holds every method
#: the storage authorizer checks to this table or to :data:`NAMES_NONE`.
LOCATION_RULES: dict[str, tuple[str, Finder]] = {
    name: (d.locations.operation, d.locations.find)
    for name, d in DECLARED.items()
    if d.locations is not None and d.locations.find is not None
}

#: Methods that create, alter or drop databases, tables or partitions but give none a location
#: of the caller's choosing, with why (held to the storage authorizer's list by ``tests/unit``).
NAMES_NONE: dict[str, str] = {
    name: d.locations.why
    for name, d in DECLARED.items()
    if d.locations is not None and d.locations.find is None
}
