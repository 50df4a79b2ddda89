"""The materialized-view calls of HMS 4 (query rewriting): creation metadata, the views a
rewrite may use, whether a view is stale, and the rebuild lock. See
``docs/hms-api.md#materialized-views``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.arguments import object_name
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class MaterializedViewCalls(Area):
    """Materialized views. Raises NoSuchObjectException (a missing view) and MetaException (not
    a materialized view, a bad snapshot string)."""

    @thrift(since="3", rule=auth.alter(auth.DB_TABLE))
    def update_creation_metadata(
        self,
        catName: str,  # noqa: N803 (IDL names)
        dbname: str,
        tbl_name: str,
        creation_metadata: hms.CreationMetadata,
    ) -> None:
        """Replace a materialized view's creation metadata (after it was rebuilt)."""
        self.catalog.views.update_creation_metadata(
            self.database_in(catName, dbname), object_name(tbl_name), creation_metadata
        )

    @thrift(since="3", rule=auth.OPEN)
    def get_materialized_views_for_rewriting(self, db_name: str) -> list[str]:
        """The names of a database's materialized views that rewriting may use."""
        db = self.listed_database(None, db_name)
        views = [] if db is None else self.catalog.views.for_rewriting(db)
        return sorted(view.tableName for view in views)

    @thrift(since="3", rule=auth.OPEN)
    def get_all_materialized_view_objects_for_rewriting(self) -> list[hms.Table]:
        """Every materialized view that rewriting may use, of every database."""
        return self.catalog.views.for_rewriting(None)

    @thrift(since="3", rule=auth.read(auth.field("creation_metadata")))
    def get_materialization_invalidation_info(
        self,
        creation_metadata: hms.CreationMetadata,
        validTxnList: str,  # noqa: N803
    ) -> hms.Materialization:
        """Whether the view's source tables had updates or deletes, or were compacted,
        outside its snapshot (then it cannot be rebuilt incrementally)."""
        return self.catalog.views.invalidation(creation_metadata, validTxnList)

    @thrift(since="3", rule=auth.alter(auth.args("dbName", "tableName")))
    def get_lock_materialization_rebuild(
        self,
        dbName: str,
        tableName: str,
        txnId: int,  # noqa: N803
    ) -> hms.LockResponse:
        """Take a view's rebuild lock for a transaction, which HMS does not check (ACQUIRED with
        the transaction as lock id; NOT_ACQUIRED while a rebuild lock of the view stands)."""
        return self.catalog.views.lock_rebuild(
            self.database_in(None, dbName), object_name(tableName), txnId or 0
        )

    @thrift(since="3", rule=auth.alter(auth.args("dbName", "tableName")))
    def heartbeat_lock_materialization_rebuild(
        self,
        dbName: str,
        tableName: str,
        txnId: int,  # noqa: N803
    ) -> bool:
        """Renew the view's rebuild lock of the transaction: whether it holds one."""
        return self.catalog.views.heartbeat_rebuild(
            self.database_in(None, dbName), object_name(tableName), txnId or 0
        )
