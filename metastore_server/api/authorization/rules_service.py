"""The rules of the other calls: the service (fb303) calls, roles and privileges, tokens,
transactions and locks, compaction, write ids, notifications, file metadata, catalogs and the
rest, after HMS:

- status, configuration reads, ``set_ugi``, transactions and locks (SQL-standard controls no
  lock or transaction operation), listings of catalogs, functions, procedures: open to all;
- the notification log (HMS's ``hive.metastore.event.db.notification.api.auth``, on by default),
  the token store, the compactor's and replication's own calls, runtime statistics, scheduled
  queries, properties: the admin's (HMS keeps them for its superusers);
- catalogs and the schema registry: the admin's, refused with HMS's metastore authorizer's words
  for those events; workload management: SQL-standard's administrator operations;
- the role and privilege calls: decided by :mod:`.grant_checks` (SQL-standard's rules);
- writes tied to one table (write ids, write notifications, dynamic partitions, compaction
  requests): INSERT on it, or its ownership to compact it; reads of its write state: SELECT.
"""

from __future__ import annotations

from metastore_server.api.authorization.rules import (
    API,
    CUSTOM,
    INSERT,
    OPEN,
    OWNERSHIP,
    SELECT,
    Rule,
    admin_operation,
    event,
    field,
    full_names,
    named_fields,
    on_tables,
)

_REQUEST = field("rqst")

SERVICE: dict[str, Rule] = {
    **{
        name: OPEN
        for name in (
            "getName",
            "getVersion",
            "getStatus",
            "getStatusDetails",
            "getCounters",
            "getCounter",
            "getOption",
            "getOptions",
            "aliveSince",
            "getMetaConf",
            "setMetaConf",  # this connection's settings only
            "get_config_value",
            "set_ugi",
            "flushCache",
            "get_metastore_db_uuid",
        )
    },
    "setOption": API,
    "getCpuProfile": API,
    "reinitialize": API,
    "shutdown": API,
    "get_properties": API,
    "set_properties": API,
}

SECURITY: dict[str, Rule] = {
    name: CUSTOM
    for name in (
        "create_role",
        "drop_role",
        "get_role_names",
        "grant_role",
        "revoke_role",
        "grant_revoke_role",
        "list_roles",
        "get_principals_in_role",
        "get_role_grants_for_principal",
        "grant_privileges",
        "revoke_privileges",
        "grant_revoke_privileges",
        "refresh_privileges",
        "list_privileges",
        "get_privilege_set",
    )
}

TOKENS: dict[str, Rule] = {
    # refused by the server itself (no delegation tokens here), whoever asks
    "get_delegation_token": OPEN,
    "renew_delegation_token": OPEN,
    "cancel_delegation_token": OPEN,
    **{
        name: API
        for name in (
            "add_token",
            "remove_token",
            "get_token",
            "get_all_token_identifiers",
            "add_master_key",
            "update_master_key",
            "remove_master_key",
            "get_master_keys",
        )
    },
}

TRANSACTIONS: dict[str, Rule] = {
    **{
        name: OPEN
        for name in (
            "lock",
            "check_lock",
            "unlock",
            "show_locks",
            "heartbeat",
            "heartbeat_txn_range",
            "get_open_txns",
            "get_open_txns_info",
            "open_txns",
            "abort_txn",
            "abort_txns",
            "commit_txn",
            "get_open_txns_req",
            "add_write_ids_to_min_history",
            "get_latest_txnid_in_conflict",
        )
    },
    "add_dynamic_partitions": on_tables("QUERY", (INSERT,), _REQUEST),
    "allocate_table_write_ids": on_tables("QUERY", (INSERT,), _REQUEST),
    "get_valid_write_ids": on_tables("QUERY", (SELECT,), full_names("rqst", "fullTableNames")),
    "get_max_allocated_table_write_id": on_tables("QUERY", (SELECT,), _REQUEST),
    "add_write_notification_log": on_tables("QUERY", (INSERT,), _REQUEST),
    "add_write_notification_log_in_batch": on_tables("QUERY", (INSERT,), _REQUEST),
    "seed_write_id": admin_operation("REPLLOAD"),
    "seed_txn_id": admin_operation("REPLLOAD"),
    "repl_tbl_writeid_state": admin_operation("REPLLOAD"),
    "get_all_write_event_info": admin_operation("REPLDUMP"),
    "update_transaction_statistics": API,
}

COMPACTION: dict[str, Rule] = {
    "compact": on_tables("ALTERTABLE_COMPACT", (OWNERSHIP,), _REQUEST),
    "compact2": on_tables("ALTERTABLE_COMPACT", (OWNERSHIP,), _REQUEST),
    "show_compact": OPEN,
    "get_latest_committed_compaction_info": on_tables("QUERY", (SELECT,), _REQUEST),
    **{
        name: API
        for name in (
            "submit_for_cleanup",
            "find_next_compact",
            "find_next_compact2",
            "set_hadoop_jobid",
            "update_compactor_state",
            "mark_compacted",
            "mark_failed",
            "mark_refused",
            "mark_cleaned",
            "abort_Compactions",
            "update_compaction_metrics_data",
            "remove_compaction_metrics_data",
        )
    },
}

