"""The workload management calls of HMS 4: resource plans with their pools, triggers and
mappings, stored and validated, never enforced here. See ``docs/hms-api.md``."""

from __future__ import annotations

from metastore_server.api.area import Area
from metastore_server.api.authorization import shorthand as auth
from metastore_server.api.declaration import thrift
from metastore_server.thrift_api import hms


class WorkloadCalls(Area):
    """Resource plans. Raises NoSuchObjectException (no such plan, pool, trigger or mapping),
    AlreadyExistsException, InvalidObjectException (editing a plan that is not disabled, a bad
    part) and InvalidOperationException (a status change or drop HMS refuses)."""

    @thrift(since="3", rule=auth.admin_operation("CREATE_RESOURCEPLAN"))
    def create_resource_plan(
        self, request: hms.WMCreateResourcePlanRequest
    ) -> hms.WMCreateResourcePlanResponse:
        """Create a disabled plan (with a default pool, or copying another)."""
        self.catalog.resource_plans.create(request)
        return hms.WMCreateResourcePlanResponse()

    @thrift(since="3", rule=auth.admin_operation("SHOW_RESOURCEPLAN"))
    def get_resource_plan(
        self, request: hms.WMGetResourcePlanRequest
    ) -> hms.WMGetResourcePlanResponse:
        """A plan with its pools, mappings, triggers and links."""
        return hms.WMGetResourcePlanResponse(resourcePlan=self.catalog.resource_plans.get(request))

    @thrift(since="3", rule=auth.admin_operation("SHOW_RESOURCEPLAN"))
    def get_active_resource_plan(
        self, request: hms.WMGetActiveResourcePlanRequest
    ) -> hms.WMGetActiveResourcePlanResponse:
        """The namespace's active plan (none: an empty answer)."""
        active = self.catalog.resource_plans.active(request)
        return hms.WMGetActiveResourcePlanResponse(resourcePlan=active)

    @thrift(since="3", rule=auth.admin_operation("SHOW_RESOURCEPLAN"))
    def get_all_resource_plans(
        self, request: hms.WMGetAllResourcePlanRequest
    ) -> hms.WMGetAllResourcePlanResponse:
        """Every plan of the namespace."""
        return hms.WMGetAllResourcePlanResponse(
            resourcePlans=self.catalog.resource_plans.all(request)
        )

    @thrift(since="3", rule=auth.admin_operation("ALTER_RESOURCEPLAN"))
    def alter_resource_plan(
        self, request: hms.WMAlterResourcePlanRequest
    ) -> hms.WMAlterResourcePlanResponse:
        """Edit a plan, change its status, or replace another plan with it."""
        full = self.catalog.resource_plans.alter(request)
        return hms.WMAlterResourcePlanResponse(fullResourcePlan=full)

    @thrift(since="3", rule=auth.admin_operation("ALTER_RESOURCEPLAN"))
    def validate_resource_plan(
        self, request: hms.WMValidateResourcePlanRequest
    ) -> hms.WMValidateResourcePlanResponse:
        """A plan's errors and warnings."""
        return self.catalog.resource_plans.validate(request)

    @thrift(since="3", rule=auth.admin_operation("DROP_RESOURCEPLAN"))
    def drop_resource_plan(
        self, request: hms.WMDropResourcePlanRequest
    ) -> hms.WMDropResourcePlanResponse:
        """Drop a plan that is not active."""
        self.catalog.resource_plans.drop(request)
        return hms.WMDropResourcePlanResponse()

    @thrift(since="3", rule=auth.admin_operation("CREATE_TRIGGER"))
    def create_wm_trigger(self, request: hms.WMCreateTriggerRequest) -> hms.WMCreateTriggerResponse:
        """Add a trigger to a disabled plan."""
        self.catalog.plan_parts.create_trigger((request or hms.WMCreateTriggerRequest()).trigger)
        return hms.WMCreateTriggerResponse()

    @thrift(since="3", rule=auth.admin_operation("ALTER_TRIGGER"))
    def alter_wm_trigger(self, request: hms.WMAlterTriggerRequest) -> hms.WMAlterTriggerResponse:
        """Change a trigger of a disabled plan."""
        self.catalog.plan_parts.alter_trigger(request)
        return hms.WMAlterTriggerResponse()

    @thrift(since="3", rule=auth.admin_operation("DROP_TRIGGER"))
    def drop_wm_trigger(self, request: hms.WMDropTriggerRequest) -> hms.WMDropTriggerResponse:
        """Drop a trigger of a disabled plan."""
        self.catalog.plan_parts.drop_trigger(request)
        return hms.WMDropTriggerResponse()

    @thrift(since="3", rule=auth.admin_operation("SHOW_RESOURCEPLAN"))
    def get_triggers_for_resourceplan(
        self, request: hms.WMGetTriggersForResourePlanRequest
    ) -> hms.WMGetTriggersForResourePlanResponse:
        """A plan's triggers."""
        return hms.WMGetTriggersForResourePlanResponse(
            triggers=self.catalog.plan_parts.triggers(request)
        )

    @thrift(since="3", rule=auth.admin_operation("CREATE_POOL"))
    def create_wm_pool(self, request: hms.WMCreatePoolRequest) -> hms.WMCreatePoolResponse:
        """Add a pool to a disabled plan."""
        self.catalog.plan_parts.create_pool((request or hms.WMCreatePoolRequest()).pool)
        return hms.WMCreatePoolResponse()

    @thrift(since="3", rule=auth.admin_operation("ALTER_POOL"))
    def alter_wm_pool(self, request: hms.WMAlterPoolRequest) -> hms.WMAlterPoolResponse:
        """Change or move a pool of a disabled plan."""
        self.catalog.plan_parts.alter_pool(request)
        return hms.WMAlterPoolResponse()

    @thrift(since="3", rule=auth.admin_operation("DROP_POOL"))
    def drop_wm_pool(self, request: hms.WMDropPoolRequest) -> hms.WMDropPoolResponse:
        """Drop a pool of a disabled plan."""
        self.catalog.plan_parts.drop_pool(request)
        return hms.WMDropPoolResponse()

    @thrift(since="3", rule=auth.admin_operation("CREATE_MAPPING"))
    def create_or_update_wm_mapping(
        self, request: hms.WMCreateOrUpdateMappingRequest
    ) -> hms.WMCreateOrUpdateMappingResponse:
        """Map a user, group or application to a pool of a disabled plan."""
        self.catalog.plan_parts.put_mapping(request)
        return hms.WMCreateOrUpdateMappingResponse()

    @thrift(since="3", rule=auth.admin_operation("DROP_MAPPING"))
    def drop_wm_mapping(self, request: hms.WMDropMappingRequest) -> hms.WMDropMappingResponse:
        """Drop a mapping of a disabled plan."""
        self.catalog.plan_parts.drop_mapping(request)
        return hms.WMDropMappingResponse()

    @thrift(since="3", rule=auth.admin_operation("ALTER_POOL"))
    def create_or_drop_wm_trigger_to_pool_mapping(
        self, request: hms.WMCreateOrDropTriggerToPoolMappingRequest
    ) -> hms.WMCreateOrDropTriggerToPoolMappingResponse:
        """Apply a trigger to a pool, or stop applying it."""
        self.catalog.plan_parts.link_trigger(request)
        return hms.WMCreateOrDropTriggerToPoolMappingResponse()
