"""Partitions: add, get, list, filter, alter, rename, drop, with HMS's rules and messages.

Partitions of a table are one contiguous, typed-ordered key range (``storage.layout``); every
listing is a scan of that range, narrowed to a prefix when leading values are known.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from metastore_server import audit
from metastore_server.catalog.basics import names
from metastore_server.catalog.basics.encoded import EncodedPartitions
from metastore_server.catalog.basics.java_text import java_items, java_list, thrift_struct_text
from metastore_server.catalog.basics.serde import (
    from_bytes,
    partition_location,
    shallow_copy,
    stored_partition_bytes,
)
from metastore_server.catalog.core.claims import Claims, TooSlowToClaim
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.data.operations import Deletion, Guard, Refusal
from metastore_server.catalog.dependencies.model import (
    DEPENDS_ON_KEY,
    Dependency,
    DependentSpec,
    TableName,
    check_columns,
    dependency_for,
)
from metastore_server.catalog.dependencies.store import Dependencies
from metastore_server.catalog.dependencies.table_rules import dependent_spec, mark_dependent
from metastore_server.catalog.events import messages as event_messages
from metastore_server.catalog.objects import statistics
from metastore_server.catalog.objects.tables import (
    DDL_TIME,
    TableRef,
    Tables,
    column_types,
    fill_storage_defaults,
    must_purge,
    owns_data,
    unable_to_create,
)
from metastore_server.catalog.reads.explain import explain_plan
from metastore_server.catalog.reads.expr import expression_text, msck_partition_names
from metastore_server.catalog.reads.scan import (
    KEY_ID_LENGTH,
    NAME_COLUMNS,
    KeyRange,
    matching_columns,
    name_bytes_of,
    plan_ranges,
    prefix,
    values_of,
    whole_table,
)
from metastore_server.catalog.reads.whole_listing import filtered, named_rows, whole_listing
from metastore_server.catalog.security import privileges as security
from metastore_server.catalog.timelines.keeper import TimelineKeeper
from metastore_server.thrift_api import hms
from planner.errors import FilterError
from planner.explain import summary
from planner.grammar import parse_filter
from planner.plan import MultiScanPlan, plan_filter
from planner.types import KeyKind
from storage import layout
from storage.codec import has_spelling
from storage.port import Condition, Delete, PartialWriteError, Put

Predicate = Callable[[Sequence[str]], bool]
#: How often an add is tried when other server processes create its partitions meanwhile.
ADD_ATTEMPTS = 10
#: Longest wait for the adding claim of a table another server process holds (HBase).
ADD_CLAIM_WAIT_S = 10.0


class _LostRace(Exception):
    """A partition an add found absent was created before the add's write landed."""


#: A stored partition holding these bytes may record a dependency (a cheap first test).
_DEPENDENCY_MARK = DEPENDS_ON_KEY.encode("utf-8")


def _owns_data(partition: hms.Partition) -> bool:
    """Whether dropping a partition may delete its directory: not a dependent partition's,
    whose data is its base's."""
    return DEPENDS_ON_KEY not in (partition.parameters or {})


def _limit(max_parts: int | None) -> int | None:
    """HMS max_parts: a negative number means no limit."""
    if max_parts is None or max_parts < 0:
        return None
    return max_parts


@dataclass(frozen=True)
class _EarlyAdd:
    """What ``Partitions._early`` made for an add, and the table row it was made from."""

    table_id: int
    object_bytes: bytes | None
    keyed: list[tuple[list[str], bytes] | Exception]
    ready: list[tuple[hms.Partition, dict[bytes, bytes]] | None]

    def made_for(self, ref: TableRef) -> bool:
        """Whether ``ref`` is the table as it was read for this (same id, same definition)."""
        return (
            self.object_bytes is not None
            and ref.table_id == self.table_id
            and ref.object_bytes == self.object_bytes
        )


