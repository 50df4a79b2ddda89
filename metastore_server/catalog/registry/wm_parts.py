"""The parts of a resource plan: pools (a tree by dotted path), triggers, user/group/application
mappings to pools, and links of triggers to pools. Each change is an edit of a disabled plan
(``wm_store.PlanStore.edit``), with HMS 4's rules and errors.
"""

from __future__ import annotations

import copy

from metastore_server.catalog.registry.wm_store import PlanStore, ns_of, plan_name
from metastore_server.thrift_api import hms

#: The entity types a mapping may name.
ENTITY_TYPES = ("USER", "GROUP", "APPLICATION")
POLICIES = ("FAIR", "FIFO")


def _invalid_object(message: str) -> Exception:
    return hms.InvalidObjectException(message=message)


def _invalid_operation(message: str) -> Exception:
    return hms.InvalidOperationException(message=message)


def pool_path(path: str | None) -> str:
    """A pool path as HMS keeps it (lower-case, dotted names); MetaException when malformed."""
    normal = (path or "").strip().lower()
    if not normal or any(not part for part in normal.split(".")) or "\x00" in normal:
        raise hms.MetaException(message=f"Invalid pool path: {path}")
    return normal


def parent_of(path: str) -> str | None:
    """The parent pool path (None: a root pool)."""
    return path.rsplit(".", 1)[0] if "." in path else None


def find_pool(full: hms.WMFullResourcePlan, path: str) -> hms.WMPool | None:
    return next((pool for pool in full.pools or [] if pool.poolPath == path), None)


def _need_pool(full: hms.WMFullResourcePlan, path: str) -> hms.WMPool:
    found = find_pool(full, path)
    if found is None:
        raise hms.NoSuchObjectException(message=f"Cannot find pool: {path}")
    return found


def _need_trigger(full: hms.WMFullResourcePlan, name: str) -> hms.WMTrigger:
    found = next((t for t in full.triggers or [] if t.triggerName == name), None)
    if found is None:
        raise hms.NoSuchObjectException(message=f"Cannot find trigger with name: {name}")
    return found


def _policy(policy: str | None) -> str | None:
    if policy is None:
        return None
    if policy.upper() not in POLICIES:
        raise hms.InvalidObjectException(message=f"Invalid scheduling policy {policy}")
    return policy.upper()


def _moved(path: str, old: str, new: str) -> str:
    """``path`` with the pool ``old`` (or an ancestor of it) renamed to ``new``."""
    if path == old:
        return new
    return new + path[len(old) :] if path.startswith(old + ".") else path


