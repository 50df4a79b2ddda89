"""Workload management resource plans (``create_resource_plan``, ``alter_resource_plan`` and
the calls reading, validating and dropping them), stored as HMS 4 keeps them; we run no plan.

A new plan is DISABLED, with a default pool ``default`` (all of the capacity, parallelism 4
unless the plan sets its own), or a copy of another plan's pools, triggers and mappings. Only a
disabled plan may be edited. Status moves DISABLED <-> ENABLED (enabling validates), an enabled
plan may be activated (a disabled one only with ``isEnableAndActivate``), which validates it and
leaves the namespace's previous active plan ENABLED; an active plan leaves ACTIVE only with
``isForceDeactivate`` and cannot be dropped. ``isReplace`` puts one plan in another's place (by
default the active one's): it takes that plan's name (and its being active), the replaced plan
is kept disabled as ``<name>_old_<n>``.
"""

from __future__ import annotations

import copy
from typing import Protocol

from metastore_server.catalog.core.context import CatalogContext
from metastore_server.catalog.core.named_rows import CAS_TRIES, Stored
from metastore_server.catalog.registry.wm_parts import find_pool, parent_of, pool_path
from metastore_server.catalog.registry.wm_store import (
    DEFAULT_POOL,
    DEFAULT_POOL_PARALLELISM,
    NOT_DISABLED,
    STATUS,
    PlanStore,
    ns_of,
    plan_name,
)
from metastore_server.storage.port import Delete, Put
from metastore_server.thrift_api import hms

_EPSILON = 0.001


class _PlanPart(Protocol):
    """A pool, mapping or trigger of a plan."""

    resourcePlanName: str


def _rename(full: hms.WMFullResourcePlan, name: str) -> None:
    """Give a plan and all its parts a new plan name."""
    full.plan.name = name
    parts: tuple[_PlanPart, ...] = (
        *(full.pools or []), *(full.mappings or []), *(full.triggers or [])
    )
    for part in parts:
        part.resourcePlanName = name


def problems(full: hms.WMFullResourcePlan) -> tuple[list[str], list[str]]:
    """A plan's errors and warnings, as ``validate_resource_plan`` answers them."""
    errors: list[str] = []
    warnings: list[str] = []
    pools = full.pools or []
    children: dict[str | None, float] = {}
    for pool in pools:
        parent = parent_of(pool.poolPath)
        if parent is not None and find_pool(full, parent) is None:
            errors.append(f"Parent pool {parent} does not exist for pool: {pool.poolPath}")
        if pool.queryParallelism is not None and pool.queryParallelism < 1:
            errors.append(f"Invalid query parallelism for pool: {pool.poolPath}")
        children[parent] = children.get(parent, 0.0) + (pool.allocFraction or 0.0)
    for parent, total in sorted(children.items(), key=lambda item: item[0] or ""):
        where = parent or "<root>"
        if total > 1.0 + _EPSILON:
            errors.append(
                f"Sum of children pools' alloc fraction should be less than 1 got: {total} "
                f"for pool: {where}"
            )
        elif parent is None and total < 1.0 - _EPSILON:
            warnings.append(f"Sum of all root pools' alloc fraction is less than 1: {total}")
    if full.plan.defaultPoolPath and find_pool(full, full.plan.defaultPoolPath) is None:
        errors.append(f"Default pool {full.plan.defaultPoolPath} does not exist")
    for trigger in full.triggers or []:
        action = (trigger.actionExpression or "").strip()
        if action.upper().startswith("MOVE TO "):
            target = action[len("MOVE TO ") :].strip().lower()
            if find_pool(full, target) is None:
                errors.append(f"Trigger {trigger.triggerName} moves to a missing pool: {target}")
    return errors, warnings


