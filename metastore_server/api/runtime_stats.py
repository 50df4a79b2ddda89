"""The runtime statistics calls of HMS 4: opaque payloads stored for the query engine. See
``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class RuntimeStatsCalls(Area):
    """Runtime statistics. Raises MetaException (a stat or request missing its fields)."""

    @thrift(since="3", rule=auth.API)
    def add_runtime_stats(self, stat: hms.RuntimeStat) -> None:
        """Store a stat (stamped with the server's time)."""
        self.catalog.runtime_stats.add(stat)

    @thrift(since="3", rule=auth.API)
    def get_runtime_stats(self, rqst: hms.GetRuntimeStatsRequest) -> list[hms.RuntimeStat]:
        """The newest stats up to a total weight."""
        return self.catalog.runtime_stats.get(rqst)