class Partitions:
    """Partition rows on the store."""

    def __init__(
        self,
        ctx: CatalogContext,
        tables: Tables,
        timelines: TimelineKeeper,
        dependencies: Dependencies,
    ) -> None:
        self._ctx = ctx
        self._tables = tables
        #: Every partition write goes through ``timelines.change`` (opted-in tables' timelines).
        self._timelines = timelines
        #: Every partition drop (and rename) asks ``dependencies`` first (dependents' policies).
        self._dependencies = dependencies
        #: New partitions on stores without atomic batches are claimed before they are written.
        self._claims = Claims(ctx)

    # -- helpers -----------------------------------------------------------------------------

    def _values(self, ref: TableRef, values: Sequence[str] | None) -> list[str]:
        values = list(values or [])
        if len(values) != len(ref.key_names):
            raise hms.MetaException(
                message=(
                    "Invalid partition key & values; "
                    f"keys [{java_items(ref.key_names)}], values [{java_items(values)}]"
                )
            )
        return values

    def _key(self, ref: TableRef, values: Sequence[str]) -> bytes:
        return layout.partition_key(ref.table_id, ref.kinds, values)

    def _decode(self, ref: TableRef, data: bytes) -> hms.Partition:
        partition = from_bytes(hms.Partition, data)
        partition.dbName, partition.tableName = ref.db, ref.name
        return partition

    def _name(self, ref: TableRef, values: Sequence[str]) -> str:
        return names.make_partition_name(ref.key_names, values)

    def _mark_spellings_for(self, ref: TableRef, ops: Sequence[Put | Delete]) -> None:
        """Mark the table before partitions holding non-canonical typed spellings are written
        (readers that find no mark rely on there being none)."""
        if not ref.has_spellings and any(
            isinstance(op, Put)
            and op.table == layout.PARTITIONS
            and has_spelling(ref.kinds, op.key[KEY_ID_LENGTH:])
            for op in ops
        ):
            self._tables.mark_spellings(ref)

    def _write_absent(self, ref: TableRef, puts: list[Put | Delete], action: str) -> bool:
        """Write new partition rows, each only if it is still absent; False (nothing written)
        when another server process created one of them (MetaException when other processes
        held the table's adding claim too long).

        A store with atomic batches checks every row in the one transaction. Without them
        (HBase), the table's adding claim is taken first (``claims``: one compare-and-set for
        the batch; adders of one table take turns, waiting up to ``ADD_CLAIM_WAIT_S``), the rows
        are checked absent in one read, then written whole, one atomic row put each, in
        batches. A storage failure part-way is named as ``_write`` names it."""
        if self._ctx.store.atomic_batches:
            absent = [Condition(layout.PARTITIONS, op.key, layout.OBJECT, None) for op in puts]
            return self._write(ref, puts, action, absent)
        keys = [op.key for op in puts]
        # One claim for the whole batch: the table's (every adder of it takes turns).
        claimed = self._adding_claim(ref, action)
        try:
            if self._ctx.store.get_many(layout.PARTITIONS, keys):
                return False  # created by another process since this call looked
            return self._write(ref, puts, action)
        finally:
            self._claims.release(claimed)

    def _adding_claim(self, ref: TableRef, action: str) -> list[bytes]:
        """Take the table's adding claim, waiting up to ``ADD_CLAIM_WAIT_S`` while other server
        processes hold it; MetaException when they hold it longer."""
        try:
            claimed = self._claims.take_waiting([layout.adding_key(ref.table_id)], ADD_CLAIM_WAIT_S)
        except TooSlowToClaim as exc:
            raise hms.MetaException(message=f"{action} of {ref.db}.{ref.name}: {exc}") from None
        if claimed is None:
            raise hms.MetaException(
                message=f"{action} of {ref.db}.{ref.name}: other server processes kept adding "
                f"partitions to the table for over {ADD_CLAIM_WAIT_S:g} s; try again"
            )
        return claimed

    def _hold_adding_claim(self, ref: TableRef, action: str) -> None:
        """On a store without atomic batches, hold the table's adding claim (as an add takes
        it) until this thread's outermost write lock lets go: a row this change creates is
        then created exactly once across server processes. MetaException when other
        processes hold it longer than ``ADD_CLAIM_WAIT_S``."""
        if self._ctx.store.atomic_batches:
            return
        claimed = self._adding_claim(ref, action)

        def release() -> None:
            self._claims.release(claimed)

        self._ctx.write_lock.after_commit(release, undo=release)

    def _write(
        self,
        ref: TableRef,
        ops: list[Put | Delete],
        action: str,
        conditions: list[Condition] | None = None,
    ) -> bool:
        """Apply partition changes if ``conditions`` hold (False when one does not); when a
        store without atomic batches fails part-way, a MetaException says exactly which
        partitions were changed and which were not."""
        self._mark_spellings_for(ref, ops)
        try:
            return self._ctx.store.mutate(ops, conditions or None)
        except PartialWriteError as exc:
            landed = [self._name(ref, values_of(ref, key)) for _, key in exc.applied]
            missed = [self._name(ref, values_of(ref, key)) for _, key in exc.failed]
            raise hms.MetaException(
                message=(
                    f"{action} of {ref.db}.{ref.name} failed part-way ({exc.__cause__ or exc}): "
                    f"{len(landed)} of {len(landed) + len(missed)} done: "
                    f"[{', '.join(landed)}]; not done: [{', '.join(missed)}]"
                )
            ) from exc

    def _columns(
        self, ref: TableRef, partition: hms.Partition, values: Sequence[str]
    ) -> dict[bytes, bytes]:
        """The columns of a partition row."""
        return layout.partition_columns(
            stored_partition_bytes(partition), self._name(ref, values), ref.kinds, values
        )

    def filter_ranges(
        self, ref: TableRef, filter_text: str | None, *, like: str = "regex"
    ) -> list[KeyRange]:
        """The key ranges (with residuals) holding the partitions a filter selects."""
        return plan_ranges(ref, self.filter_plan(ref, filter_text, like=like), like=like)

    def filter_plan(
        self, ref: TableRef, filter_text: str | None, *, like: str = "regex"
    ) -> MultiScanPlan:
        """The scan plan of a filter on a table; MetaException for a filter HMS refuses."""
        try:
            plan = plan_filter(parse_filter(filter_text or ""), ref.key_types, like=like)
        except FilterError as exc:
            raise hms.MetaException(message=str(exc)) from exc
        audit.note(plan=summary(plan))
        return plan

    def explain(
        self, db: str, table: str, filter_text: str | None, analyze: bool = False
    ) -> hms.ExplainFilterResult:
        """EXPLAIN (ANALYZE) of a filter on a table."""
        ref = self._tables.get(db, table)
        return explain_plan(
            self._ctx.store, ref, self.filter_plan(ref, filter_text), analyze=analyze
        )

    def _spec_ranges(self, ref: TableRef, part_vals: Sequence[str] | None) -> list[KeyRange]:
        """The key range of a partial spec (leading values), with a test of the other values."""
        leading, residual = self._partial_spec(ref, part_vals)
        return [prefix(ref, leading, residual)]

    def _partial_spec(
        self, ref: TableRef, part_vals: Sequence[str] | None
    ) -> tuple[list[str], Predicate | None]:
        """Leading fixed values and a predicate for the other fixed ones of a partial spec."""
        part_vals = list(part_vals or [])
        if len(part_vals) > len(ref.key_names):
            raise hms.MetaException(
                message=(
                    f"Incorrect number of partition values. numPartKeys={len(ref.key_names)}, "
                    f"part_val={len(part_vals)}"
                )
            )
        prefix: list[str] = []
        for value in part_vals:
            if not value:
                break
            prefix.append(value)
        # The prefix holds every spelling of a leading int or date value; specs match exactly.
        fixed = [
            (i, v)
            for i, v in enumerate(part_vals)
            if v and (i >= len(prefix) or ref.kinds[i] is not KeyKind.STRING)
        ]
        if not fixed:
            return prefix, None

        def predicate(values: Sequence[str]) -> bool:
            return all(values[i] == v for i, v in fixed)

        return prefix, predicate

    # -- reads -------------------------------------------------------------------------------

    def get(self, db: str, table: str, values: Sequence[str] | None) -> hms.Partition:
        """One partition by its values; NoSuchObjectException when missing."""
        ref = self._tables.get(db, table)
        values = self._values(ref, values)
        row = self._ctx.store.get(layout.PARTITIONS, self._key(ref, values))
        if row is None:
            raise hms.NoSuchObjectException(message=f"partition values={java_list(values)}")
        return self._decode(ref, row[layout.OBJECT])

    def get_by_name(self, db: str, table: str, name: str) -> hms.Partition:
        """One partition by its name ``k=v/...``."""
        ref = self._tables.get(db, table)
        values = self.values_from_name(ref, name)
        row = self._ctx.store.get(layout.PARTITIONS, self._key(ref, values))
        if row is None:
            raise hms.NoSuchObjectException(message=f"partition values={java_list(values)}")
        return self._decode(ref, row[layout.OBJECT])

    def get_by_names(
        self, db: str, table: str, part_names: Sequence[str] | None
    ) -> EncodedPartitions:
        """The partitions that exist among ``part_names``, sorted by name (unknown names and
        names that lack a key are skipped)."""
        ref = self._tables.get(db, table)
        return self._listing(ref, self._name_ranges(ref, part_names), -1)

    def by_expr(
        self, db: str, table: str, expr: bytes | str | None, max_parts: int | None = -1
    ) -> tuple[EncodedPartitions, bool]:
        """Partitions for a get_partitions_by_expr expression, and whether the answer may hold
        partitions that do not match (an expression we cannot read: then every partition)."""
        ref = self._tables.get(db, table)
        ranges, unknown = self._expr_ranges(ref, expr)
        return self._listing(ref, ranges, max_parts), unknown

    def names_by_expr(
        self, db: str, table: str, expr: bytes | str | None, max_parts: int | None = -1
    ) -> list[str]:
        """Partition names for an expression (every name when it cannot be read)."""
        ref = self._tables.get(db, table)
        ranges, _unknown = self._expr_ranges(ref, expr)
        return self._names(ref, ranges, max_parts)

    def _expr_ranges(self, ref: TableRef, expr: bytes | str | None) -> tuple[list[KeyRange], bool]:
        text = expression_text(expr)
        if text is None:
            return whole_table(ref), True
        listed = msck_partition_names(text, ref.key_names)
        if listed is not None:
            return self._name_ranges(ref, listed), False
        try:
            plan = plan_filter(parse_filter(text), ref.key_types, like="sql")
        except FilterError:
            return whole_table(ref), True
        return plan_ranges(ref, plan, like="sql"), False

    def _name_ranges(self, ref: TableRef, part_names: Sequence[str] | None) -> list[KeyRange]:
        """Point ranges of the partitions named, in key order, each once."""
        keys = set()
        for name in part_names or []:
            try:
                keys.add(self._key(ref, self.values_from_name(ref, name)))
            except hms.NoSuchObjectException:
                continue
        return [KeyRange(key, key + b"\x00", None, key) for key in sorted(keys)]

    def values_from_name(self, ref: TableRef, name: str) -> list[str]:
        """Partition values of a name (keys in any order), in the table's key order.

        NoSuchObjectException naming the first key the name lacks, as HMS does.
        """
        spec = dict(names.parse_partition_name(name))
        values = []
        for key in ref.key_names:
            if key not in spec:
                raise hms.NoSuchObjectException(
                    message=f"incomplete partition name - missing {key}"
                )
            values.append(spec[key])
        return values

    def list_all(self, db: str, table: str, max_parts: int | None = -1) -> EncodedPartitions:
        """All partitions (up to max_parts), sorted by name as HMS returns them."""
        ref = self._tables.get(db, table)
        limit = _limit(max_parts)
        cap = self._ctx.partition_request_limit
        # Under a request limit, a listing is only built by the path that fails fast.
        may_build = cap is None or cap < 0 or (limit is not None and limit <= cap)
        listing = whole_listing(self._ctx, ref, build=may_build)
        if listing is None:
            return self._listing(ref, whole_table(ref), max_parts)
        self._check_request_limit(ref, len(listing.blobs), limit)
        blobs = listing.blobs if limit is None else listing.blobs[:limit]
        return EncodedPartitions(ref.db, ref.name, blobs)

    def list_names(self, db: str, table: str, max_parts: int | None = -1) -> list[str]:
        """All partition names, sorted by name as HMS does (up to max_parts)."""
        ref = self._tables.get(db, table)
        # A cached listing answers; none is built for names alone (reading them is cheap).
        listing = whole_listing(self._ctx, ref, build=False)
        if listing is None:
            return self._names(ref, whole_table(ref), max_parts)
        limit = _limit(max_parts)
        found = listing.names if limit is None else listing.names[:limit]
        return [name.decode("utf-8") for name in found]

    def _check_request_limit(self, ref: TableRef, count: int, limit: int | None) -> None:
        """MetaException (HMS's words) when a request would return more partitions than
        ``partition_request_limit`` allows."""
        cap = self._ctx.partition_request_limit
        if cap is not None and cap >= 0 and (limit is None or limit > cap) and count > cap:
            raise hms.MetaException(
                message=(
                    f"Number of partitions scanned (={count}) on table '{ref.name}' "
                    f"exceeds limit (={cap}). This is controlled on the metastore server by "
                    "hive.metastore.limit.partition.request."
                )
            )

    def list_ps(
        self, db: str, table: str, part_vals: Sequence[str] | None, max_parts: int | None = -1
    ) -> EncodedPartitions:
        """Partitions matching a partial spec (empty values are wildcards)."""
        ref = self._tables.get(db, table)
        if not part_vals:
            raise hms.MetaException(message="Invalid partition key & values; keys [], values []")
        return self._listing(ref, self._spec_ranges(ref, part_vals), max_parts)

    def list_names_ps(
        self, db: str, table: str, part_vals: Sequence[str] | None, max_parts: int | None = -1
    ) -> list[str]:
        """Names of the partitions matching a partial spec, sorted by name."""
        ref = self._tables.get(db, table)
        return self._names(ref, self._spec_ranges(ref, part_vals), max_parts)

    def by_filter(
        self, db: str, table: str, filter_text: str | None, max_parts: int | None = -1
    ) -> EncodedPartitions:
        """Partitions matching an HMS filter string, sorted by name."""
        ref = self._tables.get(db, table)
        ranges = self.filter_ranges(ref, filter_text)
        found = filtered(self._ctx, ref, ranges)
        if found is None:
            return self._listing(ref, ranges, max_parts)
        listing, positions = found
        limit = _limit(max_parts)
        self._check_request_limit(ref, len(positions), limit)
        blobs = listing.blobs
        return EncodedPartitions(ref.db, ref.name, [blobs[i] for i in positions[:limit]])

    def names_by_filter(
        self, db: str, table: str, filter_text: str | None, max_parts: int | None = -1
    ) -> list[str]:
        """Names of the partitions matching a filter, sorted by name."""
        ref = self._tables.get(db, table)
        ranges = self.filter_ranges(ref, filter_text)
        found = filtered(self._ctx, ref, ranges)
        if found is None:
            return self._names(ref, ranges, max_parts)
        listing, positions = found
        names = listing.names
        return [names[i].decode("utf-8") for i in positions[: _limit(max_parts)]]

    def count_by_filter(self, db: str, table: str, filter_text: str | None) -> int:
        """How many partitions match a filter (no partition is decoded)."""
        ref = self._tables.find(db, table)
        if ref is None:
            raise hms.NoSuchObjectException(
                message=f"Specified database/table does not exist : {db}.{table}"
            )
        ranges = self.filter_ranges(ref, filter_text)
        found = filtered(self._ctx, ref, ranges)
        if found is not None:
            return len(found[1])
        return len(matching_columns(self._ctx.store, ref, ranges, NAME_COLUMNS, keys=False)[0])

    def _listing(
        self, ref: TableRef, ranges: list[KeyRange], max_parts: int | None
    ) -> EncodedPartitions:
        """The stored partitions in ``ranges``, sorted by name, up to max_parts.

        Fails before anything is sorted or sent when more partitions match than one request
        may return (``partition_request_limit``, HMS's hive.metastore.limit.partition.request).
        """
        limit = _limit(max_parts)
        named = named_rows(self._ctx, ref, ranges)
        self._check_request_limit(ref, len(named), limit)
        # UTF-8 byte order is code point order: sorting the names' bytes sorts the names.
        named.sort()
        if limit is not None:
            named = named[:limit]
        return EncodedPartitions(ref.db, ref.name, [row[1] for row in named])

    def _names(self, ref: TableRef, ranges: list[KeyRange], max_parts: int | None) -> list[str]:
        """Names of the partitions in ``ranges``, sorted, up to max_parts."""
        rows, _ = matching_columns(self._ctx.store, ref, ranges, NAME_COLUMNS, keys=False)
        found = sorted(
            name if name is not None else name_bytes_of(ref, key, {}) for name, key in rows
        )
        limit = _limit(max_parts)
        found = found if limit is None else found[:limit]
        return [name.decode("utf-8") for name in found]

    # -- writes ------------------------------------------------------------------------------

    def add(
        self,
        db: str,
        table: str,
        parts: Sequence[hms.Partition] | None,
        if_not_exists: bool = False,
        missing_table_message: str = (
            "Unable to add partition because table or database do not exist"
        ),
    ) -> list[hms.Partition]:
        """Add partitions, all or nothing; with ``if_not_exists`` existing ones are skipped.

        Returns the partitions added, as HMS answers them: with the location, times and
        parameters set, and the other storage fields as the client sent them.
        """
        for attempt in range(ADD_ATTEMPTS):
            if attempt:  # a random, growing pause: writers racing for the same rows drift apart
                time.sleep(random.uniform(0, min(1.0, 0.01 * 2**attempt)))
            try:
                return self._add_once(db, table, parts, if_not_exists, missing_table_message)
            except _LostRace:
                continue  # another server process created (or is creating) one: look again
        raise hms.MetaException(
            message=(
                f"Adding partitions to {db}.{table}: other server processes kept adding the same "
                f"partitions ({ADD_ATTEMPTS} attempts; a partition claimed by a server that "
                "died is free again after --writer-lease seconds)"
            )
        )

    def _add_once(
        self,
        db: str,
        table: str,
        parts: Sequence[hms.Partition] | None,
        if_not_exists: bool,
        missing_table_message: str,
    ) -> list[hms.Partition]:
        """One attempt of ``add``: ``_LostRace`` when a partition it found absent was created
        (by another server process) before its write."""
        parts = list(parts or [])
        now = self._ctx.now()
        # What depends only on the table and the request is made before the write lock is
        # taken, so that server processes adding at once overlap in it; it is used under the
        # lock only if the table is still the one it was made for.
        early = self._early(db, table, parts, now)
        with self._ctx.write_lock:
            ref = self._tables.find(db, table)
            if ref is None:
                raise hms.InvalidObjectException(message=missing_table_message)
            if early is not None and not early.made_for(ref):
                early = None
            spec = dependent_spec(ref.table)
            seen: set[bytes] = set()
            on_base: set[bytes] = set()
            other_bases: set[TableName] = set()
            bases: set[TableName] = set()  # every base the new partitions depend on
            to_store: list[tuple[bytes, list[str], hms.Partition]] = []
            stored_columns: dict[bytes, dict[bytes, bytes]] = {}
            keyed = early.keyed if early is not None else self._keyed(ref, parts)
            present = {key for key, _ in self._ctx.store.get_many(
                layout.PARTITIONS, [k[1] for k in keyed if not isinstance(k, Exception)])}
            for index, (part, found) in enumerate(zip(parts, keyed, strict=True)):
                if part is None:
                    raise hms.MetaException(message="Partition cannot be null.")
                part_db = names.normalize(part.dbName) or db
                part_table = names.normalize(part.tableName) or table
                if (part_db, part_table) != (db, table):
                    raise hms.MetaException(
                        message=(
                            f"Partition does not belong to target table {db}.{table}: "
                            f"{thrift_struct_text(part)}"
                        )
                    )
                if isinstance(found, Exception):
                    raise found
                values, key = found
                if key in present:
                    if if_not_exists:
                        continue
                    raise hms.AlreadyExistsException(
                        message=f"Partition already exists: {thrift_struct_text(part)}"
                    )
                ready = early.ready[index] if early is not None else None
                if ready is not None:
                    answer, stored_columns[key] = ready
                else:
                    answer = self._prepare(ref, part, values, now)
                if spec is not None or DEPENDS_ON_KEY in answer.parameters:
                    dependency, on_base_location = self._depend(ref, spec, part, values, answer)
                    if on_base_location:
                        on_base.add(key)
                    bases.add(dependency.base)
                    if spec is None or dependency.base != spec.base:
                        other_bases.add(dependency.base)
                if key in seen:
                    raise hms.MetaException(
                        message="java.io.IOException: Duplicate partitions in the list: "
                        f"{thrift_struct_text(answer)}"
                    )
                seen.add(key)
                to_store.append((key, values, answer))
            ops = []
            for key, values, answer in to_store:
                columns = stored_columns.get(key)
                if columns is None:
                    columns = self._stored_columns(ref, answer, values)
                ops.append(Put(layout.PARTITIONS, key, columns))
            if ops:
                added = [(values, answer.parameters) for _, values, answer in to_store]
                # Directories first (HMS): one that cannot be made refuses the whole call.
                made = self._ctx.data.make_dirs(
                    (
                        stored.sd.location if stored.sd else None
                        for key, _, stored in to_store
                        if key not in on_base  # a dependent partition's data is its base's
                    ),
                    unable_to_create,
                )
                try:
                    # Held until the rows and their event are written: a base partition's
                    # drop in another server process then sees them, or goes first.
                    self._dependencies.guard.hold(bases)
                    for base in other_bases:  # before the rows: a mark may be stale
                        mark_dependent(self._ctx.store, base, TableName(ref.db, ref.name))
                    # Created exactly once even with other server processes on the store:
                    # each row must still be absent when its write lands.
                    with self._timelines.change(ref, added=added):
                        if not self._write_absent(ref, ops, "Adding partitions"):
                            raise _LostRace
                except BaseException:
                    self._ctx.data.undo(made)
                    raise
                if self._ctx.events.enabled:
                    self._ctx.events.record(event_messages.added_partitions(
                        ref.table, (op.columns[layout.OBJECT] for op in ops)))  # fmt: skip
        return [p for _, _, p in to_store]

    def _stored_columns(
        self, ref: TableRef, answer: hms.Partition, values: Sequence[str]
    ) -> dict[bytes, bytes]:
        """The row columns of a partition about to be added (``answer`` is left as it is)."""
        stored = shallow_copy(answer)  # the answer keeps what the client sent
        stored.sd = shallow_copy(answer.sd) if answer.sd is not None else None
        fill_storage_defaults(stored.sd)
        return self._columns(ref, stored, values)

    def _early(
        self, db: str, table: str, parts: Sequence[hms.Partition | None], now: int
    ) -> _EarlyAdd | None:
        """An add's work that needs no lock: each partition's values and key, and for a plain
        partition of a table that depends on none its answer and row columns (None where it
        is left to be done under the lock, in order, with the errors). None when the table is
        missing or dependent."""
        ref = self._tables.find(db, table)
        if ref is None or dependent_spec(ref.table) is not None:
            return None
        keyed = self._keyed(ref, parts)
        ready: list[tuple[hms.Partition, dict[bytes, bytes]] | None] = []
        for part, found in zip(parts, keyed, strict=True):
            entry = None
            if part is not None and not isinstance(found, Exception):
                try:
                    answer = self._prepare(ref, part, found[0], now)
                    if DEPENDS_ON_KEY not in answer.parameters:
                        entry = (answer, self._stored_columns(ref, answer, found[0]))
                except Exception:  # noqa: BLE001 - done again under the lock, raised there
                    entry = None
            ready.append(entry)
        return _EarlyAdd(ref.table_id, ref.object_bytes, keyed, ready)

    def _depend(
        self,
        ref: TableRef,
        spec: DependentSpec | None,
        part: hms.Partition,
        values: list[str],
        answer: hms.Partition,
    ) -> tuple[Dependency, bool]:
        """Record a new partition of a dependent table's dependency (on the table's current
        base unless the client named one) in ``answer``; without a location from the client,
        point it at the base's prefix location. Spark and Hive send the dependent table's own
        default location (``<table>/ds=1``) when the statement names none: that counts as no
        location. Returns the dependency, and whether the location is the base's (no directory
        is made then)."""
        given = answer.parameters.get(DEPENDS_ON_KEY)
        dependency, base = self._dependency(ref, given, values, spec, hms.InvalidObjectException)
        answer.parameters[DEPENDS_ON_KEY] = dependency.to_text()
        location = part.sd.location if part.sd is not None else None
        own_default = (
            self._ctx.warehouse.child_location(ref.location, self._name(ref, values))
            if ref.location
            else None
        )
        if (location and location.rstrip("/") != own_default) or not base.location:
            return dependency, False
        answer.sd.location = self._ctx.warehouse.child_location(
            base.location, dependency.partition_name()
        )
        return dependency, True

    def _dependency(
        self,
        ref: TableRef,
        given: str | None,
        values: Sequence[str],
        spec: DependentSpec | None,
        error: type[Exception],
    ) -> tuple[Dependency, TableRef]:
        """The dependency a dependent partition records (``given`` by the client, else on the
        table's current base), checked: readable, on an existing base, on its keys. ``error``
        (``dependent table db.t: ...``) otherwise."""
        where = f"dependent table {ref.db}.{ref.name}"
        try:
            if given is not None:
                dependency = Dependency.parse(given)
            elif spec is not None:
                dependency = dependency_for(values, ref.key_names, spec.base)
            else:
                raise ValueError("the table declares no base")
        except ValueError as exc:
            raise error(message=f"{where}: {exc}") from None
        base = self._tables.find(dependency.base_db, dependency.base_table)
        if base is None:
            raise error(message=f"{where}: base table {dependency.base} does not exist")
        if (base.db, base.name) == (ref.db, ref.name):
            raise error(message=f"{where}: a partition cannot depend on its own table")
        unknown = [k for k, _ in dependency.spec if k not in base.key_names]
        if unknown:
            raise error(
                message=(
                    f"{where}: {dependency} names {unknown[0]!r}, which is not a partition key "
                    f"of {dependency.base} ({', '.join(base.key_names)})"
                )
            )
        spec_keys = [k for k, _ in dependency.spec]
        if spec_keys != base.key_names[: len(spec_keys)]:
            leading = ", ".join(base.key_names[: len(spec_keys)])
            raise error(
                message=(
                    f"{where}: {dependency} must fix leading partition keys of "
                    f"{dependency.base} ({leading}), in order"
                )
            )
        try:
            check_columns(column_types(ref.table), column_types(base.table))
        except ValueError as exc:
            raise error(message=f"{where}: cannot depend on {dependency.base}: {exc}") from None
        return dependency, base

    def _keyed(
        self, ref: TableRef, parts: Sequence[hms.Partition | None]
    ) -> list[tuple[list[str], bytes] | Exception]:
        """Each partition's values and row key, or the error its values give (raised in
        order by the caller), so that the rows present are looked up in one read."""
        keyed: list[tuple[list[str], bytes] | Exception] = []
        for part in parts:
            try:
                values = self._values(ref, part.values if part is not None else None)
                keyed.append((values, self._key(ref, values)))
            except Exception as exc:  # raised by the caller, in the partitions' order
                keyed.append(exc)
        return keyed

    def _prepare(
        self, ref: TableRef, part: hms.Partition, values: list[str], now: int
    ) -> hms.Partition:
        # Shallow copies: only fields of the partition and of its sd are set below (and by
        # _depend and fill_storage_defaults); nested lists and maps are never changed in place.
        stored = shallow_copy(part)
        stored.dbName, stored.tableName, stored.catName = ref.db, ref.name, None
        stored.values = list(values)
        if stored.sd is None:
            stored.sd = copy.deepcopy(ref.table.sd) or hms.StorageDescriptor(cols=[], parameters={})
            stored.sd.location = None
        else:
            stored.sd = shallow_copy(stored.sd)
        if not stored.sd.location and ref.location:
            stored.sd.location = self._ctx.warehouse.child_location(
                ref.location, self._name(ref, values)
            )
        stored.createTime = stored.createTime or now
        stored.lastAccessTime = stored.lastAccessTime or 0
        params = dict(stored.parameters or {})
        params[DDL_TIME] = str(now)
        stored.parameters = params
        return stored

    def drop(
        self,
        db: str,
        table: str,
        values: Sequence[str] | None,
        delete_data: bool,
        purge: bool = False,
    ) -> hms.Partition:
        """Drop one partition; its directory goes too when asked and the table owns its data
        (then parents left empty go, up to the table's directory). ``purge``: not to the
        trash."""
        with self._ctx.write_lock:
            ref = self._tables.find(db, table)
            if ref is None:
                # HMS looks for the partition without checking the table first.
                raise hms.NoSuchObjectException(
                    message=f"partition values={java_list(list(values or []))}"
                )
            values = self._values(ref, values)
            key = self._key(ref, values)
            row = self._ctx.store.get(layout.PARTITIONS, key)
            if row is None:
                raise hms.NoSuchObjectException(message=f"partition values={java_list(values)}")
            partition = self._decode(ref, row[layout.OBJECT])
            self._dependencies.guard_partition_drop(ref, [values])
            deletions = self._plan_deletions(ref, [partition], delete_data, purge)
            still = Condition(layout.PARTITIONS, key, layout.OBJECT, row[layout.OBJECT])
            with self._timelines.change(ref, removed=[(values, partition.parameters)]):
                if not self._ctx.store.mutate([Delete(layout.PARTITIONS, key)], still):
                    # Another server process dropped or changed it meanwhile.
                    raise hms.NoSuchObjectException(
                        message=f"partition values={java_list(values)}"
                    )
            statistics.forget(self._ctx.store, ref.table_id, [self._name(ref, values)])
            security.forget_partition_grants(self._ctx.store, ref.table_id,
                                             [self._name(ref, values)])  # fmt: skip
            self._ctx.events.record(
                [event_messages.drop_partition(ref.table, [partition], self._ctx.now())]
            )
            self._ctx.data.reserve(deletions)
            self._ctx.delete_after_commit(deletions)
        return partition

    def drop_by_names(
        self,
        db: str,
        table: str,
        part_names: Sequence[str] | None,
        delete_data: bool,
        if_exists: bool = True,
        purge: bool = False,
    ) -> list[hms.Partition]:
        """Drop partitions by name, all or nothing when one is missing and not ``if_exists``;
        their directories as ``drop`` deletes them."""
        deletions: list[Deletion | None] = []
        with self._ctx.write_lock:
            ref = self._tables.get(db, table)
            found: list[tuple[bytes, hms.Partition]] = []
            for name in part_names or []:
                values = self.values_from_name(ref, name)
                key = self._key(ref, values)
                row = self._ctx.store.get(layout.PARTITIONS, key)
                if row is None:
                    if if_exists:
                        continue
                    raise hms.NoSuchObjectException(message="Some partitions to drop are missing")
                found.append((key, self._decode(ref, row[layout.OBJECT])))
            if found:
                deletes: list[Put | Delete] = [Delete(layout.PARTITIONS, k) for k, _ in found]
                removed = [(values_of(ref, k), p.parameters) for k, p in found]
                self._dependencies.guard_partition_drop(ref, [v for v, _ in removed])
                deletions = self._plan_deletions(ref, [p for _, p in found], delete_data, purge)
                with self._timelines.change(ref, removed=removed):
                    self._write(ref, deletes, "Dropping partitions")
                dropped_names = [self._name(ref, v) for v, _ in removed]
                statistics.forget(self._ctx.store, ref.table_id, dropped_names)
                security.forget_partition_grants(self._ctx.store, ref.table_id, dropped_names)
                now = self._ctx.now()
                self._ctx.events.record(
                    event_messages.drop_partition(ref.table, [p], now) for _, p in found
                )
                self._ctx.data.reserve(deletions)
                self._ctx.delete_after_commit(deletions)
        return [p for _, p in found]

    def _plan_deletions(
        self, ref: TableRef, partitions: Sequence[hms.Partition], delete_data: bool, purge: bool
    ) -> list[Deletion | None]:
        """The directories dropping ``partitions`` deletes, checked before anything changes
        (MetaException otherwise): none unless asked and the table owns its data; never a
        dependent partition's (its data is its base's), the table's directory or a database's
        or anything holding one; parents left empty go, up to the table's directory."""
        if not (delete_data and owns_data(ref)) or not self._ctx.data.enabled:
            return []
        guards = self._ctx.data.guards([ref.location, *self._tables.database_locations()])
        levels = max(len(ref.key_names) - 1, 0)

        def refuse(reason: str) -> Exception:
            return hms.MetaException(message=f"Table partition not deleted since {reason}")

        return [
            self._ctx.data.plan_delete(
                partition.sd.location,
                what=f"partition {self._name(ref, partition.values)} of {ref.db}.{ref.name}",
                purge=purge or must_purge(ref),
                refuse=refuse,
                guards=guards,
                parent_levels=levels,
                boundary=ref.location,
            )
            for partition in partitions
            if partition.sd is not None and partition.sd.location and _owns_data(partition)
        ]

    def drop_all(self, ref: TableRef) -> int:
        """Remove every partition row of a table (used when the table is dropped; its data
        is planned with ``plan_outside_deletions``)."""
        start, stop = layout.partition_range(ref.table_id)
        count = 0
        batch: list[Put | Delete] = []
        rows = self._ctx.store.scan(layout.PARTITIONS, start, stop, columns=[layout.OBJECT])
        for key, _row in rows:
            batch.append(Delete(layout.PARTITIONS, key))
            if len(batch) >= 1000:
                self._ctx.store.mutate(batch)
                count += len(batch)
                batch = []
        if batch:
            self._ctx.store.mutate(batch)
            count += len(batch)
        self._timelines.forget(ref.table_id)
        return count

    def relocation_ops(self, ref: TableRef, old_location: str, new_location: str) -> list[Put]:
        """Rows giving the partitions of ``ref`` that lie inside ``old_location`` the same
        place inside ``new_location`` (a managed table renamed with its directory)."""
        data = self._ctx.data
        old_place, new_place = data.find_place(old_location), data.find_place(new_location)
        if old_place is None or new_place is None:
            return []
        old_root = old_place.path.rstrip("/")
        new_root = new_place.path.rstrip("/")
        start, stop = layout.partition_range(ref.table_id)
        ops: list[Put] = []
        rows = self._ctx.store.scan(layout.PARTITIONS, start, stop, columns=[layout.OBJECT])
        for key, row in rows:
            partition = self._decode(ref, row[layout.OBJECT])
            place = data.find_place(partition.sd.location if partition.sd else None)
            if place is None or not (old_place.contains(place) or old_place.same_as(place)):
                continue
            partition.sd.location = new_place.uri_of(new_root + place.path[len(old_root) :])
            ops.append(
                Put(layout.PARTITIONS, key, {layout.OBJECT: stored_partition_bytes(partition)})
            )
        return ops

    def plan_outside_deletions(
        self, ref: TableRef, purge: bool, refuse: Refusal, guards: Sequence[Guard]
    ) -> list[Deletion | None]:
        """The directories of a dropped table's partitions that lie outside its directory
        (HMS deletes those one by one; the rest go with the table's), checked."""
        deletions: list[Deletion | None] = []
        for key, blob, location in self._outside(ref):
            if _DEPENDENCY_MARK in blob and not _owns_data(self._decode(ref, blob)):
                continue  # a dependent partition's data is its base's
            deletions.append(
                self._ctx.data.plan_delete(
                    location,
                    what=f"partition {self._name(ref, values_of(ref, key))} of {ref.db}.{ref.name}",
                    purge=purge,
                    refuse=refuse,
                    guards=guards,
                )
            )
        return deletions

    def locations_outside(self, ref: TableRef) -> list[str]:
        """Locations of the partitions of ``ref`` that lie outside its directory."""
        return [location for _key, _blob, location in self._outside(ref)]

    def _outside(self, ref: TableRef) -> Iterator[tuple[bytes, bytes, str]]:
        """(key, stored bytes, location) of the partitions of ``ref`` located outside its
        directory, read without decoding whole partitions."""
        data = self._ctx.data
        table_place = data.find_place(ref.location)
        # Most partitions lie at "<table location>/<name>", spelt as the table's location is:
        # those are known to be inside without resolving anything.
        inside = (ref.location or "").rstrip("/") + "/" if table_place is not None else None
        start, stop = layout.partition_range(ref.table_id)
        rows = self._ctx.store.scan(layout.PARTITIONS, start, stop, columns=[layout.OBJECT])
        for key, row in rows:
            blob = row[layout.OBJECT]
            location = partition_location(blob)
            if not location:
                continue
            if inside and location.startswith(inside) and "/." not in location[len(inside) - 1 :]:
                continue
            place = data.find_place(location)
            if table_place is not None and place is not None and table_place.contains(place):
                continue
            yield key, blob, location

    def alter(self, db: str, table: str, new_parts: Sequence[hms.Partition] | None) -> None:
        """Replace partitions' definitions (values identify them; all must exist)."""
        with self._ctx.write_lock:
            ref = self._tables.get(db, table)
            now = self._ctx.now()
            ops: list[Put | Delete] = []
            added: list[tuple[list[str], dict[str, str] | None]] = []
            removed: list[tuple[list[str], dict[str, str] | None]] = []
            marks: set[TableName] = set()
            changes: list[tuple[hms.Partition, hms.Partition]] = []
            for part in new_parts or []:
                if part is None:
                    raise hms.InvalidOperationException(message="Partition cannot be null.")
                values = list(part.values or [])
                if len(values) != len(ref.key_names):
                    raise hms.InvalidOperationException(message="alter is not possible")
                key = self._key(ref, values)
                row = self._ctx.store.get(layout.PARTITIONS, key)
                if row is None:
                    raise hms.InvalidOperationException(message="alter is not possible")
                old = self._decode(ref, row[layout.OBJECT])
                updated = self._altered(ref, old, part, now)
                self._keep_dependency(ref, old, updated, values, marks)
                changes.append((old, updated))
                ops.append(Put(layout.PARTITIONS, key, self._columns(ref, updated, values)))
                # The update period may change: the old partition leaves, the new one comes.
                removed.append((values, old.parameters))
                added.append((values, updated.parameters))
            if ops:
                for base in marks:  # before the rows: a mark may be stale, not missing
                    mark_dependent(self._ctx.store, base, TableName(ref.db, ref.name))
                with self._timelines.change(ref, added=added, removed=removed):
                    self._write(ref, ops, "Altering partitions")
                self._ctx.events.record(
                    event_messages.alter_partition(ref.table, old, new, now) for old, new in changes
                )

    def _keep_dependency(
        self,
        ref: TableRef,
        old: hms.Partition,
        updated: hms.Partition,
        values: Sequence[str],
        marks: set[TableName],
    ) -> None:
        """A dependent partition keeps its dependency record when an alter leaves it out (a
        partition whose data is its base's must never look like one owning its directory); a
        changed record (re-pointing the partition) is checked, and its base goes in ``marks``."""
        before = (old.parameters or {}).get(DEPENDS_ON_KEY)
        params = updated.parameters
        after = params.get(DEPENDS_ON_KEY)
        if after is None:
            if before is not None:
                params[DEPENDS_ON_KEY] = before
            return
        if after == before:
            return
        dependency, _ = self._dependency(ref, after, values, None, hms.InvalidOperationException)
        params[DEPENDS_ON_KEY] = dependency.to_text()
        marks.add(dependency.base)

    def _altered(
        self, ref: TableRef, old: hms.Partition, new: hms.Partition, now: int
    ) -> hms.Partition:
        updated = copy.deepcopy(new)
        updated.dbName, updated.tableName, updated.catName = ref.db, ref.name, None
        updated.createTime = old.createTime
        if updated.sd is None:
            updated.sd = old.sd
        elif not updated.sd.location and old.sd is not None:
            updated.sd.location = old.sd.location
        params = dict(updated.parameters or {})
        if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
            params[DDL_TIME] = str(now)
        updated.parameters = params
        return updated

    def rename(
        self, db: str, table: str, old_values: Sequence[str] | None, new_part: hms.Partition
    ) -> None:
        """Give a partition new values; a default location (and its directory) follows."""
        if new_part is None:
            raise hms.InvalidOperationException(message="New partition cannot be null.")
        with self._ctx.write_lock:
            ref = self._tables.get(db, table)
            old_values = list(old_values or [])
            new_values = list(new_part.values or [])
            if len(old_values) != len(ref.key_names) or len(new_values) != len(ref.key_names):
                raise hms.InvalidOperationException(message="Incorrect number of partition values")
            old_key, new_key = self._key(ref, old_values), self._key(ref, new_values)
            if new_key != old_key:
                self._hold_adding_claim(ref, "Renaming a partition")  # it creates a row
            row = self._ctx.store.get(layout.PARTITIONS, old_key)
            if row is None:
                raise hms.InvalidOperationException(
                    message=f"Partition doesn't exist. {self._name(ref, old_values)}"
                )
            if new_key != old_key and self._ctx.store.get(layout.PARTITIONS, new_key) is not None:
                raise hms.InvalidOperationException(
                    message=f"Partition already exists: {self._name(ref, new_values)}"
                )
            old = self._decode(ref, row[layout.OBJECT])
            updated = self._altered(ref, old, new_part, self._ctx.now())
            marks: set[TableName] = set()
            self._keep_dependency(ref, old, updated, new_values, marks)
            updated.values = new_values
            self._dependencies.guard_partition_drop(ref, [old_values], kept=new_values)
            old_location = old.sd.location if old.sd else None
            default_old = (
                self._ctx.warehouse.child_location(ref.location, self._name(ref, old_values))
                if ref.location
                else None
            )
            # A managed partition at its default location moves with its new name (when
            # this server manages data); an external one, or one placed elsewhere, stays.
            move = None
            follows = (
                updated.sd is not None
                and ref.location
                and old_location
                and old_location == default_old
                and owns_data(ref)
                and _owns_data(old)
                and self._ctx.data.enabled
                and (
                    not new_part.sd
                    or not new_part.sd.location
                    or new_part.sd.location == old_location
                )
            )
            if follows:
                updated.sd.location = self._ctx.warehouse.child_location(
                    ref.location, self._name(ref, new_values)
                )
                move = self._ctx.data.plan_move(
                    old_location,
                    updated.sd.location,
                    what=f"partition {self._name(ref, old_values)} of {ref.db}.{ref.name}",
                    subject=f"{ref.db}.{ref.name}",
                )
            # The new row first, so a failure in between never loses the partition.
            ops: list[Put | Delete] = [
                Put(layout.PARTITIONS, new_key, self._columns(ref, updated, new_values))
            ]
            if new_key != old_key:
                ops.append(Delete(layout.PARTITIONS, old_key))
            for base in marks:  # before the rows: a mark may be stale, not missing
                mark_dependent(self._ctx.store, base, TableName(ref.db, ref.name))
            # Data moves first (HMS) and moves back when the metadata change fails.
            self._ctx.data.prepare(move, f"{ref.db}.{ref.name}")
            try:
                with self._timelines.change(
                    ref,
                    added=[(new_values, updated.parameters)],
                    removed=[(old_values, old.parameters)],
                ):
                    self._ctx.store.mutate(ops)
                if new_key != old_key:
                    statistics.move(self._ctx.store, ref.table_id, self._name(ref, old_values),
                                    self._name(ref, new_values))  # fmt: skip
            except BaseException:
                if move is not None:
                    move.rollback()
                raise
            self._ctx.events.record(
                [event_messages.alter_partition(ref.table, old, updated, self._ctx.now())]
            )
            if move is not None:
                self._ctx.write_lock.after_commit(move.commit, undo=move.rollback)


    def propagate_columns(self, ref: TableRef, columns: list[hms.FieldSchema] | None) -> None:
        """Give every partition the table's columns (ALTER TABLE ... CASCADE)."""
        start, stop = layout.partition_range(ref.table_id)
        with self._ctx.write_lock:
            ops: list[Put | Delete] = []
            for key, row in self._ctx.store.scan(layout.PARTITIONS, start, stop):
                partition = self._decode(ref, row[layout.OBJECT])
                if partition.sd is None:
                    continue
                partition.sd.cols = copy.deepcopy(columns)
                ops.append(
                    Put(layout.PARTITIONS, key, {layout.OBJECT: stored_partition_bytes(partition)})
                )
                if len(ops) >= 1000:
                    self._ctx.store.mutate(ops)
                    ops = []
            if ops:
                self._ctx.store.mutate(ops)