class PlanParts:
    """Pools, triggers and mappings of resource plans."""

    def __init__(self, store: PlanStore) -> None:
        self._store = store

    def create_pool(self, pool: hms.WMPool | None) -> None:
        """Add a pool under an existing parent."""
        if pool is None:
            raise hms.MetaException(message="A pool is required")
        path = pool_path(pool.poolPath)

        def change(full: hms.WMFullResourcePlan) -> None:
            if find_pool(full, path) is not None:
                raise hms.AlreadyExistsException(message=f"Pool already exists: {path}")
            parent = parent_of(path)
            if parent is not None and find_pool(full, parent) is None:
                raise hms.NoSuchObjectException(
                    message="Pool path is invalid, the parent does not exist"
                )
            stored = copy.deepcopy(pool)
            stored.resourcePlanName, stored.poolPath = full.plan.name, path
            stored.schedulingPolicy = _policy(pool.schedulingPolicy)
            stored.ns = full.plan.ns
            full.pools = [*(full.pools or []), stored]

        self._store.edit(pool.ns, pool.resourcePlanName, change, _invalid_object)

    def alter_pool(self, request: hms.WMAlterPoolRequest | None) -> None:
        """Change a pool's settings, or move it (with its descendants) to a new path."""
        if request is None or request.pool is None:
            raise hms.MetaException(message="A pool is required")
        changes = request.pool
        old = pool_path(request.poolPath or changes.poolPath)
        new = pool_path(changes.poolPath or old)

        def change(full: hms.WMFullResourcePlan) -> None:
            pool = _need_pool(full, old)
            if changes.allocFraction is not None:
                pool.allocFraction = changes.allocFraction
            if changes.queryParallelism is not None:
                pool.queryParallelism = changes.queryParallelism
            if changes.isSetSchedulingPolicy:
                pool.schedulingPolicy = _policy(changes.schedulingPolicy)
            if new != old:
                self._move_pool(full, old, new)

        self._store.edit(changes.ns, changes.resourcePlanName, change, _invalid_object)

    @staticmethod
    def _move_pool(full: hms.WMFullResourcePlan, old: str, new: str) -> None:
        if find_pool(full, new) is not None:
            raise hms.AlreadyExistsException(message=f"Pool already exists: {new}")
        parent = parent_of(new)
        if parent is not None and (parent == old or find_pool(full, parent) is None):
            raise hms.NoSuchObjectException(
                message="Pool path is invalid, the parent does not exist"
            )
        for pool in full.pools or []:
            pool.poolPath = _moved(pool.poolPath, old, new)
        for mapping in full.mappings or []:
            if mapping.poolPath is not None:
                mapping.poolPath = _moved(mapping.poolPath, old, new)
        for link in full.poolTriggers or []:
            link.pool = _moved(link.pool, old, new)
        if full.plan.defaultPoolPath is not None:
            full.plan.defaultPoolPath = _moved(full.plan.defaultPoolPath, old, new)

    def drop_pool(self, request: hms.WMDropPoolRequest | None) -> None:
        """Drop a pool without children that is not the plan's default pool, with its
        mappings and trigger links."""
        request = request or hms.WMDropPoolRequest()
        path = pool_path(request.poolPath)

        def change(full: hms.WMFullResourcePlan) -> None:
            _need_pool(full, path)
            if full.plan.defaultPoolPath == path:
                raise hms.InvalidOperationException(
                    message="Cannot drop default pool of a resource plan"
                )
            if any(pool.poolPath.startswith(path + ".") for pool in full.pools):
                raise hms.InvalidOperationException(
                    message="Cannot drop a pool that has child pools"
                )
            full.pools = [pool for pool in full.pools if pool.poolPath != path]
            full.mappings = [m for m in full.mappings or [] if m.poolPath != path]
            full.poolTriggers = [t for t in full.poolTriggers or [] if t.pool != path]

        self._store.edit(request.ns, request.resourcePlanName, change, _invalid_operation)

    def create_trigger(self, trigger: hms.WMTrigger | None) -> None:
        """Add a trigger."""
        if trigger is None:
            raise hms.MetaException(message="A trigger is required")
        name = plan_name(trigger.triggerName)

        def change(full: hms.WMFullResourcePlan) -> None:
            if any(t.triggerName == name for t in full.triggers or []):
                raise hms.AlreadyExistsException(
                    message=f"Trigger already exists, use alter: {name}"
                )
            stored = copy.deepcopy(trigger)
            stored.resourcePlanName, stored.triggerName, stored.ns = (
                full.plan.name,
                name,
                full.plan.ns,
            )
            full.triggers = [*(full.triggers or []), stored]

        self._store.edit(trigger.ns, trigger.resourcePlanName, change, _invalid_object)

    def alter_trigger(self, request: hms.WMAlterTriggerRequest | None) -> None:
        """Change a trigger's expressions and whether it applies to unmanaged queries."""
        trigger = (request or hms.WMAlterTriggerRequest()).trigger
        if trigger is None:
            raise hms.MetaException(message="A trigger is required")
        name = plan_name(trigger.triggerName)

        def change(full: hms.WMFullResourcePlan) -> None:
            stored = _need_trigger(full, name)
            stored.triggerExpression = trigger.triggerExpression
            stored.actionExpression = trigger.actionExpression
            stored.isInUnmanaged = trigger.isInUnmanaged

        self._store.edit(trigger.ns, trigger.resourcePlanName, change, _invalid_object)

    def drop_trigger(self, request: hms.WMDropTriggerRequest | None) -> None:
        """Drop a trigger and its links to pools."""
        request = request or hms.WMDropTriggerRequest()
        name = plan_name(request.triggerName)

        def change(full: hms.WMFullResourcePlan) -> None:
            _need_trigger(full, name)
            full.triggers = [t for t in full.triggers if t.triggerName != name]
            full.poolTriggers = [t for t in full.poolTriggers or [] if t.trigger != name]

        self._store.edit(request.ns, request.resourcePlanName, change, _invalid_operation)

    def link_trigger(self, request: hms.WMCreateOrDropTriggerToPoolMappingRequest | None) -> None:
        """Apply a trigger to a pool, or (``drop``) stop applying it."""
        request = request or hms.WMCreateOrDropTriggerToPoolMappingRequest()
        name, path = plan_name(request.triggerName), pool_path(request.poolPath)

        def change(full: hms.WMFullResourcePlan) -> None:
            _need_trigger(full, name)
            _need_pool(full, path)
            links = [t for t in full.poolTriggers or [] if (t.pool, t.trigger) != (path, name)]
            if not request.drop:
                links.append(hms.WMPoolTrigger(pool=path, trigger=name, ns=full.plan.ns))
            full.poolTriggers = links

        self._store.edit(request.ns, request.resourcePlanName, change, _invalid_object)

    def put_mapping(self, request: hms.WMCreateOrUpdateMappingRequest | None) -> None:
        """Create a mapping (AlreadyExistsException when there is one), or with ``update``
        change one (NoSuchObjectException when there is none). No pool: unmanaged."""
        request = request or hms.WMCreateOrUpdateMappingRequest()
        mapping = request.mapping
        if mapping is None:
            raise hms.MetaException(message="A mapping is required")
        stored = self._mapping(mapping)

        def change(full: hms.WMFullResourcePlan) -> None:
            if stored.poolPath is not None:
                _need_pool(full, stored.poolPath)
            key = (stored.entityType, stored.entityName)
            others = [m for m in full.mappings or [] if (m.entityType, m.entityName) != key]
            exists = len(others) != len(full.mappings or [])
            if exists and not request.update:
                raise hms.AlreadyExistsException(message=f"Mapping already exists: {key}")
            if request.update and not exists:
                raise hms.NoSuchObjectException(message=f"Cannot find mapping: {key}")
            stored.resourcePlanName, stored.ns = full.plan.name, full.plan.ns
            full.mappings = [*others, stored]

        self._store.edit(mapping.ns, mapping.resourcePlanName, change, _invalid_object)

    def drop_mapping(self, request: hms.WMDropMappingRequest | None) -> None:
        """Drop a mapping; NoSuchObjectException when there is none."""
        mapping = (request or hms.WMDropMappingRequest()).mapping
        if mapping is None:
            raise hms.MetaException(message="A mapping is required")
        key = (self._mapping(mapping).entityType, mapping.entityName)

        def change(full: hms.WMFullResourcePlan) -> None:
            kept = [m for m in full.mappings or [] if (m.entityType, m.entityName) != key]
            if len(kept) == len(full.mappings or []):
                raise hms.NoSuchObjectException(message=f"Cannot find mapping: {key}")
            full.mappings = kept

        self._store.edit(mapping.ns, mapping.resourcePlanName, change, _invalid_operation)

    @staticmethod
    def _mapping(mapping: hms.WMMapping) -> hms.WMMapping:
        """A mapping as stored: entity type upper-case and known, pool path normalized."""
        entity_type = (mapping.entityType or "").strip().upper()
        if entity_type not in ENTITY_TYPES:
            raise hms.InvalidObjectException(message=f"Invalid entity type {mapping.entityType}")
        if not mapping.entityName:
            raise hms.InvalidObjectException(message="A mapping needs its entity name")
        stored = copy.deepcopy(mapping)
        stored.entityType = entity_type
        stored.poolPath = None if mapping.poolPath is None else pool_path(mapping.poolPath)
        return stored

    def triggers(
        self, request: hms.WMGetTriggersForResourePlanRequest | None
    ) -> list[hms.WMTrigger]:
        """A plan's triggers."""
        request = request or hms.WMGetTriggersForResourePlanRequest()
        stored = self._store.read(ns_of(request.ns), plan_name(request.resourcePlanName))
        return list(stored.obj.triggers or [])
