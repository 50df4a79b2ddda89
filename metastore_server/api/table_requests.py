"""HMS 4's table calls that have no HMS 2.3 form (``truncate_table``) and the request forms
of the table calls (``create_table_req``, ``drop_table_req``...): each translates its request
and goes the way the call it stands for goes. See ``docs/hms-api.md``.
"""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import (
    database_name,
    object_name,
    required,
)
from metastore_server.thrift_api import hms


class TableRequestCalls(Area):
    """Truncation and the HMS 4 request forms of the table calls. Raises MetaException
    (truncate: also for a missing table, the one exception its IDL declares)."""

    def truncate_table(self, dbName: str, tableName: str, partNames: list[str]) -> None:  # noqa: N803
        """Delete the data of a managed table (or of the partitions named), keep the table
        and its partitions, and reset their basic statistics to an empty table's."""
        try:
            self.catalog.truncate_table(
                database_name(dbName), object_name(tableName), list(partNames or []) or None
            )
        except hms.NoSuchObjectException as exc:  # not declared by the IDL: HMS wraps it
            raise hms.MetaException(message=exc.message) from None

    def truncate_table_req(self, req: hms.TruncateTableRequest) -> hms.TruncateTableResponse:
        """The request form of ``truncate_table``."""
        req = required(req, "TruncateTableRequest")
        self.truncate_table(req.dbName, req.tableName, req.partNames)
        return hms.TruncateTableResponse()