class ResourcePlans:
    """Resource plans on the store."""

    def __init__(self, ctx: CatalogContext, store: PlanStore) -> None:
        self._ctx = ctx
        self._store = store

    def create(self, request: hms.WMCreateResourcePlanRequest | None) -> None:
        """Create a disabled plan with its default pool, or a copy of ``copyFrom``."""
        request = request or hms.WMCreateResourcePlanRequest()
        plan = request.resourcePlan
        if plan is None:
            raise hms.MetaException(message="A resource plan is required")
        name, ns = plan_name(plan.name), ns_of(plan.ns)
        parallelism = plan.queryParallelism
        if parallelism is not None and parallelism <= 0:
            raise hms.InvalidObjectException(message="Query parallelism should be positive.")
        if request.copyFrom:
            source = self._store.plans.find((ns, plan_name(request.copyFrom)))
            if source is None:
                raise hms.InvalidObjectException(
                    message=f"There is no resource plan named: {request.copyFrom}"
                )
            full = copy.deepcopy(source)
            _rename(full, name)
            full.plan.status = STATUS.DISABLED
        else:
            pool = hms.WMPool(
                resourcePlanName=name, poolPath=DEFAULT_POOL, allocFraction=1.0,
                queryParallelism=parallelism or DEFAULT_POOL_PARALLELISM, ns=ns,
            )  # fmt: skip
            full = hms.WMFullResourcePlan(
                plan=hms.WMResourcePlan(
                    name=name, status=STATUS.DISABLED, queryParallelism=parallelism,
                    defaultPoolPath=DEFAULT_POOL, ns=ns,
                ),
                pools=[pool], mappings=[], triggers=[], poolTriggers=[],
            )  # fmt: skip
        if not self._store.plans.create((ns, name), full):
            raise hms.AlreadyExistsException(message=f"Resource plan already exists: {name}")

    def get(self, request: hms.WMGetResourcePlanRequest | None) -> hms.WMFullResourcePlan:
        """A plan with its pools, mappings, triggers and links."""
        request = request or hms.WMGetResourcePlanRequest()
        ns = ns_of(request.ns)
        stored = self._store.read(ns, plan_name(request.resourcePlanName))
        return self._store.answer(stored.obj, self._store.active_name(ns))

    def all(self, request: hms.WMGetAllResourcePlanRequest | None) -> list[hms.WMResourcePlan]:
        """Every plan of the namespace (without its parts), by name."""
        ns = ns_of((request or hms.WMGetAllResourcePlanRequest()).ns)
        active = self._store.active_name(ns)
        return [self._store.answer(s.obj, active).plan for s in self._store.plans.scan((ns,))]

    def active(
        self, request: hms.WMGetActiveResourcePlanRequest | None
    ) -> hms.WMFullResourcePlan | None:
        """The namespace's active plan, or None."""
        ns = ns_of((request or hms.WMGetActiveResourcePlanRequest()).ns)
        name = self._store.active_name(ns)
        found = None if name is None else self._store.plans.find((ns, name))
        return None if found is None else self._store.answer(found, name)

    def validate(
        self, request: hms.WMValidateResourcePlanRequest | None
    ) -> hms.WMValidateResourcePlanResponse:
        """A plan's errors and warnings."""
        request = request or hms.WMValidateResourcePlanRequest()
        stored = self._store.read(ns_of(request.ns), plan_name(request.resourcePlanName))
        errors, warnings = problems(stored.obj)
        return hms.WMValidateResourcePlanResponse(errors=errors, warnings=warnings)

    def drop(self, request: hms.WMDropResourcePlanRequest | None) -> None:
        """Drop a plan that is not active."""
        request = request or hms.WMDropResourcePlanRequest()
        ns, name = ns_of(request.ns), plan_name(request.resourcePlanName)
        for _ in range(CAS_TRIES):
            was = self._store.read(ns, name)
            if self._store.active_name(ns) == name:
                raise hms.InvalidOperationException(message="Cannot drop an active resource plan")
            if self._store.plans.delete(was):
                return
        raise hms.MetaException(message=f"Resource plan {name} kept changing meanwhile")

    def alter(
        self, request: hms.WMAlterResourcePlanRequest | None
    ) -> hms.WMFullResourcePlan | None:
        """Edit a disabled plan, change its status, or replace another plan with it; the plan
        when it became active."""
        request = request or hms.WMAlterResourcePlanRequest()
        changes = request.resourcePlan or hms.WMNullableResourcePlan()
        ns = ns_of(request.ns or changes.ns)
        name = plan_name(request.resourcePlanName)
        for _ in range(CAS_TRIES):
            if request.isReplace:
                done, answer = self._replace(ns, name, changes)
            else:
                done, answer = self._alter_once(ns, name, changes, request)
            if done:
                return answer
        raise hms.MetaException(message=f"Resource plan {name} kept changing meanwhile")

    def _alter_once(
        self, ns: str, name: str, changes: hms.WMNullableResourcePlan,
        request: hms.WMAlterResourcePlanRequest,
    ) -> tuple[bool, hms.WMFullResourcePlan | None]:  # fmt: skip
        """One attempt of an edit or a status change (False: another change came first)."""
        was = self._store.read(ns, name)
        active = self._store.active_name(ns)
        current = STATUS.ACTIVE if active == name else was.obj.plan.status
        full = copy.deepcopy(was.obj)
        new_name = plan_name(changes.name) if changes.name else name
        if new_name != name or changes.isSetQueryParallelism or changes.isSetDefaultPoolPath:
            if current != STATUS.DISABLED:
                raise hms.InvalidOperationException(message=NOT_DISABLED)
            self._edit(full, changes, new_name)
        target = changes.status
        if target is None or target == current:
            return self._write(was, full, new_name), None
        if new_name != name:
            raise hms.InvalidOperationException(
                message="Cannot rename a resource plan and change its status at once"
            )
        if current == STATUS.ACTIVE and not request.isForceDeactivate:
            raise hms.InvalidOperationException(
                message=f"Resource plan {name} is active; activate another plan first, or "
                "disable workload management."
            )
        if (
            target == STATUS.ACTIVE
            and current == STATUS.DISABLED
            and not request.isEnableAndActivate
        ):
            raise hms.InvalidOperationException(
                message=f"Resource plan {name} is disabled and should be enabled before "
                "activation (or in the same command)"
            )
        if target in (STATUS.ACTIVE, STATUS.ENABLED):
            errors, _ = problems(full)
            if errors:
                raise hms.InvalidOperationException(
                    message=f"ResourcePlan: {name} is invalid: {errors}"
                )
        full.plan.status = STATUS.ENABLED if target == STATUS.ACTIVE else target
        return self._switch(was, full, active, target)

    def _edit(
        self, full: hms.WMFullResourcePlan, changes: hms.WMNullableResourcePlan, new_name: str
    ) -> None:
        """Apply a disabled plan's edits: name, parallelism, default pool."""
        if changes.isSetQueryParallelism:
            if changes.queryParallelism is not None and changes.queryParallelism <= 0:
                raise hms.InvalidOperationException(message="queryParallelism should be positive.")
            full.plan.queryParallelism = changes.queryParallelism
        if changes.isSetDefaultPoolPath:
            path = None if changes.defaultPoolPath is None else pool_path(changes.defaultPoolPath)
            if path is not None and find_pool(full, path) is None:
                raise hms.NoSuchObjectException(message=f"Cannot find pool: {path}")
            full.plan.defaultPoolPath = path
        if new_name != full.plan.name:
            _rename(full, new_name)

    def _write(
        self, was: Stored[hms.WMFullResourcePlan], full: hms.WMFullResourcePlan, new_name: str
    ) -> bool:
        """Store an edited plan (under its new name: AlreadyExists when that is taken)."""
        ns, name = was.parts
        if new_name == name:
            return self._store.plans.replace(was, full)
        if self._store.plans.find((ns, new_name)) is not None:
            raise hms.InvalidOperationException(message=f"Resource plan already exists: {new_name}")
        return self._store.plans.create(
            (ns, new_name), full, also=[self._store.plans.delete_op(was.parts)]
        )

    def _switch(
        self, was: Stored[hms.WMFullResourcePlan], full: hms.WMFullResourcePlan,
        active: str | None, target: int,
    ) -> tuple[bool, hms.WMFullResourcePlan | None]:  # fmt: skip
        """Store a status change; the namespace's active plan changes by compare-and-set."""
        ns, name = was.parts
        actives = self._store.actives
        marker = actives.read((ns,))
        if (marker.obj if marker else None) != active:
            return False, None
        put = self._store.plans.put_op(was.parts, full)
        if target != STATUS.ACTIVE:
            if active != name:
                return self._store.plans.replace(was, full), None
            assert marker is not None
            return actives.delete(marker, also=[put]), None
        ops = [put]
        if active is not None and active != name:
            previous = self._store.plans.find((ns, active))
            if previous is not None:
                previous.plan.status = STATUS.ENABLED
                ops.append(self._store.plans.put_op((ns, active), previous))
        done = (
            actives.replace(marker, name, also=ops)
            if marker
            else actives.create((ns,), name, also=ops)
        )
        return done, (self._store.answer(full, name) if done else None)

    def _replace(
        self, ns: str, name: str, changes: hms.WMNullableResourcePlan
    ) -> tuple[bool, hms.WMFullResourcePlan | None]:
        """Put plan ``name`` in the place of ``changes.name`` (default: the active plan)."""
        if changes.isSetQueryParallelism or changes.isSetDefaultPoolPath or changes.status:
            raise hms.InvalidOperationException(message="Cannot change values during replace.")
        source = self._store.read(ns, name)
        active = self._store.active_name(ns)
        replaced_name = plan_name(changes.name) if changes.name else active
        if replaced_name is None:
            raise hms.InvalidOperationException(
                message="There is no active resource plan to replace"
            )
        if replaced_name == name:
            raise hms.InvalidOperationException(message="A resource plan cannot replace itself")
        replaced = self._store.read(ns, replaced_name)
        full = copy.deepcopy(source.obj)
        if replaced_name == active:
            errors, _ = problems(full)
            if errors:
                raise hms.InvalidOperationException(
                    message=f"ResourcePlan: {name} is invalid: {errors}"
                )
            full.plan.status = STATUS.ENABLED
        _rename(full, replaced_name)
        old = copy.deepcopy(replaced.obj)
        old_name = self._old_name(ns, replaced_name)
        _rename(old, old_name)
        old.plan.status = STATUS.DISABLED
        also: list[Put | Delete] = [
            self._store.plans.put_op((ns, old_name), old),
            self._store.plans.delete_op(source.parts),
        ]
        done = self._store.plans.replace(replaced, full, also=also)
        return done, (
            self._store.answer(full, active) if done and replaced_name == active else None
        )

    def _old_name(self, ns: str, name: str) -> str:
        """The first free ``<name>_old_<n>``."""
        number = 0
        while self._store.plans.find((ns, f"{name}_old_{number}")) is not None:
            number += 1
        return f"{name}_old_{number}"
