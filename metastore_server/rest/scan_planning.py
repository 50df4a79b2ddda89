"""A scan-planning request (the spec's ``PlanTableScanRequest``) read strictly, and planned
with pyiceberg's own scan planner over a table's metadata: a point-in-time scan (the current
snapshot, or ``snapshot-id``) or an incremental scan of the appends between two snapshots.
Manifest lists and manifests are read only under the table's own location (and the data
roots), through a FileIO that refuses anything else: a table's metadata cannot make the
server read, and hand out, another table's manifests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import structlog
from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.expressions.visitors import bind
from pyiceberg.io import FileIO, InputFile, OutputFile
from pyiceberg.schema import Schema
from pyiceberg.table import DataScan, FileScanTask, IncrementalAppendScan
from pyiceberg.table.metadata import TableMetadata

from metastore_server.rest.boundary import FileBoundary
from metastore_server.rest.errors import RestError, bad_request, forbidden
from metastore_server.rest.scan_filters import LONG_MAX, LONG_MIN, MAX_NAME, parse_filter

log = structlog.get_logger(__name__)

#: The most names ``select`` or ``stats-fields`` may list.
MAX_FIELDS = 10_000
FIELDS = ("snapshot-id", "select", "filter", "case-sensitive", "use-snapshot-schema",
          "start-snapshot-id", "end-snapshot-id", "stats-fields", "min-rows-requested")  # fmt: skip


@dataclass(frozen=True)
class ScanRequest:
    """A PlanTableScanRequest, checked; ``filter_key``: its filter as canonical JSON."""

    snapshot_id: int | None = None
    start_snapshot_id: int | None = None
    end_snapshot_id: int | None = None
    select: tuple[str, ...] | None = None
    stats_fields: tuple[str, ...] = ()
    row_filter: BooleanExpression = AlwaysTrue()
    filter_key: str = "true"
    case_sensitive: bool = True
    use_snapshot_schema: bool = False
    min_rows_requested: int | None = None

    def key(self) -> tuple[Any, ...]:
        """What decides the planned tasks (with the table's version): the cache's key."""
        return (self.snapshot_id, self.start_snapshot_id, self.end_snapshot_id, self.select,
                self.stats_fields, self.filter_key, self.case_sensitive,
                self.use_snapshot_schema)  # fmt: skip


def parse_request(body: dict[str, Any]) -> ScanRequest:
    """The checked request (400 for an unknown field, a wrong type, or a combination the
    spec does not allow)."""
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise bad_request(f"PlanTableScanRequest has unknown fields: {unknown[:5]}")
    snapshot, start, end = (_long(body, k) for k in
                            ("snapshot-id", "start-snapshot-id", "end-snapshot-id"))  # fmt: skip
    if snapshot is not None and (start is not None or end is not None):
        raise bad_request("snapshot-id cannot be given with start-snapshot-id/end-snapshot-id")
    if (start is None) != (end is None):
        raise bad_request("an incremental scan needs both start-snapshot-id and end-snapshot-id")
    minimum = _long(body, "min-rows-requested")
    if minimum is not None and minimum < 0:
        raise bad_request("min-rows-requested must be at least 0")
    raw_filter = body.get("filter")
    row_filter = parse_filter(raw_filter) if raw_filter is not None else AlwaysTrue()
    select = _names(body, "select")
    return ScanRequest(
        snapshot_id=snapshot, start_snapshot_id=start, end_snapshot_id=end,
        select=tuple(select) if select is not None else None,
        stats_fields=tuple(_names(body, "stats-fields") or ()),
        row_filter=row_filter,
        filter_key=json.dumps(raw_filter if raw_filter is not None else True, sort_keys=True),
        case_sensitive=_flag(body, "case-sensitive", True),
        use_snapshot_schema=_flag(body, "use-snapshot-schema", False),
        min_rows_requested=minimum,
    )  # fmt: skip


def _long(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not LONG_MIN <= value <= LONG_MAX:
        raise bad_request(f"{key} must be a long")
    return value


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key, default)
    if not isinstance(value, bool):
        raise bad_request(f"{key} must be a boolean")
    return value


def _names(body: dict[str, Any], key: str) -> list[str] | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_FIELDS or not all(
        isinstance(name, str) and 0 < len(name) <= MAX_NAME for name in value
    ):
        raise bad_request(f"{key} must be a list of at most {MAX_FIELDS} field names")
    return value


def scan_schema(metadata: TableMetadata, request: ScanRequest) -> Schema:
    """The schema names are resolved against: the table's current one, or with
    ``use-snapshot-schema`` the one of the snapshot scanned."""
    wanted = request.snapshot_id if request.snapshot_id is not None else request.end_snapshot_id
    if request.use_snapshot_schema and wanted is not None:
        snapshot = metadata.snapshot_by_id(wanted)
        if snapshot is not None and snapshot.schema_id is not None:
            for schema in metadata.schemas:
                if schema.schema_id == snapshot.schema_id:
                    return schema
    return metadata.schema()


def check_request(metadata: TableMetadata, request: ScanRequest) -> frozenset[int]:
    """400 unless the request fits the table (its snapshots exist, its names and filter bind
    to the schema); the field ids of ``stats-fields``."""
    for key, wanted in (("snapshot-id", request.snapshot_id),
                        ("start-snapshot-id", request.start_snapshot_id),
                        ("end-snapshot-id", request.end_snapshot_id)):  # fmt: skip
        if wanted is not None and metadata.snapshot_by_id(wanted) is None:
            raise bad_request(f"{key} {wanted}: the table has no such snapshot")
    schema = scan_schema(metadata, request)
    try:
        bind(schema, request.row_filter, request.case_sensitive)
        if request.select is not None and "*" not in request.select:
            schema.select(*request.select, case_sensitive=request.case_sensitive)
        stats = schema.select(*request.stats_fields, case_sensitive=request.case_sensitive)
    except (ValueError, TypeError) as exc:
        raise bad_request(f"The scan does not fit the table: {str(exc)[:300]}") from None
    return frozenset(field.field_id for field in stats.fields)


def snapshot_files(metadata: TableMetadata, request: ScanRequest) -> int:
    """How many data files the scanned snapshot holds, as its summary says (0: unknown)."""
    wanted = request.snapshot_id if request.snapshot_id is not None else request.end_snapshot_id
    snapshot = (metadata.snapshot_by_id(wanted) if wanted is not None
                else metadata.current_snapshot())  # fmt: skip
    if snapshot is None or snapshot.summary is None:
        return 0
    try:
        return int(snapshot.summary.get("total-data-files") or 0)
    except ValueError:
        return 0


def plan_files(metadata: TableMetadata, io: FileIO, request: ScanRequest) -> list[FileScanTask]:
    """The file scan tasks pyiceberg's planner finds for the request."""
    selected = ("*",) if request.select is None or not request.select else request.select
    if request.start_snapshot_id is not None:
        incremental = IncrementalAppendScan(
            metadata, io, row_filter=request.row_filter, selected_fields=selected,
            case_sensitive=request.case_sensitive, from_snapshot_id=request.start_snapshot_id,
            from_snapshot_inclusive=False, to_snapshot_id=request.end_snapshot_id)  # fmt: skip
        return _planned(incremental.plan_files)
    scan = DataScan(metadata, io, row_filter=request.row_filter, selected_fields=selected,
                    case_sensitive=request.case_sensitive,
                    snapshot_id=request.snapshot_id)  # fmt: skip
    return _planned(scan.plan_files)


def _planned(plan: Any) -> list[FileScanTask]:
    """``plan()``'s tasks; 406 for what pyiceberg's planner does not support (equality
    deletes), 400 for a scan it refuses (an incremental scan of unrelated snapshots)."""
    try:
        return list(plan())
    except RestError:
        raise
    except (NotImplementedError, ValueError) as exc:
        text = str(exc)[:300]
        if isinstance(exc, NotImplementedError) or "not yet support" in text:
            raise RestError(406, "UnsupportedOperationException",
                            f"This server cannot plan the scan: {text}") from None
        raise bad_request(f"The scan cannot be planned: {text}") from None


class GuardedIO(FileIO):
    """A read-only FileIO over ``io`` that opens only files under the table's location (and
    the data roots): 403 for any other."""

    def __init__(self, io: FileIO, boundary: FileBoundary, table_location: str) -> None:
        super().__init__(io.properties)
        self._io, self._boundary, self._location = io, boundary, table_location

    def new_input(self, location: str) -> InputFile:
        reason = self._boundary.outside_table(location, self._location)
        if reason is not None:  # the path is logged, not answered
            log.warning("scan_plan_file_refused", reason=reason)
            raise forbidden("Scan planning reads only the table's own files: a manifest list "
                            "or manifest of this table lies outside its location or the data "
                            "roots")  # fmt: skip
        return self._io.new_input(location)

    def new_output(self, location: str) -> OutputFile:
        raise forbidden("Scan planning writes no file")

    def delete(self, location: str | InputFile | OutputFile) -> None:
        raise forbidden("Scan planning deletes no file")
