"""Server-side scan planning's four operations (planTableScan, fetchPlanningResult,
cancelPlanning, fetchScanTasks) as the REST catalog serves them. Each first checks that the
caller may read the table, as a load does (``get_table`` through the authorizer: 403, or 404
when there is none), and only then looks at plans: a caller who may not read a table gets no
plan of it, and learns nothing of others' plans."""

from __future__ import annotations

from typing import Any

from metastore_server.rest import tables
from metastore_server.rest.calls import MetastoreCalls
from metastore_server.rest.errors import bad_request, no_such_table
from metastore_server.rest.iceberg_tables import MetadataFiles, is_iceberg
from metastore_server.rest.scan_planning import (
    GuardedIO,
    check_request,
    parse_request,
    plan_files,
    snapshot_files,
)
from metastore_server.rest.scan_plans import MAX_ID, Batch, Planner, no_such_plan, no_such_task
from metastore_server.rest.scan_tasks import TaskWriter
from metastore_server.thrift_api import hms


def _owner(calls: MetastoreCalls) -> str | None:
    return calls.session.authenticated_user


def _table(calls: MetastoreCalls, db: str, name: str) -> tuple[str, ...]:
    """The key plans are held by: the table in its catalog (the path's prefix), so that a plan
    id made in one catalog finds nothing in another's table of the same name."""
    return (calls.catalog, db, name)


def plan_table_scan(calls: MetastoreCalls, files: MetadataFiles, planner: Planner, db: str,
                    name: str, body: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """planTableScan: the table loaded as its caller, the request checked, then planned."""
    table = tables.load_table(calls, files, db, name)
    request = parse_request(body)
    stats = check_request(table.metadata, request)
    metadata, location = table.metadata, table.metadata_location
    own = table.hive.sd.location

    def work() -> list[Batch]:
        io = GuardedIO(files.io(location), files.boundary, own)
        tasks = plan_files(metadata, io, request)
        return batches(TaskWriter(metadata, stats), tasks, planner.settings.batch)

    key = (calls.catalog, db, name, location, request.key())
    return planner.plan(_owner(calls), _table(calls, db, name), key,
                        snapshot_files(metadata, request), work)


def batches(writer: TaskWriter, tasks: list[Any], size: int) -> list[Batch]:
    """``tasks`` in batches of ``size``, in a stable order (by data file path)."""
    ordered = sorted(tasks, key=lambda task: task.file.file_path)
    return [writer.batch(ordered[i:i + size]) for i in range(0, len(ordered), size)]


def _readable(calls: MetastoreCalls, db: str, name: str) -> None:
    """403 unless the caller may read the table (404 when it is not an Iceberg table)."""
    try:
        table = calls.get_table(db, name)
    except hms.NoSuchObjectException:
        raise no_such_table(f"{db}.{name}") from None
    if not is_iceberg(table):
        raise no_such_table(f"{db}.{name} (not an Iceberg table)")


def fetch_planning_result(calls: MetastoreCalls, planner: Planner, db: str, name: str,
                          plan_id: str) -> dict[str, Any]:  # fmt: skip
    """fetchPlanningResult of the caller's plan of that table."""
    _readable(calls, db, name)
    if len(plan_id) > MAX_ID:
        raise no_such_plan(plan_id)
    return planner.fetch(_owner(calls), _table(calls, db, name), plan_id)


def cancel_planning(calls: MetastoreCalls, planner: Planner, db: str, name: str,
                    plan_id: str) -> None:  # fmt: skip
    """cancelPlanning of the caller's plan of that table."""
    _readable(calls, db, name)
    if len(plan_id) > MAX_ID:
        raise no_such_plan(plan_id)
    planner.cancel(_owner(calls), _table(calls, db, name), plan_id)


def fetch_scan_tasks(calls: MetastoreCalls, planner: Planner, db: str, name: str,
                     body: dict[str, Any]) -> Batch:  # fmt: skip
    """fetchScanTasks: the batch behind a plan-task token of the caller's plan."""
    _readable(calls, db, name)
    if set(body) - {"plan-task"}:
        raise bad_request("FetchScanTasksRequest takes only plan-task")
    token = body.get("plan-task")
    if not isinstance(token, str) or not token:
        raise bad_request("FetchScanTasksRequest needs a plan-task (a string)")
    if len(token) > MAX_ID:
        raise no_such_task(token)
    return planner.tasks(_owner(calls), _table(calls, db, name), token)

