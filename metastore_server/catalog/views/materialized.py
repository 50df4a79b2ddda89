"""Materialized views for query rewriting, as HMS 4 answers for them.

A view's creation metadata (the tables it reads and the transaction snapshot it was built
from) is kept in its table definition (``Table.creationMetadata``); ``update_creation_metadata``
replaces it after a rebuild. Whether a view is stale for incremental rebuilding is answered
from the transactions (``txn.view_state``: the update and delete commits of each table) and the
compaction history (a compaction committed outside the snapshot); one rebuild of a view runs
at a time under its rebuild lock, held by a transaction and gone when that ends. We keep no
materialization cache: each answer reads the store.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.objects.tables import MATERIALIZED_VIEW, Tables
from metastore_server.catalog.txn import view_state
from metastore_server.catalog.txn.compactions import Compactions
from metastore_server.catalog.txn.transactions import LockTable, Transactions
from metastore_server.catalog.txn.valid_lists import parse_valid_txn_list
from metastore_server.catalog.txn.write_id_state import full_name
from metastore_server.thrift_api import hms

#: Compaction states whose compaction has committed (its result is visible to readers).
_COMMITTED_COMPACTIONS = ("ready for cleaning", "cleaning", "succeeded")


class MaterializedViews:
    """The materialized-view calls over the tables, transactions and compaction queue."""

    def __init__(self, tables: Tables, transactions: Transactions, compactions: Compactions):
        self._tables, self._txns, self._compactions = tables, transactions, compactions

    def update_creation_metadata(self, db: str, name: str, metadata: hms.CreationMetadata) -> None:
        """Replace view ``db.name``'s creation metadata (NoSuchObjectException for a missing
        table, which the call answers as a MetaException; MetaException for a table that is not
        a materialized view)."""
        if metadata is None:
            raise hms.MetaException(message="update_creation_metadata needs the creation metadata")
        ref = self._tables.find(db, name)
        if ref is None:
            raise hms.NoSuchObjectException(message=f"{db}.{name} table not found")
        if ref.table.tableType != MATERIALIZED_VIEW:
            raise hms.MetaException(message=f"{db}.{name} is not a materialized view")
        table = copy.deepcopy(ref.table)
        table.creationMetadata = metadata
        self._tables.alter(ref.db, ref.name, table)

    def for_rewriting(self, db: str | None) -> list[hms.Table]:
        """The materialized views rewriting may use (``rewriteEnabled``): of database ``db``,
        or of every database."""
        refs = self._tables.every_table() if db is None else (
            ref for name in self._tables.names(db, None, MATERIALIZED_VIEW)
            if (ref := self._tables.find(db, name)) is not None
        )  # fmt: skip
        return [
            ref.table
            for ref in refs
            if ref.table.tableType == MATERIALIZED_VIEW and ref.table.rewriteEnabled
        ]

    def invalidation(
        self, metadata: hms.CreationMetadata, valid_txn_list: str | None
    ) -> hms.Materialization:
        """Whether a source table of the view has, outside its snapshot (``valid_txn_list``,
        else the metadata's own), committed an update or delete, or been compacted."""
        if metadata is None:
            raise hms.MetaException(message="get_materialization_invalidation_info needs metadata")
        text = valid_txn_list or metadata.validTxnList
        try:
            snapshot = parse_valid_txn_list(text or "")
        except ValueError as exc:
            raise hms.MetaException(message=f"Invalid validTxnList {text!r}: {exc}") from None
        sources = {full_name(*n.split(".", 1)) for n in metadata.tablesUsed or () if "." in n}
        for source in metadata.sourceTables or ():
            if source.table is not None:
                sources.add(full_name(source.table.dbName, source.table.tableName))
        modified = view_state.changed_outside(self._txns.read_state(), sources, snapshot)
        compacted = any(
            entry.state in _COMMITTED_COMPACTIONS
            and entry.txn_id is not None
            and not snapshot.is_valid(entry.txn_id)
            for entry in self._compactions.entries()
            if full_name(entry.db, entry.table) in sources
        )
        return hms.Materialization(
            sourceTablesUpdateDeleteModified=modified, sourceTablesCompacted=compacted
        )

    def lock_rebuild(self, db: str, name: str, txnid: int) -> hms.LockResponse:
        """Take the view's rebuild lock for transaction ``txnid`` (not checked, as HMS):
        ACQUIRED (``lockid`` the transaction), or NOT_ACQUIRED while a lock of the view
        stands."""
        view = full_name(db, name)

        def take(table: LockTable, now: int) -> bool:
            return view_state.lock_rebuild(table, view, txnid, now, self._timeout_ms())

        acquired = self._txns.change(take)
        state = hms.LockState.ACQUIRED if acquired else hms.LockState.NOT_ACQUIRED
        return hms.LockResponse(lockid=txnid, state=state)

    def heartbeat_rebuild(self, db: str, name: str, txnid: int) -> bool:
        """Renew the view's rebuild lock held by ``txnid``: whether it holds one."""
        view = full_name(db, name)

        def renew(table: LockTable, now: int) -> bool:
            return view_state.heartbeat_rebuild(table, view, txnid, now, self._timeout_ms())

        return bool(self._txns.change(renew))

    def _timeout_ms(self) -> int:
        """How long a lock of a transaction this server does not know stands without a
        heartbeat (the transaction timeout, as HMS's rebuild-lock cleaner)."""
        return int(self._txns.timeout_s * 1000)
