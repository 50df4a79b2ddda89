"""Workload management over a real socket: resource plans with pools, triggers and mappings,
stored and validated with HMS 4's rules (only a disabled plan is edited, one active plan per
namespace, an active plan is not dropped), never enforced here."""

from __future__ import annotations

import pytest

from metastore_server.thrift_api import hms

STATUS = hms.WMResourcePlanStatus


def plan(client, name: str) -> hms.WMFullResourcePlan:
    request = hms.WMGetResourcePlanRequest(resourcePlanName=name)
    return client.get_resource_plan(request).resourcePlan


def create(client, name: str, parallelism: int | None = None, copy_from: str | None = None) -> None:
    resource_plan = hms.WMResourcePlan(name=name, queryParallelism=parallelism)
    client.create_resource_plan(
        hms.WMCreateResourcePlanRequest(resourcePlan=resource_plan, copyFrom=copy_from)
    )


def pool(client, plan_name: str, path: str, fraction: float, parallelism: int = 2) -> None:
    client.create_wm_pool(hms.WMCreatePoolRequest(pool=hms.WMPool(
        resourcePlanName=plan_name, poolPath=path, allocFraction=fraction,
        queryParallelism=parallelism, schedulingPolicy="fair",
    )))  # fmt: skip


def set_status(client, name: str, status: int, **flags: bool) -> hms.WMAlterResourcePlanResponse:
    return client.alter_resource_plan(hms.WMAlterResourcePlanRequest(
        resourcePlanName=name, resourcePlan=hms.WMNullableResourcePlan(status=status), **flags
    ))  # fmt: skip


def mapping(client, plan_name: str, user: str, path: str | None, update: bool = False) -> None:
    client.create_or_update_wm_mapping(hms.WMCreateOrUpdateMappingRequest(
        mapping=hms.WMMapping(resourcePlanName=plan_name, entityType="user",
                              entityName=user, poolPath=path),
        update=update,
    ))  # fmt: skip


def statuses(client) -> dict[str, int]:
    plans = client.get_all_resource_plans(hms.WMGetAllResourcePlanRequest()).resourcePlans
    return {p.name: p.status for p in plans}


def build_plan(client, name: str) -> None:
    """A valid plan: default 0.7, etl 0.3 with etl.small, a trigger, a mapping."""
    create(client, name, parallelism=10)
    pool(client, name, "etl", 0.3)
    client.alter_wm_pool(hms.WMAlterPoolRequest(
        pool=hms.WMNullablePool(resourcePlanName=name, poolPath="default", allocFraction=0.7),
        poolPath="default",
    ))  # fmt: skip
    pool(client, name, "etl.small", 1.0)
    trigger = hms.WMTrigger(
        resourcePlanName=name,
        triggerName="Slow",
        triggerExpression="ELAPSED_TIME > 1000",
        actionExpression="MOVE TO etl",
    )
    client.create_wm_trigger(hms.WMCreateTriggerRequest(trigger=trigger))
    client.create_or_drop_wm_trigger_to_pool_mapping(hms.WMCreateOrDropTriggerToPoolMappingRequest(
        resourcePlanName=name, triggerName="slow", poolPath="default"))  # fmt: skip
    mapping(client, name, "alice", "etl")


