"""The smaller HMS calls, mixed into the handler: table metadata listings, request forms of
older calls, partition-name checks, the token store, and the calls HMS answers without a store
behind them (file metadata, delegation tokens without Kerberos, cache flushes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore_server.catalog.basics import names
from metastore_server.catalog.events import messages as event_messages
from metastore_server.catalog.partitions import exchange
from metastore_server.thrift_api import hms
from planner import java_regex

#: The answer to delegation-token calls: they need SASL (Kerberos) authentication.
NO_TOKENS = (
    "Delegation tokens need SASL (Kerberos) authentication (hive.metastore.sasl.enabled), "
    "which this server does not offer"
)
_WHITELIST_KEY = "hive.metastore.partition.name.whitelist.pattern"


class ExtraCalls:
    """Mixed into MetastoreHandler (which provides ``catalog`` and ``_meta_conf``)."""

    catalog: Any
    _meta_conf: Any

    # -- tables ------------------------------------------------------------------------------

    def get_table_meta(
        self, db_patterns: str, tbl_patterns: str, tbl_types: list[str]
    ) -> list[hms.TableMeta]:
        """Database, name, type and comment of the tables matching HMS patterns."""
        types = {t.upper() for t in tbl_types or []}
        found = []
        for db in self.catalog.databases.names(db_patterns or "*"):
            for name in self.catalog.tables.names(db, tbl_patterns or "*"):
                ref = self.catalog.tables.find(db, name)
                if ref is None or (types and (ref.table.tableType or "").upper() not in types):
                    continue
                comment = (ref.table.parameters or {}).get("comment")
                found.append(hms.TableMeta(dbName=db, tableName=name,
                                           tableType=ref.table.tableType or "",
                                           comments=comment))  # fmt: skip
        return found

    def get_table_objects_by_name_req(self, req: hms.GetTablesRequest) -> hms.GetTablesResult:
        """The request form of ``get_table_objects_by_name``."""
        if req is None:
            raise hms.MetaException(message="GetTablesRequest cannot be null")
        db = names.normalize(req.dbName)
        if self.catalog.databases.find(db) is None:
            raise hms.UnknownDBException(message=f"Could not find database {db}")
        wanted = req.tblNames if req.tblNames is not None else self.catalog.tables.names(db)
        return hms.GetTablesResult(tables=self.catalog.tables.objects(db, wanted))

    # -- constraints ---------------------------------------------------------------------------

    def create_table_with_constraints(
        self,
        tbl: hms.Table,
        primaryKeys: list[hms.SQLPrimaryKey],  # noqa: N803 (IDL names)
        foreignKeys: list[hms.SQLForeignKey],  # noqa: N803
    ) -> None:
        """Create a table, then its keys; a refused key drops the table again."""
        self.create_table(tbl)  # type: ignore[attr-defined]
        try:
            self.catalog.constraints.add_primary_key(primaryKeys)
            self.catalog.constraints.add_foreign_key(foreignKeys)
        except Exception:
            self.catalog.drop_table(names.normalize(tbl.dbName), names.normalize(tbl.tableName),
                                    True)  # fmt: skip
            raise

    def add_primary_key(self, req: hms.AddPrimaryKeyRequest) -> None:
        self.catalog.constraints.add_primary_key(req.primaryKeyCols if req else None)

    def add_foreign_key(self, req: hms.AddForeignKeyRequest) -> None:
        self.catalog.constraints.add_foreign_key(req.foreignKeyCols if req else None)

    def drop_constraint(self, req: hms.DropConstraintRequest) -> None:
        if req is None:
            raise hms.MetaException(message="DropConstraintRequest cannot be null")
        self.catalog.constraints.drop(req.dbname, req.tablename, req.constraintname)

    def get_primary_keys(self, request: hms.PrimaryKeysRequest) -> hms.PrimaryKeysResponse:
        if request is None:
            raise hms.MetaException(message="PrimaryKeysRequest cannot be null")
        keys = self.catalog.constraints.primary_keys(request.db_name, request.tbl_name)
        return hms.PrimaryKeysResponse(primaryKeys=keys)

    def get_foreign_keys(self, request: hms.ForeignKeysRequest) -> hms.ForeignKeysResponse:
        if request is None:
            raise hms.MetaException(message="ForeignKeysRequest cannot be null")
        return hms.ForeignKeysResponse(foreignKeys=self.catalog.constraints.foreign_keys(request))

    # -- partitions --------------------------------------------------------------------------

    def append_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        environment_context: hms.EnvironmentContext,
    ) -> hms.Partition:
        return self.append_partition(db_name, tbl_name, part_vals)  # type: ignore[attr-defined]

    def append_partition_by_name_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        environment_context: hms.EnvironmentContext,
    ) -> hms.Partition:
        return self.append_partition_by_name(db_name, tbl_name, part_name)  # type: ignore[attr-defined]

    def exchange_partitions(
        self,
        partitionSpecs: dict[str, str],  # noqa: N803 (IDL names)
        source_db: str,
        source_table_name: str,
        dest_db: str,
        dest_table_name: str,
    ) -> list[hms.Partition]:
        """Move the partitions under a spec of leading keys to a table of the same shape."""
        return exchange.exchange(self.catalog, partitionSpecs, source_db, source_table_name,
                                 dest_db, dest_table_name)  # fmt: skip

    def exchange_partition(
        self,
        partitionSpecs: dict[str, str],  # noqa: N803
        source_db: str,
        source_table_name: str,
        dest_db: str,
        dest_table_name: str,
    ) -> hms.Partition:
        """``exchange_partitions``, answering the first partition moved (as HMS)."""
        return self.exchange_partitions(partitionSpecs, source_db, source_table_name, dest_db,
                                        dest_table_name)[0]  # fmt: skip

    def partition_name_has_valid_characters(
        self, part_vals: list[str], throw_exception: bool
    ) -> bool:
        """Whether every value matches the connection's partition-name whitelist pattern
        (``hive.metastore.partition.name.whitelist.pattern``; empty: anything goes)."""
        pattern = self._meta_conf.get(_WHITELIST_KEY)
        if not pattern:
            return True
        try:
            allowed = java_regex.full_matcher(pattern)
        except java_regex.RegexError as err:
            message = f"Invalid {_WHITELIST_KEY} {pattern!r}: {err}"
            raise hms.MetaException(message=message) from None
        for value in part_vals or []:
            if not allowed(value or ""):
                if throw_exception:
                    raise hms.MetaException(
                        message=f"Partition value '{value}' contains a character not matched "
                        f"by whitelist pattern '{pattern}'.  (configure with {_WHITELIST_KEY})"
                    )
                return False
        return True

    # -- notification log ----------------------------------------------------------------------

    def get_next_notification(
        self, rqst: hms.NotificationEventRequest
    ) -> hms.NotificationEventResponse:
        """Events after ``lastEvent`` in order, at most ``maxEvents`` (when positive)."""
        if rqst is None or rqst.lastEvent is None:
            raise hms.MetaException(message="NotificationEventRequest needs lastEvent")
        wanted = _event_filter(rqst.dbName, rqst.tableNames, rqst.eventTypeSkipList)
        events = self.catalog.ctx.events.next_events(rqst.lastEvent, rqst.maxEvents, wanted)
        return hms.NotificationEventResponse(events=events)

    def get_notification_events_count(
        self, rqst: hms.NotificationEventsCountRequest
    ) -> hms.NotificationEventsCountResponse:
        """How many events of a database (and tables) follow ``fromEventId`` (up to
        ``toEventId``; at most ``limit``)."""
        if rqst is None or rqst.fromEventId is None or not rqst.dbName:
            raise hms.MetaException(message="NotificationEventsCountRequest needs fromEventId "
                                    "and dbName")  # fmt: skip
        wanted = _event_filter(rqst.dbName, rqst.tableNames, None) or (lambda _event: True)
        counted = self.catalog.ctx.events.count(rqst.fromEventId, rqst.toEventId, wanted)
        if rqst.limit is not None and rqst.limit > 0:
            counted = min(counted, rqst.limit)
        return hms.NotificationEventsCountResponse(eventsCount=counted)

    def get_current_notificationEventId(self) -> hms.CurrentNotificationEventId:  # noqa: N802
        return hms.CurrentNotificationEventId(eventId=self.catalog.ctx.events.current_id())

    def fire_listener_event(self, rqst: hms.FireEventRequest) -> hms.FireEventResponse:
        """Record an INSERT event (the only kind clients fire) on an existing table or
        partition; files carry ``#checksum`` when checksums are given."""
        insert = rqst.data.insertData if rqst is not None and rqst.data is not None else None
        if insert is None:
            raise hms.MetaException(message="Event type not currently supported: only INSERT")
        db, table_name = names.normalize(rqst.dbName), names.normalize(rqst.tableName)
        table = self.get_table(db, table_name)  # type: ignore[attr-defined]
        key_values = None
        if rqst.partitionVals:
            partition = self.get_partition(db, table_name, rqst.partitionVals)  # type: ignore[attr-defined]
            key_values = event_messages.key_values(table, partition.values)
        files, sums = insert.filesAdded, insert.filesAddedChecksum
        if files is None and sums is not None:  # Hive 3+'s numbering: files in field 2
            files, sums = sums, insert.filesAddedChecksumSince3
        files = list(files or [])
        if sums is not None and len(sums) != len(files):
            raise hms.MetaException(
                message=f"{len(files)} files added but {len(sums)} checksums given"
            )
        if sums is not None:
            files = [f"{name}#{checksum}" if checksum else name
                     for name, checksum in zip(files, sums, strict=True)]  # fmt: skip
        event = event_messages.insert(db, table_name, key_values, files, self.catalog.ctx.now())
        return hms.FireEventResponse(eventIds=self.catalog.ctx.events.record([event]))

    # -- no file-metadata store ----------------------------------------------------------------

    def get_file_metadata(self, req: hms.GetFileMetadataRequest) -> hms.GetFileMetadataResult:
        return hms.GetFileMetadataResult(metadata={}, isSupported=False)

    def get_file_metadata_by_expr(
        self, req: hms.GetFileMetadataByExprRequest
    ) -> hms.GetFileMetadataByExprResult:
        return hms.GetFileMetadataByExprResult(metadata={}, isSupported=False)

    def put_file_metadata(self, req: hms.PutFileMetadataRequest) -> hms.PutFileMetadataResult:
        return hms.PutFileMetadataResult()

    def clear_file_metadata(
        self, req: hms.ClearFileMetadataRequest
    ) -> hms.ClearFileMetadataResult:
        return hms.ClearFileMetadataResult()

    def cache_file_metadata(
        self, req: hms.CacheFileMetadataRequest
    ) -> hms.CacheFileMetadataResult:
        return hms.CacheFileMetadataResult(isSupported=False)

    # -- delegation tokens and master keys -----------------------------------------------------

    def get_delegation_token(self, token_owner: str, renewer_kerberos_principal_name: str) -> str:
        raise hms.MetaException(message=NO_TOKENS)

    def renew_delegation_token(self, token_str_form: str) -> int:
        raise hms.MetaException(message=NO_TOKENS)

    def cancel_delegation_token(self, token_str_form: str) -> None:
        raise hms.MetaException(message=NO_TOKENS)

    # The token store calls keep what other (Kerberos) metastores share through this one, as
    # HMS's database token store does.

    def add_token(self, token_identifier: str, delegation_token: str) -> bool:
        return self.catalog.secrets.add_token(token_identifier, delegation_token)

    def remove_token(self, token_identifier: str) -> bool:
        return self.catalog.secrets.remove_token(token_identifier)

    def get_token(self, token_identifier: str) -> str:
        return self.catalog.secrets.get_token(token_identifier)

    def get_all_token_identifiers(self) -> list[str]:
        return self.catalog.secrets.token_identifiers()

    def add_master_key(self, key: str) -> int:
        return self.catalog.secrets.add_master_key(key)

    def update_master_key(self, seq_number: int, key: str) -> None:
        self.catalog.secrets.update_master_key(seq_number, key)

    def remove_master_key(self, key_seq: int) -> bool:
        return self.catalog.secrets.remove_master_key(key_seq)

    def get_master_keys(self) -> list[str]:
        return self.catalog.secrets.master_keys()

    # -- server ----------------------------------------------------------------------------------

    def flushCache(self) -> None:  # noqa: N802 (IDL name)
        """Nothing to flush: listings are cached only while the store is unchanged."""

    def getCpuProfile(self, profileDurationInSec: int) -> str:  # noqa: N802, N803
        return ""


def _event_filter(
    db: str | None, tables: list[str] | None, skip_types: list[str] | None
) -> Callable[[hms.NotificationEvent], bool] | None:
    """The test of Hive 4's notification filters (database, tables, event types to skip);
    None when there are none. Names compare case-insensitively, as HMS stores them lower."""
    if not (db or tables or skip_types):
        return None
    db_name = names.normalize(db) if db else None
    table_names = {names.normalize(t) for t in tables or []}
    skipped = set(skip_types or [])

    def wanted(event: hms.NotificationEvent) -> bool:
        if event.eventType in skipped:
            return False
        if db_name is not None and (event.dbName or "").lower() != db_name:
            return False
        return not table_names or (event.tableName or "").lower() in table_names

    return wanted