EVENTS: dict[str, Rule] = {
    "get_next_notification": API,
    "get_current_notificationEventId": API,
    "get_notification_events_count": API,
    "fire_listener_event": on_tables("QUERY", (INSERT,), _REQUEST),
    "get_file_metadata_by_expr": API,
    "get_file_metadata": API,
    "put_file_metadata": API,
    "clear_file_metadata": API,
    "cache_file_metadata": on_tables(
        "CACHE_METADATA", (SELECT, INSERT), named_fields("req", "dbName", "tblName")
    ),
}

CATALOGS: dict[str, Rule] = {
    "create_catalog": event("CREATE_CATALOG"),
    "get_catalog": OPEN,
    "get_catalogs": OPEN,
    "alter_catalog": event("ALTER_CATALOG"),
    "drop_catalog": event("DROP_CATALOG"),
    "create_dataconnector_req": event("CREATE_DATACONNECTOR"),
    "get_dataconnector_req": event("READ_DATACONNECTOR"),
    "get_dataconnectors": OPEN,
    "alter_dataconnector_req": event("ALTER_DATACONNECTOR"),
    "drop_dataconnector_req": event("DROP_DATACONNECTOR"),
}

SCHEMA_REGISTRY: dict[str, Rule] = {
    "create_ischema": event("CREATE_ISCHEMA"),
    "alter_ischema": event("ALTER_ISCHEMA"),
    "get_ischema": event("READ_ISCHEMA"),
    "drop_ischema": event("DROP_ISCHEMA"),
    "add_schema_version": event("ADD_SCHEMA_VERSION"),
    "get_schema_version": event("READ_SCHEMA_VERSION"),
    "get_schema_latest_version": event("READ_SCHEMA_VERSION"),
    "get_schema_all_versions": event("READ_SCHEMA_VERSION"),
    "drop_schema_version": event("DROP_SCHEMA_VERSION"),
    "get_schemas_by_cols": event("READ_SCHEMA_VERSION"),
    "map_schema_version_to_serde": event("ALTER_SCHEMA_VERSION"),
    "set_schema_version_state": event("ALTER_SCHEMA_VERSION"),
    "add_serde": API,
    "get_serde": OPEN,
}

_WORKLOAD = {
    "create_resource_plan": "CREATE_RESOURCEPLAN",
    "get_resource_plan": "SHOW_RESOURCEPLAN",
    "get_active_resource_plan": "SHOW_RESOURCEPLAN",
    "get_all_resource_plans": "SHOW_RESOURCEPLAN",
    "alter_resource_plan": "ALTER_RESOURCEPLAN",
    "validate_resource_plan": "ALTER_RESOURCEPLAN",
    "drop_resource_plan": "DROP_RESOURCEPLAN",
    "create_wm_trigger": "CREATE_TRIGGER",
    "alter_wm_trigger": "ALTER_TRIGGER",
    "drop_wm_trigger": "DROP_TRIGGER",
    "get_triggers_for_resourceplan": "SHOW_RESOURCEPLAN",
    "create_wm_pool": "CREATE_POOL",
    "alter_wm_pool": "ALTER_POOL",
    "drop_wm_pool": "DROP_POOL",
    "create_or_update_wm_mapping": "CREATE_MAPPING",
    "drop_wm_mapping": "DROP_MAPPING",
    "create_or_drop_wm_trigger_to_pool_mapping": "ALTER_POOL",
}

OTHERS: dict[str, Rule] = {
    **{name: admin_operation(operation) for name, operation in _WORKLOAD.items()},
    "get_scheduled_query": API,
    "scheduled_query_maintenance": API,
    "scheduled_query_poll": API,
    "scheduled_query_progress": API,
    "create_stored_procedure": admin_operation("CREATEFUNCTION"),
    "get_stored_procedure": OPEN,
    "drop_stored_procedure": admin_operation("DROPFUNCTION"),
    "get_all_stored_procedures": OPEN,
    "add_package": admin_operation("CREATEFUNCTION"),
    "find_package": OPEN,
    "drop_package": admin_operation("DROPFUNCTION"),
    "get_all_packages": OPEN,
    "add_replication_metrics": admin_operation("REPLDUMP"),
    "get_replication_metrics": admin_operation("REPLSTATUS"),
    "add_runtime_stats": API,
    "get_runtime_stats": API,
}

#: Every other call's rule.
SERVICE_RULES: dict[str, Rule] = {
    **SERVICE,
    **SECURITY,
    **TOKENS,
    **TRANSACTIONS,
    **COMPACTION,
    **EVENTS,
    **CATALOGS,
    **SCHEMA_REGISTRY,
    **OTHERS,
}
