"""The partition timeline contract and its three implementations, in one place to import from.

* ``StoreAllTimeline``: every partition (``timeline.store_all``).
* ``EndsAndHolesTimeline``: first, latest and the holes between (``timeline.ends_and_holes``);
  Lens's default.
* ``RangesTimeline``: sorted runs [begin, end) (``timeline.ranges``).
"""

from timeline.base import PartitionTimeline
from timeline.ends_and_holes import EndsAndHolesTimeline
from timeline.ranges import RangesTimeline
from timeline.store_all import StoreAllTimeline

__all__ = ["EndsAndHolesTimeline", "PartitionTimeline", "RangesTimeline", "StoreAllTimeline"]
