"""How a read would run (our extensions ``explain_partition_filter`` and
``explain_partition_values``): the scans a partition filter plans and, with ``analyze``, what
running them read. The CLI's ``metastore-server explain`` and ``values --explain`` print them.
See ``docs/filters.md`` and ``docs/values.md``.
"""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import catalog_field, object_name, required
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.api.values import explain_values
from metastore_server.thrift_api import hms


class ExplainCalls(Area):
    """Read plans. Raises NoSuchObjectException (a missing table or database, another catalog)
    and MetaException (no request, a bad filter, a key the table does not have)."""

    @thrift(rule=auth.read(auth.REQ))
    def explain_partition_filter(self, req: hms.ExplainFilterRequest) -> hms.ExplainFilterResult:
        """Which rows a filter reads (``metastore-server explain`` prints it)."""
        req = required(req, "ExplainFilterRequest")
        return self.catalog.partition_reads.explain(
            self.database_in(catalog_field(req), req.dbName),
            object_name(req.tblName),
            req.filter,
            bool(req.analyze),
        )

    @thrift(rule=auth.read(auth.field("req", "request")))
    def explain_partition_values(self, req: hms.ExplainValuesRequest) -> hms.ExplainValuesResult:
        """How get_partition_values reads a request (``metastore-server values --explain``
        prints it)."""
        request = req.request if req is not None else None
        if request is None:
            raise hms.MetaException(message="ExplainValuesRequest needs a PartitionValuesRequest")
        db, table = (
            self.database_in(catalog_field(request), request.dbName),
            object_name(request.tblName),
        )
        return explain_values(self.catalog, db, table, request, bool(req.analyze))
