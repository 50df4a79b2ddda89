"""Iceberg metrics reports (``POST .../tables/{table}/metrics``): each checked as the spec's
ReportMetricsRequest (a scan report or a commit report), bounded in size, and kept in the
store with the table (``catalog.core.metrics_reports``: its last ``KEEP``, gone when it is
dropped); ``GET`` on the same path lists them, newest first, to a caller who may read the
table. The checks are pure; ``post`` and ``listed`` read and write the store."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from metastore_server.catalog.core.metrics_reports import KEEP, MetricsReports
from metastore_server.rest.errors import bad_request, no_such_table
from metastore_server.rest.iceberg_tables import MetadataFiles

#: The largest report body taken (a scan report of a wide projection is a few KiB).
MAX_REPORT_BYTES = 64 * 1024
SCAN, COMMIT = "scan-report", "commit-report"
#: The fields each kind of report must carry, and the JSON type of each.
_REQUIRED: dict[str, dict[str, str]] = {
    SCAN: {"table-name": "string", "snapshot-id": "integer", "filter": "expression",
           "schema-id": "integer", "projected-field-ids": "integers",
           "projected-field-names": "strings", "metrics": "metrics"},
    COMMIT: {"table-name": "string", "snapshot-id": "integer", "sequence-number": "integer",
             "operation": "string", "metrics": "metrics"},
}  # fmt: skip
_COUNTER = {"unit": "string", "value": "integer"}
_TIMER = {"time-unit": "string", "count": "integer", "total-duration": "integer"}


def checked(body: bytes) -> dict[str, Any]:
    """The report in ``body`` (a ReportMetricsRequest); 400 when it is too large, not JSON,
    of no known kind, or lacks (or mistypes) a field its kind needs."""
    if len(body) > MAX_REPORT_BYTES:
        raise bad_request(f"A metrics report may be at most {MAX_REPORT_BYTES} bytes "
                          f"({len(body)} sent)")  # fmt: skip
    try:
        report = json.loads(body or b"null")
    except (ValueError, RecursionError):
        raise bad_request("The metrics report is not JSON") from None
    if not isinstance(report, dict):
        raise bad_request("A ReportMetricsRequest is a JSON object")
    kind = report.get("report-type")
    if kind not in _REQUIRED:
        raise bad_request(f"report-type must be {SCAN} or {COMMIT}")
    for name, shape in _REQUIRED[str(kind)].items():
        if name not in report or not _fits(report[name], shape):
            raise bad_request(f"A {kind} needs {name} ({shape})")
    metadata = report.get("metadata")
    if metadata is not None and not _fits(metadata, "string map"):
        raise bad_request("metadata must map strings to strings")
    return report


def _fits(value: Any, shape: str) -> bool:
    """Whether ``value`` has the JSON type ``shape`` names."""
    if shape == "string":
        return isinstance(value, str)
    if shape == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if shape in ("integers", "strings"):
        item = "integer" if shape == "integers" else "string"
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if shape == "string map":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if shape == "expression":  # a boolean (true, false) or an expression object
        return isinstance(value, bool | dict)
    if shape == "metrics":
        return isinstance(value, dict) and all(_is_result(v) for v in value.values())
    return False


def _is_result(value: Any) -> bool:
    """Whether ``value`` is a CounterResult or a TimerResult."""
    return isinstance(value, Mapping) and any(
        all(key in value and _fits(value[key], kind) for key, kind in shape.items())
        for shape in (_COUNTER, _TIMER)
    )


def post(reports: MetricsReports, calls: Any, files: MetadataFiles, db: str, name: str,
         body: bytes) -> None:  # fmt: skip
    """Keep the report ``body`` of table ``db.name`` (the caller must be able to load it:
    403 otherwise, 404 when there is none)."""
    report = checked(body)
    table_id = _table_id(calls, files, db, name)
    kept = {"received-ms": int(time.time() * 1000), "report": report}
    reports.add(table_id, json.dumps(kept, separators=(",", ":")).encode("utf-8"))


def listed(reports: MetricsReports, calls: Any, files: MetadataFiles, db: str, name: str,
           limit: str | None) -> dict[str, Any]:  # fmt: skip
    """The last reports of table ``db.name`` (at most ``limit``), newest first, to a caller
    who may load it."""
    count = KEEP
    if limit is not None:
        if not limit.isdigit() or not 1 <= int(limit) <= KEEP:
            raise bad_request(f"limit must be a whole number from 1 to {KEEP}")
        count = int(limit)
    table_id = _table_id(calls, files, db, name)
    return {"reports": [json.loads(kept) for kept in reports.last(table_id, count)]}


def _table_id(calls: Any, files: MetadataFiles, db: str, name: str) -> int:
    """The stable id of Iceberg table ``db.name``, loaded as the caller (who must be allowed
    to read it)."""
    from metastore_server.rest.tables import load_table

    table = load_table(calls, files, db, name)
    ref = calls.table_ref(table.hive.dbName, table.hive.tableName)
    if ref is None:  # dropped since
        raise no_such_table(f"{db}.{name}")
    return int(ref.table_id)
