"""The partition timeline contract and its three implementations, in one place to import from.

* ``StoreAllTimeline``: every partition (``timeline.store_all``).
* ``EndsAndHolesTimeline``: first, latest and the holes between (``timeline.ends_and_holes``);
  Lens's default.
* ``RangesTimeline``: sorted runs [begin, end) (``timeline.ranges``).
"""

from metastore_server.timeline.base import PartitionTimeline
from metastore_server.timeline.ends_and_holes import EndsAndHolesTimeline
from metastore_server.timeline.ranges import RangesTimeline
from metastore_server.timeline.store_all import StoreAllTimeline

__all__ = ["EndsAndHolesTimeline", "PartitionTimeline", "RangesTimeline", "StoreAllTimeline"]
