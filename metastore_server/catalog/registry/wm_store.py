"""Where workload management keeps its resource plans: one ``meta`` row per plan (by namespace
and lower-case name) holding the whole plan as a WMFullResourcePlan (the plan, its pools,
mappings, triggers and trigger-to-pool links), and one row per namespace naming its active plan.

A plan's row holds status ENABLED or DISABLED; the active plan is the one the namespace's row
names (it is answered as ACTIVE), so there is never more than one. Every change of a plan is a
compare-and-set on its row (and an activation one on the namespace's row), so changes of two
server processes never interleave within one plan.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from metastore_server.catalog.basics import names
from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import CAS_TRIES, NamedRows, Stored
from metastore_server.thrift_api import hms

#: The namespace of requests that name none.
DEFAULT_NS = "default"
#: The pool a new plan starts with, its default pool.
DEFAULT_POOL = "default"
#: The default pool's query parallelism when the plan sets none (HMS's default pool size).
DEFAULT_POOL_PARALLELISM = 4
STATUS = hms.WMResourcePlanStatus
NOT_DISABLED = "Resource plan must be disabled to edit it."


def ns_of(ns: str | None) -> str:
    """A request's namespace (none: the default one)."""
    return (ns or "").strip() or DEFAULT_NS


def plan_name(name: str | None) -> str:
    """A plan, pool or trigger name as HMS keeps it (trimmed, lower-case); MetaException for
    none."""
    normal = names.normalize(name)
    if not normal or "\x00" in normal:
        raise hms.MetaException(message="A resource plan name is required")
    return normal


def _str_rows(ctx: CatalogContext) -> NamedRows[str]:
    return NamedRows(
        ctx.store, "wmactive", encode=lambda s: s.encode("utf-8"), decode=lambda b: b.decode()
    )


class PlanStore:
    """Resource plans and the active plan of each namespace on the store."""

    def __init__(self, ctx: CatalogContext) -> None:
        self._ctx = ctx
        self.plans: NamedRows[hms.WMFullResourcePlan] = NamedRows(
            ctx.store, "wmplan", hms.WMFullResourcePlan
        )
        self.actives = _str_rows(ctx)

    def read(self, ns: str, name: str) -> Stored[hms.WMFullResourcePlan]:
        """A plan's row; NoSuchObjectException when there is none."""
        stored = self.plans.read((ns, name))
        if stored is None:
            raise hms.NoSuchObjectException(
                message=f"There is no resource plan named: {name} in namespace {ns}"
            )
        return stored

    def active_name(self, ns: str) -> str | None:
        """The name of the namespace's active plan, or None."""
        return self.actives.find((ns,))

    def answer(self, full: hms.WMFullResourcePlan, active: str | None) -> hms.WMFullResourcePlan:
        """A stored plan as answered: ACTIVE when it is the namespace's active one."""
        answered = copy.deepcopy(full)
        if answered.plan.name == active:
            answered.plan.status = STATUS.ACTIVE
        return answered

    def edit(
        self,
        ns: str | None,
        name: str | None,
        change: Callable[[hms.WMFullResourcePlan], None],
        refused: Callable[[str], Exception],
    ) -> None:
        """Apply ``change`` to a disabled plan (``refused(message)`` when it is not disabled),
        by compare-and-set, retried when another change came first."""
        space, plan = ns_of(ns), plan_name(name)
        for _ in range(CAS_TRIES):
            was = self.read(space, plan)
            if was.obj.plan.status != STATUS.DISABLED or self.active_name(space) == plan:
                raise refused(NOT_DISABLED)
            full = copy.deepcopy(was.obj)
            change(full)
            if self.plans.replace(was, full):
                return
        raise hms.MetaException(message=f"Resource plan {plan} kept changing meanwhile")
