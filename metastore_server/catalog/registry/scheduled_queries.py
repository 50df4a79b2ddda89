"""Scheduled queries (``scheduled_query_maintenance``, ``get_scheduled_query``,
``scheduled_query_poll``, ``scheduled_query_progress``), stored and handed out as HMS 4 does;
we never run them.

A query is named by its cluster namespace and schedule name (unique together, as written). Its
row holds the ScheduledQuery, with ``nextExecution`` computed from its Quartz cron schedule
(``cron``), and, while an execution of it runs, that execution's id (``c:x``). A poll hands out
the enabled query of the namespace that is due soonest (``nextExecution`` <= now) and not
executing, as a new execution (state INITED), and moves ``nextExecution`` to the next fire time
after now; the hand-out is a compare-and-set on the query's row, so two server processes never
hand out one due time twice. ``scheduled_query_progress`` records an execution's state; a
finished, failed, timed-out or auto-disabled one frees its query for the next poll, and one not
heard of for ``timeout_s`` counts as TIMED_OUT at the next poll of its namespace.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, replace

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import CAS_TRIES, NamedRows, Stored
from metastore_server.catalog.registry import cron
from metastore_server.storage import layout
from metastore_server.storage.port import Delete, Put
from metastore_server.thrift_api import ErrorClass, hms

#: How long an execution may go without a progress report before it counts as timed out.
DEFAULT_TIMEOUT_S = 120
#: In a query's row: the id of its execution in progress.
ACTIVE = b"c:x"
#: States after which an execution takes no more reports.
ENDED = frozenset(
    {hms.QueryState.FAILED, hms.QueryState.FINISHED, hms.QueryState.TIMED_OUT,
     hms.QueryState.AUTO_DISABLED}
)  # fmt: skip


@dataclass(frozen=True)
class Execution:
    """One execution of a scheduled query, as HMS records it."""

    execution_id: int
    namespace: str
    name: str
    state: int
    start_time: int
    last_update: int
    end_time: int | None = None
    executor_query_id: str | None = None
    error_message: str | None = None


def _encode_execution(execution: Execution) -> bytes:
    return json.dumps(asdict(execution), sort_keys=True).encode("utf-8")


def _decode_execution(blob: bytes) -> Execution:
    return Execution(**json.loads(blob))


def _execution_parts(execution_id: int) -> tuple[str]:
    return (f"{execution_id:020d}",)


class ScheduledQueries:
    """Scheduled queries and their executions on the store."""

    def __init__(self, ctx: CatalogContext, timeout_s: int = DEFAULT_TIMEOUT_S) -> None:
        self._ctx = ctx
        self.timeout_s = timeout_s
        self._queries = NamedRows(ctx.store, "schq", hms.ScheduledQuery)
        self._executions = NamedRows(
            ctx.store, "schqexec", encode=_encode_execution, decode=_decode_execution
        )

    def get(self, key: hms.ScheduledQueryKey | None) -> hms.ScheduledQuery:
        """A scheduled query; NoSuchObjectException when there is none."""
        parts = _parts(key, hms.MetaException)
        found = self._queries.find(parts)
        if found is None:
            raise hms.NoSuchObjectException(message=f"There is no scheduled query for: {key}")
        return found

    def execution(self, execution_id: int) -> Execution | None:
        """An execution's record, or None."""
        return self._executions.find(_execution_parts(execution_id))

    def maintain(self, request: hms.ScheduledQueryMaintenanceRequest | None) -> None:
        """Create, alter or drop a scheduled query."""
        if request is None or request.scheduledQuery is None:
            raise hms.InvalidInputException(message="A scheduled query is required")
        query = request.scheduledQuery
        parts = _parts(query.scheduleKey)
        kind = request.type
        if kind == hms.ScheduledQueryMaintenanceRequestType.CREATE:
            self._create(parts, query)
        elif kind == hms.ScheduledQueryMaintenanceRequestType.ALTER:
            self._alter(parts, query)
        elif kind == hms.ScheduledQueryMaintenanceRequestType.DROP:
            self._drop(parts)
        else:
            raise hms.InvalidInputException(message=f"Unknown maintenance type: {kind}")

    def _create(self, parts: tuple[str, str], query: hms.ScheduledQuery) -> None:
        if not query.query:
            raise hms.InvalidInputException(message="A scheduled query needs its query")
        stored = copy.deepcopy(query)
        stored.enabled = bool(query.enabled)
        stored.nextExecution = self._next(query.schedule, self._ctx.now())
        if not self._queries.create(parts, stored):
            raise hms.AlreadyExistsException(
                message=f"Scheduled query with name: {parts[1]} already exists."
            )

    def _alter(self, parts: tuple[str, str], change: hms.ScheduledQuery) -> None:
        for _ in range(CAS_TRIES):
            was = self._read_existing(parts)
            stored = copy.deepcopy(was.obj)
            for name in ("enabled", "schedule", "user", "query"):
                if getattr(change, name) is not None:
                    setattr(stored, name, getattr(change, name))
            stored.nextExecution = self._next(stored.schedule, self._ctx.now())
            if self._queries.replace(was, stored):
                return
        raise hms.MetaException(message=f"Scheduled query {parts[1]} kept changing meanwhile")

    def _drop(self, parts: tuple[str, str]) -> None:
        for _ in range(CAS_TRIES):
            if self._queries.delete(self._read_existing(parts)):
                return
        raise hms.MetaException(message=f"Scheduled query {parts[1]} kept changing meanwhile")

    def _read_existing(self, parts: tuple[str, str]) -> Stored[hms.ScheduledQuery]:
        was = self._queries.read(parts)
        if was is None:
            raise hms.NoSuchObjectException(
                message=f"Scheduled query with name: {parts[1]} doesn't exist."
            )
        return was

    @staticmethod
    def _next(schedule: str | None, now: int) -> int | None:
        """The next fire time of a schedule after now; InvalidInputException when it is not
        one we read."""
        try:
            return cron.parse(schedule).next_after(now)
        except cron.CronError as error:
            raise hms.InvalidInputException(message=f"Invalid schedule: {error}") from None

    def poll(self, request: hms.ScheduledQueryPollRequest | None) -> hms.ScheduledQueryPollResponse:
        """Hand out the namespace's due query, if any, as a new execution."""
        if request is None or request.clusterNamespace is None:
            raise hms.MetaException(message="A poll needs its cluster namespace")
        now = self._ctx.now()
        due = [
            stored
            for stored in self._queries.scan((request.clusterNamespace,))
            if stored.obj.enabled
            and stored.obj.nextExecution is not None
            and stored.obj.nextExecution <= now
        ]
        due.sort(key=lambda stored: (stored.obj.nextExecution, stored.parts))
        for stored in due:
            handed = self._hand_out(stored, now)
            if handed is not None:
                return handed
        return hms.ScheduledQueryPollResponse()

    def _hand_out(
        self, stored: Stored[hms.ScheduledQuery], now: int
    ) -> hms.ScheduledQueryPollResponse | None:
        """Start an execution of a due query, unless one runs or another poll took it."""
        also: list[Put | Delete] = []
        if ACTIVE in stored.row:
            running = self._executions.read(_execution_parts(int(stored.row[ACTIVE])))
            if running is not None and running.obj.state not in ENDED:
                if running.obj.last_update > now - self.timeout_s:
                    return None
                timed_out = replace(
                    running.obj, state=hms.QueryState.TIMED_OUT, end_time=now,
                    error_message="Timed out: no progress reported",
                )  # fmt: skip
                also.append(self._executions.put_op(running.parts, timed_out))
        execution_id = self._ctx.store.increment(
            layout.META, layout.COUNTERS_ROW, layout.NEXT_SCHEDULED_EXECUTION_ID
        )
        namespace, name = stored.parts
        execution = Execution(execution_id, namespace, name, hms.QueryState.INITED, now, now)
        also.append(self._executions.put_op(_execution_parts(execution_id), execution))
        moved = copy.deepcopy(stored.obj)
        moved.nextExecution = self._next(moved.schedule, now)
        if not self._queries.replace(stored, moved, {ACTIVE: str(execution_id).encode()}, also):
            return None
        return hms.ScheduledQueryPollResponse(
            scheduleKey=stored.obj.scheduleKey,
            executionId=execution_id,
            query=stored.obj.query,
            user=stored.obj.user,
        )

    def progress(self, info: hms.ScheduledQueryProgressInfo | None) -> None:
        """Record an execution's state; an ended one frees its query."""
        if info is None or info.scheduledExecutionId is None or info.state is None:
            raise hms.InvalidOperationException(message="A progress report needs id and state")
        for _ in range(CAS_TRIES):
            was = self._executions.read(_execution_parts(info.scheduledExecutionId))
            if was is None:
                raise hms.InvalidOperationException(
                    message=f"invalid scheduledExecutionId: {info.scheduledExecutionId}"
                )
            if was.obj.state in ENDED:
                raise hms.InvalidOperationException(
                    message=f"scheduled execution {info.scheduledExecutionId} has already ended "
                    f"({hms.QueryState._VALUES_TO_NAMES[was.obj.state]})"
                )
            if self._record(was, info):
                return
        raise hms.MetaException(message="The execution kept changing meanwhile")

    def _record(self, was: Stored[Execution], info: hms.ScheduledQueryProgressInfo) -> bool:
        """Write one progress report (compare-and-set on the execution's record)."""
        now = self._ctx.now()
        ended = info.state in ENDED
        execution = replace(
            was.obj,
            state=info.state,
            last_update=now,
            end_time=now if ended else None,
            executor_query_id=info.executorQueryId or was.obj.executor_query_id,
            error_message=info.errorMessage or was.obj.error_message,
        )
        also: list[Put | Delete] = []
        query = self._queries.read((execution.namespace, execution.name))
        mine = query is not None and query.row.get(ACTIVE) == str(execution.execution_id).encode()
        if ended and mine:
            assert query is not None
            also.append(self._queries.delete_op(query.parts, [ACTIVE]))
            if info.state == hms.QueryState.AUTO_DISABLED:
                disabled = copy.deepcopy(query.obj)
                disabled.enabled = False
                also.append(self._queries.put_op(query.parts, disabled))
        return self._executions.replace(was, execution, also=also)


def _parts(
    key: hms.ScheduledQueryKey | None, error: ErrorClass = hms.InvalidInputException
) -> tuple[str, str]:
    """The row name of a query: namespace, schedule name; ``error`` when the key lacks one."""
    if key is None or not key.scheduleName or key.clusterNamespace is None:
        raise error(message="A scheduled query key needs name and namespace")
    if "\x00" in key.scheduleName or "\x00" in key.clusterNamespace:
        raise error(message="A scheduled query key may not hold NUL")
    return key.clusterNamespace, key.scheduleName
