"""The scan plans the REST catalog holds for its callers (in the catalog process's memory):
plans being made in the background (``submitted``), completed plans whose further batches of
tasks wait behind ``plan-tasks`` tokens, and a cache of recent plans by table version and
request. Plan ids and tokens are random (256 bits), each bound to its caller and table: another
caller, or the same id on another table, finds nothing (404). Everything is bounded: plans
held, plans running at once, their lifetime, and the tasks the cache keeps."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import structlog

from metastore_server.rest.errors import RestError

log = structlog.get_logger(__name__)

#: A batch of tasks as answered: ``file-scan-tasks`` and (when any) ``delete-files``.
Batch = dict[str, Any]
Work = Callable[[], list[Batch]]
#: The longest plan id or plan-task token taken (longer: not one of ours).
MAX_ID = 128


@dataclass(frozen=True)
class PlanSettings:
    """How plans are made and kept."""

    #: Plan in the background (answer ``submitted``) when the scanned snapshot holds more
    #: data files than this; 0: always plan at once.
    async_files: int = 100_000
    #: File scan tasks in an answer; more wait behind ``plan-tasks`` tokens.
    batch: int = 1000
    #: Plans held at once (submitted, or with tasks not yet fetched), and plans running.
    max_plans: int = 256
    max_running: int = 8
    #: Seconds a plan is held after it was made.
    lifetime: float = 600.0
    #: Plans the cache keeps, and the tasks it keeps in all (a larger plan is not kept).
    cache_entries: int = 64
    cache_tasks: int = 200_000
    #: Threads making background plans.
    workers: int = 2


@dataclass
class Plan:
    """One plan held for its caller (``owner``) and table."""

    plan_id: str
    owner: str | None
    table: tuple[str, ...]
    expires: float
    status: str = "submitted"
    first: Batch | None = None
    tokens: dict[str, Batch] = field(default_factory=dict)
    error: RestError | None = None
    future: Future[None] | None = None


def no_such_plan(_plan_id: str) -> RestError:
    """404: no plan of this caller and table has that id (never quoted back)."""
    return RestError(404, "NoSuchPlanIdException",
                     "No such plan of this table and caller (expired, finished or cancelled?)")


def no_such_task(_token: str) -> RestError:
    """404: no plan task of this caller and table has that token (never quoted back)."""
    return RestError(404, "NoSuchPlanTaskException",
                     "No such plan task of this table and caller (fetched already or expired?)")


def busy(message: str) -> RestError:
    """503: too many plans held or running (the client retries later)."""
    return RestError(503, "ServiceUnavailableException", message)


def tasks_in(batches: list[Batch]) -> int:
    """How many file scan tasks ``batches`` hold."""
    return sum(len(batch.get("file-scan-tasks", ())) for batch in batches)


class PlanCache:
    """Recent plans by key, least recently used first out; bounded in entries and tasks."""

    def __init__(self, entries: int, tasks: int) -> None:
        self._kept: OrderedDict[Any, list[Batch]] = OrderedDict()
        self._entries, self._tasks, self._held = entries, tasks, 0

    def get(self, key: Any) -> list[Batch] | None:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def put(self, key: Any, batches: list[Batch]) -> None:
        size = tasks_in(batches)
        if self._entries <= 0 or size > self._tasks or key in self._kept:
            return
        self._kept[key] = batches
        self._held += size
        while len(self._kept) > self._entries or self._held > self._tasks:
            _, dropped = self._kept.popitem(last=False)
            self._held -= tasks_in(dropped)

    def __len__(self) -> int:
        return len(self._kept)


class Planner:
    """Makes plans (at once, or in the background for large snapshots) and holds them."""

    def __init__(self, settings: PlanSettings | None = None) -> None:
        self.settings = settings or PlanSettings()
        self.cache = PlanCache(self.settings.cache_entries, self.settings.cache_tasks)
        self._plans: dict[str, Plan] = {}
        self._token_plans: dict[str, str] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def plan(self, owner: str | None, table: tuple[str, ...], key: Any, files: int,
             work: Work) -> dict[str, Any]:  # fmt: skip
        """The answer to a planTableScan: ``completed`` (from the cache, or planned now) or
        ``submitted`` (``files``, the snapshot's data files, over the async threshold)."""
        with self._lock:
            cached = self.cache.get(key)
        if cached is not None:
            return self._completed(owner, table, cached)
        limit = self.settings.async_files
        if limit and files > limit:
            return self._submit(owner, table, key, work)
        batches = work()
        with self._lock:
            self.cache.put(key, batches)
        return self._completed(owner, table, batches)

    def fetch(self, owner: str | None, table: tuple[str, ...], plan_id: str) -> dict[str, Any]:
        """The answer to fetchPlanningResult."""
        with self._lock:
            plan = self._own_plan(owner, table, plan_id)
            if plan.status == "submitted":
                return {"status": "submitted", "plan-id": plan.plan_id}
            if plan.status == "cancelled":
                return {"status": "cancelled"}
            if plan.status == "failed":
                self._drop(plan)
                error = plan.error or busy("planning failed")
                return {"status": "failed", "error": error.body()["error"]}
            answer = {"status": "completed", "plan-id": plan.plan_id, **(plan.first or {})}
            if plan.tokens:
                answer["plan-tasks"] = list(plan.tokens)
            else:
                self._drop(plan)
            return answer

    def tasks(self, owner: str | None, table: tuple[str, ...], token: str) -> Batch:
        """The answer to fetchScanTasks: the batch behind ``token`` (once)."""
        with self._lock:
            self._sweep()
            plan = self._plans.get(self._token_plans.get(token, ""))
            if plan is None or plan.owner != owner or plan.table != table:
                raise no_such_task(token)
            batch = plan.tokens.pop(token)
            del self._token_plans[token]
            if not plan.tokens:
                self._drop(plan)
            return batch

    def cancel(self, owner: str | None, table: tuple[str, ...], plan_id: str) -> None:
        """cancelPlanning: the plan's tasks are let go; its id answers ``cancelled``."""
        with self._lock:
            plan = self._own_plan(owner, table, plan_id)
            if plan.future is not None:
                plan.future.cancel()
            for token in plan.tokens:
                self._token_plans.pop(token, None)
            plan.tokens, plan.first, plan.status = {}, None, "cancelled"

    def held(self) -> int:
        """How many plans are held."""
        with self._lock:
            return len(self._plans)

    def close(self) -> None:
        """Stop the background planners (plans running are let finish)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _completed(self, owner: str | None, table: tuple[str, ...],
                   batches: list[Batch]) -> dict[str, Any]:  # fmt: skip
        """``completed``: the first batch, and tokens for the others (held as a plan)."""
        first = batches[0] if batches else {"file-scan-tasks": []}
        answer: dict[str, Any] = {"status": "completed", **first}
        if len(batches) <= 1:
            answer["plan-id"] = _new_id()  # nothing held behind it: fetching it is a 404
            return answer
        with self._lock:
            plan = self._hold(owner, table)
            plan.status, plan.first = "completed", first
            self._give_tokens(plan, batches[1:])
            answer["plan-id"], answer["plan-tasks"] = plan.plan_id, list(plan.tokens)
        return answer

    def _submit(self, owner: str | None, table: tuple[str, ...], key: Any,
                work: Work) -> dict[str, Any]:  # fmt: skip
        with self._lock:
            running = sum(1 for p in self._plans.values() if p.status == "submitted")
            if running >= self.settings.max_running:
                raise busy(f"{running} scans are being planned; retry later")
            plan = self._hold(owner, table)
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.settings.workers, "scan-plan")
            plan.future = self._pool.submit(self._run, plan, key, work)
        log.info("scan_plan_submitted", table=".".join(table))
        return {"status": "submitted", "plan-id": plan.plan_id}

    def _run(self, plan: Plan, key: Any, work: Work) -> None:
        """Make a background plan; its outcome is kept on it."""
        try:
            batches = work()
        except RestError as exc:
            outcome: tuple[list[Batch] | None, RestError | None] = (None, exc)
        except Exception as exc:  # noqa: BLE001 - answered as the plan's failure
            log.exception("scan_plan_failed", error=f"{type(exc).__name__}: {exc}")
            outcome = (None, RestError(500, "ServerErrorException",
                                       f"Planning failed ({type(exc).__name__})"))  # fmt: skip
        else:
            outcome = (batches, None)
        with self._lock:
            made, error = outcome
            if made is not None:
                self.cache.put(key, made)
            if plan.status != "submitted" or plan.plan_id not in self._plans:
                return  # cancelled or expired meanwhile: the result is let go
            if error is not None:
                plan.status, plan.error = "failed", error
                return
            made = made or []
            plan.status = "completed"
            plan.first = made[0] if made else {"file-scan-tasks": []}
            self._give_tokens(plan, made[1:])

    def _hold(self, owner: str | None, table: tuple[str, ...]) -> Plan:
        """A new plan held (under the lock); room made by dropping the oldest finished one,
        503 when every plan held is still running."""
        self._sweep()
        while len(self._plans) >= self.settings.max_plans:
            finished = [p for p in self._plans.values() if p.status != "submitted"]
            if not finished:
                raise busy(f"{len(self._plans)} scan plans are held; retry later")
            self._drop(min(finished, key=lambda p: p.expires))
        plan = Plan(_new_id(), owner, table, time.monotonic() + self.settings.lifetime)
        self._plans[plan.plan_id] = plan
        return plan

    def _give_tokens(self, plan: Plan, batches: list[Batch]) -> None:
        for batch in batches:
            token = _new_id()
            plan.tokens[token] = batch
            self._token_plans[token] = plan.plan_id

    def _own_plan(self, owner: str | None, table: tuple[str, ...], plan_id: str) -> Plan:
        """The caller's plan of that table (under the lock); 404 for any other."""
        self._sweep()
        plan = self._plans.get(plan_id)
        if plan is None or plan.owner != owner or plan.table != table:
            raise no_such_plan(plan_id)
        return plan

    def _sweep(self) -> None:
        """Drop plans past their lifetime (under the lock)."""
        now = time.monotonic()
        for plan in [p for p in self._plans.values() if p.expires <= now]:
            if plan.future is not None:
                plan.future.cancel()
            self._drop(plan)

    def _drop(self, plan: Plan) -> None:
        self._plans.pop(plan.plan_id, None)
        for token in plan.tokens:
            self._token_plans.pop(token, None)


def _new_id() -> str:
    """A plan id or token: 256 random bits."""
    return secrets.token_urlsafe(32)