def test_plan_parts_are_stored_and_validated(client) -> None:
    create(client, "Plan1", parallelism=10)
    fresh = plan(client, "plan1")
    assert (fresh.plan.name, fresh.plan.status, fresh.plan.defaultPoolPath) == (
        "plan1",
        STATUS.DISABLED,
        "default",
    )
    assert [(p.poolPath, p.allocFraction, p.queryParallelism) for p in fresh.pools] == [
        ("default", 1.0, 10)
    ]
    with pytest.raises(hms.AlreadyExistsException):
        create(client, "plan1")
    with pytest.raises(hms.InvalidObjectException):
        create(client, "p0", parallelism=0)
    with pytest.raises(hms.NoSuchObjectException):
        plan(client, "nope")
    client.drop_resource_plan(hms.WMDropResourcePlanRequest(resourcePlanName="plan1"))
    build_plan(client, "plan1")
    with pytest.raises(hms.AlreadyExistsException):
        pool(client, "plan1", "etl", 0.1)
    with pytest.raises(hms.NoSuchObjectException):
        pool(client, "plan1", "missing.child", 0.1)
    with pytest.raises(hms.AlreadyExistsException):
        mapping(client, "plan1", "alice", "default")
    with pytest.raises(hms.NoSuchObjectException):
        mapping(client, "plan1", "bob", "default", update=True)
    with pytest.raises(hms.NoSuchObjectException):
        mapping(client, "plan1", "bob", "nowhere")
    mapping(client, "plan1", "alice", "etl.small", update=True)
    # moving a pool moves its descendants and what points at them
    moved = hms.WMNullablePool(resourcePlanName="plan1", poolPath="etl.tiny")
    client.alter_wm_pool(hms.WMAlterPoolRequest(pool=moved, poolPath="etl.small"))
    full = plan(client, "plan1")
    assert sorted(p.poolPath for p in full.pools) == ["default", "etl", "etl.tiny"]
    assert [(m.entityType, m.entityName, m.poolPath) for m in full.mappings] == [
        ("USER", "alice", "etl.tiny")
    ]
    assert [(t.pool, t.trigger) for t in full.poolTriggers] == [("default", "slow")]
    triggers = client.get_triggers_for_resourceplan(
        hms.WMGetTriggersForResourePlanRequest(resourcePlanName="plan1")).triggers  # fmt: skip
    assert [(t.triggerName, t.actionExpression) for t in triggers] == [("slow", "MOVE TO etl")]
    validation = client.validate_resource_plan(
        hms.WMValidateResourcePlanRequest(resourcePlanName="plan1")
    )
    assert validation.errors == []
    with pytest.raises(hms.InvalidOperationException, match="child pools"):
        client.drop_wm_pool(hms.WMDropPoolRequest(resourcePlanName="plan1", poolPath="etl"))
    with pytest.raises(hms.InvalidOperationException, match="default pool"):
        client.drop_wm_pool(hms.WMDropPoolRequest(resourcePlanName="plan1", poolPath="default"))
    client.drop_wm_pool(hms.WMDropPoolRequest(resourcePlanName="plan1", poolPath="etl.tiny"))
    assert plan(client, "plan1").mappings == []  # its mapping went with it
    client.drop_wm_trigger(hms.WMDropTriggerRequest(resourcePlanName="plan1", triggerName="slow"))
    full = plan(client, "plan1")
    assert (full.triggers, full.poolTriggers) == ([], [])
    pool(client, "plan1", "extra", 0.5)  # 0.7 + 0.3 + 0.5 > 1
    errors = client.validate_resource_plan(
        hms.WMValidateResourcePlanRequest(resourcePlanName="plan1")
    ).errors
    assert len(errors) == 1 and "alloc fraction" in errors[0]
    with pytest.raises(hms.InvalidOperationException, match="is invalid"):
        set_status(client, "plan1", STATUS.ENABLED)
    renamed = hms.WMNullableResourcePlan(name="plan9")
    client.alter_resource_plan(
        hms.WMAlterResourcePlanRequest(resourcePlanName="plan1", resourcePlan=renamed)
    )
    assert {p.resourcePlanName for p in plan(client, "plan9").pools} == {"plan9"}
    with pytest.raises(hms.NoSuchObjectException):
        plan(client, "plan1")
    client.drop_resource_plan(hms.WMDropResourcePlanRequest(resourcePlanName="plan9"))


def test_status_transitions_and_one_active_plan(client) -> None:
    build_plan(client, "a")
    with pytest.raises(hms.InvalidOperationException, match="should be enabled"):
        set_status(client, "a", STATUS.ACTIVE)
    answer = set_status(client, "a", STATUS.ACTIVE, isEnableAndActivate=True)
    assert answer.fullResourcePlan.plan.status == STATUS.ACTIVE
    active = client.get_active_resource_plan(hms.WMGetActiveResourcePlanRequest())
    assert active.resourcePlan.plan.name == "a"
    with pytest.raises(hms.InvalidObjectException, match="must be disabled"):
        pool(client, "a", "more", 0.1)
    with pytest.raises(hms.InvalidOperationException, match="active"):
        client.drop_resource_plan(hms.WMDropResourcePlanRequest(resourcePlanName="a"))
    create(client, "b", copy_from="a")
    copied = plan(client, "b")
    assert copied.plan.status == STATUS.DISABLED
    assert {p.resourcePlanName for p in copied.pools} == {"b"} and len(copied.pools) == 3
    set_status(client, "b", STATUS.ENABLED)
    set_status(client, "b", STATUS.ACTIVE)
    assert statuses(client) == {"a": STATUS.ENABLED, "b": STATUS.ACTIVE}
    with pytest.raises(hms.InvalidOperationException, match="is active"):
        set_status(client, "b", STATUS.DISABLED)
    set_status(client, "b", STATUS.DISABLED, isForceDeactivate=True)
    assert (
        client.get_active_resource_plan(hms.WMGetActiveResourcePlanRequest()).resourcePlan is None
    )
    assert statuses(client) == {"a": STATUS.ENABLED, "b": STATUS.DISABLED}
    # another namespace has its own plans
    other = client.get_all_resource_plans(hms.WMGetAllResourcePlanRequest(ns="other"))
    assert other.resourcePlans == []
    set_status(client, "a", STATUS.ACTIVE)
    # put b in the active plan's place: it takes the name, a is kept as a_old_0
    client.alter_resource_plan(hms.WMAlterResourcePlanRequest(resourcePlanName="b", isReplace=True))
    assert statuses(client) == {"a": STATUS.ACTIVE, "a_old_0": STATUS.DISABLED}
    for name in ("a", "a_old_0"):
        assert {p.resourcePlanName for p in plan(client, name).pools} == {name}
    set_status(client, "a", STATUS.ENABLED, isForceDeactivate=True)
    for name in ("a", "a_old_0"):
        client.drop_resource_plan(hms.WMDropResourcePlanRequest(resourcePlanName=name))
    assert statuses(client) == {}


def test_plans_survive_a_restart(start_server) -> None:
    first = start_server()
    client = first.client()
    build_plan(client, "kept")
    set_status(client, "kept", STATUS.ACTIVE, isEnableAndActivate=True)
    client.close()
    first.stop()
    second = start_server(storage=first.config.storage)
    client = second.client()
    active = client.get_active_resource_plan(hms.WMGetActiveResourcePlanRequest()).resourcePlan
    assert active.plan.name == "kept" and len(active.pools) == 3 and len(active.mappings) == 1
    client.close()
