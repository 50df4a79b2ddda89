"""The partition calls that change partitions: add (from partitions, values, names or specs),
drop, alter, rename and exchange between tables. See ``docs/compatibility.md`` and
``docs/hms-api.md#exchange-partitions``.
"""

from __future__ import annotations

from collections.abc import Sequence

from metastore_server.api.area import Area
from metastore_server.api.arguments import (
    catalog_field,
    context_properties,
    internal_error,
    object_name,
    purge_asked,
    required,
)
from metastore_server.api.authorization import location_finders as loc
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.authorization import storage_rules as st
from metastore_server.api.declaration import thrift
from metastore_server.catalog import exchange, java_text, partition_specs, thrift_struct_text
from metastore_server.thrift_api import hms


def _check_members(parts: list[hms.Partition], db: str, table: str) -> None:
    """MetaException (HMS's words) for a partition of the specs not in their first table."""
    for part in parts:
        if part is not None and (part.dbName, part.tableName) != (db, table):
            raise hms.MetaException(
                message="Partition does not belong to target table "
                f"{java_text(db)}.{java_text(table)}: {thrift_struct_text(part)}"
            )


class PartitionWriteCalls(Area):
    """Adding, dropping, altering, renaming and exchanging partitions. Raises
    NoSuchObjectException (a missing table or partition, another catalog),
    AlreadyExistsException (a partition that exists), InvalidObjectException (a partition
    HMS would not store, a missing table on add), InvalidOperationException (a change HMS
    refuses) and MetaException."""

    # -- add ---------------------------------------------------------------------------------

    @thrift(
        rule=auth.add_parts(auth.field("new_part")),
        storage=st.ADD_PARTITION,
        locations=loc.ADD_PARTITION,
    )
    def add_partition(self, new_part: hms.Partition) -> hms.Partition:
        """Add one partition; the partition as stored."""
        if new_part is None:
            raise hms.InvalidObjectException(message="Partition cannot be null.")
        added = self.catalog.partitions.add(
            self.database_in(catalog_field(new_part), new_part.dbName),
            object_name(new_part.tableName),
            [new_part],
        )
        return added[0]

    @thrift(
        rule=auth.add_parts(auth.field("new_part")),
        storage=st.ADD_PARTITION,
        locations=loc.ADD_PARTITION,
    )
    def add_partition_with_environment_context(
        self, new_part: hms.Partition, environment_context: hms.EnvironmentContext
    ) -> hms.Partition:
        """``add_partition`` (the context changes nothing)."""
        return self.add_partition(new_part)

    @thrift(
        decode="wire_partitions",
        rule=auth.add_parts(auth.each("new_parts")),
        storage=st.ADD_PARTITIONS,
        locations=loc.ADD_PARTITIONS,
    )
    def add_partitions(self, new_parts: list[hms.Partition]) -> int:
        """Add partitions of the table the first names, all or none; how many were added."""
        if not new_parts:
            return 0
        first = new_parts[0]
        added = self.catalog.partitions.add(
            self.database_in(catalog_field(first), first.dbName),
            object_name(first.tableName),
            new_parts,
        )
        return len(added)

    @thrift(
        decode="wire_partitions",
        rule=auth.add_parts(auth.field("request")),
        storage=st.ADD_PARTITIONS_REQ,
        locations=loc.ADD_PARTITIONS_REQ,
    )
    def add_partitions_req(self, request: hms.AddPartitionsRequest) -> hms.AddPartitionsResult:
        """The request form of ``add_partitions``; with ``ifNotExists`` partitions that exist
        are skipped instead of refused."""
        request = required(request, "AddPartitionsRequest")
        db, table = (
            self.database_in(catalog_field(request), request.dbName),
            object_name(request.tblName),
        )
        added = self.catalog.partitions.add(
            db,
            table,
            request.parts,
            bool(request.ifNotExists),
            missing_table_message=(
                f"Unable to add partitions because database or table {db}.{table} does not exist"
            ),
        )
        need_result = request.needResult is None or request.needResult
        # HMS answers no list at all when the request holds no partition.
        return hms.AddPartitionsResult(
            partitions=list(added) if need_result and request.parts else None
        )

    @thrift(
        rule=auth.add_parts(auth.each("new_parts")),
        storage=st.ADD_PARTITIONS_PSPEC,
        locations=loc.ADD_PARTITIONS_PSPEC,
    )
    def add_partitions_pspec(self, new_parts: list[hms.PartitionSpec]) -> int:
        """Add the partitions the specs hold, as ``add_partitions`` does; how many were
        added. The first spec names the table; every partition must belong to it."""
        if not new_parts:
            return 0
        db, table = new_parts[0].dbName, new_parts[0].tableName
        try:
            parts = partition_specs.partitions_of(new_parts)
        except partition_specs.UnusableSpec:
            raise internal_error("add_partitions_pspec") from None
        if self.catalog.tables.find(object_name(db), object_name(table)) is None:
            raise hms.InvalidObjectException(
                message="Unable to add partitions because database or table "
                f"{java_text(db)}.{java_text(table)} does not exist"
            )
        _check_members(parts, db, table)
        return self.add_partitions(parts) if parts else 0

    @thrift(
        rule=auth.add_parts(auth.PARTS),
        storage=st.APPEND_PARTITION,
        locations=loc.APPEND_PARTITION,
    )
    def append_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        """Add the partition of these values to a table; the partition as stored."""
        part = hms.Partition(values=list(part_vals or []), dbName=db_name, tableName=tbl_name)
        try:
            return self.add_partition(part)
        except hms.AlreadyExistsException as exc:  # HMS words it without the blank here
            message = (exc.message or "").replace(": Partition(", ":Partition(", 1)
            raise hms.AlreadyExistsException(message=message) from None

    @thrift(
        rule=auth.add_parts(auth.PARTS),
        storage=st.APPEND_PARTITION,
        locations=loc.SERVER_PLACES,
    )
    def append_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        environment_context: hms.EnvironmentContext,
    ) -> hms.Partition:
        """``append_partition`` (the context changes nothing)."""
        return self.append_partition(db_name, tbl_name, part_vals)

    @thrift(
        rule=auth.add_parts(auth.PARTS),
        storage=st.APPEND_PARTITION_BY_NAME,
        locations=loc.SERVER_PLACES,
    )
    def append_partition_by_name(
        self, db_name: str, tbl_name: str, part_name: str
    ) -> hms.Partition:
        """``append_partition`` of a partition name; InvalidObjectException for a missing
        table or a name that lacks a key (HMS's words)."""
        try:
            ref = self.catalog.tables.get(self.database_in(None, db_name), object_name(tbl_name))
            values = self.catalog.partition_reads.values_from_name(ref, part_name)
        except hms.NoSuchObjectException as exc:
            raise hms.InvalidObjectException(message=exc.message) from exc
        return self.append_partition(db_name, tbl_name, values)

    @thrift(
        rule=auth.add_parts(auth.PARTS),
        storage=st.APPEND_PARTITION_BY_NAME,
        locations=loc.SERVER_PLACES,
    )
    def append_partition_by_name_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        environment_context: hms.EnvironmentContext,
    ) -> hms.Partition:
        """``append_partition_by_name`` (the context changes nothing)."""
        return self.append_partition_by_name(db_name, tbl_name, part_name)

    # -- drop --------------------------------------------------------------------------------

    @thrift(rule=auth.drop_parts(auth.PARTS), storage=st.DROP_PARTITION, locations=loc.NO_LOCATION)
    def drop_partition(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,  # noqa: N803
    ) -> bool:
        """Drop the partition of these values (its data with ``deleteData``, to the trash)."""
        return self.drop_partition_with_environment_context(
            db_name, tbl_name, part_vals, deleteData, None
        )

    @thrift(rule=auth.drop_parts(auth.PARTS), storage=st.DROP_PARTITION, locations=loc.NO_LOCATION)
    def drop_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext | None,
    ) -> bool:
        """``drop_partition``; ``ifPurge`` in the context skips the trash."""
        self.catalog.partitions.drop(
            self.database_in(None, db_name),
            object_name(tbl_name),
            part_vals,
            bool(deleteData),
            purge=purge_asked(environment_context),
        )
        return True

    @thrift(
        rule=auth.drop_parts(auth.PARTS),
        storage=st.DROP_PARTITION_BY_NAME,
        locations=loc.NO_LOCATION,
    )
    def drop_partition_by_name(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,  # noqa: N803
    ) -> bool:
        """``drop_partition`` of a partition name."""
        return self.drop_partition_by_name_with_environment_context(
            db_name, tbl_name, part_name, deleteData, None
        )

    @thrift(
        rule=auth.drop_parts(auth.PARTS),
        storage=st.DROP_PARTITION_BY_NAME,
        locations=loc.NO_LOCATION,
    )
    def drop_partition_by_name_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext | None,
    ) -> bool:
        """``drop_partition_with_environment_context`` of a partition name."""
        ref = self.catalog.tables.get(self.database_in(None, db_name), object_name(tbl_name))
        values = self.catalog.partition_reads.values_from_name(ref, part_name)
        return self.drop_partition_with_environment_context(
            db_name, tbl_name, values, deleteData, environment_context
        )

    @thrift(
        rule=auth.drop_parts(auth.REQ),
        storage=st.DROP_PARTITIONS_REQ,
        locations=loc.NO_LOCATION,
    )
    def drop_partitions_req(self, req: hms.DropPartitionsRequest) -> hms.DropPartitionsResult:
        """Drop partitions by name, all or none (missing ones skipped with ``ifExists``, the
        default); expressions are refused (MetaException)."""
        if req is None or req.parts is None:
            raise hms.MetaException(message="DropPartitionsRequest must name partitions")
        if req.parts.names is None:
            raise hms.MetaException(
                message="Dropping partitions by expression is not supported; send partition names"
            )
        if_exists = req.ifExists is None or req.ifExists
        dropped = self.catalog.partitions.drop_by_names(
            self.database_in(catalog_field(req), req.dbName),
            object_name(req.tblName),
            req.parts.names,
            bool(req.deleteData),
            if_exists,
            purge=purge_asked(req.environmentContext),
        )
        need_result = req.needResult is None or req.needResult
        return hms.DropPartitionsResult(partitions=dropped if need_result else None)

    # -- alter, rename, exchange -------------------------------------------------------------

    @thrift(
        rule=auth.alter_parts(auth.PARTS),
        storage=st.ALTER_PARTITION,
        locations=loc.ALTER_PARTITION,
    )
    def alter_partition(self, db_name: str, tbl_name: str, new_part: hms.Partition) -> None:
        """Change a partition (found by its values)."""
        self.catalog.partitions.alter(
            self.database_in(None, db_name), object_name(tbl_name), [new_part]
        )

    @thrift(
        rule=auth.alter_parts(auth.PARTS),
        storage=st.ALTER_PARTITIONS,
        locations=loc.ALTER_PARTITIONS,
    )
    def alter_partitions(self, db_name: str, tbl_name: str, new_parts: list[hms.Partition]) -> None:
        """Change partitions, all or none."""
        self.catalog.partitions.alter(
            self.database_in(None, db_name), object_name(tbl_name), new_parts, batch=True
        )

    @thrift(
        rule=auth.alter_parts(auth.PARTS),
        storage=st.ALTER_PARTITION,
        locations=loc.ALTER_PARTITION,
    )
    def alter_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        new_part: hms.Partition,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        """``alter_partition``; ``DO_NOT_UPDATE_STATS`` in the context keeps the partition's
        basic statistics as sent, ``STATS_GENERATED`` marks them accurate."""
        self.catalog.partitions.alter(
            self.database_in(None, db_name), object_name(tbl_name), [new_part],
            context=context_properties(environment_context),
        )  # fmt: skip

    @thrift(
        rule=auth.alter_parts(auth.PARTS),
        storage=st.ALTER_PARTITIONS,
        locations=loc.ALTER_PARTITIONS,
    )
    def alter_partitions_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        new_parts: list[hms.Partition],
        environment_context: hms.EnvironmentContext,
    ) -> None:
        """``alter_partitions``; the context as ``alter_partition_with_environment_context``
        reads it."""
        self.catalog.partitions.alter(
            self.database_in(None, db_name), object_name(tbl_name), new_parts,
            context=context_properties(environment_context), batch=True,
        )  # fmt: skip

    @thrift(
        rule=auth.on_tables("ALTERTABLE_RENAMEPART", auth.OWN, auth.PARTS),
        storage=st.RENAME_PARTITION,
        locations=loc.RENAME_PARTITION,
    )
    def rename_partition(
        self, db_name: str, tbl_name: str, part_vals: list[str], new_part: hms.Partition
    ) -> None:
        """Give the partition of ``part_vals`` the values of ``new_part``."""
        self.catalog.partitions.rename(
            self.database_in(None, db_name), object_name(tbl_name), part_vals, new_part
        )

    @thrift(rule=auth.exchange(), storage=st.EXCHANGE_PARTITION, locations=loc.EXCHANGED)
    def exchange_partition(
        self,
        partitionSpecs: dict[str, str],  # noqa: N803
        source_db: str,
        source_table_name: str,
        dest_db: str,
        dest_table_name: str,
    ) -> hms.Partition:
        """``exchange_partitions``, answering the first partition moved (as HMS)."""
        moved = self.exchange_partitions(
            partitionSpecs, source_db, source_table_name, dest_db, dest_table_name
        )
        return moved[0]

    @thrift(rule=auth.exchange(), storage=st.EXCHANGE_PARTITION, locations=loc.EXCHANGED)
    def exchange_partitions(
        self,
        partitionSpecs: dict[str, str],  # noqa: N803 (IDL names)
        source_db: str,
        source_table_name: str,
        dest_db: str,
        dest_table_name: str,
    ) -> Sequence[hms.Partition]:
        """Move the partitions under a spec of leading keys to a table of the same shape."""
        return exchange.exchange(
            self.catalog, partitionSpecs, source_db, source_table_name, dest_db, dest_table_name
        )
